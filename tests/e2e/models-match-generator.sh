#!/usr/bin/env bash
# models-match-generator.sh SOURCE_DIR OUT_DIR
# The committed models are exactly what scripts/gen-models.py makes (fixed
# seeds): those models/zoo.txt lists as committed, and nothing else.
set -euo pipefail
source=$1 out=$2
rm -rf "$out"
/usr/bin/python3 "$source/scripts/gen-models.py" --out "$out"
diff -r --exclude=zoo.txt "$source/models" "$out"
