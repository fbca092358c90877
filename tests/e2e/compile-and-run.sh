#!/usr/bin/env bash
# compile-and-run.sh TPUC TPUSIM MODEL_DIR CONFIG OUT_DIR
# Compiles MODEL_DIR/model.onnx for CONFIG and runs it on the simulator with the
# model's test data; tpusim exits non-zero when an output is off tolerance.
set -euo pipefail
tpuc=$1 tpusim=$2 model=$3 config=$4 out=$5
mkdir -p "$out"
"$tpuc" "$model/model.onnx" --config "$config" -o "$out/model.tpub"
"$tpusim" "$out/model.tpub" --data "$model/test_data_set_0" --report "$out/report.json"
# The report carries the keys scripts rely on, with a positive cycle count.
/usr/bin/python3 - "$out/report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
for key in ("total_cycles", "dram_bytes_read", "dram_bytes_written", "mxu_utilization"):
    assert key in report, f"report lacks {key}"
assert report["total_cycles"] > 0 and report["dram_bytes_read"] > 0
assert 0 < report["mxu_utilization"] <= 1, report["mxu_utilization"]
PY
