#!/usr/bin/python3
"""The output check of docs/numerics.md tells wrong answers from right ones.

    output-check-mutations.py TPUC TPUSIM MODEL_DIR CONFIG WORK_DIR

Compiles the model, runs it on its test_data_set_0 (which must pass), then
asserts that tpusim fails (exit 1, a FAIL line) on each corruption:
  scaled       every expected output times 1.5
  noise        1% Gaussian noise on every expected element
  one-element  one expected element off by 10x the check's tolerance
  dropped-k    the program without one K tile of a matmul (an mxu.mm that
               accumulates, deleted from the ISA-level IR), on the true data
  bf16-shifted the program reading a tensor DRAM holds as bf16 one element
               off (the middle dma.ld of dtype=bf16, a weight panel or an
               activation, 2 bytes on), on the true data: the reference run,
               which keeps bf16 DRAM data at fp32, must not hide a program
               error there
"""
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
from onnx import numpy_helper
import onnx


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def tensors(directory, prefix):
    found = []
    while os.path.exists(os.path.join(directory, f"{prefix}_{len(found)}.pb")):
        found.append(onnx.load_tensor(os.path.join(directory, f"{prefix}_{len(found)}.pb")))
    return found


def main():
    tpuc, tpusim, model_dir, config, work = sys.argv[1:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    data = os.path.join(model_dir, "test_data_set_0")
    bundle = os.path.join(work, "model.tpub")
    compiled = run([tpuc, os.path.join(model_dir, "model.onnx"), "--config", config, "-o", bundle])
    if compiled.returncode:
        sys.exit(f"tpuc failed: {compiled.stderr}")
    failures = []

    def simulate(name, program, data_dir, should_pass):
        report = os.path.join(work, f"{name}.json")
        result = run([tpusim, program, "--data", data_dir, "--report", report])
        passed = result.returncode == 0
        verdict = "passes" if passed else "fails"
        print(f"{name}: {verdict}")
        if passed != should_pass or (not passed and "FAIL" not in result.stdout):
            failures.append(f"{name} {verdict}, should {'pass' if should_pass else 'fail'}:\n"
                            f"{result.stdout[-2000:]}{result.stderr[-2000:]}")
        return json.load(open(report)) if os.path.exists(report) else None

    clean = simulate("clean", bundle, data, True)
    if clean is None:
        sys.exit("\n".join(failures))
    inputs, outputs = tensors(data, "input"), tensors(data, "output")
    rng = np.random.default_rng(0)

    def corrupted(name, corrupt):
        directory = os.path.join(work, name)
        os.makedirs(directory)
        for index, tensor in enumerate(inputs):
            onnx.save_tensor(tensor, os.path.join(directory, f"input_{index}.pb"))
        for index, tensor in enumerate(outputs):
            values = numpy_helper.to_array(tensor).astype(np.float64)
            mutated = corrupt(index, values).astype(numpy_helper.to_array(tensor).dtype)
            onnx.save_tensor(numpy_helper.from_array(mutated, tensor.name),
                             os.path.join(directory, f"output_{index}.pb"))
        simulate(name, bundle, directory, False)

    corrupted("scaled", lambda index, values: values * 1.5)
    corrupted("noise", lambda index, values: values * (1 + 0.01 * rng.standard_normal(values.shape)))

    def one_element(index, values):
        program = clean["outputs"][index]["program"]
        flat = values.reshape(-1).copy()
        flat[flat.size // 2] += 10 * program["tolerance"] * program["scale"]
        return flat.reshape(values.shape)

    corrupted("one-element", one_element)

    isa = run([tpuc, os.path.join(model_dir, "model.onnx"), "--config", config, "--emit=isa"])

    def mutated_program(name, pattern, mutate):
        """The program with mutate(line) at the middle line matching pattern."""
        lines = isa.stdout.splitlines(keepends=True)
        matching = [i for i, line in enumerate(lines) if re.search(pattern, line)]
        if not matching:
            print(f"{name}: skipped, no instruction matches {pattern}")
            return
        at = matching[len(matching) // 2]
        lines[at:at + 1] = mutate(lines[at])
        mutant_ir = os.path.join(work, f"{name}.mlir")
        with open(mutant_ir, "w") as f:
            f.writelines(lines)
        mutant = os.path.join(work, f"{name}.tpub")
        compiled = run([tpuc, mutant_ir, "-o", mutant])
        if compiled.returncode:
            sys.exit(f"tpuc on the mutant {name} failed: {compiled.stderr}")
        simulate(name, mutant, data, False)

    mutated_program("dropped-k", r"tpu\.inst mxu\.mm .*accumulate=1", lambda line: [])
    mutated_program("bf16-shifted", r"tpu\.inst dma\.ld .*dtype=bf16",
                    lambda line: [re.sub(r"dram_addr=(0x[0-9a-f]+)",
                                         lambda m: f"dram_addr={int(m.group(1), 16) + 2:#x}", line)])

    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
