#!/usr/bin/python3
"""tpu-sweep's and the Python API's tests; ctest runs one case each:

    sweep_tests.py CASE WORK_DIR

Each case checks against something independent of what it tests: tpuc and
tpusim run directly, closed forms computed here from the topology's fields,
a brute-force Pareto front. Exit 77 tells ctest a case was skipped.
"""
import csv
import fcntl
import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SWEEP = os.path.join(ROOT, "scripts", "tpu-sweep")
BIN = os.path.join(ROOT, "build", "bin")
MLP = os.path.join(ROOT, "models", "mlp")
EXAMPLES = os.path.join(ROOT, "examples", "scalesim")
SKIP = 77
# The report's figures a sweep row must carry unchanged.
FIGURES = ("total_cycles", "macs", "dram_bytes_read", "dram_bytes_written", "mxu_utilization",
           "instructions")

sys.path.insert(0, os.path.join(ROOT, "scripts"))


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def write_spec(work, text, name="spec.yaml"):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def sweep(*arguments, check_status=True):
    completed = subprocess.run([sys.executable, SWEEP, *arguments], capture_output=True,
                               text=True)
    if check_status and completed.returncode != 0:
        raise AssertionError(f"tpu-sweep {' '.join(arguments)} exited {completed.returncode}:\n"
                             f"{completed.stdout}{completed.stderr}")
    return completed


def read_rows(out):
    with open(os.path.join(out, "results.jsonl")) as f:
        return [json.loads(line) for line in f]


def tpusim_report(work, model_dir, config, fusion, name):
    """What tpuc and tpusim say when run by hand, without tpu-sweep."""
    bundle = os.path.join(work, f"{name}.tpub")
    report = os.path.join(work, f"{name}.json")
    subprocess.run([os.path.join(BIN, "tpuc"), os.path.join(model_dir, "model.onnx"), "-o", bundle,
                    "--config", config, "--fusion", fusion], check=True, capture_output=True)
    subprocess.run([os.path.join(BIN, "tpusim"), bundle, "--data",
                    os.path.join(model_dir, "test_data_set_0"), "--report", report],
                   check=True, capture_output=True)
    with open(report) as f:
        return json.load(f)


TWO_PRESETS = """
models: [mlp]
axes:
  config: [tpu-8x8, tpu-32x32]
  fusion: [none, full]
"""


def case_matches_tpusim(work):
    """A sweep over two presets and two fusion modes: every row's figures
    equal tpusim's own report for the same model, preset and mode."""
    out = os.path.join(work, "out")
    sweep(write_spec(work, TWO_PRESETS), "--out", out, "--jobs", "2")
    rows = read_rows(out)
    check(len(rows) == 4, f"4 points expected, got {len(rows)}")
    with open(os.path.join(out, "results.csv")) as f:
        table = list(csv.DictReader(f))
    check([(r["config"], r["fusion"]) for r in table] ==
          [("tpu-8x8", "none"), ("tpu-8x8", "full"), ("tpu-32x32", "none"), ("tpu-32x32", "full")],
          f"CSV rows not in the spec's order: {[(r['config'], r['fusion']) for r in table]}")
    by_key = {row["key"]: row for row in rows}
    for cells in table:
        row = by_key[cells["key"]]
        check(row["status"] == "ok" and row["checked"], f"{cells['key']}: {row.get('error')}")
        direct = tpusim_report(work, MLP, cells["config"], cells["fusion"], cells["key"])
        for figure in FIGURES:
            check(row["report"][figure] == direct[figure],
                  f"{cells['config']} {cells['fusion']}: {figure} {row['report'][figure]} in the "
                  f"sweep, {direct[figure]} from tpusim")
            check(str(direct[figure]) == cells[f"report.{figure}"],
                  f"CSV report.{figure}: {cells[f'report.{figure}']} != {direct[figure]}")
        check(row["report"]["energy_pj"] == direct["energy_pj"], "energy differs")
        print(f"{cells['config']} {cells['fusion']}: {direct['total_cycles']} cycles, as tpusim")


def case_transcendental_axes(work):
    """The transcendental figures are axes even on a base config that leaves
    them out. Between 1 and 4 cycles per group, each transcendental's
    summed cycles go from n * latency + groups to n * latency + 4 * groups
    (docs/simulator.md), and between 1 and 5 pJ the vector energy grows by
    4 pJ per transcendental element."""
    with open(os.path.join(ROOT, "configs", "tpu-8x8.json")) as f:
        config = json.load(f)
    del config["vector"]["transcendental_cycles_per_group"]
    del config["energy"]["vector_transcendental_pj"]
    base = os.path.join(work, "older-8x8.json")
    with open(base, "w") as f:
        json.dump(config, f)
    spec = write_spec(work, f"models: [softmax]\nbase: {base}\naxes:\n"
                            "  vector.transcendental_cycles_per_group: [1, 4]\n"
                            "  energy.vector_transcendental_pj: [1.0, 5.0]\n"
                            "zip:\n  - [vector.transcendental_cycles_per_group, "
                            "energy.vector_transcendental_pj]\n")
    out = os.path.join(work, "out")
    sweep(spec, "--out", out)
    reports = {}
    for row in read_rows(out):
        check(row["status"] == "ok" and row["checked"], f"{row['axes']}: {row.get('error')}")
        reports[row["axes"]["vector.transcendental_cycles_per_group"]] = row["report"]
    add, slow = reports[1], reports[4]
    elements = add["vector_transcendental_elements"]
    check(elements > 0 and slow["vector_transcendental_elements"] == elements,
          f"transcendental elements {elements}, {slow['vector_transcendental_elements']}")
    check(slow["energy_pj"]["vector"] - add["energy_pj"]["vector"] == 4 * elements,
          f"vector energy {add['energy_pj']['vector']} -> {slow['energy_pj']['vector']} for "
          f"{elements} transcendental elements")
    latency = config["vector"]["pipeline_latency"]
    slow_ops = {op["name"]: op for op in slow["by_instruction"]}
    transcendentals = [op for op in add["by_instruction"] if op["name"] in
                       ("v.exp", "v.recip", "v.rsqrt", "v.sigmoid", "v.tanh", "v.log")]
    check(transcendentals, "the model runs no transcendental")
    for op in transcendentals:
        fixed = op["instructions"] * latency
        expected = fixed + 4 * (op["cycles"] - fixed)
        got = slow_ops[op["name"]]["cycles"]
        check(got == expected, f"{op['name']}: {got} cycles at 4 per group, {expected} expected")
        print(f"{op['name']}: {op['cycles']} -> {got} cycles")


def case_failed_point(work):
    """A value the config rejects fails its point with tpuc's one-line error,
    outputs unlike the expected ones fail theirs with tpusim's verdict; the
    other points run, and the sweep exits 1."""
    import numpy as np
    from onnx import numpy_helper, TensorProto
    wrong = os.path.join(work, "wrong-mlp")
    shutil.copytree(MLP, wrong)
    expected = os.path.join(wrong, "test_data_set_0", "output_0.pb")
    with open(expected, "rb") as f:
        tensor = TensorProto.FromString(f.read())
    scaled = numpy_helper.from_array(numpy_helper.to_array(tensor) * np.float32(1.5), tensor.name)
    with open(expected, "wb") as f:
        f.write(scaled.SerializeToString())
    out = os.path.join(work, "out")
    spec = write_spec(work, "models: [mlp, wrong-mlp]\nbase: tpu-8x8\naxes:\n"
                            "  scratchpad.banks: [4, 6]\n")
    completed = sweep(spec, "--out", out, check_status=False)
    check(completed.returncode == 1, f"exit {completed.returncode}")
    with open(os.path.join(out, "results.csv")) as f:
        table = list(csv.DictReader(f))
    check([(r["model"], r["scratchpad.banks"], r["status"]) for r in table] ==
          [("mlp", "4", "ok"), ("mlp", "6", "failed"), ("wrong-mlp", "4", "failed"),
           ("wrong-mlp", "6", "failed")], f"rows {[tuple(r.values())[:6] for r in table]}")
    check(re.fullmatch(r"tpuc: error: .*config.json: scratchpad.banks: must be a power of two "
                       r"in \[1, 64\] \(got 6\)", table[1]["error"]), table[1]["error"])
    check(table[2]["error"].startswith("tpusim: outputs differ: y") and
          table[2]["error"].count("FAIL") == 1, table[2]["error"])
    check(table[0]["report.total_cycles"] and not table[1]["report.total_cycles"], "report cells")
    for row in table[1:3]:
        print(f"failed point: {row['error']}")


RESUMABLE = """
models: [lenet5]
base: tpu-8x8
mode: cycle
axes:
  scratchpad.kib: [64, 128, 256]
  fusion: [none, epilogue, full]
"""


def case_resume(work):
    """Killed after two points (and in the middle of writing a row), the
    sweep runs again only the points it had not finished."""
    out = os.path.join(work, "out")
    spec = write_spec(work, RESUMABLE)
    jsonl = os.path.join(out, "results.jsonl")
    first = subprocess.Popen([sys.executable, SWEEP, spec, "--out", out, "--jobs", "1"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and first.poll() is None:
        if os.path.exists(jsonl) and open(jsonl).read().count("\n") >= 2:
            break
        time.sleep(0.01)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    with open(jsonl) as f:
        before = f.read()
    done = before.count("\n")
    check(2 <= done < 9, f"the kill came too late: {done} of 9 points were done")
    # A row cut off by the kill.
    with open(jsonl, "a") as f:
        f.write('{"key": "cut off by a kil')
    second = sweep(spec, "--out", out, "--jobs", "2")
    check(f"9 points, {done} done already, {9 - done} to run" in second.stderr,
          f"expected {done} points done already:\n{second.stderr}")
    with open(jsonl) as f:
        after = f.read()
    check(after.startswith(before), "the rows of the first run changed")
    keys = [json.loads(line)["key"] for line in after.splitlines()]
    check(len(keys) == 9 and len(set(keys)) == 9, f"9 distinct rows expected, got {len(keys)} "
                                                  f"({len(set(keys))} distinct)")
    third = sweep(spec, "--out", out)
    check("9 done already, 0 to run" in third.stderr, third.stderr)
    with open(jsonl) as f:
        check(f.read() == after, "a finished sweep ran points again")
    # As another sweep on the same results would.
    with open(os.path.join(out, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        fourth = sweep(spec, "--out", out, check_status=False)
    check(fourth.returncode == 1 and fourth.stderr.strip().splitlines() == [
        f"tpu-sweep: error: {out}: another tpu-sweep is running on these results"], fourth.stderr)
    print(f"killed after {done} points; the resumed run did the other {9 - done}")


def gemm_dims(row):
    """M, N, K of a topology row, from SCALE-Sim's definitions."""
    name, *sizes = [cell.strip() for cell in row if cell.strip()]
    sizes = [int(size) for size in sizes]
    if len(sizes) == 3:
        return name, sizes[0], sizes[1], sizes[2]
    height, width, kh, kw, channels, filters, stride = sizes
    pixels = ((height - kh) // stride + 1) * ((width - kw) // stride + 1)
    return name, pixels, filters, kh * kw * channels


def case_scalesim(work):
    """Both example topologies on the example config: every layer compiles,
    runs and matches numpy; its MACs are M*N*K; the compute report's columns
    follow SCALE-Sim's definitions."""
    out = os.path.join(work, "out")
    topologies = [os.path.join(EXAMPLES, name) for name in ("small-cnn.csv",
                                                            "transformer-layer.csv")]
    completed = sweep("--scalesim", os.path.join(EXAMPLES, "ws-32x32.cfg"), *topologies,
                      "--out", out)
    print(completed.stdout)
    per_topology = []
    for topology in topologies:
        with open(topology) as f:
            per_topology.append([gemm_dims(row) for row in list(csv.reader(f))[1:]])
    check(len(per_topology[0]) >= 5 and len(per_topology[1]) >= 2,
          "the examples must hold 5 convolutions and 2 GEMMs at least")
    layers = per_topology[0] + per_topology[1]
    with open(os.path.join(out, "COMPUTE_REPORT.csv")) as f:
        report = list(csv.DictReader(f))
    check([r["LayerID"] for r in report] == [name for name, *_ in layers],
          f"layers {[r['LayerID'] for r in report]}")
    rows = {row["layer"]["name"]: row for row in read_rows(out)}
    for (name, m, n, k), figures in zip(layers, report):
        row = rows[name]
        check(row["status"] == "ok" and row["checked"], f"{name}: {row.get('error')}")
        check(row["report"]["macs"] == m * n * k,
              f"{name}: {row['report']['macs']} MACs, M*N*K = {m * n * k}")
        closed_form = math.ceil(k / 32) * math.ceil(n / 32) * (2 * 32 + 32 + m - 2)
        check(int(figures["SCALE-Sim WS Cycles"]) == closed_form,
              f"{name}: closed form {figures['SCALE-Sim WS Cycles']}, expected {closed_form}")
        efficiency = 100 * k * n / (math.ceil(k / 32) * 32 * math.ceil(n / 32) * 32)
        check(abs(float(figures["Mapping Efficiency %"]) - efficiency) < 1e-3,
              f"{name}: mapping efficiency {figures['Mapping Efficiency %']}, "
              f"expected {efficiency}")
        cycles = int(figures["Total Cycles"])
        check(cycles == row["report"]["total_cycles"], f"{name}: total cycles")
        utilization = 100 * m * n * k / (32 * 32 * cycles)
        check(abs(float(figures["Overall Util %"]) - utilization) < 1e-2,
              f"{name}: overall utilization {figures['Overall Util %']}, expected {utilization}")
        check(f"{cycles:,}" in completed.stdout and f"{closed_form:,}" in completed.stdout,
              f"{name}: cycles and closed form not printed side by side")


# (what is wrong, a spec file's name and text, what its one-line error says)
BAD_SPECS = [
    ("invalid YAML", "broken.yaml", "models: [mlp\n", r"broken.yaml: invalid YAML"),
    ("invalid JSON", "broken.json", '{"models": ["mlp"], ', r"broken.json: invalid JSON"),
    ("not a mapping", "list.yaml", "- mlp\n", r"list.yaml: a spec is a mapping"),
    ("unknown key", "unknown-key.yaml", "models: [mlp]\nrepeats: 3\n", r"unknown key 'repeats'"),
    ("no models", "no-models.yaml", "base: tpu-8x8\n", r"models: missing"),
    ("unknown model", "unknown-model.yaml", "models: [no-such-model]\n",
     r"'no-such-model' is neither a zoo model"),
    ("unknown config key", "unknown-config-key.yaml",
     "models: [mlp]\naxes:\n  array.rowz: [8, 16]\n", r"unknown config key 'array.rowz'"),
    ("empty axis", "empty-axis.yaml", "models: [mlp]\naxes:\n  array.rows: []\n",
     r"array.rows: a non-empty list"),
    ("bad fusion", "bad-fusion.yaml", "models: [mlp]\naxes:\n  fusion: [none, most]\n",
     r"fusion: 'most' is not one of"),
    ("zip lengths", "zip-lengths.yaml", "models: [mlp]\naxes:\n  array.rows: [8, 16]\n"
     "  array.cols: [8]\nzip: [[array.rows, array.cols]]\n", r"different numbers of values"),
    ("unknown preset", "unknown-preset.yaml", "models: [mlp]\nbase: tpu-9x9\n",
     r"'tpu-9x9' is neither a config file"),
    ("bad topology header", "bad-topology.yaml", "models: [bad-header.csv]\n",
     r"bad-header.csv:1: expected a SCALE-Sim"),
]


def case_bad_inputs(work):
    """Every malformed input: one line on stderr naming the problem, exit 1."""
    for _, name, text, _ in BAD_SPECS:
        write_spec(work, text, name)
    write_spec(work, "Layer, M, N\nA, 1, 2\n", "bad-header.csv")
    write_spec(work, "Layer, M, N, K,\nA, 1, two, 3,\n", "bad-size.csv")
    with open(os.path.join(work, "binary.csv"), "wb") as f:
        f.write(b"\xff\xfe\x00garbage")
    with open(os.path.join(EXAMPLES, "ws-32x32.cfg")) as f:
        write_spec(work, f.read().replace("Dataflow : ws", "Dataflow : os"), "os.cfg")
    write_spec(work, "not json\n", "results.jsonl")
    scalesim = ["--scalesim", os.path.join(EXAMPLES, "ws-32x32.cfg")]
    cases = [(description, [name], pattern) for description, name, _, pattern in BAD_SPECS] + [
        ("missing spec", ["nope.yaml"], r"nope.yaml: cannot read the spec"),
        ("bad topology size", scalesim + ["bad-size.csv"],
         r"bad-size.csv:2: the sizes must be integers"),
        ("unreadable topology", scalesim + ["binary.csv"], r"binary.csv: cannot read the topology"),
        ("missing topology", scalesim + ["nope.csv"], r"nope.csv: cannot read the topology"),
        ("output-stationary config", ["--scalesim", "os.cfg",
                                      os.path.join(EXAMPLES, "small-cnn.csv")],
         r"os.cfg: Dataflow is 'os'.*weight-stationary"),
        ("not results", ["--plot", "results.jsonl"], r"not a tpu-sweep results.jsonl"),
    ]
    failures = 0
    for description, arguments, pattern in cases:
        completed = subprocess.run([sys.executable, SWEEP, *arguments, "--out",
                                    os.path.join(work, "out")], capture_output=True, text=True,
                                   cwd=work)
        lines = completed.stderr.splitlines()
        if completed.returncode != 1 or len(lines) != 1 or not re.search(pattern, lines[0]):
            print(f"FAIL: {description}: exit {completed.returncode}, stderr:\n{completed.stderr}")
            failures += 1
        else:
            print(f"ok: {description}: {lines[0]}")
    check(failures == 0, f"{failures} bad inputs not reported as one line and exit 1")


def case_plot(work):
    """--plot writes a chart per swept axis and the Pareto charts; the Pareto
    front is the brute-force set of undominated points."""
    from tpusweep.plot import pareto_front
    rng = random.Random(1)
    for _ in range(200):
        points = [(rng.randint(1, 20), rng.randint(1, 20)) for _ in range(rng.randint(1, 30))]
        brute = {p for p in points
                 if not any(q[0] <= p[0] and q[1] <= p[1] and q != p for q in points)}
        front = [points[i] for i in pareto_front(points)]
        check(set(front) == brute and len(front) == len(brute),
              f"Pareto front of {points}: {front}, expected {sorted(brute)}")
    out = os.path.join(work, "out")
    spec = write_spec(work, """
models: [mlp, softmax]
base: tpu-8x8
axes:
  array.rows: [8, 16]
  array.cols: [8, 16]
  fusion: [none, full]
zip: [[array.rows, array.cols]]
""")
    completed = sweep(spec, "--out", out, "--plot")
    charts = sorted(os.listdir(os.path.join(out, "plots")))
    expected = ["by-array-rows.png", "by-fusion.png", "pareto-area.png", "pareto-energy.png"]
    check(charts == expected, f"charts {charts}, expected {expected}")
    for chart in charts:
        with open(os.path.join(out, "plots", chart), "rb") as f:
            check(f.read(8) == b"\x89PNG\r\n\x1a\n", f"{chart} is not a PNG")
        check(os.path.join(out, "plots", chart) in completed.stdout, f"{chart} not listed")
    replotted = sweep("--plot", os.path.join(out, "results.jsonl"), "--out",
                      os.path.join(work, "again"))
    check(len(replotted.stdout.split()) == 4, f"--plot RESULTS: {replotted.stdout}")


def case_python_api(work):
    """The module runs the MLP from numpy arrays: the same outputs as tpusim's
    --outputs and the same report figures; errors are tpu.Error with the
    tools' one-line messages."""
    sys.path.insert(0, os.path.join(ROOT, "build", "python"))
    import numpy as np
    from onnx import numpy_helper
    import tpu

    def tensor(path):
        with open(path, "rb") as f:
            return numpy_helper.to_array(__import__("onnx").TensorProto.FromString(f.read()))

    with open(os.path.join(ROOT, "configs", "tpu-8x8.json")) as f:
        config = json.load(f)
    data = os.path.join(MLP, "test_data_set_0")
    bundle = tpu.compile(os.path.join(MLP, "model.onnx"), os.path.join(work, "api.tpub"),
                         config=config, fusion="epilogue")
    program = tpu.Program(bundle)
    check([i["name"] for i in program.inputs] == ["x"], f"inputs {program.inputs}")
    x = tensor(os.path.join(data, "input_0.pb"))
    outputs, report = program.run([x], mode="cycle")

    direct_bundle = os.path.join(work, "direct.tpub")
    subprocess.run([os.path.join(BIN, "tpuc"), os.path.join(MLP, "model.onnx"), "-o",
                    direct_bundle, "--config", "tpu-8x8", "--fusion", "epilogue"], check=True)
    subprocess.run([os.path.join(BIN, "tpusim"), direct_bundle, "--mode", "cycle", "--data", data,
                    "--report", os.path.join(work, "direct.json"), "--outputs",
                    os.path.join(work, "direct")], check=True, capture_output=True)
    with open(os.path.join(work, "direct.json")) as f:
        direct = json.load(f)
    expected = tensor(os.path.join(work, "direct", "output_0.pb"))
    check(outputs[0].dtype == np.float32 and outputs[0].shape == expected.shape,
          f"output {outputs[0].dtype} {outputs[0].shape}, tpusim's {expected.shape}")
    check(np.array_equal(outputs[0], expected), "outputs differ from tpusim's")
    for figure in FIGURES + ("mode", "config", "energy_pj", "units"):
        check(report[figure] == direct[figure],
              f"{figure}: {report[figure]} from the API, {direct[figure]} from tpusim")
    reference = tensor(os.path.join(data, "output_0.pb"))
    check(np.abs(outputs[0] - reference).max() < 0.05 * np.abs(reference).max(), "wrong outputs")
    by_name, _ = program.run({"x": x})
    check(np.array_equal(by_name[0], outputs[0]), "inputs by name give other outputs")

    # ArgMax's indices: stored as int32 words, handed over as int64.
    argmax = os.path.join(ROOT, "build", "op-models", "argmax-axis-opset18")
    indices = tpu.Program(tpu.compile(os.path.join(argmax, "model.onnx"),
                                      os.path.join(work, "argmax.tpub")))
    check(indices.outputs[0]["dtype"] == "i64", f"outputs {indices.outputs}")
    got, _ = indices.run([tensor(os.path.join(argmax, "test_data_set_0", "input_0.pb"))])
    want = tensor(os.path.join(argmax, "test_data_set_0", "output_0.pb"))
    check(got[0].dtype == np.int64 and np.array_equal(got[0], want), f"indices {got[0]}, {want}")

    bad = dict(config, array=dict(config["array"], rows=0))
    for call, pattern in (
            (lambda: tpu.compile(os.path.join(MLP, "model.onnx"), os.path.join(work, "b.tpub"),
                                 config=bad), "config dict: array.rows: must be"),
            (lambda: tpu.compile(os.path.join(work, "nope.onnx"), os.path.join(work, "b.tpub")),
             "nope.onnx"),
            (lambda: tpu.Program(os.path.join(work, "nope.tpub")), "nope.tpub"),
            (lambda: program.run({"y": x}), "no input named 'y'"),
            (lambda: program.run([x[:1]]), "x")):
        try:
            call()
        except tpu.Error as error:
            check(pattern in str(error) and "\n" not in str(error), f"message: {error}")
            print(f"ok: tpu.Error: {error}")
        else:
            raise AssertionError(f"no tpu.Error for {pattern}")
    print(f"mlp 8x8 cycle mode: {report['total_cycles']} cycles from numpy, as tpusim")


def case_slurm(work):
    """A real one-node Slurm (scripts/slurm-local): the sweep through it gives
    the local executor's rows. Skipped (exit 77) where Slurm cannot start."""
    slurm_dir = os.path.join(work, "slurm")
    shutil.rmtree(slurm_dir, ignore_errors=True)
    local = os.path.join(ROOT, "scripts", "slurm-local")
    started = subprocess.run([local, "start", slurm_dir], capture_output=True, text=True)
    if started.returncode == 2:
        print(f"SKIPPED: {started.stderr.strip().splitlines()[-1]}")
        subprocess.run([local, "stop", slurm_dir])
        return SKIP
    try:
        check(started.returncode == 0, f"slurm-local start: {started.stderr}")
        os.environ["SLURM_CONF"] = started.stdout.strip().split("=", 1)[1]
        spec = write_spec(work, TWO_PRESETS)
        began = time.time()
        sweep(spec, "--out", os.path.join(work, "local"), "--jobs", "2")
        local_seconds = time.time() - began
        began = time.time()
        sweep(spec, "--out", os.path.join(work, "on-slurm"), "--slurm", "--time", "5",
              "--mem", "1G")
        slurm_seconds = time.time() - began
        local_rows = {row["key"]: row for row in read_rows(os.path.join(work, "local"))}
        slurm_rows = {row["key"]: row for row in read_rows(os.path.join(work, "on-slurm"))}
        check(local_rows.keys() == slurm_rows.keys(), "different points")
        for key, row in local_rows.items():
            theirs = slurm_rows[key]
            check(theirs["status"] == "ok", f"{key} on Slurm: {theirs.get('error')}")
            for figure in FIGURES:
                check(row["report"][figure] == theirs["report"][figure],
                      f"{key}: {figure} {row['report'][figure]} locally, "
                      f"{theirs['report'][figure]} on Slurm")
        logs = os.listdir(os.path.join(work, "on-slurm", "slurm", "logs"))
        check(len(logs) == 4, f"4 array task logs expected, got {logs}")
        print(f"{len(local_rows)} points: {local_seconds:.1f} s locally, {slurm_seconds:.1f} s "
              f"through Slurm; same rows")
    finally:
        subprocess.run([local, "stop", slurm_dir])
    return 0


def main():
    case, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    status = globals()["case_" + case.replace("-", "_")](work)
    sys.exit(status or 0)


if __name__ == "__main__":
    main()
