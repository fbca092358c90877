#!/usr/bin/python3
"""Checks tpu-autodiff's gradients against central finite differences.

    gradcheck.py TOOLS_DIR WORK_DIR   (TOOLS_DIR holds tpuc and tpu-opt)

Each case is a small ONNX model built here with onnx.helper together with
its forward function written in numpy from the ONNX operator definitions.
The model goes through `tpuc --emit=onnx-import` and `tpu-opt --tpu-autodiff`; the step
function runs on the CPU through upstream MLIR (importer-numeric/check.py's
oracle, independent of the TPU backend). The reference gradient is the
central difference (f(p + eps) - f(p - eps)) / 2 eps of the numpy loss in
float64 for every parameter element.

The step is built with optimizer=momentum and fed zero momentum buffers, so
the updated buffers are exactly the gradients (momentum * 0 + g); the
updated parameters, the loss and the correct count are checked too. One case
feeds non-zero buffers with weight decay to check the update formula.

Tolerance (docs/compiler.md): the step computes in float32, the reference in
float64 with eps = 1e-6, whose truncation (~eps^2) and rounding
(~1e-16 / eps) errors are below 1e-9; what remains is float32 rounding
through the forward and backward graphs and 6 printed digits, so each
gradient tensor must agree within 1e-3 of its largest entry (JAX's check_grads
allows 2e-3 for float32). Inputs are drawn so that no ReLU input lies
within 1e-3 of its kink, where a finite difference is meaningless.
"""
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
    """An opset-17 model; `params` are its float initializers, `constants`
    other (integer) ones."""
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
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


def step_signature(tosa):
    """The step function's input and result names, in order."""
    header = re.search(r"func\.func @main\((.*?)\) -> \((.*?)\) \{", tosa).groups()
    return [re.findall(r'tpu\.name = "([^"]*)"', part) for part in header]


def run_step(tools, work, name, onnx_model, options, feeds, outputs):
    path = os.path.join(work, name + ".onnx")
    onnx.save(onnx_model, path)
    # As imported: optimization folds weight reshapes into unnamed constants.
    imported = subprocess.run([os.path.join(tools, "tpuc"), path, "--emit=onnx-import", "-o", "-"],
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
    inputs = [x.astype(np.float32).astype(np.float64) for x in inputs]
    loss_fn = cross_entropy if loss == "cross-entropy" else mse

    def loss_of(q):
        return loss_fn(forward(*inputs, q), labels)

    reference = finite_differences(loss_of, params)
    lr, momentum = 0.25, 0.5
    feeds = {"x": inputs[0], "labels": labels if loss == "cross-entropy" else labels.astype(np.float32)}
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
    return failures


def main():
    tools, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(7)
    failures = []
    for case in cases(rng):
        try:
            failures += check_case(tools, work, case, rng)
        except subprocess.CalledProcessError as error:
            print(error.stderr[:2000])
            failures.append(f"{case[0]}: {os.path.basename(error.cmd[0])} failed")
    if failures:
        print("FAILED: " + "; ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
