"""Where the points run: a local pool of workers (each runs tpuc and tpusim
as processes, so N workers keep N cores busy), or a Slurm job array. Both
hand every finished row to `on_row` as it comes, so that the result files
grow point by point and an interrupted sweep resumes where it stopped."""
import json
import os
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

from tpusweep import SweepError, tool_message
from tpusweep.point import row_of, run_point, stop_tools

# Slurm's default MaxArraySize is 1001: larger sweeps give each task several points.
MAX_ARRAY_TASKS = 1000
# squeue's states of a job that has not finished.
ACTIVE_STATES = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED",
                 "RESIZING", "REQUEUE_HOLD", "REQUEUE_FED", "SIGNALING", "STAGE_OUT", "STOPPED"}


def run_local(points, work_dir, on_row, jobs, timeout=None):
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(run_point, point, work_dir, timeout) for point in points]
        try:
            for future in as_completed(futures):
                on_row(future.result())
        except KeyboardInterrupt:
            # The points running now are not finished: kill their tools and
            # record nothing more.
            pool.shutdown(wait=False, cancel_futures=True)
            stop_tools()
            raise


def task_points(points, task, tasks):
    return points[task::tasks]


def run_task(task_file, task):
    """One Slurm array task: its share of the points, each row written to
    RESULTS/KEY.json (renamed into place, so a row is there whole or not at all)."""
    with open(task_file) as f:
        job = json.load(f)
    for point in task_points(job["points"], task, job["tasks"]):
        row = run_point(point, job["work_dir"], job["timeout"])
        path = os.path.join(job["results_dir"], point["key"] + ".json")
        with open(path + ".part", "w") as f:
            json.dump(row, f)
        os.replace(path + ".part", path)


def slurm_command(name, arguments):
    try:
        return subprocess.run([name] + arguments, capture_output=True, text=True)
    except FileNotFoundError:
        raise SweepError(f"{name} not found: --slurm needs Slurm's client tools on PATH")


def job_active(job_id):
    listed = slurm_command("squeue", ["-h", "-j", job_id, "-o", "%T"])
    # Once a finished job is purged squeue calls its id invalid.
    if listed.returncode != 0:
        return False
    return any(state.strip() in ACTIVE_STATES for state in listed.stdout.splitlines())


def collect(results_dir, pending, on_row):
    """Hands over the rows of pending points whose result files exist."""
    for key in list(pending):
        path = os.path.join(results_dir, key + ".json")
        if os.path.exists(path):
            with open(path) as f:
                on_row(json.load(f))
            del pending[key]


def run_slurm(points, out_dir, on_row, slurm_options, timeout=None, poll_seconds=2):
    """Submits the points as one job array, collects rows while it runs, and
    returns when it has left the queue. Rows a task never wrote (it was
    cancelled, ran out of time or memory) are failures naming its log."""
    slurm_dir = os.path.join(out_dir, "slurm")
    results_dir = os.path.join(slurm_dir, "results")
    logs_dir = os.path.join(slurm_dir, "logs")
    for directory in (results_dir, logs_dir):
        os.makedirs(directory, exist_ok=True)
    pending = {point["key"]: point for point in points}
    # Rows of an earlier submission that finished after its collector stopped.
    collect(results_dir, pending, on_row)
    if not pending:
        return
    points = list(pending.values())
    tasks = min(len(points), MAX_ARRAY_TASKS)
    task_file = os.path.join(slurm_dir, f"points-{int(time.time() * 1000)}.json")
    with open(task_file, "w") as f:
        json.dump({"points": points, "tasks": tasks, "timeout": timeout,
                   "work_dir": os.path.join(out_dir, "work"), "results_dir": results_dir}, f)
    script = os.path.join(slurm_dir, "task.sh")
    tool = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tpu-sweep")
    with open(script, "w") as f:
        f.write("#!/bin/sh\n# One array task of a tpu-sweep: its share of the points.\n"
                f"exec {shlex.quote(sys.executable)} {shlex.quote(tool)} --run-task "
                f"{shlex.quote(task_file)} \"$SLURM_ARRAY_TASK_ID\"\n")
    command = ["--parsable", f"--array=0-{tasks - 1}", "--job-name=tpu-sweep",
               f"--output={logs_dir}/%A_%a.out", "--chdir", out_dir]
    for option in ("partition", "time", "mem"):
        if slurm_options.get(option):
            command.append(f"--{option}={slurm_options[option]}")
    command += slurm_options.get("extra", []) + [script]
    submitted = slurm_command("sbatch", command)
    if submitted.returncode != 0:
        lines = submitted.stderr.strip().splitlines() or [f"exit status {submitted.returncode}"]
        raise SweepError(tool_message("sbatch", lines[-1]))
    job_id = submitted.stdout.strip().split(";")[0]
    print(f"tpu-sweep: Slurm job {job_id}: {len(points)} points in {tasks} array tasks, "
          f"logs in {logs_dir}", file=sys.stderr)
    while pending and job_active(job_id):
        collect(results_dir, pending, on_row)
        time.sleep(poll_seconds)
    collect(results_dir, pending, on_row)
    for index, point in enumerate(points):
        if point["key"] in pending:
            row = row_of(point)
            row.update(status="failed", seconds=0,
                       error=f"slurm: task {index % tasks} of job {job_id} wrote no result "
                             f"(see {logs_dir}/{job_id}_{index % tasks}.out)")
            on_row(row)
