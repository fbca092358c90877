#!/usr/bin/env bash
# emit-round-trip.sh TPUC MODEL_DIR OUT_DIR [LEVEL...]
# Every text level tpuc writes reads back into tpuc and compiles to the same
# bundle, byte for byte, as compiling the model directly (default levels:
# onnx-import tosa fused tpu isa).
set -euo pipefail
tpuc=$1 model=$2 out=$3
shift 3
levels=("$@")
[ ${#levels[@]} -gt 0 ] || levels=(onnx-import tosa fused tpu isa)
mkdir -p "$out"
"$tpuc" "$model/model.onnx" -o "$out/direct.tpub"
for level in "${levels[@]}"; do
  "$tpuc" "$model/model.onnx" --emit="$level" -o "$out/$level.mlir"
  "$tpuc" "$out/$level.mlir" -o "$out/$level.tpub"
  if ! cmp -s "$out/direct.tpub" "$out/$level.tpub"; then
    echo "emit-round-trip: $model: --emit=$level read back gives another bundle" >&2
    exit 1
  fi
done
echo "emit-round-trip: $(basename "$model"): ${levels[*]} give the same bundle"
