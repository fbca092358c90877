#!/usr/bin/env bash
# compile-and-run.sh TPUC TPUSIM MODEL_DIR CONFIG OUT_DIR [FUSION]
# Compiles MODEL_DIR/model.onnx for CONFIG (with --fusion=FUSION, default
# full) and runs it on the simulator with the model's test data; tpusim exits
# non-zero when an output is off tolerance.
set -euo pipefail
tpuc=$1 tpusim=$2 model=$3 config=$4 out=$5 fusion=${6:-full}
mkdir -p "$out"
"$tpuc" "$model/model.onnx" --config "$config" --fusion "$fusion" -o "$out/model.tpub"
# Both fidelities: the PE-level cycle mode and the fast mode must give the
# same outputs bit for bit and the same cycles.
for mode in cycle fast; do
  "$tpusim" "$out/model.tpub" --mode "$mode" --data "$model/test_data_set_0" \
    --report "$out/report-$mode.json" --outputs "$out/outputs-$mode"
done
for output in "$out"/outputs-cycle/*.pb; do
  cmp "$output" "$out/outputs-fast/$(basename "$output")"
done
# The report carries the keys scripts rely on, with a positive cycle count.
/usr/bin/python3 - "$out/report-cycle.json" "$out/report-fast.json" <<'PY'
import json, sys
cycle, fast = (json.load(open(path)) for path in sys.argv[1:3])
for key in ("total_cycles", "dram_bytes_read", "dram_bytes_written", "mxu_utilization", "units",
            "energy_pj", "by_source_op"):
    assert key in cycle, f"report lacks {key}"
assert cycle["total_cycles"] > 0 and cycle["dram_bytes_read"] > 0
# Vector-only models (softmax, layernorm) leave the matrix unit idle.
assert 0 <= cycle["mxu_utilization"] <= 1, cycle["mxu_utilization"]
assert (cycle["mxu_utilization"] > 0) == (cycle["macs"] > 0), (cycle["mxu_utilization"], cycle["macs"])
for key in ("total_cycles", "dram_bytes_read", "dram_bytes_written", "macs", "units", "sram"):
    assert cycle[key] == fast[key], f"{key}: cycle mode {cycle[key]}, fast mode {fast[key]}"
PY
