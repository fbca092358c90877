#!/usr/bin/python3
"""Generates one small model per ONNX operator form the importer supports, at
the lowest and the highest opset it is tested at, with numpy-computed expected
outputs, in ONNX test-data layout (NAME-opsetN/model.onnx and
test_data_set_0/{input,output}_N.pb). Each form is written in the syntax of its
opset (attributes before the opset that made them inputs); models older than
opset 11 reach the importer through ONNX's version converter.

    gen-op-models.py --out DIR          writes every model
    gen-op-models.py --list             prints one 'NAME-opsetN' line per model

Over 500 lines on purpose: it is the one list of tested forms (CMake reads
--list), each case a few lines beside its numpy reference.

ctest runs each on every preset (tests/e2e) and on the CPU oracle
(tests/importer-numeric).
"""
import argparse
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import reference_ops as ref

f32 = np.float32
CASES = {}
MAX_OPSET = 18


class Case:
    def __init__(self, build, lo, hi):
        self.build, self.lo, self.hi = build, lo, hi


def case(lo=7, hi=MAX_OPSET):
    """Registers build(opset) -> (nodes, inputs, outputs, constants), each a
    dict name -> array (outputs: expected values)."""
    def register(build):
        CASES[build.__name__.replace("_", "-")] = Case(build, lo, hi)
        return build
    return register


def rng(seed):
    return np.random.default_rng(seed)


def randn(seed, *shape):
    return rng(seed).standard_normal(shape).astype(f32)


def ints(*values):
    return np.array(values, dtype=np.int64)


def node(op, inputs, outputs=("y",), **attrs):
    return helper.make_node(op, list(inputs), list(outputs), name=op.lower(), **attrs)


def axes_form(opset, since, inputs, axes, **attrs):
    """An op whose axes became an input at opset `since`: (inputs, attrs)."""
    if axes is None:
        return list(inputs), attrs
    if opset < since:
        return list(inputs), dict(attrs, axes=list(axes))
    return list(inputs) + ["axes"], attrs


# --- elementwise functions of one input -------------------------------------

def unary_case(name, op, reference, lo=7, data=None, **attrs):
    def build(opset):
        x = data if data is not None else randn(1, 2, 3, 4, 5)
        return [node(op, "x", **attrs)], {"x": x}, {"y": reference(x.astype(np.float64))}, {}
    build.__name__ = name
    case(lo=lo)(build)


def positive(seed, *shape):
    return (np.abs(randn(seed, *shape)) + 0.1).astype(f32)


def elu(x, alpha):
    return np.where(x > 0, x, alpha * (np.exp(x) - 1))


unary_case("neg", "Neg", lambda x: -x)
unary_case("abs", "Abs", np.abs)
unary_case("sqrt", "Sqrt", np.sqrt, data=positive(2, 2, 3, 4, 5))
unary_case("reciprocal", "Reciprocal", lambda x: 1 / x, data=positive(3, 2, 3, 4, 5))
unary_case("exp", "Exp", np.exp)
unary_case("erf", "Erf", lambda x: np.vectorize(math.erf)(x), lo=9)
unary_case("softsign", "Softsign", lambda x: x / (1 + np.abs(x)))
unary_case("hardsigmoid", "HardSigmoid", lambda x: np.clip(0.3 * x + 0.4, 0, 1), alpha=0.3,
           beta=0.4)
unary_case("hardswish", "HardSwish", lambda x: x * np.clip(x / 6 + 0.5, 0, 1), lo=14)
unary_case("elu", "Elu", lambda x: elu(x, 0.7), alpha=0.7)
unary_case("selu", "Selu", lambda x: 1.2 * np.where(x > 0, x, 1.5 * (np.exp(x) - 1)), alpha=1.5,
           gamma=1.2)
unary_case("leakyrelu", "LeakyRelu", lambda x: np.where(x >= 0, x, 0.1 * x), alpha=0.1)
unary_case("leakyrelu-steep", "LeakyRelu", lambda x: np.where(x >= 0, x, 1.5 * x), alpha=1.5)
unary_case("relu", "Relu", lambda x: np.maximum(x, 0))
unary_case("celu", "Celu", lambda x: np.maximum(0, x) + np.minimum(0, 0.8 * (np.exp(x / 0.8) - 1)),
           lo=12, alpha=0.8)
unary_case("sigmoid", "Sigmoid", lambda x: 1 / (1 + np.exp(-x)))
unary_case("tanh", "Tanh", np.tanh)
unary_case("log", "Log", np.log, data=positive(4, 2, 3, 4, 5))
unary_case("softplus", "Softplus", lambda x: np.log(np.exp(x) + 1))


@case()
def prelu_channel(opset):
    """A [C, 1, 1] slope over an NCHW input: a middle-axis broadcast."""
    x, slope = randn(5, 2, 3, 4, 5), randn(6, 3, 1, 1)
    return ([node("PRelu", ["x", "slope"])], {"x": x},
            {"y": np.where(x >= 0, x, slope * x)}, {"slope": slope})


@case()
def pow_square(opset):
    x = randn(7, 3, 8)
    return [node("Pow", ["x", "two"])], {"x": x}, {"y": x * x}, {"two": np.array(2, dtype=f32)}


@case()
def pow_forms(opset):
    """Constant exponents the vector unit takes apart: a negative integer
    (squarings and a reciprocal), 0.5 (through rsqrt) and 1.5 (exp of a
    scaled log)."""
    x = positive(81, 3, 8)
    exponents = {"inverse_square": -2.0, "root": 0.5, "power": 1.5}
    nodes = [helper.make_node("Pow", ["x", f"{name}_e"], [name], name=name) for name in exponents]
    x64 = x.astype(np.float64)
    return (nodes, {"x": x}, {name: x64 ** e for name, e in exponents.items()},
            {f"{name}_e": np.array(e, dtype=f32) for name, e in exponents.items()})


@case()
def pow_cube(opset):
    x = randn(8, 3, 8)
    return ([node("Pow", ["x", "three"])], {"x": x}, {"y": x.astype(np.float64) ** 3},
            {"three": np.array(3, dtype=f32)})


@case(lo=8)
def mean_sum(opset):
    a, b, c = randn(9, 4, 6), randn(10, 6), randn(11, 4, 1)
    return ([node("Sum", "abc", ["s"]), node("Mean", "abs", ["y"])], {"a": a, "b": b, "c": c},
            {"y": (a + b + (a + b + c)) / 3}, {})


# --- broadcasting -------------------------------------------------------------

@case()
def broadcast_forms(opset):
    """Scalar and row on the left of Sub, a [C, 1, 1] constant over NCHW, a
    middle axis, and both operands broadcasting."""
    x, row, bias = randn(12, 2, 3, 4, 5), randn(13, 5), randn(14, 3, 1, 1)
    col, mid = randn(15, 6, 1), randn(16, 2, 1, 4, 5)
    lhs = [node("Sub", ["one", "x"], ["a"]), node("Sub", ["row", "a"], ["b"]),
           node("Add", ["b", "bias"], ["c"]), node("Mul", ["c", "mid"], ["y"]),
           node("Add", ["col", "row"], ["z"])]
    for i, n in enumerate(lhs):
        n.name = f"op{i}"
    y = (row - (1 - x) + bias) * mid
    return (lhs, {"x": x, "col": col, "mid": mid}, {"y": y, "z": col + row},
            {"one": np.array(1, dtype=f32), "row": row, "bias": bias})


@case()
def clip_inputs(opset):
    """Clip bounds as graph inputs (opset 11+) or attributes (older)."""
    x = randn(17, 3, 7) * 2
    if opset < 11:
        return ([node("Clip", "x", min=-0.5, max=1.25)], {"x": x},
                {"y": np.clip(x, -0.5, 1.25)}, {})
    lo, hi = np.array(-0.5, dtype=f32), np.array(1.25, dtype=f32)
    return ([node("Clip", ["x", "lo", "hi"])], {"x": x, "lo": lo, "hi": hi},
            {"y": np.clip(x, lo, hi)}, {})


# --- normalizations and reductions ---------------------------------------------

@case()
def softmax_axis(opset):
    """Softmax over a middle axis: 2-D flattening before opset 13."""
    x = randn(18, 2, 3, 4)
    if opset < 13:
        flat = x.reshape(2, 12)
        return [node("Softmax", "x", axis=1)], {"x": x}, {"y": ref.softmax(flat, 1).reshape(x.shape)}, {}
    return [node("Softmax", "x", axis=1)], {"x": x}, {"y": ref.softmax(x, 1)}, {}


@case()
def logsoftmax_axis(opset):
    x = randn(19, 2, 3, 4)
    if opset < 13:
        flat = x.reshape(2, 12)
        return [node("LogSoftmax", "x", axis=1)], {"x": x}, {"y": np.log(ref.softmax(flat, 1)).reshape(x.shape)}, {}
    return [node("LogSoftmax", "x", axis=1)], {"x": x}, {"y": np.log(ref.softmax(x, 1))}, {}


def reduce_case(name, op, reference, since, axes, keepdims):
    def build(opset):
        x = randn(20, 2, 3, 4, 5)
        inputs, attrs = axes_form(opset, since, ["x"], axes, keepdims=keepdims)
        constants = {"axes": ints(*axes)} if "axes" in inputs else {}
        return ([node(op, inputs, **attrs)], {"x": x},
                {"y": reference(x.astype(np.float64), axis=tuple(axes), keepdims=bool(keepdims))},
                constants)
    build.__name__ = name
    case()(build)


reduce_case("reducesum-axes", "ReduceSum", np.sum, 13, (1, 3), 1)
reduce_case("reducemean-axes", "ReduceMean", np.mean, 18, (0, 2), 0)
reduce_case("reducemax-axis", "ReduceMax", np.max, 18, (1,), 1)
reduce_case("reducemin-axes", "ReduceMin", np.min, 18, (2, 3), 0)
reduce_case("reducel2", "ReduceL2", lambda x, **k: np.sqrt(np.sum(x * x, **k)), 18, (1,), 1)


@case()
def batchnorm_3d(opset):
    """BatchNormalization on an NCL input (channels in the middle)."""
    x = randn(21, 2, 3, 6)
    scale, bias, mean = randn(22, 3), randn(23, 3), randn(24, 3)
    var = positive(25, 3)
    attrs = {"epsilon": 1e-3}
    if opset < 9:
        attrs["spatial"] = 1
    return ([node("BatchNormalization", ["x", "s", "b", "m", "v"], **attrs)], {"x": x},
            {"y": ref.batch_norm(x[..., None], scale, bias, mean, var, 1e-3)[..., 0]},
            {"s": scale, "b": bias, "m": mean, "v": var})


@case()
def argmax_axis(opset):
    x = randn(26, 3, 5)
    y = np.argmax(x, axis=1)[:, None]
    return [node("ArgMax", "x", axis=1)], {"x": x}, {"y": y}, {}


def tied(seed, *shape):
    """Small integers as floats: every row has ties for its extremes."""
    return rng(seed).integers(-2, 3, shape).astype(f32)


def last_index(arg, x, axis):
    """select_last_index=1: the last of the tied extremes."""
    return x.shape[axis] - 1 - arg(np.flip(x, axis), axis=axis)


@case()
def argextremum_ties(opset):
    """ArgMax and ArgMin on data with ties (the first index wins), over a
    middle, the first and the last axis, keepdims 0 and 1."""
    x = tied(29, 3, 4, 5)
    return ([node("ArgMax", "x", ["a"], axis=1, keepdims=0),
             node("ArgMin", "x", ["b"], axis=0),
             node("ArgMin", "x", ["c"], axis=2, keepdims=0)],
            {"x": x},
            {"a": np.argmax(x, axis=1), "b": np.argmin(x, axis=0)[None],
             "c": np.argmin(x, axis=2)}, {})


@case(lo=12)
def argextremum_last_index(opset):
    """select_last_index=1 (opset 12): the last of the tied extremes, over a
    middle and the first axis, keepdims 1 and 0."""
    x = tied(30, 4, 6, 3)
    return ([node("ArgMax", "x", ["a"], axis=1, select_last_index=1),
             node("ArgMin", "x", ["b"], axis=0, keepdims=0, select_last_index=1)],
            {"x": x},
            {"a": np.expand_dims(last_index(np.argmax, x, 1), 1),
             "b": last_index(np.argmin, x, 0)}, {})


# --- data movement --------------------------------------------------------------

@case()
def gather_constant(opset):
    """Gather with constant indices: rows of a table (negative counts from
    the end) and columns of the input."""
    x, table = randn(27, 3, 6), randn(28, 10, 4)
    rows, cols = ints(3, -1, 4, 5), ints(0, 2, 5)
    return ([node("Gather", ["table", "rows"], ["r"], axis=0),
             node("Gather", ["x", "cols"], ["c"], axis=1)],
            {"x": x}, {"r": table[rows], "c": x[:, cols]}, {"table": table, "rows": rows, "cols": cols})


@case()
def gather_embedding(opset):
    """An embedding lookup: int64 token ids as a graph input, negative ones
    counting from the end; the same ids index axis 1 of a float input."""
    table, ids = randn(29, 16, 8), ints(3, 15, 0, -1, 7, -16).reshape(2, 3)
    x = randn(30, 4, 16, 5)
    return ([node("Gather", ["table", "ids"], ["y"], axis=0),
             node("Gather", ["x", "ids"], ["z"], axis=1)],
            {"ids": ids, "x": x}, {"y": table[ids], "z": np.take(x, ids, axis=1)},
            {"table": table})


@case()
def split_squeeze(opset):
    """Split (sizes as attribute, input from 13, num_outputs at 18), Squeeze and
    Unsqueeze (axes as attribute, input from 13)."""
    x = randn(30, 2, 1, 7)
    nodes, constants = [], {}
    if opset >= 18:
        nodes.append(node("Split", ["x"], ["a", "b"], axis=2, num_outputs=2))
        sizes = [4, 3]
    elif opset >= 13:
        nodes.append(node("Split", ["x", "sizes"], ["a", "b"], axis=2))
        sizes, constants["sizes"] = [4, 3], ints(4, 3)
    else:
        nodes.append(node("Split", ["x"], ["a", "b"], axis=2, split=[4, 3]))
        sizes = [4, 3]
    inputs, attrs = axes_form(opset, 13, ["a"], [1])
    nodes.append(node("Squeeze", inputs, ["s"], **attrs))
    inputs, attrs = axes_form(opset, 13, ["b"], [0, 3])
    nodes.append(node("Unsqueeze", inputs, ["u"], **attrs))
    if "axes" in inputs:
        constants["axes"] = ints(1)  # Squeeze's; Unsqueeze gets its own name below
        nodes[-1].input[1] = "uaxes"
        constants["uaxes"] = ints(0, 3)
    for i, n in enumerate(nodes):
        n.name = f"n{i}"
    a, b = x[:, :, :sizes[0]], x[:, :, sizes[0]:]
    return nodes, {"x": x}, {"s": a[:, 0], "u": b[None, :, :, None]}, constants


@case(lo=13)
def depth_to_space(opset):
    """DepthToSpace in CRD mode (DCR is the default) and SpaceToDepth."""
    x = randn(51, 1, 8, 2, 3)
    n, c, h, w = x.shape
    crd = x.reshape(n, c // 4, 2, 2, h, w).transpose(0, 1, 4, 2, 5, 3).reshape(n, c // 4, h * 2, w * 2)
    s2d = crd.reshape(n, 2, h, 2, w, 2).transpose(0, 3, 5, 1, 2, 4).reshape(n, 8, h, w)
    return ([node("DepthToSpace", ["x"], ["d"], blocksize=2, mode="CRD"),
             node("SpaceToDepth", ["d"], ["s"], blocksize=2)], {"x": x}, {"d": crd, "s": s2d}, {})


@case()
def instance_norm_tile(opset):
    """InstanceNormalization of an NCHW input, then Tile."""
    x, scale, bias = randn(52, 2, 3, 4, 5), randn(53, 3), randn(54, 3)
    mean = x.mean(axis=(2, 3), keepdims=True)
    var = x.var(axis=(2, 3), keepdims=True)
    y = (x - mean) / np.sqrt(var + 1e-5) * scale[None, :, None, None] + bias[None, :, None, None]
    if opset < 13:
        return ([node("InstanceNormalization", ["x", "s", "b"], ["y"])], {"x": x}, {"y": y},
                {"s": scale, "b": bias})
    return ([node("InstanceNormalization", ["x", "s", "b"], ["n"]),
             node("Tile", ["n", "repeats"], ["y"])], {"x": x}, {"y": np.tile(y, (1, 1, 2, 1))},
            {"s": scale, "b": bias, "repeats": ints(1, 1, 2, 1)})


@case(lo=8)
def expand(opset):
    x = randn(31, 3, 1)
    return ([node("Expand", ["x", "shape"])], {"x": x}, {"y": x * np.ones((2, 3, 4), f32)},
            {"shape": ints(2, 1, 4)})


def pad_case(name, mode, reference_mode):
    def build(opset):
        x = randn(32, 1, 2, 4, 5)
        pads = [0, 0, 1, 2, 0, 0, 2, 1]
        np_pads = [(0, 0), (0, 0), (1, 2), (2, 1)]
        kwargs = {"constant_values": 0.5} if mode == "constant" else {}
        y = np.pad(x, np_pads, mode=reference_mode, **kwargs)
        if opset < 11:
            attrs = {"pads": pads, "mode": mode}
            if mode == "constant":
                attrs["value"] = 0.5
            return [node("Pad", ["x"], **attrs)], {"x": x}, {"y": y}, {}
        inputs, constants = ["x", "pads"], {"pads": ints(*pads)}
        if mode == "constant":
            inputs.append("value")
            constants["value"] = np.array(0.5, dtype=f32)
        return [node("Pad", inputs, mode=mode)], {"x": x}, {"y": y}, constants
    build.__name__ = name
    case()(build)


pad_case("pad-constant", "constant", "constant")
pad_case("pad-reflect", "reflect", "reflect")
pad_case("pad-edge", "edge", "edge")


@case(lo=13)
def resize_nearest(opset):
    """2x nearest upsampling (asymmetric, floor), as U-Net decoders use."""
    x = randn(33, 1, 2, 3, 4)
    y = x.repeat(2, axis=2).repeat(2, axis=3)
    return ([node("Resize", ["x", "", "scales"], mode="nearest",
                  coordinate_transformation_mode="asymmetric", nearest_mode="floor")],
            {"x": x}, {"y": y}, {"scales": np.array([1, 1, 2, 2], dtype=f32)})


def linear_resize_1d(x, axis, out, align_corners):
    size = x.shape[axis]
    i = np.arange(out, dtype=np.float64)
    src = i * (size - 1) / (out - 1) if align_corners else (i + 0.5) * size / out - 0.5
    lo = np.floor(src)
    w = src - lo
    i0 = np.clip(lo, 0, size - 1).astype(int)
    i1 = np.clip(lo + 1, 0, size - 1).astype(int)
    shape = [1] * x.ndim
    shape[axis] = out
    return np.take(x, i0, axis) * (1 - w.reshape(shape)) + np.take(x, i1, axis) * w.reshape(shape)


@case(lo=13)
def resize_linear(opset):
    """Bilinear upsampling to given sizes: half_pixel and align_corners."""
    x = randn(34, 1, 2, 3, 4)
    half = linear_resize_1d(linear_resize_1d(x, 2, 5, False), 3, 7, False)
    corners = linear_resize_1d(linear_resize_1d(x, 2, 5, True), 3, 7, True)
    return ([node("Resize", ["x", "", "", "sizes"], ["h"], mode="linear"),
             node("Resize", ["x", "", "", "sizes"], ["c"], mode="linear",
                  coordinate_transformation_mode="align_corners")],
            {"x": x}, {"h": half, "c": corners}, {"sizes": ints(1, 2, 5, 7)})


@case(lo=11)
def where_compare(opset):
    """Where with Greater and Equal conditions."""
    a, b = randn(35, 3, 4), randn(36, 4)
    b[1] = a[0, 1]
    return ([node("Greater", "ab", ["g"]), node("Equal", "ab", ["e"]),
             node("Where", ["g", "a", "b"], ["w"]), node("Where", ["e", "zero", "w"], ["y"])],
            {"a": a, "b": b}, {"y": np.where(a == b, 0, np.where(a > b, a, b))},
            {"zero": np.array(0, dtype=f32)})


@case(lo=9)
def cast_float(opset):
    x = randn(37, 3, 4)
    return [node("Cast", "x", to=TensorProto.FLOAT)], {"x": x}, {"y": x}, {}


# --- convolutions and pools -----------------------------------------------------

@case()
def conv_grouped(opset):
    """Two groups, and a depthwise convolution with channel multiplier 2."""
    x, w, b = randn(38, 1, 4, 6, 6), randn(39, 6, 2, 3, 3), randn(40, 6)
    wd = randn(41, 8, 1, 3, 3)
    y = ref.conv2d(x, w, b, pads=(1, 1, 1, 1), group=2)
    d = ref.conv2d(x, wd, strides=(2, 2), group=4)
    return ([node("Conv", ["x", "w", "b"], ["y"], group=2, pads=[1, 1, 1, 1]),
             node("Conv", ["x", "wd"], ["d"], group=4, strides=[2, 2])],
            {"x": x}, {"y": y, "d": d}, {"w": w, "b": b, "wd": wd})


@case()
def conv_1d(opset):
    """Conv, MaxPool and AveragePool over NCL inputs."""
    x, w, b = randn(42, 2, 3, 11), randn(43, 4, 3, 3), randn(44, 4)
    conv = ref.conv2d(x[:, :, None], w[:, :, None], b, strides=(1, 2), pads=(0, 1, 0, 1))[:, :, 0]
    pooled = ref.max_pool(conv[:, :, None], (1, 2), (1, 2))[:, :, 0]
    avg = ref.avg_pool(conv[:, :, None], (1, 3), (1, 1), pads=(0, 1, 0, 1))[:, :, 0]
    return ([node("Conv", ["x", "w", "b"], ["c"], strides=[2], pads=[1, 1]),
             node("MaxPool", ["c"], ["m"], kernel_shape=[2], strides=[2]),
             node("AveragePool", ["c"], ["a"], kernel_shape=[3], pads=[1, 1])],
            {"x": x}, {"m": pooled, "a": avg}, {"w": w, "b": b})


@case(lo=10)
def maxpool_dilated(opset):
    """MaxPool with dilations (from opset 10), padding and ceil_mode: output
    position o of an axis takes input o * stride + tap * dilation - pad."""
    x = randn(56, 1, 2, 9, 8)
    (sh, sw), (dh, dw), pad = (1, 2), (2, 3), 1
    def out_size(size, s, d):
        return -(-(size + 2 * pad - (d + 1)) // s) + 1  # ceil_mode
    oh, ow = out_size(9, sh, dh), out_size(8, sw, dw)
    padded = np.pad(x, ((0, 0), (0, 0), (pad, pad + dh), (pad, pad + dw)),
                    constant_values=-np.inf)
    rows, cols = sh * np.arange(oh), sw * np.arange(ow)
    y = np.max([padded[:, :, rows + i * dh][:, :, :, cols + j * dw]
                for i in range(2) for j in range(2)], axis=0)
    return ([node("MaxPool", "x", kernel_shape=[2, 2], dilations=[dh, dw], strides=[sh, sw],
                  pads=[pad, pad, pad, pad], ceil_mode=1)], {"x": x}, {"y": y}, {})


@case()
def conv_pool_fused(opset):
    """Pools that run in their convolution's epilogue (windows that tile the
    image): a padded 3x3 Conv, Relu and a 2x2 MaxPool over a batch of two;
    a stride-2 Conv and a 2x2 AveragePool; a 3x3/3 MaxPool (nine blocks)."""
    x, w, b = randn(57, 2, 4, 6, 6), randn(58, 8, 4, 3, 3), randn(59, 8)
    x2, ws, bs = randn(64, 1, 4, 8, 8), randn(60, 5, 4, 3, 3), randn(61, 5)
    wt, bt = randn(62, 3, 4, 3, 3), randn(63, 3)
    relu = np.maximum(ref.conv2d(x, w, b, pads=(1, 1, 1, 1)), 0)
    strided = ref.conv2d(x2, ws, bs, strides=(2, 2), pads=(1, 1, 1, 1))
    return ([node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             node("Relu", ["c"], ["r"]),
             node("MaxPool", ["r"], ["m"], kernel_shape=[2, 2], strides=[2, 2]),
             node("Conv", ["x2", "ws", "bs"], ["s"], strides=[2, 2], pads=[1, 1, 1, 1]),
             node("AveragePool", ["s"], ["a"], kernel_shape=[2, 2], strides=[2, 2]),
             node("Conv", ["x", "wt", "bt"], ["c3"], pads=[1, 1, 1, 1]),
             node("MaxPool", ["c3"], ["m3"], kernel_shape=[3, 3], strides=[3, 3])],
            {"x": x, "x2": x2},
            {"m": ref.max_pool(relu, (2, 2), (2, 2)), "a": ref.avg_pool(strided, (2, 2), (2, 2)),
             "m3": ref.max_pool(ref.conv2d(x, wt, bt, pads=(1, 1, 1, 1)), (3, 3), (3, 3))},
            {"w": w, "b": b, "ws": ws, "bs": bs, "wt": wt, "bt": bt})


def conv_transpose_reference(x, w, b, stride, pads, output_padding):
    n, c, h, wd = x.shape
    _, o, kh, kw = w.shape
    full = np.zeros((n, o, (h - 1) * stride[0] + kh + output_padding[0],
                     (wd - 1) * stride[1] + kw + output_padding[1]))
    for i in range(h):
        for j in range(wd):
            full[:, :, i * stride[0]:i * stride[0] + kh, j * stride[1]:j * stride[1] + kw] += \
                np.einsum("nc,cokl->nokl", x[:, :, i, j], w)
    top, left, bottom, right = pads
    y = full[:, :, top:full.shape[2] - bottom, left:full.shape[3] - right]
    return y + b[None, :, None, None]


@case()
def conv_transpose(opset):
    x, w, b = randn(45, 1, 3, 4, 5), randn(46, 3, 2, 3, 3), randn(47, 2)
    y = conv_transpose_reference(x, w, b, (2, 2), (1, 0, 1, 1), (1, 0))
    return ([node("ConvTranspose", ["x", "w", "b"], strides=[2, 2], pads=[1, 0, 1, 1],
                  output_padding=[1, 0])], {"x": x}, {"y": y}, {"w": w, "b": b})


# --- layouts of real exports ----------------------------------------------------

@case(lo=13)
def convnet_export(opset):
    """The layout of a PyTorch NCHW conv net export: Conv, BatchNormalization,
    Relu, MaxPool, a residual Add, GlobalAveragePool, Flatten, Gemm."""
    r = rng(48)
    x = r.standard_normal((1, 3, 16, 16)).astype(f32)
    w1 = (r.standard_normal((8, 3, 3, 3)) / 5).astype(f32)
    w2 = (r.standard_normal((8, 8, 3, 3)) / 8).astype(f32)
    bn = [r.standard_normal(8).astype(f32) * 0.1 + c for c in (1, 0, 0)] + [positive(49, 8)]
    fc, fb = (r.standard_normal((10, 8)) / 3).astype(f32), r.standard_normal(10).astype(f32)
    c1 = ref.conv2d(x, w1, pads=(1, 1, 1, 1))
    a1 = np.maximum(ref.batch_norm(c1, *bn), 0)
    m1 = ref.max_pool(a1, (2, 2), (2, 2))
    c2 = np.maximum(ref.conv2d(m1, w2, pads=(1, 1, 1, 1)) + m1, 0)
    y = c2.mean(axis=(2, 3)) @ fc.T + fb
    nodes = [node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
             node("BatchNormalization", ["c1", "g", "beta", "mu", "var"], ["b1"]),
             node("Relu", ["b1"], ["a1"]),
             node("MaxPool", ["a1"], ["m1"], kernel_shape=[2, 2], strides=[2, 2]),
             node("Conv", ["m1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
             node("Add", ["c2", "m1"], ["s2"]), node("Relu", ["s2"], ["a2"]),
             node("GlobalAveragePool", ["a2"], ["p"]), node("Flatten", ["p"], ["f"]),
             node("Gemm", ["f", "fc", "fb"], ["y"], transB=1)]
    for i, n in enumerate(nodes):
        n.name = f"n{i}_{n.op_type.lower()}"
    return (nodes, {"x": x}, {"y": y},
            {"w1": w1, "w2": w2, "g": bn[0], "beta": bn[1], "mu": bn[2], "var": bn[3], "fc": fc,
             "fb": fb})


@case(lo=13)
def flatten_by_shape(opset):
    """x.view(x.size(0), -1) as exporters write it: Shape, Gather, Unsqueeze,
    Concat, Reshape, computed while importing."""
    x = randn(55, 2, 3, 4)
    inputs, attrs = axes_form(opset, 13, ["n"], [0])
    nodes = [node("Shape", ["x"], ["s"]), node("Gather", ["s", "zero"], ["n"], axis=0),
             node("Unsqueeze", inputs[:1] + ["axes0"] * (len(inputs) - 1), ["n1"], **attrs),
             node("Concat", ["n1", "minus_one"], ["shape"], axis=0),
             node("Reshape", ["x", "shape"], ["y"])]
    for i, n in enumerate(nodes):
        n.name = f"n{i}_{n.op_type.lower()}"
    return (nodes, {"x": x}, {"y": x.reshape(2, -1)},
            {"zero": np.array(0, dtype=np.int64), "axes0": ints(0), "minus_one": ints(-1)})


@case(lo=13)
def transformer_export(opset):
    """An embedding (Gather of int64 ids) plus one transformer encoder layer
    as PyTorch exports it before opset 17: MatMul/Add projections, Reshape and
    Transpose into heads, scaled Softmax attention, the residual and
    LayerNorm written as ReduceMean/Sub/Pow/Sqrt/Div, a GELU MLP with Erf."""
    r = rng(50)
    vocab, seq, dim, heads, hidden = 20, 6, 8, 2, 16
    ids = r.integers(0, vocab, (1, seq)).astype(np.int64)
    table = r.standard_normal((vocab, dim)).astype(f32)
    wq, wk, wv, wo = ((r.standard_normal((dim, dim)) / 3).astype(f32) for _ in range(4))
    w1 = (r.standard_normal((dim, hidden)) / 3).astype(f32)
    w2 = (r.standard_normal((hidden, dim)) / 4).astype(f32)
    e = table[ids]
    def split(t):
        return t.reshape(1, seq, heads, dim // heads).transpose(0, 2, 1, 3)
    q, k, v = split(e @ wq), split(e @ wk), split(e @ wv)
    att = ref.softmax(q @ k.transpose(0, 1, 3, 2) / np.sqrt(dim // heads), -1) @ v
    o = att.transpose(0, 2, 1, 3).reshape(1, seq, dim) @ wo + e
    def norm(t):
        centered = t - t.mean(-1, keepdims=True)
        return centered / np.sqrt((centered ** 2).mean(-1, keepdims=True) + 1e-5)
    n1 = norm(o)
    y = norm(ref.gelu(n1 @ w1) @ w2 + n1)
    const = {"table": table, "wq": wq, "wk": wk, "wv": wv, "wo": wo, "w1": w1, "w2": w2,
             "heads_shape": ints(1, seq, heads, dim // heads), "flat_shape": ints(1, seq, dim),
             "scale": np.array(np.sqrt(dim // heads), dtype=f32), "two": np.array(2, dtype=f32),
             "eps": np.array(1e-5, dtype=f32), "sqrt2": np.array(np.sqrt(2), dtype=f32),
             "one": np.array(1, dtype=f32), "half": np.array(0.5, dtype=f32)}
    nodes = [node("Gather", ["table", "ids"], ["e"], axis=0)]
    for name in "qkv":
        nodes += [node("MatMul", ["e", "w" + name], [name + "p"]),
                  node("Reshape", [name + "p", "heads_shape"], [name + "r"]),
                  node("Transpose", [name + "r"], [name + "h"],
                       perm=[0, 2, 3, 1] if name == "k" else [0, 2, 1, 3])]
    nodes += [node("MatMul", ["qh", "kh"], ["s"]), node("Div", ["s", "scale"], ["ss"]),
              node("Softmax", ["ss"], ["pr"], axis=-1), node("MatMul", ["pr", "vh"], ["at"]),
              node("Transpose", ["at"], ["am"], perm=[0, 2, 1, 3]),
              node("Reshape", ["am", "flat_shape"], ["af"]), node("MatMul", ["af", "wo"], ["op"]),
              node("Add", ["op", "e"], ["o"])]
    const["last"] = ints(-1)
    def reduce_mean(src, out):
        inputs, attrs = axes_form(opset, 18, [src], [-1])
        return node("ReduceMean", inputs[:1] + ["last"] * (len(inputs) - 1), [out], **attrs)
    def layer_norm(src, out):
        return [reduce_mean(src, out + "_m"),
                node("Sub", [src, out + "_m"], [out + "_c"]),
                node("Pow", [out + "_c", "two"], [out + "_p"]),
                reduce_mean(out + "_p", out + "_v"),
                node("Add", [out + "_v", "eps"], [out + "_ve"]),
                node("Sqrt", [out + "_ve"], [out + "_s"]),
                node("Div", [out + "_c", out + "_s"], [out])]
    nodes += layer_norm("o", "n1")
    nodes += [node("MatMul", ["n1", "w1"], ["h1"]), node("Div", ["h1", "sqrt2"], ["hd"]),
              node("Erf", ["hd"], ["he"]), node("Add", ["he", "one"], ["h1p"]),
              node("Mul", ["h1", "h1p"], ["hm"]), node("Mul", ["hm", "half"], ["g"]),
              node("MatMul", ["g", "w2"], ["h2"]), node("Add", ["h2", "n1"], ["r2"])]
    nodes += layer_norm("r2", "y")
    for i, n in enumerate(nodes):
        n.name = f"n{i}_{n.op_type.lower()}"
    return nodes, {"ids": ids}, {"y": y}, const


# --- writing --------------------------------------------------------------------

ONNX_TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64}


def save(out_dir, name, opset, built):
    nodes, inputs, outputs, constants = built
    def info(n, a):
        return helper.make_tensor_value_info(n, ONNX_TYPES[a.dtype], list(a.shape))
    inputs = {n: a if a.dtype == np.int64 else a.astype(f32) for n, a in inputs.items()}
    outputs = {n: a if a.dtype == np.int64 else np.asarray(a).astype(f32)
               for n, a in outputs.items()}
    graph = helper.make_graph(nodes, name, [info(n, a) for n, a in inputs.items()],
                              [info(n, a) for n, a in outputs.items()],
                              initializer=[numpy_helper.from_array(np.asarray(a), n)
                                           for n, a in constants.items()])
    model = helper.make_model(graph, producer_name="tpu-gen-op-models",
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7 if opset < 13 else 8
    if opset <= 17:  # ONNX 1.12's checker knows opsets up to 17
        onnx.checker.check_model(model)
    model_dir = os.path.join(out_dir, f"{name}-opset{opset}")
    data_dir = os.path.join(model_dir, "test_data_set_0")
    os.makedirs(data_dir, exist_ok=True)
    onnx.save(model, os.path.join(model_dir, "model.onnx"))
    for kind, tensors in (("input", inputs), ("output", outputs)):
        for index, (n, array) in enumerate(tensors.items()):
            with open(os.path.join(data_dir, f"{kind}_{index}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(array, n).SerializeToString())


def models():
    for name, c in sorted(CASES.items()):
        for opset in sorted({c.lo, c.hi}):
            yield name, opset, c


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    if args.list:
        for name, opset, c in models():
            print(f"{name}-opset{opset}")
        return
    if not args.out:
        sys.exit("gen-op-models.py: --out or --list is required")
    for name, opset, c in models():
        save(args.out, name, opset, c.build(opset))


if __name__ == "__main__":
    main()
