#!/usr/bin/python3
"""Writes one small ONNX (or TOSA MLIR) model with test data whose expected
outputs numpy computes: numeric_case.py KIND OUT_DIR makes OUT_DIR/model.onnx
(or model.mlir) and OUT_DIR/test_data_set_0/{input,output}_N.pb, for
`tpusim --data`."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "scripts"))
import reference_ops as ref  # noqa: E402

RNG = np.random.default_rng(7)


def info(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, list(shape))


def onnx_type(value):
    """int64 for ArgMax's indices, float32 for everything else."""
    return TensorProto.INT64 if np.asarray(value).dtype == np.int64 else TensorProto.FLOAT


def transpose():
    x = RNG.standard_normal((2, 6, 3, 5)).astype(np.float32)
    nodes = [helper.make_node("Transpose", ["x"], ["heads"], perm=[0, 2, 1, 3]),
             helper.make_node("Transpose", ["x"], ["nhwc"], perm=[0, 2, 3, 1]),
             helper.make_node("Transpose", ["x"], ["reversed"], perm=[3, 2, 1, 0])]
    outputs = {"heads": x.transpose(0, 2, 1, 3), "nhwc": x.transpose(0, 2, 3, 1),
               "reversed": x.transpose(3, 2, 1, 0)}
    return nodes, {"x": x}, outputs, []


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
    outputs = {"conv": ref.conv2d(x, w, b, strides=(2, 1), pads=(2, 1, 1, 0), dilations=(1, 2)),
               "pointwise": ref.conv2d(x, w1, b1),
               "depthwise": ref.conv2d(x, wd, bd, strides=(2, 2), pads=(1, 1, 1, 1), group=3)}
    return nodes, {"x": x}, outputs, [("w", w), ("b", b), ("w1", w1), ("b1", b1), ("wd", wd),
                                      ("bd", bd)]


def pool():
    """Max pooling with padding over negative values (the padding must not
    win), average pooling with and without the padding in the count, a slice
    and a channel concat, on a 1x3x7x6 input; on one channel, ceil-mode
    average and padded max pooling (whose padding rows are strided: one
    element each)."""
    x = (RNG.standard_normal((1, 3, 7, 6)) - 3.0).astype(np.float32)
    y = RNG.standard_normal((1, 2, 7, 6)).astype(np.float32)
    z = (RNG.standard_normal((1, 1, 4, 5)) - 3.0).astype(np.float32)
    nodes = [helper.make_node("MaxPool", ["x"], ["max"], kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1]),
             helper.make_node("AveragePool", ["x"], ["avg"], kernel_shape=[3, 2],
                              strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("AveragePool", ["x"], ["avg_with_pad"], kernel_shape=[3, 3],
                              strides=[1, 1], pads=[1, 1, 1, 1], count_include_pad=1),
             helper.make_node("GlobalAveragePool", ["x"], ["global"]),
             helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["slice"]),
             helper.make_node("Concat", ["x", "y"], ["concat"], axis=1),
             helper.make_node("AveragePool", ["z"], ["avg_ceil"], kernel_shape=[3, 3],
                              strides=[2, 2], ceil_mode=1),
             helper.make_node("MaxPool", ["z"], ["max_one_channel"], kernel_shape=[3, 3],
                              pads=[2, 1, 2, 1])]
    outputs = {
        "max": ref.max_pool(x, (3, 3), (2, 2), (1, 1, 1, 1)),
        "avg": ref.avg_pool(x, (3, 2), (2, 2), (1, 1, 1, 1)),
        "avg_with_pad": ref.avg_pool(x, (3, 3), (1, 1), (1, 1, 1, 1), count_include_pad=True),
        "global": ref.global_avg_pool(x),
        "slice": x[:, 1:3, 2:6, 1:5],
        "concat": np.concatenate([x, y], axis=1),
        "avg_ceil": ref.avg_pool(z, (3, 3), (2, 2), ceil_mode=True),
        "max_one_channel": ref.max_pool(z, (3, 3), (1, 1), (2, 1, 2, 1))}
    initializers = [("starts", np.array([1, 2, 1], np.int64)),
                    ("ends", np.array([3, 6, 5], np.int64)),
                    ("axes", np.array([1, 2, 3], np.int64))]
    return nodes, {"x": x, "y": y, "z": z}, outputs, initializers


def windows():
    """Window reductions of the shape classes the other cases leave out, on
    a batch of two 4x9x10 images: max and average pooling padded on all
    sides with stride 2, ceil-mode max and average pooling, a dilated
    depthwise convolution padded on all sides with stride 2, one with
    stride 3 along the width (three column phases), and a global average."""
    x = (RNG.standard_normal((2, 4, 9, 10)) - 3.0).astype(np.float32)
    wd = RNG.standard_normal((4, 1, 3, 3)).astype(np.float32)
    bd = RNG.standard_normal(4).astype(np.float32)
    w3 = RNG.standard_normal((4, 1, 2, 3)).astype(np.float32)
    b3 = RNG.standard_normal(4).astype(np.float32)
    nodes = [helper.make_node("MaxPool", ["x"], ["max_padded"], kernel_shape=[3, 3],
                              strides=[2, 2], pads=[1, 2, 2, 1]),
             helper.make_node("AveragePool", ["x"], ["avg_padded"], kernel_shape=[3, 3],
                              strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("MaxPool", ["x"], ["max_ceil"], kernel_shape=[3, 3],
                              strides=[2, 2], ceil_mode=1),
             helper.make_node("AveragePool", ["x"], ["avg_ceil"], kernel_shape=[2, 2],
                              strides=[2, 2], ceil_mode=1),
             helper.make_node("Conv", ["x", "wd", "bd"], ["depthwise_dilated"], pads=[2, 2, 2, 2],
                              strides=[2, 2], dilations=[2, 2], group=4),
             helper.make_node("Conv", ["x", "w3", "b3"], ["depthwise_stride3"], pads=[0, 1, 1, 2],
                              strides=[1, 3], group=4),
             helper.make_node("GlobalAveragePool", ["x"], ["global"])]
    outputs = {
        "max_padded": ref.max_pool(x, (3, 3), (2, 2), (1, 2, 2, 1)),
        "avg_padded": ref.avg_pool(x, (3, 3), (2, 2), (1, 1, 1, 1)),
        "max_ceil": ref.max_pool(x, (3, 3), (2, 2), ceil_mode=True),
        "avg_ceil": ref.avg_pool(x, (2, 2), (2, 2), ceil_mode=True),
        "depthwise_dilated": ref.conv2d(x, wd, bd, strides=(2, 2), pads=(2, 2, 2, 2),
                                        dilations=(2, 2), group=4),
        "depthwise_stride3": ref.conv2d(x, w3, b3, strides=(1, 3), pads=(0, 1, 1, 2), group=4),
        "global": ref.global_avg_pool(x)}
    return nodes, {"x": x}, outputs, [("wd", wd), ("bd", bd), ("w3", w3), ("b3", b3)]


def window_epilogues():
    """Window reductions with the elementwise ops after them, which run on
    each output band before its store where their operands are rows over
    the channels or scalars: a depthwise convolution and ReLU6, a max pool
    times a per-channel row plus a scalar, then a sigmoid, and a global
    average and ReLU. An average pool plus a whole tensor stays apart."""
    x = RNG.standard_normal((1, 6, 7, 8)).astype(np.float32)
    wd = RNG.standard_normal((6, 1, 3, 3)).astype(np.float32)
    bd = RNG.standard_normal(6).astype(np.float32)
    scale = RNG.standard_normal((1, 6, 1, 1)).astype(np.float32)
    shift = np.array([0.25], np.float32)
    y = RNG.standard_normal((1, 6, 7, 8)).astype(np.float32)
    bounds = [np.array(0.0, np.float32), np.array(6.0, np.float32)]
    nodes = [helper.make_node("Conv", ["x", "wd", "bd"], ["depthwise"], pads=[1, 1, 1, 1], group=6),
             helper.make_node("Clip", ["depthwise", "low", "high"], ["depthwise_relu6"]),
             helper.make_node("MaxPool", ["x"], ["pooled"], kernel_shape=[3, 3], strides=[2, 2]),
             helper.make_node("Mul", ["pooled", "scale"], ["scaled"]),
             helper.make_node("Add", ["scaled", "shift"], ["shifted"]),
             helper.make_node("Sigmoid", ["shifted"], ["pool_sigmoid"]),
             helper.make_node("GlobalAveragePool", ["x"], ["global"]),
             helper.make_node("Relu", ["global"], ["global_relu"]),
             helper.make_node("AveragePool", ["x"], ["averaged"], kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["averaged", "y"], ["avg_plus_y"])]
    depthwise = ref.conv2d(x, wd, bd, pads=(1, 1, 1, 1), group=6)
    shifted = ref.max_pool(x, (3, 3), (2, 2)) * scale + shift
    outputs = {
        "depthwise_relu6": np.clip(depthwise, 0.0, 6.0),
        "pool_sigmoid": 1.0 / (1.0 + np.exp(-shifted)),
        "global_relu": np.maximum(ref.global_avg_pool(x), 0.0),
        "avg_plus_y": ref.avg_pool(x, (3, 3), (1, 1), (1, 1, 1, 1)) + y}
    return nodes, {"x": x, "y": y}, outputs, [("wd", wd), ("bd", bd), ("scale", scale),
                                               ("shift", shift), ("low", bounds[0]),
                                               ("high", bounds[1])]


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
    expected = ref.erf(x.astype(np.float64))
    return [helper.make_node("Erf", ["x"], ["erf"])], {"x": x}, {"erf": expected}, []


TOSA_TRANSCENDENTALS = """func.func @main(%x: tensor<4x300xf32>, %p: tensor<4x300xf32>) -> (tensor<4x300xf32>, tensor<4x300xf32>, tensor<4x300xf32>) {
  %s = tosa.sigmoid %x : (tensor<4x300xf32>) -> tensor<4x300xf32>
  %t = tosa.tanh %x : (tensor<4x300xf32>) -> tensor<4x300xf32>
  %l = tosa.log %p : (tensor<4x300xf32>) -> tensor<4x300xf32>
  return %s, %t, %l : tensor<4x300xf32>, tensor<4x300xf32>, tensor<4x300xf32>
}
"""


def transcendentals():
    """v.sigmoid and v.tanh over [-30, 30], v.log over [1e-6, 1e6], as TOSA
    MLIR (model.mlir), against float64 numpy."""
    x = np.linspace(-30.0, 30.0, 1200).astype(np.float32).reshape(4, 300)
    p = np.geomspace(1e-6, 1e6, 1200).astype(np.float32).reshape(4, 300)
    x64, p64 = x.astype(np.float64), p.astype(np.float64)
    outputs = {"output_0": 1 / (1 + np.exp(-x64)), "output_1": np.tanh(x64),
               "output_2": np.log(p64)}
    return TOSA_TRANSCENDENTALS, {"input_0": x, "input_1": p}, outputs, []


TOSA_SELECT = """func.func @main(%x: tensor<6x40xf32>, %y: tensor<6x40xf32>, %row: tensor<1x40xf32>) -> (tensor<6x40xf32>, tensor<6x40xf32>, tensor<6x40xf32>) {
  %gt = tosa.greater %x, %y : (tensor<6x40xf32>, tensor<6x40xf32>) -> tensor<6x40xi1>
  %where = tosa.select %gt, %x, %row : (tensor<6x40xi1>, tensor<6x40xf32>, tensor<1x40xf32>) -> tensor<6x40xf32>
  %ge = tosa.greater_equal %x, %row : (tensor<6x40xf32>, tensor<1x40xf32>) -> tensor<6x40xi1>
  %mask = tosa.cast %ge : (tensor<6x40xi1>) -> tensor<6x40xf32>
  %eq = tosa.equal %x, %y : (tensor<6x40xf32>, tensor<6x40xf32>) -> tensor<6x40xi1>
  %same = tosa.select %eq, %x, %y : (tensor<6x40xi1>, tensor<6x40xf32>, tensor<6x40xf32>) -> tensor<6x40xf32>
  return %where, %mask, %same : tensor<6x40xf32>, tensor<6x40xf32>, tensor<6x40xf32>
}
"""


def select():
    """Compares as 1.0/0.0 masks (v.gt, v.ge, v.eq) and selects on them, a
    branch broadcast from one row; ties in x == y on purpose."""
    x = RNG.standard_normal((6, 40)).astype(np.float32)
    y = RNG.standard_normal((6, 40)).astype(np.float32)
    y[:, ::3] = x[:, ::3]
    row = RNG.standard_normal((1, 40)).astype(np.float32)
    outputs = {"output_0": np.where(x > y, x, row), "output_1": (x >= row).astype(np.float32),
               "output_2": np.where(x == y, x, y)}
    return TOSA_SELECT, {"input_0": x, "input_1": y, "input_2": row}, outputs, []


def argmax_fused():
    """ArgMin (select_last_index, no keepdims) and ArgMax (over the rows) of
    one Gemm + Relu, which fusion makes a matmul epilogue; small integers,
    exact in bf16, so both runs must give numpy's indices, ties included."""
    x = RNG.integers(-3, 4, (6, 8)).astype(np.float32)
    w = RNG.integers(-2, 3, (8, 5)).astype(np.float32)
    b = RNG.integers(-2, 3, (5,)).astype(np.float32)
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["g"], name="fc"),
             helper.make_node("Relu", ["g"], ["r"], name="relu"),
             helper.make_node("ArgMin", ["r"], ["output_0"], name="argmin", axis=1, keepdims=0,
                              select_last_index=1),
             helper.make_node("ArgMax", ["r"], ["output_1"], name="argmax", axis=0)]
    r = np.maximum(x @ w + b, 0)
    outputs = {"output_0": r.shape[1] - 1 - np.argmin(r[:, ::-1], axis=1),
               "output_1": np.argmax(r, axis=0)[None]}
    return nodes, {"x": x}, outputs, [("w", w), ("b", b)]


def residual():
    """A residual block on an NCHW batch of 2 (2x6x7x5): 3x3 conv, relu,
    3x3 conv, plus the input, relu. The convolutions read the input and
    write the output in NCHW with transposing DMA (the layout transposes
    fold), in tiles of rows that span both images."""
    x = RNG.standard_normal((2, 6, 7, 5)).astype(np.float32)
    w1 = RNG.standard_normal((6, 6, 3, 3)).astype(np.float32)
    b1 = RNG.standard_normal(6).astype(np.float32)
    w2 = RNG.standard_normal((6, 6, 3, 3)).astype(np.float32)
    b2 = RNG.standard_normal(6).astype(np.float32)
    pads = [1, 1, 1, 1]
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=pads, name="c1"),
             helper.make_node("Relu", ["c1"], ["r1"], name="r1"),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=pads, name="c2"),
             helper.make_node("Add", ["c2", "x"], ["sum"], name="sum"),
             helper.make_node("Relu", ["sum"], ["y"], name="y")]
    r1 = np.maximum(ref.conv2d(x, w1, b1, pads=(1, 1, 1, 1)), 0)
    y = np.maximum(ref.conv2d(r1, w2, b2, pads=(1, 1, 1, 1)) + x, 0)
    return nodes, {"x": x}, {"y": y}, [("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2)]


def wide_conv():
    """A padded 3x3 convolution of an NCHW batch of 2 (2x8x3x60) whose rows
    are too wide for any band of padded rows to fit a 1024-word scratchpad:
    its im2col matrix is built in DRAM, read through the NCHW input."""
    x = RNG.standard_normal((2, 8, 3, 60)).astype(np.float32)
    w = RNG.standard_normal((4, 8, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1], name="c")]
    return nodes, {"x": x}, {"y": ref.conv2d(x, w, b, pads=(1, 1, 1, 1))}, [("w", w), ("b", b)]



def stacked_conv():
    """Convolutions of a one-channel batch of 2 (2x1x12x40) whose bands stack
    their input rows: padded on every side and strided down the rows,
    dilated down the rows with padding at the top and bottom only, and a
    6x2 window whose 7 output rows an image takes in groups of 3, 3 and 1
    (on 32x32: the last group's unused words zeros). They read the input
    scaled by a lone op first, so that their band buffers held other values
    before (their zeros must be written, not found)."""
    x = RNG.standard_normal((2, 1, 12, 40)).astype(np.float32)
    scale = np.array([1.5], np.float32)
    w = RNG.standard_normal((5, 1, 4, 3)).astype(np.float32)
    b = RNG.standard_normal(5).astype(np.float32)
    wd = RNG.standard_normal((3, 1, 3, 2)).astype(np.float32)
    bd = RNG.standard_normal(3).astype(np.float32)
    wg = RNG.standard_normal((4, 1, 6, 2)).astype(np.float32)
    bg = RNG.standard_normal(4).astype(np.float32)
    nodes = [helper.make_node("Mul", ["x", "scale"], ["scaled"], name="scaled"),
             helper.make_node("Conv", ["scaled", "w", "b"], ["strided"], pads=[2, 1, 1, 2],
                              strides=[2, 1], name="strided"),
             helper.make_node("Conv", ["scaled", "wd", "bd"], ["dilated"], pads=[3, 0, 1, 0],
                              dilations=[2, 1], name="dilated"),
             helper.make_node("Conv", ["scaled", "wg", "bg"], ["grouped"], name="grouped")]
    xs = x * scale[0]
    outputs = {"strided": ref.conv2d(xs, w, b, strides=(2, 1), pads=(2, 1, 1, 2)),
               "dilated": ref.conv2d(xs, wd, bd, pads=(3, 0, 1, 0), dilations=(2, 1)),
               "grouped": ref.conv2d(xs, wg, bg)}
    return nodes, {"x": x}, outputs, [("scale", scale), ("w", w), ("b", b), ("wd", wd),
                                      ("bd", bd), ("wg", wg), ("bg", bg)]


def attention():
    """Two sequences (N = 2) of 5 tokens through one attention layer with 3
    heads of 4, then a residual, a layer normalization and GELU (exact, with
    Erf): the head split and merge transposes fold into the batched matmuls,
    whose batch n*3 + h is head h of sequence n; the normalization's and
    GELU's scalars and rows come in with one transfer per group."""
    n, s, heads, d = 2, 5, 3, 4
    e = heads * d
    x = RNG.standard_normal((n, s, e)).astype(np.float32)
    params = {name: RNG.standard_normal(shape).astype(np.float32) * 0.5
              for name, shape in (("wq", (e, e)), ("wk", (e, e)), ("wv", (e, e)),
                                  ("bq", (e,)), ("bk", (e,)), ("bv", (e,)))}
    gamma = RNG.uniform(0.5, 1.5, e).astype(np.float32)
    beta = RNG.standard_normal(e).astype(np.float32)
    shape = np.array([n, s, heads, d], np.int64)
    merged = np.array([n, s, e], np.int64)
    scale, half, root2, one = (np.array(v, np.float32) for v in (2.0, 0.5, np.sqrt(2.0), 1.0))
    nodes = []
    for t in "qkv":
        nodes += [helper.make_node("MatMul", ["x", "w" + t], [t + "m"]),
                  helper.make_node("Add", [t + "m", "b" + t], [t + "b"]),
                  helper.make_node("Reshape", [t + "b", "shape"], [t + "r"])]
    nodes += [helper.make_node("Transpose", ["qr"], ["q"], perm=[0, 2, 1, 3]),
              helper.make_node("Transpose", ["kr"], ["kt"], perm=[0, 2, 3, 1]),
              helper.make_node("Transpose", ["vr"], ["v"], perm=[0, 2, 1, 3]),
              helper.make_node("MatMul", ["q", "kt"], ["scores"]),
              helper.make_node("Div", ["scores", "scale"], ["scaled"]),
              helper.make_node("Softmax", ["scaled"], ["p"], axis=-1),
              helper.make_node("MatMul", ["p", "v"], ["context"]),
              helper.make_node("Transpose", ["context"], ["ct"], perm=[0, 2, 1, 3]),
              helper.make_node("Reshape", ["ct", "merged"], ["cm"]),
              helper.make_node("Add", ["cm", "x"], ["res"]),
              helper.make_node("LayerNormalization", ["res", "gamma", "beta"], ["ln"], axis=-1,
                               epsilon=1e-5),
              helper.make_node("Div", ["ln", "root2"], ["g0"]),
              helper.make_node("Erf", ["g0"], ["g1"]),
              helper.make_node("Add", ["g1", "one"], ["g2"]),
              helper.make_node("Mul", ["ln", "g2"], ["g3"]),
              helper.make_node("Mul", ["g3", "half"], ["y"])]
    x64 = x.astype(np.float64)
    p64 = {k: v.astype(np.float64) for k, v in params.items()}

    def split(t):
        return (x64 @ p64["w" + t] + p64["b" + t]).reshape(n, s, heads, d)
    q = split("q").transpose(0, 2, 1, 3)
    k = split("k").transpose(0, 2, 3, 1)
    v = split("v").transpose(0, 2, 1, 3)
    z = q @ k / 2.0
    z = np.exp(z - z.max(-1, keepdims=True))
    context = (z / z.sum(-1, keepdims=True)) @ v
    res = context.transpose(0, 2, 1, 3).reshape(n, s, e) + x64
    mean = res.mean(-1, keepdims=True)
    var = ((res - mean) ** 2).mean(-1, keepdims=True)
    ln = (res - mean) / np.sqrt(var + 1e-5) * gamma + beta
    y = ln * 0.5 * (1.0 + ref.erf(ln / np.sqrt(2.0)))
    initializers = list(params.items()) + [("gamma", gamma), ("beta", beta), ("shape", shape),
                                           ("merged", merged), ("scale", scale), ("half", half),
                                           ("root2", root2), ("one", one)]
    return nodes, {"x": x}, {"y": y}, initializers


# The opset a case needs where it is not 13.
OPSETS = {"attention": 17}

CASES = {"transpose": transpose, "residual": residual, "conv": conv, "pool": pool, "windows": windows,
         "tosa_pad": tosa_pad, "erf": erf, "transcendentals": transcendentals, "select": select,
         "argmax_fused": argmax_fused, "window_epilogues": window_epilogues,
         "attention": attention, "wide_conv": wide_conv, "stacked_conv": stacked_conv}


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
                              [info(n, v.shape, onnx_type(v)) for n, v in outputs.items()],
                              initializer=[numpy_helper.from_array(v, n) for n, v in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSETS.get(kind, 13))])
    model.ir_version = 8
    with open(os.path.join(out, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())


def write_data(data, inputs, outputs):
    for prefix, tensors in (("input", inputs), ("output", outputs)):
        for i, (name, value) in enumerate(tensors.items()):
            with open(os.path.join(data, f"{prefix}_{i}.pb"), "wb") as f:
                dtype = np.int64 if onnx_type(value) == TensorProto.INT64 else np.float32
                f.write(numpy_helper.from_array(np.asarray(value, dtype),
                                                name).SerializeToString())


if __name__ == "__main__":
    main()
