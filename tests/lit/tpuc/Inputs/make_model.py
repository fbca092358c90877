#!/usr/bin/python3
"""Writes one small ONNX model for a tpuc lit test: make_model.py KIND OUT.onnx."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def info(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array, dtype=np.float32), name)


KINDS = {
    "unsupported": lambda: model([helper.make_node("LRN", ["x"], ["y"], name="norm", size=3)],
                                 [info("x", [1, 3, 4, 4])], [info("y", [1, 3, 4, 4])]),
    "dynamic": lambda: model([helper.make_node("Relu", ["x"], ["y"])],
                             [info("x", ["batch", 3])], [info("y", ["batch", 3])]),
    "opset9": lambda: model([helper.make_node("Relu", ["x"], ["y"])],
                            [info("x", [2, 3])], [info("y", [2, 3])], opset=9),
    "opset19": lambda: model([helper.make_node("Relu", ["x"], ["y"])],
                             [info("x", [2, 3])], [info("y", [2, 3])], opset=19),
    # A broadcast over a middle axis (tpu-matrix-broadcast makes it a column).
    "middle_bias": lambda: model([helper.make_node("Add", ["x", "c"], ["y"], name="midbias")],
                                 [info("x", [2, 4, 3])], [info("y", [2, 4, 3])],
                                 [const("c", np.ones((2, 1, 3)))]),
    # Gemm with every attribute, Clip with constant bounds, Identity and Flatten.
    "gemm_attrs": lambda: model(
        [helper.make_node("Gemm", ["x", "w", "c"], ["g"], name="gemm", alpha=0.5, beta=2.0,
                          transB=1),
         helper.make_node("Clip", ["g", "lo", "hi"], ["k"], name="clip"),
         helper.make_node("Identity", ["k"], ["y"], name="id")],
        [info("x", [3, 5])], [info("y", [3, 4])],
        [const("w", np.arange(20).reshape(4, 5) / 20.0), const("c", np.arange(4) / 4.0),
         const("lo", -0.5), const("hi", 0.75)]),
    # Training: a grouped Conv with a dynamic batch, GlobalAveragePool and
    # Flatten (logits [batch, 4]).
    "train_grouped": lambda: model(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", group=2, pads=[1, 1, 1, 1]),
         helper.make_node("GlobalAveragePool", ["c"], ["g"], name="gap"),
         helper.make_node("Flatten", ["g"], ["y"], name="flatten")],
        [info("x", ["batch", 4, 5, 5])], [info("y", ["batch", 4])],
        [const("w", np.arange(72).reshape(4, 2, 3, 3) / 72.0), const("b", np.zeros(4))]),
    # Training: ReduceProd has no gradient rule.
    "train_prod": lambda: model(
        [helper.make_node("Mul", ["x", "w"], ["m"], name="scale"),
         helper.make_node("ReduceProd", ["m"], ["y"], name="product", axes=[1])],
        [info("x", [2, 3])], [info("y", [2, 1])], [const("w", np.full((1, 3), 3.0))]),
    # Training: ConvTranspose's weights are folded at import.
    "train_convtranspose": lambda: model(
        [helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up")],
        [info("x", [1, 1, 3, 3])], [info("y", [1, 1, 4, 4])], [const("w", np.ones((1, 1, 2, 2)))]),
    # Training, the composite ops as imported, each under MSE: Softmax and
    # LogSoftmax over the last axis, LayerNormalization (opset 17, scale and
    # bias trained), a batched MatMul with a weight per batch, Div by a
    # broadcast parameter and ReduceMean over the middle axis.
    "train_softmax": lambda: model(
        [helper.make_node("Mul", ["x", "w"], ["m"], name="scale"),
         helper.make_node("Softmax", ["m"], ["y"], name="softmax", axis=-1)],
        [info("x", [2, 3])], [info("y", [2, 3])], [const("w", np.full((1, 3), 0.5))]),
    "train_logsoftmax": lambda: model(
        [helper.make_node("Mul", ["x", "w"], ["m"], name="scale"),
         helper.make_node("LogSoftmax", ["m"], ["y"], name="logsoftmax", axis=-1)],
        [info("x", [2, 3])], [info("y", [2, 3])], [const("w", np.full((1, 3), 0.5))]),
    "train_layernorm": lambda: model(
        [helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["y"], name="ln",
                          axis=-1, epsilon=1e-5)],
        [info("x", [2, 4])], [info("y", [2, 4])],
        [const("gamma", np.ones(4)), const("beta", np.zeros(4))], opset=17),
    "train_batched_matmul": lambda: model(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="bmm")],
        [info("x", [2, 3, 4])], [info("y", [2, 3, 5])],
        [const("w", np.arange(40).reshape(2, 4, 5) / 40.0)]),
    "train_div_mean": lambda: model(
        [helper.make_node("Div", ["x", "d"], ["q"], name="div"),
         helper.make_node("ReduceMean", ["q"], ["y"], name="mean", axes=[1], keepdims=1)],
        [info("x", [2, 3, 4])], [info("y", [2, 1, 4])], [const("d", np.full((1, 1, 4), 2.0))]),
}

if __name__ == "__main__":
    onnx.save(KINDS[sys.argv[1]](), sys.argv[2])
