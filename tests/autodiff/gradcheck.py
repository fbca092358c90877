#!/usr/bin/python3
"""Checks tpu-autodiff's gradients against central finite differences.

    gradcheck.py TOOLS_DIR WORK_DIR [CASE...]   (TOOLS_DIR holds tpuc and tpu-opt)

Each case is a small ONNX model built here with onnx.helper together with
its forward function written in numpy from the ONNX operator definitions.
The model goes through `tpuc --train --emit=onnx-import` (the import for
training) and `tpu-opt --tpu-autodiff`; the step function runs on the CPU
through upstream MLIR (importer-numeric/check.py's oracle, independent of
the TPU backend). The reference gradient is the central difference
(f(p + eps) - f(p - eps)) / 2 eps of the numpy loss in float64 for every
parameter element.

The step is built with optimizer=momentum and fed zero momentum buffers, so
the updated buffers are exactly the gradients (momentum * 0 + g); the
updated parameters, the loss and the correct count are checked too. A
second step per case feeds non-zero buffers with weight decay to check the
update formula; that step, compiled by tpuc for the accelerator, must also
pass tpusim's output check with the CPU pipeline's results as the expected
outputs (ACCELERATOR_GAPS lists the steps that do not lower yet).

Tolerance (docs/compiler.md): the step computes in float32, the reference in
float64 with eps = 1e-6, whose truncation (~eps^2) and rounding
(~1e-16 / eps) errors are below 1e-9; what remains is float32 rounding
through the forward and backward graphs, so each
gradient tensor must agree within 1e-3 of its largest entry (JAX's check_grads
allows 2e-3 for float32). Inputs are drawn so that no ReLU input lies
within 1e-3 of its kink, no max-pool window has two elements within
1e-3 of its maximum, and likewise for the other kinks (Abs, LeakyRelu, Max,
Min, Clip, ReduceMin), where a finite difference is meaningless; the
max-pool tie rule (the first maximum in row-major window order gets the
gradient) is checked on its own against that rule written in numpy.
"""
import math
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "importer-numeric"))
import check  # noqa: E402

EPS = 1e-6
RTOL = 1e-3


def model(nodes, inputs, output, params, constants=()):
    """An opset-17 model; `params` are its trainable float initializers,
    `constants` other ones (integer, or float ones that the case's
    trainable= option leaves out)."""
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(i[0], i[2] if len(i) > 2 else TensorProto.FLOAT,
                                                   i[1]) for i in inputs],
        [helper.make_tensor_value_info(output[0], TensorProto.FLOAT, output[1])],
        [numpy_helper.from_array(v.astype(np.float32), n) for n, v in params.items()] +
        [numpy_helper.from_array(v, n) for n, v in constants])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def relu(x):
    if np.abs(x).min() < 1e-3:
        raise ValueError("a ReLU input lies within 1e-3 of the kink; pick other data")
    return np.maximum(x, 0)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def erf(x):
    return np.vectorize(math.erf)(x)


def windows(x, kernel, strides, dilations=(1, 1)):
    """The taps of a window over an NCHW image that is already padded: each
    (i, j, x[:, :, i d + s oh, j d + s ow]) for the window's offsets."""
    oh = (x.shape[2] - dilations[0] * (kernel[0] - 1) - 1) // strides[0] + 1
    ow = (x.shape[3] - dilations[1] * (kernel[1] - 1) - 1) // strides[1] + 1
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            h, w = i * dilations[0], j * dilations[1]
            yield i, j, x[:, :, h:h + (oh - 1) * strides[0] + 1:strides[0],
                          w:w + (ow - 1) * strides[1] + 1:strides[1]]


def pad_image(x, pads, value=0.0):
    """ONNX pads [top, left, bottom, right] around an NCHW image."""
    return np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])),
                  constant_values=value)


def conv(x, w, b=None, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), group=1):
    """ONNX Conv (NCHW, OIHW weights)."""
    out_group, in_group = w.shape[0] // group, w.shape[1]
    parts = []
    for g in range(group):
        xs = pad_image(x[:, g * in_group:(g + 1) * in_group], pads)
        ws = w[g * out_group:(g + 1) * out_group]
        parts.append(sum(np.einsum("nchw,oc->nohw", tap, ws[:, :, i, j])
                         for i, j, tap in windows(xs, w.shape[2:], strides, dilations)))
    y = np.concatenate(parts, axis=1)
    return y if b is None else y + b[None, :, None, None]


def max_pool(x, kernel, strides, pads=(0, 0, 0, 0)):
    taps = np.stack([t for _, _, t in windows(pad_image(x, pads, -np.inf), kernel, strides)])
    top = np.sort(taps, axis=0)
    if (top[-1] - top[-2]).min() < 1e-3:
        raise ValueError("two window elements within 1e-3 of the maximum; pick other data")
    return taps.max(axis=0)


def average_pool(x, kernel, strides, pads=(0, 0, 0, 0), count_include_pad=0):
    total = sum(t for _, _, t in windows(pad_image(x, pads), kernel, strides))
    ones = np.ones((1, 1) + x.shape[2:])
    count = (np.prod(kernel) if count_include_pad else
             sum(t for _, _, t in windows(pad_image(ones, pads), kernel, strides)))
    return total / count


def layer_norm(x, scale, bias, axis=-1, epsilon=1e-5):
    axes = tuple(range(axis % x.ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(variance + epsilon) * scale + bias


def apart(a, b, what):
    """a and b, checked at least 1e-3 apart: where they meet, a max, min,
    clip or leaky ReLU has a kink and a finite difference is meaningless."""
    if np.abs(a - b).min() < 1e-3:
        raise ValueError(f"{what}: values within 1e-3 of a kink; pick other data")
    return a, b


def elementwise_forward(x, q):
    """Abs, LeakyRelu (maximum), Max, Min, Where, a reversing Slice, Clip and
    ReduceMin, as the elementwise-extrema case builds them."""
    ab = np.abs(apart(q["a"], 0, "abs")[0])
    sub = x - q["a"]
    leaky = np.maximum(*apart(sub, 0.1 * sub, "leaky relu"))
    mx = np.maximum(*apart(leaky, q["c"], "max"))
    mn = np.minimum(*apart(mx, q["d"], "min"))
    r = np.where(x > 0, ab, mn)[:, ::-1]
    apart(r, -0.5, "clip")
    apart(r, 1.2, "clip")
    cl = np.clip(r, -0.5, 1.2)
    low = np.sort(ab, axis=1)
    apart(low[:, 0], low[:, 1], "reduce min")
    return cl + ab.min(axis=1, keepdims=True)


def cross_entropy(logits, labels):
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -log_p[np.arange(len(labels)), labels].mean()


def mse(output, target):
    return ((output - target) ** 2).mean()


def cases(rng):
    """(name, onnx model, inputs, params, forward, loss, labels, pass options)."""
    n = rng.standard_normal

    # A two-layer MLP, the importer's Gemm (transpose, matmul, broadcast add)
    # and ReLU, under cross-entropy.
    p = {"fc1.weight": n((5, 4)), "fc1.bias": n(5), "fc2.weight": n((3, 5)), "fc2.bias": n(3)}
    yield ("mlp-cross-entropy",
           model([helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"], transB=1),
                  helper.make_node("Relu", ["h"], ["r"]),
                  helper.make_node("Gemm", ["r", "fc2.weight", "fc2.bias"], ["y"], transB=1)],
                 [("x", [4, 4])], ("y", [4, 3]), p),
           [n((4, 4))], p,
           lambda x, q: relu(x @ q["fc1.weight"].T + q["fc1.bias"]) @ q["fc2.weight"].T + q["fc2.bias"],
           "cross-entropy", np.array([0, 2, 1, 2], dtype=np.int64), "")

    # MatMul with a plain weight, tanh and the imported softmax under MSE.
    p = {"w": n((4, 3)), "b": n((1, 3))}
    yield ("tanh-softmax-mse",
           model([helper.make_node("MatMul", ["x", "w"], ["m"]),
                  helper.make_node("Add", ["m", "b"], ["a"]),
                  helper.make_node("Tanh", ["a"], ["t"]),
                  helper.make_node("Softmax", ["t"], ["y"], axis=-1)],
                 [("x", [3, 4])], ("y", [3, 3]), p),
           [n((3, 4))], p, lambda x, q: softmax(np.tanh(x @ q["w"] + q["b"])),
           "mse", rng.uniform(0, 1, (3, 3)), "")

    # Elementwise rules with broadcasting: mul, sub, sigmoid, exp, add, log,
    # div (mul by reciprocal), reduce_sum and reduce_max over an axis.
    p = {"a": n((1, 4)), "b": n(4), "c": rng.uniform(1, 2, (2, 1)), "e": n((1, 4))}
    yield ("elementwise-mse",
           model([helper.make_node("Mul", ["x", "a"], ["xa"]),
                  helper.make_node("Sigmoid", ["xa"], ["s"]),
                  helper.make_node("Sub", ["x", "b"], ["xb"]),
                  helper.make_node("Exp", ["xb"], ["ex"]),
                  helper.make_node("Add", ["s", "ex"], ["se"]),
                  helper.make_node("Log", ["se"], ["l"]),
                  helper.make_node("Div", ["l", "c"], ["d"]),
                  helper.make_node("ReduceSum", ["d", "axes"], ["rs"], keepdims=1),
                  helper.make_node("Mul", ["d", "e"], ["de"]),
                  helper.make_node("ReduceMax", ["de"], ["rm"], axes=[1], keepdims=1),
                  helper.make_node("Sub", ["rs", "rm"], ["y"])],
                 [("x", [2, 4])], ("y", [2, 1]), p, [("axes", np.array([1], dtype=np.int64))]),
           [n((2, 4))], p,
           lambda x, q: (lambda d: d.sum(axis=1, keepdims=True) -
                         (d * q["e"]).max(axis=1, keepdims=True))(
               np.log(sigmoid(x * q["a"]) + np.exp(x - q["b"])) / q["c"]),
           "mse", n((2, 1)), "")

    # A batched matmul (both operands batched) and a transpose, flattened
    # into logits for cross-entropy.
    p = {"w": n((2, 4, 3))}
    yield ("batched-matmul-transpose",
           model([helper.make_node("MatMul", ["x", "w"], ["m"]),
                  helper.make_node("Transpose", ["m"], ["t"], perm=[1, 0, 2]),
                  helper.make_node("Reshape", ["t", "shape"], ["y"])],
                 [("x", [2, 3, 4])], ("y", [3, 6]), p,
                 [("shape", np.array([3, 6], dtype=np.int64))]),
           [n((2, 3, 4))], p, lambda x, q: np.transpose(x @ q["w"], (1, 0, 2)).reshape(3, 6),
           "cross-entropy", np.array([5, 0, 3], dtype=np.int64), "")


    # A small CNN: Conv 3x3 stride 1 pad 1, ReLU, Conv 3x3 stride 2 pad 1
    # (the importer drops the bottom and right padding no window reads),
    # MaxPool and AveragePool 2x2 stride 2 (windows that tile the image)
    # and end padding (count_include_pad=0: AveragePool's one window
    # divides by 4),
    # GlobalAveragePool, Flatten, Gemm, under cross-entropy.
    p = {"conv1.weight": n((3, 2, 3, 3)), "conv1.bias": n(3), "conv2.weight": n((4, 3, 3, 3)),
         "conv2.bias": n(4), "fc.weight": n((3, 4)), "fc.bias": n(3)}
    yield ("conv-net",
           model([helper.make_node("Conv", ["x", "conv1.weight", "conv1.bias"], ["c1"],
                                   pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", ["c1"], ["r1"]),
                  helper.make_node("Conv", ["r1", "conv2.weight", "conv2.bias"], ["c2"],
                                   strides=[2, 2], pads=[1, 1, 1, 1]),
                  helper.make_node("MaxPool", ["c2"], ["m"], kernel_shape=[2, 2],
                                   strides=[2, 2], pads=[0, 0, 1, 1]),
                  helper.make_node("AveragePool", ["m"], ["a"], kernel_shape=[2, 2],
                                   strides=[2, 2], pads=[0, 0, 1, 1]),
                  helper.make_node("GlobalAveragePool", ["a"], ["g"]),
                  helper.make_node("Flatten", ["g"], ["f"]),
                  helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["y"], transB=1)],
                 [("x", [2, 2, 6, 6])], ("y", [2, 3]), p),
           [n((2, 2, 6, 6))], p,
           lambda x, q: (lambda c2: average_pool(max_pool(c2, (2, 2), (2, 2), (0, 0, 1, 1)), (2, 2), (2, 2),
                                                 (0, 0, 1, 1)).mean(axis=(2, 3))
                         @ q["fc.weight"].T + q["fc.bias"])(
               conv(relu(conv(x, q["conv1.weight"], q["conv1.bias"], pads=(1, 1, 1, 1))),
                    q["conv2.weight"], q["conv2.bias"], strides=(2, 2), pads=(1, 1, 1, 1))),
           "cross-entropy", np.array([2, 0], dtype=np.int64), "")

    # Depthwise Conv (group = channels) with stride 2, dilation 2 and
    # padding, AveragePool counting the padding (count_include_pad=1, the
    # importer pads with zeros first), MaxPool over padding at the end,
    # under MSE.
    p = {"dw.weight": n((3, 1, 3, 3)), "dw.bias": n(3)}
    yield ("depthwise-pools",
           model([helper.make_node("Conv", ["x", "dw.weight", "dw.bias"], ["c"], group=3,
                                   strides=[2, 2], dilations=[2, 2], pads=[2, 2, 2, 2]),
                  helper.make_node("AveragePool", ["c"], ["a"], kernel_shape=[3, 3],
                                   strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1),
                  helper.make_node("MaxPool", ["a"], ["y"], kernel_shape=[2, 2],
                                   pads=[0, 0, 1, 1])],
                 [("x", [2, 3, 7, 7])], ("y", [2, 3, 2, 2]), p),
           [n((2, 3, 7, 7))], p,
           lambda x, q: max_pool(average_pool(
               conv(x, q["dw.weight"], q["dw.bias"], strides=(2, 2), pads=(2, 2, 2, 2),
                    dilations=(2, 2), group=3),
               (3, 3), (2, 2), (1, 1, 1, 1), count_include_pad=1), (2, 2), (1, 1), (0, 0, 1, 1)),
           "mse", n((2, 3, 2, 2)), "")

    # Grouped Conv (2 groups: per-group slices, convolutions and a concat
    # when training) and depthwise Conv with a channel multiplier of 2
    # (tosa.depthwise_conv2d when training), under MSE.
    p = {"g.weight": n((4, 2, 3, 3)), "g.bias": n(4), "m.weight": n((8, 1, 3, 3))}
    yield ("grouped-convs",
           model([helper.make_node("Conv", ["x", "g.weight", "g.bias"], ["g"], group=2,
                                   pads=[1, 1, 1, 1]),
                  helper.make_node("Conv", ["g", "m.weight"], ["y"], group=4, strides=[2, 2])],
                 [("x", [2, 4, 5, 5])], ("y", [2, 8, 2, 2]), p),
           [n((2, 4, 5, 5))], p,
           lambda x, q: conv(conv(x, q["g.weight"], q["g.bias"], pads=(1, 1, 1, 1), group=2),
                             q["m.weight"], strides=(2, 2), group=4),
           "mse", n((2, 8, 2, 2)), "")

    # Index ops: Gather with runtime indices (one index twice, so the
    # scatter must add), Pad, Concat, Slice, Gather with constant indices
    # (slices and a concat), under MSE.
    p = {"table": n((5, 4)), "w": n((3, 2))}
    yield ("index-ops",
           model([helper.make_node("Gather", ["table", "idx"], ["g"], axis=0),
                  helper.make_node("Pad", ["w", "pads"], ["p"]),
                  helper.make_node("Concat", ["g", "p"], ["c"], axis=1),
                  helper.make_node("Slice", ["c", "starts", "ends", "axes"], ["s"]),
                  helper.make_node("Gather", ["s", "picks"], ["k"], axis=1),
                  helper.make_node("Mul", ["k", "x"], ["y"])],
                 [("x", [3, 4]), ("idx", [3], TensorProto.INT64)], ("y", [3, 4]), p,
                 [("pads", np.array([0, 1, 0, 1], dtype=np.int64)),
                  ("starts", np.array([1], dtype=np.int64)),
                  ("ends", np.array([7], dtype=np.int64)),
                  ("axes", np.array([1], dtype=np.int64)),
                  ("picks", np.array([0, 2, 2, 5], dtype=np.int64))]),
           [n((3, 4)), np.array([1, 3, 1], dtype=np.int64)], p,
           lambda x, idx, q: np.concatenate([q["table"][idx], np.pad(q["w"], ((0, 0), (1, 1)))],
                                            axis=1)[:, 1:7][:, [0, 2, 2, 5]] * x,
           "mse", n((3, 4)), "")

    # LayerNormalization as the importer writes it (reduce_sum, mul, sub,
    # rsqrt), GELU with Erf, then ReduceMax and ReduceSum over axis 0 and a
    # Tile, under MSE.
    p = {"w": n((4, 5)), "b": n(5), "ln.scale": n(5), "ln.bias": n(5)}
    yield ("layernorm-gelu",
           model([helper.make_node("MatMul", ["x", "w"], ["m"]),
                  helper.make_node("Add", ["m", "b"], ["h"]),
                  helper.make_node("LayerNormalization", ["h", "ln.scale", "ln.bias"], ["ln"],
                                   axis=-1),
                  helper.make_node("Div", ["ln", "sqrt2"], ["z"]),
                  helper.make_node("Erf", ["z"], ["e"]),
                  helper.make_node("Add", ["e", "one"], ["e1"]),
                  helper.make_node("Mul", ["ln", "e1"], ["l2"]),
                  helper.make_node("Mul", ["l2", "half"], ["gelu"]),
                  helper.make_node("ReduceMax", ["gelu"], ["mx"], axes=[0], keepdims=1),
                  helper.make_node("Tile", ["mx", "repeats"], ["t"]),
                  helper.make_node("ReduceSum", ["gelu", "axis0"], ["sm"], keepdims=1),
                  helper.make_node("Add", ["gelu", "t"], ["gt"]),
                  helper.make_node("Sub", ["gt", "sm"], ["y"])],
                 [("x", [3, 4])], ("y", [3, 5]), p,
                 [("sqrt2", np.array(math.sqrt(2), dtype=np.float32)),
                  ("one", np.array(1, dtype=np.float32)),
                  ("half", np.array(0.5, dtype=np.float32)),
                  ("repeats", np.array([3, 1], dtype=np.int64)),
                  ("axis0", np.array([0], dtype=np.int64))]),
           [n((3, 4))], p,
           lambda x, q: (lambda g: g + np.tile(g.max(axis=0, keepdims=True), (3, 1)) -
                         g.sum(axis=0, keepdims=True))(
               (lambda l: 0.5 * l * (1 + erf(l / math.sqrt(2))))(
                   layer_norm(x @ q["w"] + q["b"], q["ln.scale"], q["ln.bias"]))),
           "mse", n((3, 5)), " trainable=w,b,ln.scale,ln.bias")

    # GELU's tanh approximation with Pow(h, 3), and a Pow with a trainable
    # exponent over a positive base, under MSE.
    p = {"w": n((4, 5)), "b": n(5), "p": rng.uniform(0.5, 2, 5)}
    yield ("pow-gelu-tanh",
           model([helper.make_node("MatMul", ["x", "w"], ["m"]),
                  helper.make_node("Add", ["m", "b"], ["h"]),
                  helper.make_node("Pow", ["h", "three"], ["h3"]),
                  helper.make_node("Mul", ["h3", "c"], ["h3c"]),
                  helper.make_node("Add", ["h", "h3c"], ["inner"]),
                  helper.make_node("Mul", ["inner", "k"], ["ik"]),
                  helper.make_node("Tanh", ["ik"], ["t"]),
                  helper.make_node("Add", ["t", "one"], ["t1"]),
                  helper.make_node("Mul", ["h", "t1"], ["ht"]),
                  helper.make_node("Mul", ["ht", "half"], ["gelu"]),
                  helper.make_node("Sigmoid", ["h"], ["s"]),
                  helper.make_node("Pow", ["s", "p"], ["sp"]),
                  helper.make_node("Add", ["gelu", "sp"], ["y"])],
                 [("x", [3, 4])], ("y", [3, 5]), p,
                 [("three", np.array(3, dtype=np.float32)),
                  ("c", np.array(0.044715, dtype=np.float32)),
                  ("k", np.array(math.sqrt(2 / math.pi), dtype=np.float32)),
                  ("one", np.array(1, dtype=np.float32)),
                  ("half", np.array(0.5, dtype=np.float32))]),
           [n((3, 4))], p,
           lambda x, q: (lambda h: 0.5 * h * (1 + np.tanh(np.float32(math.sqrt(2 / math.pi)) * (
               h + np.float32(0.044715) * h ** 3))) + sigmoid(h) ** q["p"])(x @ q["w"] + q["b"]),
           "mse", n((3, 5)), " trainable=w,b,p")

    # Abs, LeakyRelu (a maximum), Max and Min with broadcasting, Where, a
    # Slice with step -1 (a reverse), Clip with both bounds and ReduceMin,
    # under MSE.
    p = {"a": n((3, 4)), "c": n((1, 4)) * 0.5 + 0.5, "d": n((3, 1)) + 0.6}
    yield ("elementwise-extrema",
           model([helper.make_node("Abs", ["a"], ["ab"]),
                  helper.make_node("Sub", ["x", "a"], ["sub"]),
                  helper.make_node("LeakyRelu", ["sub"], ["leaky"], alpha=0.1),
                  helper.make_node("Max", ["leaky", "c"], ["mx"]),
                  helper.make_node("Min", ["mx", "d"], ["mn"]),
                  helper.make_node("Greater", ["x", "zero"], ["positive"]),
                  helper.make_node("Where", ["positive", "ab", "mn"], ["w"]),
                  helper.make_node("Slice", ["w", "starts", "ends", "axes", "steps"], ["r"]),
                  helper.make_node("Clip", ["r", "lo", "hi"], ["cl"]),
                  helper.make_node("ReduceMin", ["ab"], ["rm"], axes=[1], keepdims=1),
                  helper.make_node("Add", ["cl", "rm"], ["y"])],
                 [("x", [3, 4])], ("y", [3, 4]), p,
                 [("zero", np.array(0, dtype=np.float32)),
                  ("starts", np.array([-1], dtype=np.int64)),
                  ("ends", np.array([-100], dtype=np.int64)),
                  ("axes", np.array([1], dtype=np.int64)),
                  ("steps", np.array([-1], dtype=np.int64)),
                  ("lo", np.array(-0.5, dtype=np.float32)),
                  ("hi", np.array(1.2, dtype=np.float32))]),
           [n((3, 4))], p, elementwise_forward, "mse", n((3, 4)), " trainable=a,c,d")

    # A convolution written in TOSA with padding on top and left only and
    # stride 2 over 5 rows: (5 + 1 - 3) % 2 = 1, so the last row and column
    # are read by no window (the importer crops those before its
    # convolutions; TOSA written by hand need not), under MSE.
    p = {"a": n((1, 5, 5, 2)), "w": n((3, 3, 3, 2)), "b": n(3)}
    yield ("conv-unread-rows", """
func.func @main(%x: tensor<1x5x5x2xf32> {tpu.name = "x"}) -> tensor<1x2x2x3xf32> {
  %a = "tosa.const"() <{value = dense<0.0> : tensor<1x5x5x2xf32>}> {tpu.name = "a"} : () -> tensor<1x5x5x2xf32>
  %w = "tosa.const"() <{value = dense<0.0> : tensor<3x3x3x2xf32>}> {tpu.name = "w"} : () -> tensor<3x3x3x2xf32>
  %b = "tosa.const"() <{value = dense<0.0> : tensor<3xf32>}> {tpu.name = "b"} : () -> tensor<3xf32>
  %s = tosa.add %x, %a : (tensor<1x5x5x2xf32>, tensor<1x5x5x2xf32>) -> tensor<1x5x5x2xf32>
  %t = tosa.tanh %s : (tensor<1x5x5x2xf32>) -> tensor<1x5x5x2xf32>
  %y = tosa.conv2d %t, %w, %b {pad = array<i64: 1, 0, 1, 0>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>} : (tensor<1x5x5x2xf32>, tensor<3x3x3x2xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  return %y : tensor<1x2x2x3xf32>
}
""", [n((1, 5, 5, 2))], p,
           lambda x, q: conv(np.tanh(x + q["a"]).transpose(0, 3, 1, 2),
                             q["w"].transpose(0, 3, 1, 2), q["b"],
                             strides=(2, 2), pads=(1, 1, 0, 0)).transpose(0, 2, 3, 1),
           "mse", n((1, 2, 2, 3)), "")


def step_signature(tosa):
    """The step function's input and result names, in order."""
    header = re.search(r"func\.func @main\((.*?)\) -> \((.*?)\) \{", tosa).groups()
    return [re.findall(r'tpu\.name = "([^"]*)"', part) for part in header]


def run_step(tools, work, name, onnx_model, options, feeds, outputs):
    """`onnx_model` is an ONNX model, or TOSA text for a form the importer
    does not write."""
    if isinstance(onnx_model, str):
        imported = onnx_model
    else:
        path = os.path.join(work, name + ".onnx")
        onnx.save(onnx_model, path)
        # As imported for training (weights stay values: grouped Conv as
        # per-group convolutions); optimization would fold weight reshapes
        # into unnamed constants.
        imported = subprocess.run([os.path.join(tools, "tpuc"), path, "--train",
                                   "--emit=onnx-import", "-o", "-"],
                                  check=True, capture_output=True, text=True).stdout
    tosa = subprocess.run([os.path.join(tools, "tpu-opt"), f"--tpu-autodiff={options}"],
                          input=imported, check=True, capture_output=True, text=True).stdout
    input_names, result_names = step_signature(tosa)
    inputs = [feeds[n] for n in input_names]
    return dict(zip(result_names, check.execute(work, name, tosa, inputs,
                                                [outputs[n] for n in result_names])))


def finite_differences(loss_of, params):
    gradients = {}
    for name, value in params.items():
        gradient = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            shifted = {k: v.copy() for k, v in params.items()}
            shifted[name][index] = value[index] + EPS
            up = loss_of(shifted)
            shifted[name][index] = value[index] - EPS
            gradient[index] = (up - loss_of(shifted)) / (2 * EPS)
        gradients[name] = gradient
    return gradients


def check_case(tools, work, case, rng):
    name, onnx_model, inputs, params, forward, loss, labels, extra = case
    # The float32 values the step sees, in float64 for the reference.
    params = {k: v.astype(np.float32).astype(np.float64) for k, v in params.items()}
    inputs = [x if x.dtype == np.int64 else x.astype(np.float32).astype(np.float64)
              for x in inputs]
    loss_fn = cross_entropy if loss == "cross-entropy" else mse

    def loss_of(q):
        return loss_fn(forward(*inputs, q), labels)

    reference = finite_differences(loss_of, params)
    # A parameter whose gradient is zero everywhere would check nothing.
    for k, v in reference.items():
        if np.abs(v).max() < 1e-6:
            raise ValueError(f"{name}: the loss does not depend on {k}; pick other data")
    lr, momentum = 0.25, 0.5
    input_names = (re.findall(r'%\w+: tensor<[^>]*> \{tpu\.name = "([^"]*)"', onnx_model)
                   if isinstance(onnx_model, str) else [i.name for i in onnx_model.graph.input])
    feeds = dict(zip(input_names, inputs))
    feeds["labels"] = labels if loss == "cross-entropy" else labels.astype(np.float32)
    outputs = {"loss": np.zeros(1, np.float32), "correct": np.zeros(1, np.int32)}
    for k, v in params.items():
        feeds[k] = v
        feeds[k + ".momentum"] = np.zeros_like(v)
        outputs[k] = outputs[k + ".momentum"] = v.astype(np.float32)
    options = f"loss={loss} optimizer=momentum lr={lr} momentum={momentum}{extra}"
    got = run_step(tools, work, name, onnx_model, options, feeds, outputs)

    failures = []

    def compare(what, value, want, tolerance):
        error = np.abs(value - np.ravel(want)).max()
        status = "ok" if error <= tolerance else "MISMATCH"
        print(f"{name} {what}: max abs error {error:.3g} (tolerance {tolerance:.3g}) {status}")
        if error > tolerance:
            failures.append(f"{name} {what}")

    want_loss = loss_of(params)
    compare("loss", got["loss"], want_loss, 1e-4 * max(1.0, abs(want_loss)))
    if loss == "cross-entropy":
        correct = (forward(*inputs, params).argmax(axis=1) == labels).sum()
        compare("correct", got["correct"], correct, 0)
    for k, v in params.items():
        tolerance = RTOL * max(np.abs(reference[k]).max(), 1e-3)
        compare(f"gradient of {k}", got[k + ".momentum"], reference[k], tolerance)
        compare(f"update of {k}", got[k], v - lr * reference[k], tolerance)

    # The update formula with state: v' = m v + g + wd w, w' = w - lr v'.
    decay = 0.125
    buffers = {k: rng.standard_normal(v.shape) for k, v in params.items()}
    for k in params:
        feeds[k + ".momentum"] = buffers[k]
    got = run_step(tools, work, name + "-decay", onnx_model, options + f" weight-decay={decay}",
                   feeds, outputs)
    for k, v in params.items():
        velocity = momentum * buffers[k] + reference[k] + decay * v
        tolerance = RTOL * max(np.abs(velocity).max(), 1e-3)
        compare(f"momentum of {k} with decay", got[k + ".momentum"], velocity, tolerance)
        compare(f"update of {k} with decay", got[k], v - lr * velocity, tolerance)
    if not isinstance(onnx_model, str):
        flags = [f"--loss={loss}", "--optimizer=momentum", f"--lr={lr}", f"--momentum={momentum}",
                 f"--weight-decay={decay}"] + [f"--{option}" for option in extra.split()]
        failures += check_on_accelerator(tools, work, name, flags, feeds, got)
    return failures


def bundle_tensors(tools, bundle):
    """{"inputs"|"outputs": [(name, shape)]} of a bundle, from tpu-objdump."""
    listing = subprocess.run([os.path.join(tools, "tpu-objdump"), bundle], check=True,
                             capture_output=True, text=True).stdout
    tensors, section = {"inputs": [], "outputs": []}, None
    for line in listing.splitlines():
        if line.rstrip(":") in tensors:
            section = line.rstrip(":")
        elif section and line.startswith("  "):
            found = re.match(r"\s+(\S+) \w+\[([\d, ]*)\]", line)
            tensors[section].append((found.group(1), [int(d) for d in found.group(2).split(",") if d]))
        else:
            section = None
    return tensors


# Steps that do not lower to the accelerator yet, with tpuc's one-line error.
ACCELERATOR_GAPS = {
    # The one-hot compare of the gradient needs the int32 indices that
    # dma.gather reads as fp32 on the vector unit (v.cvt.i2f), which the
    # lowering does not emit yet.
    "index-ops": "'tosa.cast' op is supported on static-shape f32 tensors only",
}


def check_on_accelerator(tools, work, name, flags, feeds, got):
    """The same training step compiled by tpuc for the accelerator and run in
    tpusim, whose output check (docs/numerics.md) compares it with the
    upstream MLIR CPU pipeline's results `got` for the same inputs."""
    path = os.path.join(work, name + ".onnx")
    bundle = os.path.join(work, name + ".tpub")
    compiled = subprocess.run([os.path.join(tools, "tpuc"), path, "--train", *flags, "-o", bundle],
                              capture_output=True, text=True)
    if name in ACCELERATOR_GAPS:
        error = compiled.stderr.strip()
        ok = (compiled.returncode == 1 and len(error.splitlines()) == 1 and
              ACCELERATOR_GAPS[name] in error)
        print(f"{name} on the accelerator: not lowered yet, one line and exit 1: "
              f"{'ok' if ok else 'MISMATCH'} ({error})")
        return [] if ok else [f"{name} on the accelerator: the known gap changed"]
    if compiled.returncode != 0:
        print(f"{name} on the accelerator: {compiled.stderr.strip()} MISMATCH")
        return [f"{name} on the accelerator"]
    data = os.path.join(work, name + "-data")
    os.makedirs(data, exist_ok=True)
    tensors = bundle_tensors(tools, bundle)
    for i, (tensor, _) in enumerate(tensors["inputs"]):
        value = feeds[tensor]
        value = value if value.dtype == np.int64 else value.astype(np.float32)
        onnx.save_tensor(numpy_helper.from_array(value), os.path.join(data, f"input_{i}.pb"))
    for i, (tensor, shape) in enumerate(tensors["outputs"]):
        value = np.reshape(got[tensor], shape)
        value = value.astype(np.int32 if tensor == "correct" else np.float32)
        onnx.save_tensor(numpy_helper.from_array(value), os.path.join(data, f"output_{i}.pb"))
    run = subprocess.run([os.path.join(tools, "tpusim"), bundle, "--data", data],
                         capture_output=True, text=True)
    ok = run.returncode == 0
    print(f"{name} on the accelerator (tpusim's output check against the CPU pipeline): "
          f"{'ok' if ok else 'MISMATCH'}")
    if not ok:
        print((run.stdout + run.stderr)[-3000:])
    return [] if ok else [f"{name} on the accelerator"]


def check_max_pool_ties(tools, work, stride):
    """MaxPool 2x2 over a parameter with tied maxima, stride 1 (overlapping
    windows, whose shares add up) or 2 (windows that tile the image): each
    window's gradient must go to its first maximum in row-major window
    order; finite differences cannot check this."""
    w = np.array([[1, 1, 0, 2], [1, 1, 2, 2], [0, 3, 3, 0], [3, 3, 0, 1]],
                 dtype=np.float64).reshape(1, 1, 4, 4)
    side = (4 - 2) // stride + 1
    target = np.arange(side * side, dtype=np.float64).reshape(1, 1, side, side) / side**2
    onnx_model = model([helper.make_node("Add", ["x", "w"], ["s"]),
                        helper.make_node("MaxPool", ["s"], ["y"], kernel_shape=[2, 2],
                                         strides=[stride, stride])],
                       [("x", [1, 1, 4, 4])], ("y", [1, 1, side, side]), {"w": w})
    y = np.zeros((side, side))
    want = np.zeros((4, 4))
    for i in range(side):
        for j in range(side):
            y[i, j] = w[0, 0, i * stride:i * stride + 2, j * stride:j * stride + 2].max()
    dy = 2 * (y - target[0, 0]) / side**2
    for i in range(side):
        for j in range(side):
            window = w[0, 0, i * stride:i * stride + 2, j * stride:j * stride + 2].ravel()
            first = int(np.argmax(window))  # numpy's argmax: the first maximum
            want[i * stride + first // 2, j * stride + first % 2] += dy[i, j]
    feeds = {"x": np.zeros((1, 1, 4, 4)), "labels": target.astype(np.float32), "w": w,
             "w.momentum": np.zeros_like(w)}
    outputs = {"loss": np.zeros(1, np.float32), "w": w.astype(np.float32),
               "w.momentum": w.astype(np.float32)}
    name = f"max-pool-ties-stride-{stride}"
    got = run_step(tools, work, name, onnx_model,
                   "loss=mse optimizer=momentum lr=0.25 momentum=0.5", feeds, outputs)
    error = np.abs(got["w.momentum"] - want.ravel()).max()
    # float32 arithmetic; another tie rule moves whole entries of dy (> 0.1).
    tolerance = 1e-5 * np.abs(want).max()
    ok = error <= tolerance
    print(f"{name} gradient of w: max abs error {error:.3g} (tolerance {tolerance:.3g}) "
          f"{'ok' if ok else 'MISMATCH'}")
    return [] if ok else [f"{name} gradient of w"]


def main():
    tools, work = sys.argv[1:3]
    only = set(sys.argv[3:])  # case names, for debugging; default all
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(7)
    failures = []
    # Every case's data first, so that it does not depend on which cases run.
    for case in list(cases(rng)):
        if only and case[0] not in only:
            continue
        try:
            failures += check_case(tools, work, case, rng)
        except subprocess.CalledProcessError as error:
            print(error.stderr[:2000])
            failures.append(f"{case[0]}: {os.path.basename(error.cmd[0])} failed")
    if not only or "max-pool-ties" in only:
        for stride in (1, 2):
            failures += check_max_pool_ties(tools, work, stride)
    if failures:
        print("FAILED: " + "; ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
