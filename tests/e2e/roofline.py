#!/usr/bin/python3
"""The report's roofline (docs/simulator.md#roofline) is the documented bound, and a bound.

    roofline.py TPUC TPUSIM OUT_DIR closed-form
    roofline.py TPUC TPUSIM OUT_DIR lower-bound MODEL_DIR

closed-form: on every preset, single-MatMul models of several shapes, a
single-Relu model and a MatMul fused with a Relu; the report's roofline (per
source op and for the model: matrix, vector, compute, memory and the DRAM
latency each waits for) must equal the formula of docs/simulator.md,
computed here tile by tile from the preset's config.

lower-bound: MODEL_DIR compiled for every preset in every fusion mode and
run; every source op must span at least its roofline_cycles and the run at
least the model's, or the bound is wrong.
"""
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from toolchain import FUSION_MODES, PRESETS, matmul_model, preset  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def fail(message):
    sys.exit(f"roofline: {message}")


def compile_and_run(tpuc, tpusim, model, config, bundle, fusion="full"):
    subprocess.run([tpuc, model, "-o", bundle, "--config", config, "--fusion", fusion],
                   check=True, capture_output=True)
    report = bundle + ".json"
    subprocess.run([tpusim, bundle, "--report", report], check=True, capture_output=True)
    with open(report) as f:
        return json.load(f)


def matrix_cycles(gemms, rows, cols):
    """The documented bound, from every tile of every product listed one by one."""
    tiles = []  # (m, k, n) per weight tile
    for batch, m, k, n in gemms:
        for _ in range(batch):
            for k0 in range(0, k, rows):
                for n0 in range(0, n, cols):
                    tiles.append((m, min(rows, k - k0), min(cols, n - n0)))
    if not tiles:
        return 0
    drain = rows + min(n for _, _, n in tiles) - 1
    stream = min(k for _, k, _ in tiles) + sum(m for m, _, _ in tiles) + drain
    weights = sum(k for _, k, _ in tiles) + min(m for m, _, _ in tiles) + drain
    links = sorted(k + m + rows + n - 1 for m, k, n in tiles)
    planes = sum(links[:math.ceil(len(tiles) / 2)])
    return max(stream, weights, planes)


def vector_cycles(elements, config):
    return config["vector"]["pipeline_latency"] + math.ceil(elements / config["vector"]["lanes"]) \
        if elements else 0


def expect_bound(where, entry, matrix, vector, memory, latency, model=False):
    """The matrix and vector units share the compute queue: their times add. No
    byte crosses the bus before a request's latency; the model's compute waits
    for a load's latency and a store's."""
    memory_latency = latency if memory else 0
    compute_latency = 2 * latency if model and memory and matrix + vector else 0
    got = tuple(entry[f"roofline_{part}_cycles"]
                for part in ("matrix", "vector", "compute", "memory", "compute_latency",
                             "memory_latency")) + (entry["roofline_cycles"],)
    want = (matrix, vector, matrix + vector, memory, compute_latency, memory_latency,
            max(matrix + vector + compute_latency, memory + memory_latency))
    if got != want:
        fail(f"{where}: roofline (matrix, vector, compute, memory, compute latency, "
             f"memory latency, bound) is {got}, the formula gives {want}")


def only_op(report, where):
    ops = [op for op in report["by_source_op"] if op["name"] != "halt"]
    if len(ops) != 1:
        fail(f"{where}: expected one source op besides halt, got {[op['name'] for op in ops]}")
    return ops[0]


def relu_model(path, rows, cols, k=None):
    """y = relu(x) with x rows x cols; with k, y = relu(x @ w), x rows x k."""
    nodes = [helper.make_node("Relu", ["h" if k else "x"], ["y"], name="relu")]
    weights = []
    if k:
        nodes.insert(0, helper.make_node("MatMul", ["x", "w"], ["h"], name="matmul"))
        w = numpy_helper.from_array(
            np.random.default_rng(0).standard_normal((k, cols)).astype(np.float32), "w")
        weights.append(w)
    graph = helper.make_graph(
        nodes, "relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, k or cols])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, cols])], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)


def closed_form(tpuc, tpusim, out):
    # Whole and partial tiles; few rows per tile (the weight planes bound),
    # many (the array's rows); a tall one.
    shapes = [(100, 70, 45), (4, 64, 64), (256, 96, 40), (1024, 16, 8)]
    for name in PRESETS:
        config_path = preset(name)
        with open(config_path) as f:
            config = json.load(f)
        rows, cols = config["array"]["rows"], config["array"]["cols"]
        bandwidth = config["dram"]["bytes_per_cycle"]
        latency = config["dram"]["latency_cycles"]
        for m, k, n in shapes:
            where = f"{m}x{k}x{n} MatMul on {name}"
            model = os.path.join(out, f"matmul-{m}-{k}-{n}.onnx")
            matmul_model(model, m, k, n)
            report = compile_and_run(tpuc, tpusim, model, config_path,
                                     os.path.join(out, f"matmul-{m}-{k}-{n}-{name}.tpub"))
            # x and y cross DRAM once as fp32, the weights once as the array's
            # dtype (only the array reads them; tpuc --dram-dtype=array).
            weight_bytes = 2 if config["array"]["dtype"] == "bf16" else 4
            memory = math.ceil((4 * (m * k + m * n) + weight_bytes * k * n) / bandwidth)
            compute = matrix_cycles([(1, m, k, n)], rows, cols)
            expect_bound(where, report, compute, 0, memory, latency, model=True)
            expect_bound(f"{where}, its op", only_op(report, where), compute, 0, memory, latency)
            if report["total_cycles"] < report["roofline_cycles"]:
                fail(f"{where}: {report['total_cycles']} cycles beat the bound")
        where = f"Relu on {name}"
        model = os.path.join(out, "relu.onnx")
        relu_model(model, 64, 96)
        report = compile_and_run(tpuc, tpusim, model, config_path,
                                 os.path.join(out, f"relu-{name}.tpub"))
        memory = math.ceil(2 * 4 * 64 * 96 / bandwidth)
        vector = vector_cycles(64 * 96, config)
        expect_bound(where, report, 0, vector, memory, latency, model=True)
        expect_bound(f"{where}, its op", only_op(report, where), 0, vector, memory, latency)
        # Fused, the Relu is the MatMul's epilogue: the group loads x and w
        # and stores y, all charged to the MatMul.
        where = f"MatMul then Relu on {name}"
        model = os.path.join(out, "matmul-relu.onnx")
        relu_model(model, 64, 96, k=48)
        report = compile_and_run(tpuc, tpusim, model, config_path,
                                 os.path.join(out, f"matmul-relu-{name}.tpub"))
        memory = math.ceil((4 * (64 * 48 + 64 * 96) + weight_bytes * 48 * 96) / bandwidth)
        matrix = matrix_cycles([(1, 64, 48, 96)], rows, cols)
        expect_bound(where, report, matrix, vector, memory, latency, model=True)
        ops = {op["name"]: op for op in report["by_source_op"]}
        expect_bound(f"{where}, its MatMul", ops["matmul (MatMul)"], matrix, 0, memory, latency)
        expect_bound(f"{where}, its Relu", ops["relu (Relu)"], 0, vector, 0, latency)
        print(f"{name}: the closed form holds for {len(shapes)} MatMuls, a Relu and both")


def lower_bound(tpuc, tpusim, out, model_dir):
    model = os.path.join(model_dir, "model.onnx")
    checked = 0
    for name in PRESETS:
        for fusion in FUSION_MODES:
            where = f"{os.path.basename(model_dir)} on {name}, --fusion={fusion}"
            report = compile_and_run(tpuc, tpusim, model, preset(name),
                                     os.path.join(out, f"{name}-{fusion}.tpub"), fusion)
            if "roofline_cycles" not in report:
                fail(f"{where}: the report has no roofline")
            if report["total_cycles"] < report["roofline_cycles"]:
                fail(f"{where}: {report['total_cycles']} cycles beat the model's bound "
                     f"{report['roofline_cycles']}")
            for op in report["by_source_op"]:
                span = op["last_cycle"] - op["first_cycle"]
                if span < op["roofline_cycles"]:
                    fail(f"{where}: {op['name']} spans {span} cycles, less than its bound "
                         f"{op['roofline_cycles']} (compute {op['roofline_compute_cycles']}, "
                         f"memory {op['roofline_memory_cycles']} + latency "
                         f"{op['roofline_memory_latency_cycles']})")
                checked += 1
    print(f"{checked} source ops at or above their roofline, and every run above the model's")


def main():
    if len(sys.argv) < 5 or sys.argv[4] not in ("closed-form", "lower-bound") or \
            (sys.argv[4] == "lower-bound") != (len(sys.argv) == 6):
        sys.exit(__doc__.split("\n\n")[1])
    tpuc, tpusim, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    if sys.argv[4] == "closed-form":
        closed_form(tpuc, tpusim, out)
    else:
        lower_bound(tpuc, tpusim, out, sys.argv[5])


if __name__ == "__main__":
    main()
