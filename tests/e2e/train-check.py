#!/usr/bin/python3
"""Training steps on the simulated accelerator against a numpy fp32
reference of the same step (scripts/training.py), which shares nothing with
the compiler or the simulator.

  train-check.py TPUC TPUSIM WORKDIR CASE
CASE:
  step      one step (tpusim --data) matches the reference's loss, correct
            count and updated parameters, in fast and cycle mode with equal
            cycles, for SGD and momentum
  state     parameters and momentum buffers stay in DRAM across steps: on one
            batch, epoch E's loss is the reference's after E - 1 updates, and
            --save-model writes the reference's parameters, which tpuc
            compiles for inference
  converge  the loss falls over a few epochs on a small separable data set,
            epoch by epoch within tolerance of the reference, and the test
            accuracy printed is the saved model's accuracy run in tpusim
  bad-data  wrong shapes, labels out of range or of the wrong type, missing
            files, a bundle that is no training step or whose model is gone:
            each is one line on stderr, nothing on stdout, exit 1
  cnn-step  one step of a small CNN (conv 3x3, relu, max or average pool,
            gemm; scripts/training.py's cnn_model) in both modes, against
            the reference's CNN step
  cnn-converge  a few epochs of the CNN, each epoch's mean loss against the
            reference's, the loss falls

Tolerance (docs/training.md): the MXU multiplies bf16 operands (relative
rounding 2^-9 each) and accumulates in fp32; a step chains four matmuls
(forward, the upstream gradient, the weight gradient). Losses agree to 1e-2
relative; an update (w_new - w_old) to 2e-2 of its largest element, the
parameters themselves to 1e-3 of their largest element; the CNN's Gemm
too. A convolution's gradient sums batch x 64 positions whose ReLU mask
and max-pool arg-max follow the bf16 forward pass; where a value lies
within bf16 rounding of 0 or of another in its window, the decision flips
against fp32 and moves that position's whole gradient (measured on random
images: 1e-2 to 1.1e-1 of the largest element of a convolution's update),
so convolution updates are held to 2e-1 of the fp32 reference only. Each
CNN step is also checked against the same numpy step with each product's
operands rounded to bf16 (what the MXU multiplies), where nothing flips:
the loss and every update and buffer to 1e-4 (fp32 accumulation order;
measured below 2e-6)."""
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "scripts"))
import training  # noqa: E402

TPUC, TPUSIM, WORK, CASE = sys.argv[1:5]
LOSS_RTOL = 1e-2
UPDATE_TOL = 2e-2
PARAM_TOL = 5e-3
CONV_UPDATE_TOL = 2e-1
BF16_TOL = 1e-4
failures = []


def check(condition, message):
    print(("ok: " if condition else "FAIL: ") + message)
    if not condition:
        failures.append(message)


def run(*args):
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{' '.join(map(str, args))} failed:\n{result.stdout}{result.stderr}")
    return result.stdout


def blobs(samples, features, classes, seed, spread=2.0):
    """Gaussian clusters around random centres `spread` apart (in each
    coordinate's standard deviation): far apart, a few epochs learn them."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, spread, (classes, features))
    labels = rng.integers(0, classes, samples)
    x = centres[labels] + rng.normal(0, 1, (samples, features))
    return x.astype(np.float32), labels.astype(np.int64)


def run_step(bundle, inputs, name, count, label):
    """Runs the step once (tpusim --data) in fast and cycle mode, checks the
    cycles are equal and returns the first `count` outputs."""
    data = os.path.join(WORK, f"{name}-data")
    os.makedirs(data, exist_ok=True)
    for i, array in enumerate(inputs):
        training.write_tensor(array, os.path.join(data, f"input_{i}.pb"))
    cycles = {}
    for mode in ("fast", "cycle"):
        out = os.path.join(WORK, f"{name}-{mode}")
        report = out + ".json"
        run(TPUSIM, bundle, "--data", data, "--outputs", out, f"--mode={mode}", "--report", report)
        with open(report) as f:
            cycles[mode] = json.load(f)["total_cycles"]
        outputs = [training.read_tensor(os.path.join(out, f"output_{i}.pb")) for i in range(count)]
    check(cycles["fast"] == cycles["cycle"],
          f"{label}: fast and cycle mode take the same cycles ({cycles})")
    return outputs


def step_inputs(x, y, params, order, optimizer, seed):
    """A step's inputs: x, labels, the parameters in `order` (their order of
    first use), then (momentum) their buffers; and the buffers, random so
    that their part of the update is checked too."""
    rng = np.random.default_rng(seed)
    buffers = {n: rng.normal(0, 0.1, params[n].shape).astype(np.float32) for n in order}
    inputs = [x, y] + [params[n] for n in order]
    if optimizer == "momentum":
        inputs += [buffers[n] for n in order]
    return inputs, buffers


def case_step():
    sizes = [24, 20, 6]
    # Batch 1 too: there a single label's one-hot compare broadcasts the
    # other way round.
    for batch, optimizer in ((16, "sgd"), (16, "momentum"), (1, "sgd")):
        x, y = blobs(batch, sizes[0], sizes[-1], seed=3)
        name = f"step-{optimizer}-{batch}"
        model_path = os.path.join(WORK, f"{name}.onnx")
        model = training.mlp_model(model_path, sizes, batch, seed=4)
        bundle = os.path.join(WORK, f"{name}.tpub")
        run(TPUC, model_path, "--train", "--lr=0.05", f"--optimizer={optimizer}",
            "--momentum=0.9", "-o", bundle)
        params = training.parameters(model)
        names = sorted(params, key=lambda n: [n[0] != "w", n[1:]])
        order = ["w1", "b1", "w2", "b2"]  # the parameters' order of first use
        assert sorted(order) == sorted(names)
        inputs, buffers = step_inputs(x, y, params, order, optimizer, seed=5)
        outputs = run_step(bundle, inputs, name, len(inputs), name)
        reference = {n: p.copy() for n, p in params.items()}
        ref_buffers = {n: b.copy() for n, b in buffers.items()}
        loss, correct = training.step(reference, ref_buffers, x, y, 0.05,
                                      momentum=0.9 if optimizer == "momentum" else None)
        check(abs(outputs[0][0] - loss) <= LOSS_RTOL * abs(loss),
              f"{optimizer}: loss {outputs[0][0]:.6f}, reference {loss:.6f}")
        check(int(outputs[1][0]) == correct and outputs[1].dtype == np.int32,
              f"{optimizer}: correct {outputs[1]} ({outputs[1].dtype}), reference {correct}")
        for i, name in enumerate(order):
            got, want = outputs[2 + i], reference[name]
            update, want_update = got - params[name], want - params[name]
            error = np.max(np.abs(update - want_update)) / np.max(np.abs(want_update))
            check(error <= UPDATE_TOL, f"{optimizer}: update of {name}, error {error:.2e} of "
                                       f"its largest element")
        if optimizer == "momentum":
            for i, name in enumerate(order):
                got, want = outputs[6 + i], ref_buffers[name]
                error = np.max(np.abs(got - want)) / np.max(np.abs(want))
                check(error <= UPDATE_TOL, f"momentum buffer {name}, error {error:.2e}")


def case_state():
    batch, sizes, epochs = 16, [24, 20, 6], 4
    x, y = blobs(batch, sizes[0], sizes[-1], seed=6)
    data = os.path.join(WORK, "state-data")
    os.makedirs(data, exist_ok=True)
    training.write_tensor(x, os.path.join(data, "inputs.pb"))
    training.write_tensor(y, os.path.join(data, "labels.pb"))
    for optimizer in ("sgd", "momentum"):
        model_path = os.path.join(WORK, f"state-{optimizer}.onnx")
        model = training.mlp_model(model_path, sizes, batch, seed=7)
        bundle = os.path.join(WORK, f"state-{optimizer}.tpub")
        run(TPUC, model_path, "--train", "--lr=0.1", f"--optimizer={optimizer}", "-o", bundle)
        report, saved = os.path.join(WORK, f"state-{optimizer}.json"), os.path.join(
            WORK, f"state-{optimizer}-trained.onnx")
        run(TPUSIM, bundle, "--train", data, f"--epochs={epochs}", "--shuffle-seed=11",
            f"--save-model={saved}", f"--report={report}")
        with open(report) as f:
            got = [e["loss"] for e in json.load(f)["epochs"]]
        params, buffers = training.parameters(model), {}
        for epoch in range(epochs):
            rows = training.shuffled(batch, 11 + epoch)
            loss, _ = training.step(params, buffers, x[rows], y[rows], 0.1,
                                    momentum=0.9 if optimizer == "momentum" else None)
            check(abs(got[epoch] - loss) <= LOSS_RTOL * abs(loss),
                  f"{optimizer}: step {epoch + 1} loss {got[epoch]:.6f}, reference {loss:.6f}")
        check(got[-1] < got[0], f"{optimizer}: the loss falls ({got})")
        trained = training.parameters(__import__("onnx").load(saved))
        for name, want in params.items():
            error = np.max(np.abs(trained[name] - want)) / np.max(np.abs(want))
            check(error <= PARAM_TOL, f"{optimizer}: saved {name}, error {error:.2e}")
        run(TPUC, saved, "-o", os.path.join(WORK, f"state-{optimizer}-inference.tpub"))


def case_converge():
    batch, sizes, epochs = 16, [20, 16, 4], 5
    # Close clusters, so that the test accuracy is neither 0 nor 1.
    x, y = blobs(200, sizes[0], sizes[-1], seed=8, spread=0.3)
    # The last 50 samples are the test set (not a whole number of batches:
    # the last one is padded).
    tx, ty = x[150:], y[150:]
    data = os.path.join(WORK, "converge-data")
    os.makedirs(data, exist_ok=True)
    for name, array in (("inputs", x[:150]), ("labels", y[:150]), ("test_inputs", tx),
                        ("test_labels", ty)):
        training.write_tensor(array, os.path.join(data, f"{name}.pb"))
    model_path = os.path.join(WORK, "converge.onnx")
    model = training.mlp_model(model_path, sizes, batch, seed=9)
    bundle = os.path.join(WORK, "converge.tpub")
    run(TPUC, model_path, "--train", "--lr=0.2", "-o", bundle)
    report, saved = os.path.join(WORK, "converge.json"), os.path.join(WORK, "converge-out.onnx")
    run(TPUSIM, bundle, "--train", data, f"--epochs={epochs}", f"--save-model={saved}",
        f"--report={report}")
    with open(report) as f:
        full_report = json.load(f)
    got = full_report["epochs"]
    # The report's split: forward MACs are x W1 and h W2; backward MACs the
    # weight gradients of both layers and the upstream gradient of layer 2
    # only (x needs none), attributed to the Gemm nodes and marked gradient.
    split = full_report["training_split"]
    inputs, hidden, classes = sizes
    forward_macs = batch * (inputs * hidden + hidden * classes)
    backward_macs = batch * (inputs * hidden + 2 * hidden * classes)
    phases = split["phases"]
    check(phases["forward"]["macs"] == forward_macs and
          phases["backward"]["macs"] == backward_macs and phases["update"]["macs"] == 0,
          f"training split MACs: forward {phases['forward']['macs']} ({forward_macs}), backward "
          f"{phases['backward']['macs']} ({backward_macs}), update {phases['update']['macs']}")
    backward_layers = {layer["layer"] for layer in split["layers"] if layer["phase"] == "backward"}
    check(all(layer["gradient"] == (layer["phase"] == "backward") for layer in split["layers"])
          and {"fc1", "fc2"} <= {name.split(" ")[0] for name in backward_layers},
          f"backward ops are attributed to their forward nodes: {sorted(backward_layers)}")
    params, xs, ys = training.parameters(model), x[:150], y[:150]
    for epoch in range(epochs):
        rows = training.shuffled(len(xs), epoch)
        losses = [training.step(params, {}, xs[rows[s * batch:(s + 1) * batch]],
                                ys[rows[s * batch:(s + 1) * batch]], 0.2)[0]
                  for s in range(len(xs) // batch)]
        want = float(np.mean(losses))
        check(abs(got[epoch]["loss"] - want) <= 2 * LOSS_RTOL * want,
              f"epoch {epoch + 1} loss {got[epoch]['loss']:.5f}, reference {want:.5f}")
    check(got[-1]["loss"] < 0.8 * got[0]["loss"],
          f"the loss falls: {[round(e['loss'], 4) for e in got]}")
    # The saved model, compiled for inference, has the accuracy printed.
    inference = os.path.join(WORK, "converge-inference.tpub")
    run(TPUC, saved, "-o", inference)
    correct = 0
    for s in range(0, len(tx), batch):
        rows = list(range(s, min(s + batch, len(tx))))
        padded = np.zeros((batch, sizes[0]), np.float32)
        padded[:len(rows)] = tx[rows]
        d = os.path.join(WORK, f"converge-eval-{s}")
        os.makedirs(d, exist_ok=True)
        training.write_tensor(padded, os.path.join(d, "input_0.pb"))
        run(TPUSIM, inference, "--data", d, "--outputs", d + "-out")
        logits = training.read_tensor(os.path.join(d + "-out", "output_0.pb"))[:len(rows)]
        correct += int(np.sum(np.argmax(logits, axis=1) == ty[rows]))
    check(correct / len(tx) == got[-1]["test_accuracy"],
          f"saved model's test accuracy {correct / len(tx):.4f} is the printed "
          f"{got[-1]['test_accuracy']:.4f}")


def images(samples, classes, seed):
    """[samples, 1, 8, 8] images in [0, 1] (as the digits' pixels / 16):
    noise, and a bright stroke on row k % 8 for class k, so that a few
    epochs of the CNN learn them."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, samples)
    x = rng.uniform(0, 0.4, (samples, 1, 8, 8))
    x[np.arange(samples), 0, labels % 8, :] += rng.uniform(0.4, 0.6, (samples, 8))
    return x.astype(np.float32), labels.astype(np.int64)


def case_cnn_step():
    batch = 16
    x, y = images(batch, 10, seed=12)
    for pool, optimizer, convs in (("max", "sgd", 2), ("avg", "momentum", 1)):
        label = f"cnn {convs} conv, {pool} pool, {optimizer}"
        model_path = os.path.join(WORK, f"cnn-{pool}.onnx")
        model = training.cnn_model(model_path, batch, pool=pool, seed=13, convs=convs)
        bundle = os.path.join(WORK, f"cnn-{pool}.tpub")
        run(TPUC, model_path, "--train", "--lr=0.1", f"--optimizer={optimizer}",
            "--momentum=0.9", "-o", bundle)
        params = training.parameters(model)
        # the step's parameter inputs, in order of first use
        order = [name for layer in range(1, convs + 1) for name in training.conv_names(layer)]
        order += ["w", "b"]
        assert sorted(params) == sorted(order)
        inputs, buffers = step_inputs(x, y, params, order, optimizer, seed=14)
        outputs = run_step(bundle, inputs, f"cnn-{pool}", len(inputs), label)
        reference = {n: p.copy() for n, p in params.items()}
        ref_buffers = {n: b.copy() for n, b in buffers.items()}
        loss, correct = training.cnn_step(reference, ref_buffers, x, y, 0.1, pool,
                                          momentum=0.9 if optimizer == "momentum" else None)
        check(abs(outputs[0][0] - loss) <= LOSS_RTOL * abs(loss),
              f"{label}: loss {outputs[0][0]:.6f}, reference {loss:.6f}")
        check(int(outputs[1][0]) == correct, f"{label}: correct {outputs[1]}, reference {correct}")
        rounded = {n: p.copy() for n, p in params.items()}
        rounded_buffers = {n: b.copy() for n, b in buffers.items()}
        rounded_loss, _ = training.cnn_step(rounded, rounded_buffers, x, y, 0.1, pool,
                                            momentum=0.9 if optimizer == "momentum" else None,
                                            operand=training.bf16)
        check(abs(outputs[0][0] - rounded_loss) <= BF16_TOL * abs(rounded_loss),
              f"{label}: loss {outputs[0][0]:.6f}, bf16-operand reference {rounded_loss:.6f}")
        for i, name in enumerate(order):
            tolerance = CONV_UPDATE_TOL if name.startswith("c") else UPDATE_TOL
            update, want = outputs[2 + i] - params[name], reference[name] - params[name]
            error = np.max(np.abs(update - want)) / np.max(np.abs(want))
            check(error <= tolerance, f"{label}: update of {name}, error {error:.2e} of its "
                                      f"largest element (tolerance {tolerance})")
            update, want = outputs[2 + i] - params[name], rounded[name] - params[name]
            error = np.max(np.abs(update - want)) / np.max(np.abs(want))
            check(error <= BF16_TOL, f"{label}: update of {name} against the bf16-operand "
                                     f"reference, error {error:.2e}")
            if optimizer == "momentum":
                got = outputs[2 + len(order) + i]
                for want, tol, what in ((ref_buffers[name], tolerance, "reference"),
                                        (rounded_buffers[name], BF16_TOL, "bf16 reference")):
                    error = np.max(np.abs(got - want)) / np.max(np.abs(want))
                    check(error <= tol, f"{label}: momentum buffer {name} against the {what}, "
                                        f"error {error:.2e}")


def case_cnn_converge():
    batch, epochs = 16, 4
    x, y = images(96, 4, seed=15)
    data = os.path.join(WORK, "cnn-converge-data")
    os.makedirs(data, exist_ok=True)
    training.write_tensor(x, os.path.join(data, "inputs.pb"))
    training.write_tensor(y, os.path.join(data, "labels.pb"))
    model_path = os.path.join(WORK, "cnn-converge.onnx")
    model = training.cnn_model(model_path, batch, classes=4, pool="max", seed=16)
    bundle = os.path.join(WORK, "cnn-converge.tpub")
    run(TPUC, model_path, "--train", "--lr=0.5", "-o", bundle)
    report = os.path.join(WORK, "cnn-converge.json")
    run(TPUSIM, bundle, "--train", data, f"--epochs={epochs}", f"--report={report}")
    with open(report) as f:
        got = [e["loss"] for e in json.load(f)["epochs"]]
    params = training.parameters(model)
    for epoch in range(epochs):
        rows = training.shuffled(len(x), epoch)
        losses = [training.cnn_step(params, {}, x[rows[s * batch:(s + 1) * batch]],
                                    y[rows[s * batch:(s + 1) * batch]], 0.5, "max")[0]
                  for s in range(len(x) // batch)]
        want = float(np.mean(losses))
        check(abs(got[epoch] - want) <= 2 * LOSS_RTOL * want,
              f"epoch {epoch + 1} loss {got[epoch]:.5f}, reference {want:.5f}")
    check(got[-1] < 0.8 * got[0], f"the loss falls: {[round(loss, 4) for loss in got]}")


def case_bad_data():
    batch, sizes = 8, [12, 10, 4]
    model_path = os.path.join(WORK, "bad.onnx")
    training.mlp_model(model_path, sizes, batch, seed=1)
    bundle = os.path.join(WORK, "bad.tpub")
    run(TPUC, model_path, "--train", "-o", bundle)
    inference = os.path.join(WORK, "bad-inference.tpub")
    run(TPUC, model_path, "-o", inference)
    x, y = blobs(20, sizes[0], sizes[-1], seed=2)

    def dataset(name, files):
        directory = os.path.join(WORK, "bad-" + name)
        os.makedirs(directory, exist_ok=True)
        for file, array in files.items():
            training.write_tensor(array, os.path.join(directory, file + ".pb"))
        return directory

    good = {"inputs": x, "labels": y}
    cases = {
        "missing labels": (bundle, dataset("missing", {"inputs": x}), "labels.pb: missing"),
        "sample shape": (bundle, dataset("shape", {"inputs": x[:, :10], "labels": y}),
                         "is not [samples] + the model's sample shape"),
        "label count": (bundle, dataset("count", {"inputs": x, "labels": y[:15]}),
                        "one class index per sample"),
        "label range": (bundle, dataset("range", {"inputs": x, "labels": np.where(
            np.arange(20) == 7, 4, y).astype(np.int64)}), "label 4 of sample 7 is outside [0, 4)"),
        "negative label": (bundle, dataset("negative", {"inputs": x, "labels": -y - 1}),
                           "is outside [0, 4)"),
        "float labels": (bundle, dataset("float", {"inputs": x, "labels": y.astype(np.float32)}),
                         "class indices must be integers"),
        "test labels missing": (bundle, dataset("test", dict(good, test_inputs=x)),
                                "test_inputs.pb and test_labels.pb go together"),
        "test shape": (bundle, dataset("test-shape", dict(good, test_inputs=x[:, :5],
                                                          test_labels=y)),
                       "test_inputs.pb: shape"),
        "few samples": (bundle, dataset("few", {"inputs": x[:5], "labels": y[:5]}),
                        "fewer than the step's batch of 8"),
        "not a directory": (bundle, os.path.join(WORK, "no-such-directory"),
                            "not a directory of training data"),
        "inference bundle": (inference, dataset("good", good), "is no training step"),
    }
    for name, (tpub, directory, message) in cases.items():
        result = subprocess.run([TPUSIM, tpub, "--train", directory], capture_output=True,
                                text=True)
        lines = result.stderr.splitlines()
        check(result.returncode == 1 and not result.stdout and len(lines) == 1 and
              lines[0].startswith("tpusim: error: ") and message in lines[0],
              f"{name}: exit {result.returncode}, stderr {result.stderr.strip()!r}")
    # The model the bundle was compiled from has gone.
    moved = os.path.join(WORK, "bad-moved.onnx")
    training.mlp_model(moved, sizes, batch, seed=1)
    moved_bundle = os.path.join(WORK, "bad-moved.tpub")
    run(TPUC, moved, "--train", "-o", moved_bundle)
    os.remove(moved)
    result = subprocess.run([TPUSIM, moved_bundle, "--train", dataset("good", good)],
                            capture_output=True, text=True)
    check(result.returncode == 1 and len(result.stderr.splitlines()) == 1 and
          "cannot open the model" in result.stderr,
          f"model gone: exit {result.returncode}, stderr {result.stderr.strip()!r}")


os.makedirs(WORK, exist_ok=True)
{"step": case_step, "state": case_state, "converge": case_converge,
 "bad-data": case_bad_data, "cnn-step": case_cnn_step, "cnn-converge": case_cnn_converge}[CASE]()
if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("all checks passed")
