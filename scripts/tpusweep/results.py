"""The result files of a sweep: OUT/results.jsonl, one row a line as points
finish (what resuming reads), and OUT/results.csv, every scalar of those rows
in the spec's point order, rewritten at the end of every run."""
import csv
import fcntl
import json
import os
import sys
import time

from tpusweep import SweepError

CSV_LEADING = ("key", "model", "fusion", "mode", "status", "error", "checked", "seconds")


def flatten(value, prefix=""):
    """{dotted name: scalar} of a nested dict; lists are left out."""
    flat = {}
    for name, item in value.items():
        if isinstance(item, dict):
            flat.update(flatten(item, f"{prefix}{name}."))
        elif not isinstance(item, list):
            flat[prefix + name] = item
    return flat


def csv_row(row):
    """A result row as CSV cells: the leading columns, the swept axes by name,
    then report.* and config.* (and layer.* for SCALE-Sim layers)."""
    cells = {name: row.get(name, "") for name in CSV_LEADING}
    cells.update({axis: value for axis, value in row["axes"].items()
                  if axis not in ("fusion", "mode")})
    for part in ("report", "config", "layer"):
        if row.get(part):
            cells.update(flatten(row[part], f"{part}."))
    return cells


class ResultFiles:
    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.jsonl = os.path.join(out_dir, "results.jsonl")
        self.csv = os.path.join(out_dir, "results.csv")
        os.makedirs(out_dir, exist_ok=True)

    def lock(self):
        """Holds OUT/.lock while this process lives: two sweeps writing the
        same results would run points twice and trip over each other's files."""
        self.lock_file = open(os.path.join(self.out_dir, ".lock"), "w")
        try:
            fcntl.flock(self.lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SweepError(f"{self.out_dir}: another tpu-sweep is running on these results")

    def load(self):
        """{key: row} of the points finished so far. A sweep killed while
        writing leaves a partial last line; it is cut off, and that point runs
        again."""
        if not os.path.exists(self.jsonl):
            return {}
        with open(self.jsonl, "rb") as f:
            data = f.read()
        complete = data[:data.rfind(b"\n") + 1]
        if len(complete) != len(data):
            with open(self.jsonl, "wb") as f:
                f.write(complete)
        rows = {}
        for line in complete.decode().splitlines():
            row = json.loads(line)
            rows[row["key"]] = row
        return rows

    def append(self, row):
        with open(self.jsonl, "a") as f:
            f.write(json.dumps(row) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def write_csv(self, points, rows):
        """The rows of `points` that have finished, in the points' order."""
        table = [csv_row(rows[point["key"]]) for point in points if point["key"] in rows]
        columns = list(CSV_LEADING)
        for cells in table:
            columns += [name for name in cells if name not in columns]
        with open(self.csv, "w", newline="") as f:
            writer = csv.DictWriter(f, columns, restval="")
            writer.writeheader()
            writer.writerows(table)


class Progress:
    """A progress bar on stderr: points done (this run and before), failed,
    and the time left at this run's pace. On a terminal it redraws one line;
    elsewhere (logs, ctest) it prints a line every few seconds and at the end."""

    def __init__(self, total, done_before, failed_before, stream=sys.stderr):
        self.total, self.done_before = total, done_before
        self.done, self.failed = 0, failed_before
        self.stream = stream
        self.started = self.last_line = time.time()
        self.terminal = stream.isatty()
        self.draw()

    def update(self, row):
        self.done += 1
        self.failed += row["status"] != "ok"
        self.draw()

    def text(self):
        finished = self.done_before + self.done
        width = 30
        filled = width * finished // self.total if self.total else width
        left = self.total - finished
        if self.done:
            seconds = (time.time() - self.started) / self.done * left
            eta = time.strftime("%H:%M:%S", time.gmtime(seconds))
        else:
            eta = "?"
        return (f"[{'#' * filled}{'.' * (width - filled)}] {finished}/{self.total} points done, "
                f"{self.failed} failed, {eta} left")

    def draw(self):
        if self.terminal:
            self.stream.write("\r" + self.text() + "\033[K")
            self.stream.flush()
        elif time.time() - self.last_line >= 5:
            self.last_line = time.time()
            print(self.text(), file=self.stream, flush=True)

    def finish(self):
        if self.terminal:
            self.stream.write("\n")
        else:
            print(self.text(), file=self.stream, flush=True)
