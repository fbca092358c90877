#!/usr/bin/python3
"""Writes one small ONNX model with test data whose expected outputs numpy
computes: numeric_case.py KIND OUT_DIR makes OUT_DIR/model.onnx and
OUT_DIR/test_data_set_0/{input,output}_N.pb, for `tpusim --data`."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(7)


def info(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))


def transpose():
    x = RNG.standard_normal((2, 6, 3, 5)).astype(np.float32)
    nodes = [helper.make_node("Transpose", ["x"], ["heads"], perm=[0, 2, 1, 3]),
             helper.make_node("Transpose", ["x"], ["nhwc"], perm=[0, 2, 3, 1]),
             helper.make_node("Transpose", ["x"], ["reversed"], perm=[3, 2, 1, 0])]
    outputs = {"heads": x.transpose(0, 2, 1, 3), "nhwc": x.transpose(0, 2, 3, 1),
               "reversed": x.transpose(3, 2, 1, 0)}
    return nodes, {"x": x}, outputs, []


CASES = {"transpose": transpose}


def main():
    kind, out = sys.argv[1], sys.argv[2]
    nodes, inputs, outputs, initializers = CASES[kind]()
    graph = helper.make_graph(nodes, kind, [info(n, v.shape) for n, v in inputs.items()],
                              [info(n, v.shape) for n, v in outputs.items()],
                              initializer=[numpy_helper.from_array(v, n) for n, v in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    data = os.path.join(out, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    with open(os.path.join(out, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for prefix, tensors in (("input", inputs), ("output", outputs)):
        for i, (name, value) in enumerate(tensors.items()):
            with open(os.path.join(data, f"{prefix}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(value.astype(np.float32), name).SerializeToString())


if __name__ == "__main__":
    main()
