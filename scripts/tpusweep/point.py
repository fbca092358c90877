"""Running one point: tpuc compiles the model for the point's config, tpusim
runs the bundle with the model's test data and checks its outputs. The
result row holds the point, the whole report, and on failure the tool's
one-line error."""
import itertools
import json
import os
import shutil
import subprocess
import threading
import time

from toolchain import tool
from tpusweep import tool_message

# The tool processes running now and whether the sweep is stopping: an
# interrupted sweep kills them and starts no more, so that no point it
# stopped is recorded as a failure.
running = set()
stopping = threading.Event()
running_lock = threading.Lock()


class Stopped(Exception):
    """The sweep was interrupted while this point ran."""


def run_tool(command, timeout):
    with running_lock:
        if stopping.is_set():
            raise Stopped()
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
        running.add(process)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    finally:
        with running_lock:
            running.discard(process)
    if stopping.is_set():
        raise Stopped()
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def stop_tools():
    """Kills the running tools; run_point raises Stopped from then on."""
    with running_lock:
        stopping.set()
        for process in running:
            process.kill()


def failure_line(completed):
    """The one line a failed tool run is summed up by: its error on stderr,
    else the outputs that did not match."""
    mismatches, lines = [], completed.stdout.splitlines()
    for index, line in enumerate(lines):
        if line.endswith(": FAIL"):
            # tpusim may explain a failed check on the indented lines below it.
            details = itertools.takewhile(lambda more: more.startswith(" "), lines[index + 1:])
            mismatches.append(" ".join([line] + [detail.strip() for detail in details]))
    if mismatches:
        return "outputs differ: " + "; ".join(mismatches)
    lines = (completed.stderr or completed.stdout).strip().splitlines()
    return lines[-1] if lines else f"exit status {completed.returncode}"


def row_of(point):
    """The part of a result row that describes the point."""
    row = {key: point[key] for key in ("key", "model", "axes", "fusion", "mode", "config", "layer")}
    row["checked"] = bool(point["data"])
    return row


def run_point(point, work_dir, timeout=None):
    """Compiles and simulates `point` in WORK_DIR/KEY; returns its result row."""
    directory = os.path.join(work_dir, point["key"])
    os.makedirs(directory, exist_ok=True)
    config_path = os.path.join(directory, "config.json")
    with open(config_path, "w") as f:
        json.dump(point["config"], f, indent=1)
    bundle = os.path.join(directory, "model.tpub")
    report_path = os.path.join(directory, "report.json")
    simulate = [tool("tpusim"), bundle, "--mode", point["mode"], "--report", report_path]
    if point["data"]:
        simulate += ["--data", point["data"]]
    steps = (("tpuc", [tool("tpuc"), point["model_path"], "-o", bundle, "--config", config_path,
                       "--fusion", point["fusion"]]),
             ("tpusim", simulate))
    row = row_of(point)
    started = time.time()
    try:
        for name, command in steps:
            completed = run_tool(command, timeout)
            if completed.returncode != 0:
                row.update(status="failed", error=tool_message(name, failure_line(completed)))
                break
        else:
            with open(report_path) as f:
                row.update(status="ok", error="", report=json.load(f))
    except subprocess.TimeoutExpired as expired:
        row.update(status="failed", error=f"{os.path.basename(expired.cmd[0])}: timed out "
                                          f"after {timeout} s")
    finally:
        # Bundles of large models are large; the report is what the sweep keeps.
        shutil.rmtree(directory, ignore_errors=True)
    row["seconds"] = round(time.time() - started, 3)
    return row
