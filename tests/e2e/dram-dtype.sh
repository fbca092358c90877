#!/usr/bin/env bash
# dram-dtype.sh TPUC TPUSIM TPU_OBJDUMP MODEL_DIR CONFIG OUT_DIR
# The model compiled with --dram-dtype=array (the default: on a bf16 array,
# what only the matrix unit reads is stored as bf16) and with
# --dram-dtype=f32 computes the same outputs bit for bit on the model's test
# data (both pass the output check), while the first moves fewer DRAM bytes
# and its bundle holds bf16 weights with their fp32 values.
set -euo pipefail
tpuc=$1 tpusim=$2 objdump=$3 model=$4 config=$5 out=$6
rm -rf "$out"
mkdir -p "$out"
for dtype in array f32; do
  "$tpuc" "$model/model.onnx" --config "$config" --dram-dtype "$dtype" -o "$out/$dtype.tpub"
  "$tpusim" "$out/$dtype.tpub" --data "$model/test_data_set_0" --report "$out/$dtype.json" \
    --outputs "$out/outputs-$dtype" > "$out/$dtype.log"
done
ls "$out"/outputs-array/*.pb > /dev/null
for output in "$out"/outputs-array/*.pb; do
  cmp "$output" "$out/outputs-f32/$(basename "$output")"
done
"$objdump" "$out/array.tpub" > "$out/array.dump"
"$objdump" "$out/f32.tpub" > "$out/f32.dump"
grep -q "stored as bf16, with their fp32 values" "$out/array.dump"
if grep -q "stored as bf16" "$out/f32.dump"; then
  echo "the --dram-dtype=f32 bundle holds bf16 constants" >&2
  exit 1
fi
/usr/bin/python3 - "$out/array.json" "$out/f32.json" <<'PY'
import json, sys
array, f32 = (json.load(open(path)) for path in sys.argv[1:3])
moved = lambda report: report["dram_bytes_read"] + report["dram_bytes_written"]
assert moved(array) < moved(f32), (moved(array), moved(f32))
print(f"DRAM bytes {moved(f32)} -> {moved(array)}, cycles {f32['total_cycles']} -> "
      f"{array['total_cycles']}")
PY
