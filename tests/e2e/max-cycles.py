#!/usr/bin/python3
"""tpusim --max-cycles N stops a run at cycle N itself (docs/simulator.md#errors).

    max-cycles.py TPUC TPUSIM MODEL_DIR CONFIG OUT_DIR

Compiles MODEL_DIR/model.onnx, runs it once without a limit to learn its
total T, then in fast and cycle mode: --max-cycles 1 fails with the one-line
watchdog error naming what is still running; T passes with the same total
and outputs; T - 1 fails, stopped at T - 1.
"""
import json
import os
import re
import subprocess
import sys


def fail(message):
    sys.exit(f"max-cycles: {message}")


def main():
    tpuc, tpusim, model_dir, config, out = sys.argv[1:]
    os.makedirs(out, exist_ok=True)
    bundle = os.path.join(out, "model.tpub")
    subprocess.run([tpuc, os.path.join(model_dir, "model.onnx"), "-o", bundle,
                    "--config", config], check=True)
    data = os.path.join(model_dir, "test_data_set_0")
    report = os.path.join(out, "report.json")

    def run(mode, limit):
        return subprocess.run([tpusim, bundle, "--mode", mode, "--data", data, "--report", report,
                               "--max-cycles", str(limit)],
                              capture_output=True, text=True)

    subprocess.run([tpusim, bundle, "--data", data, "--report", report], check=True,
                   stdout=subprocess.DEVNULL)
    with open(report) as f:
        total = json.load(f)["total_cycles"]
    if total < 1000:
        fail(f"{model_dir} runs {total} cycles; the test wants a multi-thousand-cycle program")
    # What is running: a queue at its instruction, the matrix unit or a DMA
    # engine completing, the controller dispatching (Accelerator::blockedQueues).
    doing = (r"(load|compute|store) (runs|waits) at pc \d+ \([^)]*\)"
             r"|((matrix|dma_load|dma_store) completes|controller dispatches) pc \d+ \([^)]*\)"
             r"|controller stalls at pc \d+ \([^)]*\): the \w+ queue is full")
    for mode in ("fast", "cycle"):
        for limit in (1, total - 1):
            result = run(mode, limit)
            lines = result.stderr.splitlines()
            prefix = (f"tpusim: error: watchdog: still running after {limit} cycles "
                      f"(limit {limit}): ")
            if result.returncode != 1 or len(lines) != 1 or not lines[0].startswith(prefix):
                fail(f"{mode} mode, --max-cycles {limit}: exit {result.returncode}, "
                     f"stderr {result.stderr!r}")
            parts = lines[0][len(prefix):].split("; ")
            if not all(re.fullmatch(doing, part) for part in parts):
                fail(f"{mode} mode, --max-cycles {limit}: does not name what runs: {lines[0]}")
        result = run(mode, total)
        if result.returncode != 0:
            fail(f"{mode} mode, --max-cycles {total} (the total): exit {result.returncode}, "
                 f"stderr {result.stderr!r}")
        with open(report) as f:
            if json.load(f)["total_cycles"] != total:
                fail(f"{mode} mode: the total moved under --max-cycles {total}")
    print(f"--max-cycles stops at 1 and {total - 1} and lets {total} finish, both modes")


if __name__ == "__main__":
    main()
