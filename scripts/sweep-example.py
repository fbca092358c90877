#!/usr/bin/python3
"""A sweep in twenty lines with the Python API (docs/python.md): the MLP on
square arrays from 8x8 to 128x128, its outputs checked against numpy's.
Run after ./scripts/build: ./scripts/sweep-example.py"""
import json, os, sys, tempfile
import numpy as np
from onnx import TensorProto, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "build", "python"))
import tpu  # noqa: E402

def tensor(path):
    return numpy_helper.to_array(TensorProto.FromString(open(path, "rb").read()))

mlp = os.path.join(ROOT, "models", "mlp")
x, expected = (tensor(f"{mlp}/test_data_set_0/{name}.pb") for name in ("input_0", "output_0"))
config = json.load(open(os.path.join(ROOT, "configs", "tpu-32x32.json")))
with tempfile.TemporaryDirectory() as work:
    for size in (8, 16, 32, 64, 128):
        config["array"].update(rows=size, cols=size)
        program = tpu.Program(tpu.compile(f"{mlp}/model.onnx", f"{work}/mlp.tpub", config=config))
        (y,), report = program.run([x])
        error = np.abs(y - expected).max() / np.abs(expected).max()
        print(f"{size:>3}x{size:<3} {report['total_cycles']:>7,} cycles  MXU "
              f"{100 * report['mxu_utilization']:5.2f}%  "
              f"{report['energy_pj']['total'] / 1e6:6.3f} uJ  rel. error {error:.1e}")
