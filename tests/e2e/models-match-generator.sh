#!/usr/bin/env bash
# models-match-generator.sh SOURCE_DIR OUT_DIR
# The bundled models are exactly what scripts/gen-models.py makes (fixed seeds).
set -euo pipefail
source=$1 out=$2
rm -rf "$out"
/usr/bin/python3 "$source/scripts/gen-models.py" --out "$out"
diff -r "$source/models" "$out"
