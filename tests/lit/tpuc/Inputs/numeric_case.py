#!/usr/bin/python3
"""Writes one small ONNX (or TOSA MLIR) model with test data whose expected
outputs numpy computes: numeric_case.py KIND OUT_DIR makes OUT_DIR/model.onnx
(or model.mlir) and OUT_DIR/test_data_set_0/{input,output}_N.pb, for
`tpusim --data`."""
import math
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


def pool_reference(x, kernel, stride, pads, reduce, pad_value):
    """A 2-D pool over NCHW with pads (top, left, bottom, right) of pad_value;
    reduce(window, valid) gets the window and a mask of its real elements."""
    n, c, h, w = x.shape
    top, left, bottom, right = pads
    xp = np.full((n, c, h + top + bottom, w + left + right), pad_value, np.float64)
    xp[:, :, top:top + h, left:left + w] = x
    mask = np.zeros(xp.shape[2:], bool)
    mask[top:top + h, left:left + w] = True
    oh = (h + top + bottom - kernel[0]) // stride[0] + 1
    ow = (w + left + right - kernel[1]) // stride[1] + 1
    y = np.zeros((n, c, oh, ow), np.float64)
    for i in range(oh):
        for j in range(ow):
            rows = slice(i * stride[0], i * stride[0] + kernel[0])
            cols = slice(j * stride[1], j * stride[1] + kernel[1])
            y[:, :, i, j] = reduce(xp[:, :, rows, cols], mask[rows, cols])
    return y.astype(np.float32)


def pool():
    """Max pooling with padding over negative values (the padding must not
    win), average pooling with and without the padding in the count, a slice
    and a channel concat, on a 1x3x7x6 input."""
    x = (RNG.standard_normal((1, 3, 7, 6)) - 3.0).astype(np.float32)
    y = RNG.standard_normal((1, 2, 7, 6)).astype(np.float32)
    nodes = [helper.make_node("MaxPool", ["x"], ["max"], kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1]),
             helper.make_node("AveragePool", ["x"], ["avg"], kernel_shape=[3, 2],
                              strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("AveragePool", ["x"], ["avg_with_pad"], kernel_shape=[3, 3],
                              strides=[1, 1], pads=[1, 1, 1, 1], count_include_pad=1),
             helper.make_node("GlobalAveragePool", ["x"], ["global"]),
             helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["slice"]),
             helper.make_node("Concat", ["x", "y"], ["concat"], axis=1)]
    mean = lambda window, valid: window[:, :, valid].mean(axis=2)
    outputs = {
        "max": pool_reference(x, (3, 3), (2, 2), (1, 1, 1, 1), lambda v, _: v.max(axis=(2, 3)),
                              -np.inf),
        "avg": pool_reference(x, (3, 2), (2, 2), (1, 1, 1, 1), mean, 0.0),
        "avg_with_pad": pool_reference(x, (3, 3), (1, 1), (1, 1, 1, 1),
                                       lambda v, _: v.mean(axis=(2, 3)), 0.0),
        "global": x.mean(axis=(2, 3), keepdims=True),
        "slice": x[:, 1:3, 2:6, 1:5],
        "concat": np.concatenate([x, y], axis=1)}
    initializers = [("starts", np.array([1, 2, 1], np.int64)),
                    ("ends", np.array([3, 6, 5], np.int64)),
                    ("axes", np.array([1, 2, 3], np.int64))]
    return nodes, {"x": x, "y": y}, outputs, initializers


TOSA_PAD = """func.func @main(%x: tensor<1x3x3x4xf32>) -> tensor<1x6x4x4xf32> {
  %p = "tosa.const"() {value = dense<[[0, 0], [1, 2], [1, 0], [0, 0]]> : tensor<4x2xi32>} : () -> tensor<4x2xi32>
  %v = "tosa.const"() {value = dense<1.5> : tensor<f32>} : () -> tensor<f32>
  %y = tosa.pad %x, %p, %v : (tensor<1x3x3x4xf32>, tensor<4x2xi32>, tensor<f32>) -> tensor<1x6x4x4xf32>
  return %y : tensor<1x6x4x4xf32>
}
"""


def tosa_pad():
    """tosa.pad with a non-zero value (the importer emits only zeros), as TOSA
    MLIR: the model is model.mlir."""
    x = RNG.standard_normal((1, 3, 3, 4)).astype(np.float32)
    y = np.pad(x, ((0, 0), (1, 2), (1, 0), (0, 0)), constant_values=1.5)
    return TOSA_PAD, {"input_0": x}, {"output_0": y}, []


def erf():
    """Erf over [-5, 5] in small steps, with 0, tiny values and +-40."""
    x = np.concatenate([np.linspace(-5.0, 5.0, 1001), [0.0, 1e-30, -1e-30, 1e-7, -40.0, 40.0]])
    x = x.astype(np.float32).reshape(1, -1)
    erf_values = np.vectorize(math.erf)(x.astype(np.float64))
    return [helper.make_node("Erf", ["x"], ["erf"])], {"x": x}, {"erf": erf_values}, []


CASES = {"transpose": transpose, "conv": conv, "pool": pool, "tosa_pad": tosa_pad, "erf": erf}


def main():
    kind, out = sys.argv[1], sys.argv[2]
    nodes, inputs, outputs, initializers = CASES[kind]()
    data = os.path.join(out, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    write_data(data, inputs, outputs)
    if isinstance(nodes, str):
        with open(os.path.join(out, "model.mlir"), "w") as f:
            f.write(nodes)
        return
    graph = helper.make_graph(nodes, kind, [info(n, v.shape) for n, v in inputs.items()],
                              [info(n, v.shape) for n, v in outputs.items()],
                              initializer=[numpy_helper.from_array(v, n) for n, v in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    with open(os.path.join(out, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())


def write_data(data, inputs, outputs):
    for prefix, tensors in (("input", inputs), ("output", outputs)):
        for i, (name, value) in enumerate(tensors.items()):
            with open(os.path.join(data, f"{prefix}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(value, np.float32),
                                                name).SerializeToString())


if __name__ == "__main__":
    main()
