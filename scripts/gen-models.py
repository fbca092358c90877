#!/usr/bin/python3
"""Generates the bundled models in ONNX test-data layout.

models/NAME/model.onnx plus models/NAME/test_data_set_0/{input,output}_N.pb,
with inputs drawn from fixed seeds and expected outputs computed by numpy in
fp32. Nothing is downloaded.
"""
import argparse
import math
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def save(name, graph, inputs, outputs, out_dir, opset=OPSET):
    model = helper.make_model(graph, producer_name="tpu-gen-models",
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    model_dir = os.path.join(out_dir, name)
    data_dir = os.path.join(model_dir, "test_data_set_0")
    os.makedirs(data_dir, exist_ok=True)
    onnx.save(model, os.path.join(model_dir, "model.onnx"))
    for kind, tensors, infos in (("input", inputs, graph.input), ("output", outputs, graph.output)):
        for index, (array, info) in enumerate(zip(tensors, infos)):
            tensor = numpy_helper.from_array(array.astype(np.float32), info.name)
            with open(os.path.join(data_dir, f"{kind}_{index}.pb"), "wb") as f:
                f.write(tensor.SerializeToString())


# numpy references, written from the operator definitions and independent of
# the ONNX graphs they check. Images are NCHW; pads are (top, left, bottom, right).

def pad2d(x, pads, fill):
    top, left, bottom, right = pads
    return np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=fill)


def windows(padded, kernel, strides, dilations=(1, 1)):
    """im2col: [N, C, OH, OW, KH, KW] views of an already padded input."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, strides, dilations
    oh = (padded.shape[2] - (kh - 1) * dh - 1) // sh + 1
    ow = (padded.shape[3] - (kw - 1) * dw - 1) // sw + 1
    rows = (np.arange(oh) * sh)[:, None] + np.arange(kh) * dh  # [OH, KH]
    cols = (np.arange(ow) * sw)[:, None] + np.arange(kw) * dw  # [OW, KW]
    return padded[:, :, rows[:, None, :, None], cols[None, :, None, :]]


def conv2d(x, w, b=None, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), group=1):
    oc, cg, kh, kw = w.shape
    cols = windows(pad2d(x, pads, 0.0), (kh, kw), strides, dilations)
    outs = []
    for g in range(group):
        wg = w[g * (oc // group):(g + 1) * (oc // group)]
        outs.append(np.einsum("nchwij,ocij->nohw", cols[:, g * cg:(g + 1) * cg], wg,
                              dtype=np.float64))
    y = np.concatenate(outs, axis=1)
    if b is not None:
        y = y + b[None, :, None, None]
    return y.astype(np.float32)


def ceil_overhang(shape, kernel, strides, pads):
    """Rows and columns past the end pads that ceil_mode's last windows reach."""
    extra = []
    for size, k, s, begin, end in zip(shape[2:], kernel, strides, pads[:2], pads[2:]):
        span = size + begin + end - k
        extra.append(-(-span // s) * s - span)
    return (0, 0, extra[0], extra[1])


def max_pool(x, kernel, strides, pads=(0, 0, 0, 0), ceil_mode=False):
    extra = ceil_overhang(x.shape, kernel, strides, pads) if ceil_mode else (0, 0, 0, 0)
    padded = pad2d(pad2d(x, pads, -np.inf), extra, -np.inf)
    return windows(padded, kernel, strides).max(axis=(4, 5))


def avg_pool(x, kernel, strides, pads=(0, 0, 0, 0), ceil_mode=False, count_include_pad=False):
    """The divisor counts the input, the pads when count_include_pad, never
    the ceil_mode overhang."""
    extra = ceil_overhang(x.shape, kernel, strides, pads) if ceil_mode else (0, 0, 0, 0)
    total = windows(pad2d(pad2d(x, pads, 0.0), extra, 0.0), kernel, strides).sum(axis=(4, 5))
    ones = np.ones((1, 1) + x.shape[2:])
    counted = pad2d(pad2d(ones, pads, float(count_include_pad)), extra, 0.0)
    return (total / windows(counted, kernel, strides).sum(axis=(4, 5))).astype(np.float32)


def batch_norm(x, scale, bias, mean, var, epsilon=1e-5):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    inv = scale / np.sqrt(var + epsilon)
    return ((x - mean.reshape(shape)) * inv.reshape(shape) + bias.reshape(shape)).astype(np.float32)


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layer_norm(x, scale, bias, axis=-1, epsilon=1e-5):
    axes = tuple(range(axis % x.ndim, x.ndim))
    centered = x - x.mean(axis=axes, keepdims=True)
    return centered / np.sqrt((centered ** 2).mean(axis=axes, keepdims=True) + epsilon) * scale + bias


def erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def gelu(x):
    return 0.5 * x * (1.0 + erf(x / np.sqrt(2.0)))


def weights(rng, *shape):
    return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)


def mlp(out_dir, name, batch, features, hidden, classes, seed):
    """Gemm -> Relu -> Gemm, the second Gemm with transB=1 as PyTorch exports Linear."""
    rng = np.random.default_rng(seed)
    w1 = weights(rng, features, hidden)
    b1 = rng.standard_normal(hidden).astype(np.float32) * 0.1
    w2t = weights(rng, hidden, classes).T.copy()  # stored [classes, hidden]
    b2 = rng.standard_normal(classes).astype(np.float32) * 0.1
    x = rng.standard_normal((batch, features)).astype(np.float32)

    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1"),
        helper.make_node("Relu", ["h"], ["a"], name="relu1"),
        helper.make_node("Gemm", ["a", "w2", "b2"], ["y"], name="fc2", transB=1),
    ]
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, features])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, classes])],
        initializer=[numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
                     numpy_helper.from_array(w2t, "w2"), numpy_helper.from_array(b2, "b2")])
    hidden_act = np.maximum(x @ w1 + b1, 0.0)
    y = hidden_act @ w2t.T + b2
    save(name, graph, [x], [y], out_dir)


def ops_mix(out_dir, name, seed, opset):
    """Two inputs, two outputs, and every import path the foundation covers:
    Gemm with alpha, beta and transB, Clip, MatMul, row and scalar broadcasts,
    full-shape constants, Max, Reshape and Flatten."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((10, 12)).astype(np.float32) / np.sqrt(12)
    c = rng.standard_normal(10).astype(np.float32)
    w2 = rng.standard_normal((10, 7)).astype(np.float32) / np.sqrt(10)
    b2 = rng.standard_normal(7).astype(np.float32)
    floor = rng.standard_normal((6, 7)).astype(np.float32)
    x = rng.standard_normal((6, 12)).astype(np.float32)
    z = rng.standard_normal((6, 7)).astype(np.float32)
    f32 = lambda v: np.asarray(v, dtype=np.float32)

    nodes = [
        helper.make_node("Gemm", ["x", "w", "c"], ["g"], name="gemm", alpha=0.5, beta=2.0,
                         transB=1),
        helper.make_node("Clip", ["g", "lo", "hi"], ["k"], name="clip"),
        helper.make_node("MatMul", ["k", "w2"], ["m"], name="matmul"),
        helper.make_node("Sub", ["m", "b2"], ["s"], name="sub_row"),
        helper.make_node("Mul", ["s", "three"], ["p"], name="mul_scalar"),
        helper.make_node("Max", ["p", "floor"], ["mx"], name="max_full"),
        helper.make_node("Add", ["mx", "z"], ["a"], name="add_input"),
        helper.make_node("Reshape", ["a", "shape"], ["r"], name="reshape"),
        helper.make_node("Flatten", ["r"], ["y"], name="flatten", axis=1),
    ]
    initializers = [numpy_helper.from_array(v, n) for n, v in (
        ("w", w), ("c", c), ("w2", w2), ("b2", b2), ("floor", floor), ("lo", f32(-0.5)),
        ("hi", f32(0.75)), ("three", f32(3.0)))]
    initializers.append(numpy_helper.from_array(np.array([3, 2, 7], dtype=np.int64), "shape"))
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, 12]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [6, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 14]),
         helper.make_tensor_value_info("k", TensorProto.FLOAT, [6, 10])],
        initializer=initializers)
    k = np.clip(0.5 * (x @ w.T) + 2.0 * c, -0.5, 0.75)
    y = (np.maximum((k @ w2 - b2) * 3.0, floor) + z).reshape(3, 14)
    save(name, graph, [x, z], [y, k], out_dir, opset=opset)


def tall_matmul(out_dir, name, rows, features, outputs, seed):
    """MatMul then Relu with more rows than the 8x8 preset's accumulators (512
    rows of 8) and scratchpad hold at once, so the compiler must tile M."""
    rng = np.random.default_rng(seed)
    w = weights(rng, features, outputs)
    x = rng.standard_normal((rows, features)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"], name="matmul"),
             helper.make_node("Relu", ["m"], ["y"], name="relu")]
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, features])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, outputs])],
        initializer=[numpy_helper.from_array(w, "w")])
    save(name, graph, [x], [np.maximum(x @ w, 0.0)], out_dir)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "models"))
    args = parser.parse_args()
    # The default model: 64 and 100 do not divide 8x8 or 32x32 tiles evenly in N.
    mlp(args.out, "mlp", batch=8, features=64, hidden=100, classes=10, seed=1)
    # Every dimension ragged on every preset, K below one array height.
    mlp(args.out, "mlp-ragged", batch=5, features=20, hidden=37, classes=3, seed=2)
    # The oldest and newest opsets the importer takes.
    ops_mix(args.out, "ops-mix-opset11", seed=3, opset=11)
    ops_mix(args.out, "ops-mix-opset17", seed=4, opset=17)
    tall_matmul(args.out, "tall-matmul", rows=700, features=40, outputs=24, seed=5)


if __name__ == "__main__":
    main()
