#!/usr/bin/python3
"""One small ONNX model per importer case, with inputs and numpy-expected
outputs, for the import lit tests and the numeric check (tests/importer-numeric).

    op_models.py KIND OUT.onnx      writes the model
    op_models.py --list             prints the kinds that have expected outputs
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "scripts"))
import reference_ops as ref  # noqa: E402

f32 = np.float32
KINDS = {}


def kind(function):
    KINDS[function.__name__.replace("_", "-")] = function
    return function


def case(nodes, inputs, outputs, constants=None, opset=13):
    """inputs, outputs, constants: dicts of name -> array; outputs may map to
    None where a case only checks the import."""
    def info(name, array):
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(array.shape))
    out_infos = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs]
    graph = helper.make_graph(
        nodes, "g", [info(n, a) for n, a in inputs.items()], out_infos,
        initializer=[numpy_helper.from_array(np.asarray(a), n)
                     for n, a in (constants or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model, [a.astype(f32) for a in inputs.values()], list(outputs.values())


def node(op, inputs, outputs=("y",), **attrs):
    return helper.make_node(op, list(inputs), list(outputs), name=op.lower(), **attrs)


def randn(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape).astype(f32)


def ints(*values):
    return np.array(values, dtype=np.int64)


# --- convolutions and pools -------------------------------------------------

@kind
def conv_pads():
    x, w, b = randn(1, 1, 3, 7, 7), randn(2, 4, 3, 3, 3), randn(3, 4)
    attrs = dict(pads=[1, 0, 2, 1], strides=[2, 1], dilations=[1, 2])
    return case([node("Conv", "xwb", **attrs)], {"x": x}, {"y": ref.conv2d(
        x, w, b, strides=(2, 1), pads=(1, 0, 2, 1), dilations=(1, 2))}, {"w": w, "b": b})


def conv_auto_pad(auto_pad, pads):
    x, w = randn(1, 1, 2, 6, 5), randn(2, 3, 2, 4, 4)
    return case([node("Conv", "xw", auto_pad=auto_pad, strides=[2, 2])], {"x": x},
                {"y": ref.conv2d(x, w, strides=(2, 2), pads=pads)}, {"w": w})


@kind
def conv_same_upper():
    # out = ceil(6/2), ceil(5/2) = 3, 3; total pads 2 and 3, the odd one at the end
    return conv_auto_pad("SAME_UPPER", (1, 1, 1, 2))


@kind
def conv_same_lower():
    return conv_auto_pad("SAME_LOWER", (1, 2, 1, 1))


@kind
def conv_valid():
    return conv_auto_pad("VALID", (0, 0, 0, 0))


@kind
def conv_depthwise():
    x, w, b = randn(1, 1, 4, 6, 6), randn(2, 8, 1, 3, 3), randn(3, 8)
    return case([node("Conv", "xwb", group=4, pads=[1, 1, 1, 1])], {"x": x},
                {"y": ref.conv2d(x, w, b, pads=(1, 1, 1, 1), group=4)}, {"w": w, "b": b})


@kind
def conv_grouped():
    x, w = randn(1, 1, 4, 5, 5), randn(2, 6, 2, 3, 3)
    return case([node("Conv", "xw", group=2)], {"x": x}, {"y": ref.conv2d(x, w, group=2)},
                {"w": w})


@kind
def conv_chain():
    """conv -> BatchNormalization -> Relu -> conv -> Add(first conv): NHWC throughout."""
    x, w1, w2 = randn(1, 1, 3, 8, 8), randn(2, 4, 3, 3, 3) / 3, randn(3, 4, 4, 1, 1) / 2
    scale, bias, mean = randn(4, 4), randn(5, 4), randn(6, 4)
    var = np.abs(randn(7, 4)) + 0.5
    h = ref.conv2d(x, w1, pads=(1, 1, 1, 1))
    r = np.maximum(ref.batch_norm(h, scale, bias, mean, var), 0)
    y = ref.conv2d(r, w2) + h
    return case([node("Conv", ["x", "w1"], ["h"], pads=[1, 1, 1, 1]),
                 helper.make_node("BatchNormalization", ["h", "s", "bias", "m", "v"], ["n"],
                                  name="bn"),
                 node("Relu", ["n"], ["r"]),
                 helper.make_node("Conv", ["r", "w2"], ["c"], name="conv2"),
                 node("Add", ["c", "h"])], {"x": x}, {"y": y},
                {"w1": w1, "w2": w2, "s": scale, "bias": bias, "m": mean, "v": var})


@kind
def batchnorm():
    x, scale, bias, mean = randn(1, 2, 3, 4), randn(2, 3), randn(3, 3), randn(4, 3)
    var = np.abs(randn(5, 3)) + 0.1
    return case([node("BatchNormalization", ["x", "s", "b", "m", "v"], epsilon=0.01)], {"x": x},
                {"y": ref.batch_norm(x, scale, bias, mean, var, 0.01)},
                {"s": scale, "b": bias, "m": mean, "v": var})


@kind
def maxpool_ceil():
    x = randn(1, 1, 2, 7, 6)
    return case([node("MaxPool", "x", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 0, 0],
                      ceil_mode=1)], {"x": x},
                {"y": ref.max_pool(x, (3, 3), (2, 2), (1, 1, 0, 0), ceil_mode=True)})


@kind
def maxpool_same():
    x = randn(1, 1, 2, 5, 5)
    return case([node("MaxPool", "x", kernel_shape=[2, 2], strides=[2, 2], auto_pad="SAME_UPPER")],
                {"x": x}, {"y": ref.max_pool(x, (2, 2), (2, 2), (0, 0, 1, 1))})


@kind
def avgpool_include_pad():
    x = randn(1, 1, 2, 6, 7)
    return case([node("AveragePool", "x", kernel_shape=[3, 3], strides=[2, 2],
                      pads=[1, 1, 1, 0], count_include_pad=1, ceil_mode=1)], {"x": x},
                {"y": ref.avg_pool(x, (3, 3), (2, 2), (1, 1, 1, 0), ceil_mode=True,
                                   count_include_pad=True)})


@kind
def avgpool_exclude_pad():
    x = randn(1, 1, 2, 6, 7)
    return case([node("AveragePool", "x", kernel_shape=[3, 2], strides=[1, 2], pads=[1, 1, 1, 1])],
                {"x": x}, {"y": ref.avg_pool(x, (3, 2), (1, 2), (1, 1, 1, 1))})


@kind
def global_avgpool():
    x = randn(1, 2, 3, 4, 5)
    return case([node("GlobalAveragePool", "x")], {"x": x},
                {"y": ref.global_avg_pool(x)})


@kind
def concat_channels():
    """Two convolutions joined on channels stay NHWC; a Concat on a plain tensor does not."""
    x, w1, w2 = randn(1, 1, 2, 4, 4), randn(2, 3, 2, 1, 1), randn(3, 2, 2, 1, 1)
    z = randn(4, 2, 5)
    return case([helper.make_node("Conv", ["x", "w1"], ["a"], name="conv1"),
                 helper.make_node("Conv", ["x", "w2"], ["b"], name="conv2"),
                 node("Concat", ["a", "b"], ["y"], axis=1),
                 helper.make_node("Concat", ["z", "z"], ["t"], name="concat_plain", axis=-1)],
                {"x": x, "z": z},
                {"y": np.concatenate([ref.conv2d(x, w1), ref.conv2d(x, w2)], axis=1),
                 "t": np.concatenate([z, z], axis=-1)}, {"w1": w1, "w2": w2})


# --- matrix products and elementwise ----------------------------------------

@kind
def matmul_batched():
    a, b = randn(1, 2, 1, 4, 5), randn(2, 3, 5, 6)
    return case([node("MatMul", "ab")], {"a": a, "b": b}, {"y": a @ b})


@kind
def matmul_weight():
    a, b = randn(1, 2, 3, 4), randn(2, 4, 5)
    return case([node("MatMul", "ab")], {"a": a}, {"y": a @ b}, {"b": b})


@kind
def matmul_vectors():
    a, b, v = randn(1, 4), randn(2, 3, 4, 5), randn(3, 5)
    return case([node("MatMul", "ab", ["p"]), helper.make_node("MatMul", ["b", "v"], ["q"],
                                                               name="matvec")],
                {"a": a, "b": b, "v": v}, {"p": a @ b, "q": b @ v})


@kind
def gemm_trans_a():
    a, b, c = randn(1, 5, 3), randn(2, 5, 4), randn(3, 3, 1)
    return case([node("Gemm", "abc", transA=1, alpha=2.0)], {"a": a}, {"y": 2 * a.T @ b + c},
                {"b": b, "c": c})


@kind
def activations():
    x = randn(1, 3, 8) * 2
    return case([node("LeakyRelu", ["x"], ["l"], alpha=0.1), node("Sigmoid", ["x"], ["s"]),
                 node("Tanh", ["x"], ["t"]), node("Erf", ["x"], ["e"])], {"x": x},
                {"l": np.where(x >= 0, x, 0.1 * x), "s": 1 / (1 + np.exp(-x)), "t": np.tanh(x),
                 "e": ref.erf(x)})


@kind
def arithmetic():
    a, b = randn(1, 2, 3, 4), np.abs(randn(2, 4)) + 0.5
    c = randn(3, 3, 1)
    return case([node("Div", "ab", ["d"]), node("Pow", ["b", "two"], ["p"]),
                 node("Max", ["a", "c", "b"], ["m"]), node("Min", ["a"], ["n"]),
                 helper.make_node("Clip", ["a", "", "hi"], ["k"], name="clip")],
                {"a": a, "b": b, "c": c},
                {"d": a / b, "p": b ** 2, "m": np.maximum(np.maximum(a, c), b), "n": a,
                 "k": np.minimum(a, 0.5)}, {"two": np.array(2.0, f32), "hi": np.array(0.5, f32)},
                opset=11)


# --- normalization and reductions -------------------------------------------

@kind
def softmax_opset13():
    x = randn(1, 2, 3, 4)
    return case([node("Softmax", "x", axis=1)], {"x": x}, {"y": ref.softmax(x, axis=1)})


@kind
def softmax_opset11():
    # Before opset 13: normalized over the flattening [2, 12] at axis 1.
    x = randn(1, 2, 3, 4)
    return case([node("Softmax", "x")], {"x": x},
                {"y": ref.softmax(x.reshape(2, 12), axis=1).reshape(2, 3, 4)}, opset=11)


@kind
def layernorm():
    x, s, b = randn(1, 2, 3, 8), randn(2, 8), randn(3, 8)
    s2 = randn(4, 3, 8)
    return case([node("LayerNormalization", ["x", "s", "b"], ["y"], epsilon=1e-3),
                 helper.make_node("LayerNormalization", ["x", "s2"], ["z"], name="ln_axis1",
                                  axis=1)],
                {"x": x}, {"y": ref.layer_norm(x, s, b, epsilon=1e-3),
                           "z": ref.layer_norm(x, s2, 0.0, axis=1)}, {"s": s, "b": b, "s2": s2},
                opset=17)


@kind
def reductions_opset13():
    x = randn(1, 2, 3, 4)
    return case([node("ReduceMean", ["x"], ["m"], axes=[1, -1], keepdims=0),
                 node("ReduceSum", ["x", "axes"], ["s"]),
                 helper.make_node("ReduceSum", ["x"], ["all"], name="sum_all", keepdims=0),
                 helper.make_node("ReduceSum", ["x"], ["same"], name="sum_noop",
                                  noop_with_empty_axes=1)],
                {"x": x}, {"m": x.mean(axis=(1, 2)), "s": x.sum(axis=0, keepdims=True),
                           "all": np.array(x.sum(), f32), "same": x}, {"axes": ints(0)})


@kind
def reductions_opset11():
    x = randn(1, 2, 3, 4)
    return case([node("ReduceSum", ["x"], ["s"], axes=[-2])], {"x": x},
                {"s": x.sum(axis=-2, keepdims=True)}, opset=11)


# --- data movement ------------------------------------------------------------

@kind
def transpose():
    x = randn(1, 2, 3, 4)
    return case([node("Transpose", ["x"], ["r"]), helper.make_node(
        "Transpose", ["x"], ["p"], name="transpose_perm", perm=[1, 0, 2])], {"x": x},
        {"r": x.T, "p": x.transpose(1, 0, 2)})


@kind
def slice():
    x = randn(1, 4, 6, 5)
    big = np.iinfo(np.int64).max
    return case([node("Slice", ["x", "starts", "ends", "axes", "steps"]),
                 helper.make_node("Slice", ["x", "s2", "e2"], ["z"], name="slice_default")],
                {"x": x}, {"y": x[1:-1, 5:0:-2, ::3], "z": x[:, 1:3]},
                {"starts": ints(1, -1, 0), "ends": ints(-1, 0, big), "axes": ints(0, -2, 2),
                 "steps": ints(1, -2, 3), "s2": ints(-10, 1), "e2": ints(big, 3)})


@kind
def reshape_flatten_nhwc():
    """Reshape and Flatten after a convolution read ONNX order (a transpose back)."""
    x, w = randn(1, 1, 2, 3, 3), randn(2, 3, 2, 1, 1)
    c = ref.conv2d(x, w)
    return case([node("Conv", "xw", ["c"]), node("Flatten", ["c"], ["f"]),
                 node("Reshape", ["c", "shape"], ["r"])], {"x": x},
                {"f": c.reshape(1, -1), "r": c.reshape(3, 9)}, {"w": w, "shape": ints(3, -1)})


@kind
def shape_arithmetic():
    """x.view(x.size(0), -1) as exporters write it: the shape is computed
    while importing."""
    x = randn(1, 2, 3, 4)
    return case([node("Shape", "x", ["s"]), node("Gather", ["s", "zero"], ["n"], axis=0),
                 node("Unsqueeze", ["n", "axes"], ["n1"]),
                 node("Concat", ["n1", "minus_one"], ["shape"], axis=0),
                 node("Reshape", ["x", "shape"])],
                {"x": x}, {"y": x.reshape(2, -1)},
                {"zero": np.array(0, dtype=np.int64), "axes": ints(0), "minus_one": ints(-1)})


# --- models the importer must reject, for errors.test --------------------------

def rejected(op, attrs=None, shape=(1, 2, 4, 4), inputs=("x",), outputs=("y",), constants=None,
             opset=13):
    nodes = [node(op, inputs, outputs, **(attrs or {}))]
    return case(nodes, {"x": randn(0, *shape)}, dict.fromkeys(outputs), constants, opset)[0]


W = {"w": randn(0, 3, 2, 3, 3)}
BN = {n: np.ones(2, f32) for n in ("s", "b", "m", "v")}
ERRORS = {
    "conv-auto-pad": lambda: rejected("Conv", dict(auto_pad="FOO"), inputs="xw", constants=W),
    "conv-pads-and-auto-pad": lambda: rejected(
        "Conv", dict(auto_pad="SAME_UPPER", pads=[1, 1, 1, 1]), inputs="xw", constants=W),
    "conv-3d": lambda: rejected("Conv", shape=(1, 2, 4, 4, 4), inputs="xw",
                                constants={"w": randn(0, 3, 2, 3, 3, 3)}),
    "conv-group": lambda: rejected("Conv", dict(group=2), inputs="xw", constants=W),
    "maxpool-indices": lambda: rejected("MaxPool", dict(kernel_shape=[2, 2]),
                                        outputs=("y", "indices")),
    "maxpool-no-kernel": lambda: rejected("MaxPool"),
    "maxpool-ceil-window-in-padding": lambda: rejected(
        "MaxPool", dict(kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 1, 1], ceil_mode=1)),
    "batchnorm-training-mode": lambda: rejected(
        "BatchNormalization", dict(training_mode=1), inputs="xsbmv", constants=BN, opset=15),
    "batchnorm-statistics": lambda: rejected(
        "BatchNormalization", inputs="xsbmv", outputs=("y", "mean"), constants=BN),
    "batchnorm-variable-mean": lambda: case(
        [node("BatchNormalization", "xsbmv")], {"x": randn(0, 1, 2, 4, 4), "m": randn(1, 2)},
        {"y": None}, {n: BN[n] for n in "sbv"})[0],
    "layernorm-opset13": lambda: rejected("LayerNormalization", inputs="xs",
                                          constants={"s": np.ones(4, f32)}),
    "slice-variable-starts": lambda: case(
        [node("Slice", ["x", "starts", "ends"])], {"x": randn(0, 4), "starts": randn(1, 1)},
        {"y": None}, {"ends": ints(2)})[0],
    "slice-step-zero": lambda: rejected("Slice", shape=(4,), inputs=["x", "s", "e", "a", "st"],
                                        constants={"s": ints(0), "e": ints(2), "a": ints(0),
                                                   "st": ints(0)}),
    "slice-empty": lambda: rejected("Slice", shape=(4,), inputs=["x", "s", "e"],
                                    constants={"s": ints(3), "e": ints(1)}),
    "resize-cubic": lambda: rejected("Resize", dict(mode="cubic"), inputs=["x", "", "scales"],
                                     constants={"scales": np.array([1, 1, 2, 2], f32)}),
    "cast-to-int": lambda: rejected("Cast", dict(to=TensorProto.INT64)),
    "gather-out-of-range": lambda: rejected("Gather", inputs="xi", constants={"i": ints(2)}),
    "softmax-axis": lambda: rejected("Softmax", dict(axis=4)),
    "reduce-repeated-axes": lambda: rejected("ReduceMean", dict(axes=[1, -3])),
    "transpose-perm": lambda: rejected("Transpose", dict(perm=[0, 0, 1, 2])),
    "concat-shapes": lambda: case([node("Concat", ["x", "z"], axis=0)],
                                  {"x": randn(0, 2, 3), "z": randn(1, 2, 4)}, {"y": None})[0],
    "matmul-batch": lambda: case([node("MatMul", ["x", "z"])],
                                 {"x": randn(0, 2, 4, 5), "z": randn(1, 3, 5, 6)}, {"y": None})[0],
    "add-shapes": lambda: case([node("Add", ["x", "z"])],
                               {"x": randn(0, 2, 3), "z": randn(1, 4)}, {"y": None})[0],
}

if __name__ == "__main__":
    # op_models.py --list, or op_models.py KIND PATH [KIND PATH ...]: one
    # process for all of a test's models (importing onnx takes a while).
    if sys.argv[1] == "--list":
        print("\n".join(KINDS))
    elif len(sys.argv) % 2 == 0:
        sys.exit(f"op_models.py: {sys.argv[-1]} has no output path")
    else:
        for kind, path in zip(sys.argv[1::2], sys.argv[2::2]):
            onnx.save(ERRORS[kind]() if kind in ERRORS else KINDS[kind]()[0], path)
