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


def conv_reference(x, w, b, stride, pads, dilation, group):
    """ONNX Conv (NCHW, OIHW weights), computed one output element at a time."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    top, left, bottom, right = pads
    xp = np.zeros((n, c, h + top + bottom, wd + left + right), np.float64)
    xp[:, :, top:top + h, left:left + wd] = x
    oh = (h + top + bottom - (kh - 1) * dilation[0] - 1) // stride[0] + 1
    ow = (wd + left + right - (kw - 1) * dilation[1] - 1) // stride[1] + 1
    y = np.zeros((n, o, oh, ow), np.float64)
    per_group = o // group
    for oc in range(o):
        g = oc // per_group
        for i in range(oh):
            for j in range(ow):
                rows = i * stride[0] + dilation[0] * np.arange(kh)
                cols = j * stride[1] + dilation[1] * np.arange(kw)
                window = xp[:, g * cg:(g + 1) * cg][:, :, rows][:, :, :, cols]
                y[:, oc, i, j] = (window * w[oc]).sum(axis=(1, 2, 3)) + b[oc]
    return y.astype(np.float32)


def conv():
    """A padded, strided, dilated convolution and a 1x1 one, and a padded
    strided depthwise convolution, on a 2x3x9x8 input."""
    x = RNG.standard_normal((2, 3, 9, 8)).astype(np.float32)
    w = RNG.standard_normal((5, 3, 3, 2)).astype(np.float32)
    b = RNG.standard_normal(5).astype(np.float32)
    w1 = RNG.standard_normal((4, 3, 1, 1)).astype(np.float32)
    b1 = RNG.standard_normal(4).astype(np.float32)
    wd = RNG.standard_normal((3, 1, 3, 3)).astype(np.float32)
    bd = RNG.standard_normal(3).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["conv"], pads=[2, 1, 1, 0],
                              strides=[2, 1], dilations=[1, 2]),
             helper.make_node("Conv", ["x", "w1", "b1"], ["pointwise"]),
             helper.make_node("Conv", ["x", "wd", "bd"], ["depthwise"], pads=[1, 1, 1, 1],
                              strides=[2, 2], group=3)]
    outputs = {"conv": conv_reference(x, w, b, (2, 1), (2, 1, 1, 0), (1, 2), 1),
               "pointwise": conv_reference(x, w1, b1, (1, 1), (0, 0, 0, 0), (1, 1), 1),
               "depthwise": conv_reference(x, wd, bd, (2, 2), (1, 1, 1, 1), (1, 1), 3)}
    return nodes, {"x": x}, outputs, [("w", w), ("b", b), ("w1", w1), ("b1", b1), ("wd", wd),
                                      ("bd", bd)]


CASES = {"transpose": transpose, "conv": conv}


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
