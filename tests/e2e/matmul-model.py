#!/usr/bin/python3
"""matmul-model.py OUT_DIR M K N: a MatMul model (scripts/toolchain.py's
matmul_model) in ONNX test-data layout, its expected output from numpy."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
from toolchain import matmul_model  # noqa: E402

out, m, k, n = sys.argv[1], *map(int, sys.argv[2:5])
os.makedirs(out, exist_ok=True)
matmul_model(os.path.join(out, "model.onnx"), m, k, n, os.path.join(out, "test_data_set_0"))
