#!/usr/bin/python3
"""Generates the model zoo in ONNX test-data layout.

NAME/model.onnx plus NAME/test_data_set_0/{input,output}_N.pb, with weights
and inputs drawn from fixed seeds and expected outputs computed by numpy in
fp32. Nothing is downloaded. models/zoo.txt lists the models: by default the
committed ones are written to models/; generated and bench ones (ResNet-18
at batch 1 and 8, too large for git) only with --only, which the build does
into build/models.
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import reference_ops as ref
from toolchain import zoo

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


class Net:
    """Builds an ONNX graph and, beside it, its numpy reference: each method
    adds one node and computes the node's value with reference_ops.
    Values are (name, array) pairs; weights come from one seeded generator."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.initializers = [], []

    def param(self, name, array):
        array = np.asarray(array, dtype=np.float32)
        self.initializers.append(numpy_helper.from_array(array, name))
        return name, array

    def node(self, op, inputs, name, value, **attrs):
        self.nodes.append(helper.make_node(op, [i[0] for i in inputs], [name], name=name, **attrs))
        return name, np.asarray(value, dtype=np.float32)

    def conv(self, x, channels, kernel, name, stride=1, pad=0, group=1, bias=True):
        fan_in = x[1].shape[1] // group * kernel * kernel
        w = self.param(name + ".w", self.rng.standard_normal(
            (channels, x[1].shape[1] // group, kernel, kernel)) * np.sqrt(2.0 / fan_in))
        inputs = [x, w]
        b = None
        if bias:
            b = self.param(name + ".b", self.rng.standard_normal(channels) * 0.1)
            inputs.append(b)
        value = ref.conv2d(x[1], w[1], None if b is None else b[1], (stride, stride), (pad,) * 4,
                       group=group)
        return self.node("Conv", inputs, name, value, kernel_shape=[kernel, kernel],
                         strides=[stride, stride], pads=[pad] * 4, group=group)

    def batch_norm(self, x, name, gain=1.0):
        c = x[1].shape[1]
        scale = self.param(name + ".scale", gain * (1.0 + 0.1 * self.rng.standard_normal(c)))
        bias = self.param(name + ".bias", 0.1 * self.rng.standard_normal(c))
        mean = self.param(name + ".mean", 0.1 * self.rng.standard_normal(c))
        var = self.param(name + ".var", 0.5 + self.rng.random(c))
        value = ref.batch_norm(x[1], scale[1], bias[1], mean[1], var[1])
        return self.node("BatchNormalization", [x, scale, bias, mean, var], name, value)

    def relu(self, x, name):
        return self.node("Relu", [x], name, np.maximum(x[1], 0.0))

    def relu6(self, x, name):
        """ReLU6 as PyTorch exports it: Clip with constant bounds (opset 11+)."""
        lo, hi = self.param(name + ".min", 0.0), self.param(name + ".max", 6.0)
        return self.node("Clip", [x, lo, hi], name, np.clip(x[1], 0.0, 6.0))

    def add(self, a, b, name):
        return self.node("Add", [a, b], name, a[1] + b[1])

    def linear(self, x, features, name, trans_b=False):
        """MatMul + Add on the last axis, or Gemm (transB=1) for 2-D inputs."""
        w = self.rng.standard_normal((x[1].shape[-1], features)) / np.sqrt(x[1].shape[-1])
        b = self.param(name + ".b", 0.1 * self.rng.standard_normal(features))
        value = x[1] @ w.astype(np.float32) + b[1]
        if trans_b:
            return self.node("Gemm", [x, self.param(name + ".w", w.T), b], name, value, transB=1)
        product = self.node("MatMul", [x, self.param(name + ".w", w)], name + ".matmul",
                            x[1] @ w.astype(np.float32))
        return self.node("Add", [product, b], name, value)

    def layer_norm(self, x, name):
        h = x[1].shape[-1]
        scale = self.param(name + ".scale", 1.0 + 0.1 * self.rng.standard_normal(h))
        bias = self.param(name + ".bias", 0.1 * self.rng.standard_normal(h))
        return self.node("LayerNormalization", [x, scale, bias], name,
                         ref.layer_norm(x[1], scale[1], bias[1]), axis=-1, epsilon=1e-5)

    def shape(self, name, dims):
        self.initializers.append(numpy_helper.from_array(np.array(dims, dtype=np.int64), name))
        return name, None

    def save(self, out_dir, name, inputs, outputs, opset=OPSET):
        graph = helper.make_graph(
            self.nodes, name,
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(v.shape)) for n, v in inputs],
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(v.shape))
             for n, v in outputs],
            initializer=self.initializers)
        save(name, graph, [v for _, v in inputs], [v for _, v in outputs], out_dir, opset)


def image(net, *shape):
    return "x", net.rng.standard_normal(shape).astype(np.float32)


def lenet5(out_dir, name, seed):
    """LeNet-5 on 1x1x32x32: conv 5x5 (6) -> ReLU -> max pool 2 -> conv 5x5 (16)
    -> ReLU -> average pool 2 -> Flatten -> 120 -> 84 -> 10 (Gemm, transB=1)."""
    net = Net(seed)
    x = image(net, 1, 1, 32, 32)
    h = net.relu(net.conv(x, 6, 5, "conv1"), "relu1")
    h = net.node("MaxPool", [h], "pool1", ref.max_pool(h[1], (2, 2), (2, 2)), kernel_shape=[2, 2],
                 strides=[2, 2])
    h = net.relu(net.conv(h, 16, 5, "conv2"), "relu2")
    h = net.node("AveragePool", [h], "pool2", ref.avg_pool(h[1], (2, 2), (2, 2)),
                 kernel_shape=[2, 2], strides=[2, 2])
    h = net.node("Flatten", [h], "flatten", h[1].reshape(1, -1), axis=1)
    h = net.relu(net.linear(h, 120, "fc1", trans_b=True), "relu3")
    h = net.relu(net.linear(h, 84, "fc2", trans_b=True), "relu4")
    y = net.linear(h, 10, "fc3", trans_b=True)
    net.save(out_dir, name, [x], [y])


def basic_block(net, x, channels, stride, name):
    """ResNet basic block: conv-bn-relu-conv-bn, + x (or its 1x1 downsample), relu."""
    h = net.conv(x, channels, 3, name + ".conv1", stride=stride, pad=1, bias=False)
    h = net.relu(net.batch_norm(h, name + ".bn1"), name + ".relu1")
    h = net.conv(h, channels, 3, name + ".conv2", pad=1, bias=False)
    # A small last gain keeps the residual sum O(1) through many blocks.
    h = net.batch_norm(h, name + ".bn2", gain=0.5)
    if stride != 1 or x[1].shape[1] != channels:
        x = net.conv(x, channels, 1, name + ".downsample", stride=stride, bias=False)
        x = net.batch_norm(x, name + ".downsample.bn", gain=0.5)
    return net.relu(net.add(h, x, name + ".add"), name + ".relu2")


def resnet_block(out_dir, name, seed):
    net = Net(seed)
    x = image(net, 1, 64, 16, 16)
    net.save(out_dir, name, [x], [basic_block(net, x, 64, 1, "block")])


def resnet18(out_dir, name, seed, batch=1, size=64, classes=1000):
    """torchvision's ResNet-18 structure at a small input."""
    net = Net(seed)
    x = image(net, batch, 3, size, size)
    h = net.conv(x, 64, 7, "conv1", stride=2, pad=3, bias=False)
    h = net.relu(net.batch_norm(h, "bn1"), "relu")
    h = net.node("MaxPool", [h], "maxpool", ref.max_pool(h[1], (3, 3), (2, 2), (1, 1, 1, 1)),
                 kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    for stage, channels in enumerate((64, 128, 256, 512), start=1):
        for block in range(2):
            stride = 2 if stage > 1 and block == 0 else 1
            h = basic_block(net, h, channels, stride, f"layer{stage}.{block}")
    h = net.node("GlobalAveragePool", [h], "avgpool", ref.global_avg_pool(h[1]))
    h = net.node("Flatten", [h], "flatten", h[1].reshape(batch, -1), axis=1)
    net.save(out_dir, name, [x], [net.linear(h, classes, "fc", trans_b=True)])


def mobilenet_v2_block(out_dir, name, seed, channels=16, expansion=6, size=16):
    """Inverted residual: 1x1 expand-BN-ReLU6, 3x3 depthwise-BN-ReLU6, 1x1
    project-BN, + x."""
    net = Net(seed)
    x = image(net, 1, channels, size, size)
    wide = channels * expansion
    h = net.conv(x, wide, 1, "expand", bias=False)
    h = net.relu6(net.batch_norm(h, "expand.bn"), "expand.relu6")
    h = net.conv(h, wide, 3, "depthwise", pad=1, group=wide, bias=False)
    h = net.relu6(net.batch_norm(h, "depthwise.bn"), "depthwise.relu6")
    h = net.batch_norm(net.conv(h, channels, 1, "project", bias=False), "project.bn")
    net.save(out_dir, name, [x], [net.add(h, x, "add")])


def bert_layer(out_dir, name, seed, seq=32, hidden=64, heads=4, ffn=256):
    """A BERT encoder layer (opset 17 for LayerNormalization): multi-head
    self-attention, residual, LayerNorm, GELU MLP, residual, LayerNorm. GELU
    is the exact erf form PyTorch exports: x * 0.5 * (1 + erf(x / sqrt 2))."""
    net = Net(seed)
    x = "x", net.rng.standard_normal((1, seq, hidden)).astype(np.float32)
    d = hidden // heads

    def split_heads(t, name, perm):
        r = net.node("Reshape", [t, net.shape(name + ".shape", [1, seq, heads, d])],
                     name + ".reshape", t[1].reshape(1, seq, heads, d))
        return net.node("Transpose", [r], name + ".transpose", r[1].transpose(perm), perm=perm)

    q = split_heads(net.linear(x, hidden, "query"), "query", [0, 2, 1, 3])
    k = split_heads(net.linear(x, hidden, "key"), "key", [0, 2, 3, 1])
    v = split_heads(net.linear(x, hidden, "value"), "value", [0, 2, 1, 3])
    scores = net.node("MatMul", [q, k], "scores", q[1] @ k[1])
    scale = net.param("scale", np.sqrt(d))
    scores = net.node("Div", [scores, scale], "scaled", scores[1] / scale[1])
    probs = net.node("Softmax", [scores], "softmax", ref.softmax(scores[1], axis=-1), axis=-1)
    context = net.node("MatMul", [probs, v], "context", probs[1] @ v[1])
    context = net.node("Transpose", [context], "context.transpose",
                       context[1].transpose(0, 2, 1, 3), perm=[0, 2, 1, 3])
    context = net.node("Reshape", [context, net.shape("context.shape", [1, seq, hidden])],
                       "context.reshape", context[1].reshape(1, seq, hidden))
    attention = net.linear(context, hidden, "attention.output")
    h = net.layer_norm(net.add(attention, x, "attention.residual"), "attention.norm")

    f = net.linear(h, ffn, "intermediate")
    sqrt2, one, half = (net.param(n, v) for n, v in (("sqrt2", np.sqrt(2.0)), ("one", 1.0),
                                                     ("half", 0.5)))
    e = net.node("Erf", [net.node("Div", [f, sqrt2], "gelu.div", f[1] / sqrt2[1])], "gelu.erf",
                 ref.erf(f[1] / sqrt2[1]))
    e = net.node("Add", [e, one], "gelu.add", e[1] + 1.0)
    g = net.node("Mul", [f, e], "gelu.mul", f[1] * e[1])
    g = net.node("Mul", [g, half], "gelu", ref.gelu(f[1]))
    out = net.add(net.linear(g, hidden, "output"), h, "output.residual")
    net.save(out_dir, name, [x], [net.layer_norm(out, "output.norm")], opset=17)


def softmax_model(out_dir, name, seed, rows=8, cols=40):
    """Softmax over the last axis (opset 13): row max, exp, row sum, reciprocal."""
    net = Net(seed)
    x = "x", (3.0 * net.rng.standard_normal((rows, cols))).astype(np.float32)
    y = net.node("Softmax", [x], "softmax", ref.softmax(x[1]), axis=-1)
    net.save(out_dir, name, [x], [y])


def layernorm_model(out_dir, name, seed, rows=8, cols=48):
    """LayerNormalization over the last axis (opset 17): row sums, rsqrt."""
    net = Net(seed)
    x = "x", (2.0 * net.rng.standard_normal((rows, cols)) + 0.5).astype(np.float32)
    net.save(out_dir, name, [x], [net.layer_norm(x, "norm")], opset=17)


# A generator for each model of models/zoo.txt.
GENERATORS = {
    # The default model: 64 and 100 do not divide 8x8 or 32x32 tiles evenly in N.
    "mlp": lambda out: mlp(out, "mlp", batch=8, features=64, hidden=100, classes=10, seed=1),
    # Every dimension ragged on every preset, K below one array height.
    "mlp-ragged": lambda out: mlp(out, "mlp-ragged", batch=5, features=20, hidden=37, classes=3,
                                  seed=2),
    # The oldest and newest opsets the importer takes.
    "ops-mix-opset11": lambda out: ops_mix(out, "ops-mix-opset11", seed=3, opset=11),
    "ops-mix-opset17": lambda out: ops_mix(out, "ops-mix-opset17", seed=4, opset=17),
    "tall-matmul": lambda out: tall_matmul(out, "tall-matmul", rows=700, features=40, outputs=24,
                                           seed=5),
    "lenet5": lambda out: lenet5(out, "lenet5", seed=6),
    "resnet-block": lambda out: resnet_block(out, "resnet-block", seed=7),
    "mobilenetv2-block": lambda out: mobilenet_v2_block(out, "mobilenetv2-block", seed=8),
    "bert-layer": lambda out: bert_layer(out, "bert-layer", seed=9),
    # Row reductions and column broadcasts on the vector unit.
    "softmax": lambda out: softmax_model(out, "softmax", seed=11),
    "layernorm": lambda out: layernorm_model(out, "layernorm", seed=12),
    # ~11.7M parameters (47 MB): too large for git.
    "resnet18": lambda out: resnet18(out, "resnet18", seed=10),
    # The same network on a batch of 8 images, where the weights are reused.
    "resnet18-b8": lambda out: resnet18(out, "resnet18-b8", seed=10, batch=8),
}


def main():
    models = zoo()
    for names, problem in ((set(models) - set(GENERATORS), "has no generator"),
                           (set(GENERATORS) - set(models), "is not in models/zoo.txt")):
        if names:
            sys.exit(f"gen-models.py: {', '.join(sorted(names))} {problem}")
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "models"))
    parser.add_argument("--only", action="append", choices=list(models),
                        help="generate just this model (repeatable); by default every committed one")
    args = parser.parse_args()
    for name in args.only or [name for name, kind in models.items() if kind == "committed"]:
        GENERATORS[name](args.out)


if __name__ == "__main__":
    main()
