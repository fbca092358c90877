"""Charts of a sweep's results (tpu-sweep --plot): cycles, MXU utilization
and energy against each swept axis, per model, and Pareto charts of cycles
against energy and against an area proxy."""
import json
import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from tpusweep import SweepError, one_line  # noqa: E402

METRICS = (("cycles", "total cycles", lambda report: report["total_cycles"]),
           ("utilization", "MXU utilization (%)", lambda report: 100 * report["mxu_utilization"]),
           ("energy", "energy (uJ)", lambda report: report["energy_pj"]["total"] / 1e6))


def area_proxy(config):
    """What a config costs in silicon, roughly: its PEs plus its SRAM bytes
    (scratchpad and accumulator)."""
    return (config["array"]["rows"] * config["array"]["cols"]
            + 1024 * (config["scratchpad"]["kib"] + config["accumulator"]["kib"]))


def pareto_front(points):
    """Indices of the points (x, y) no other point beats on both (lower is
    better), ordered by x."""
    order = sorted(range(len(points)), key=lambda i: points[i])
    front, best_y = [], math.inf
    for index in order:
        if points[index][1] < best_y:
            front.append(index)
            best_y = points[index][1]
    return front


def read_rows(path):
    """The successful rows of a results.jsonl (or of the results directory holding one)."""
    if os.path.isdir(path):
        path = os.path.join(path, "results.jsonl")
    try:
        with open(path) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    except OSError as error:
        raise SweepError(f"{path}: cannot read the results: {error.strerror}")
    except ValueError as error:
        raise SweepError(f"{path}: not a tpu-sweep results.jsonl: {one_line(error)}")
    ok = [row for row in rows if row.get("status") == "ok"]
    if not ok:
        raise SweepError(f"{path}: no successful points to plot")
    return path, ok


def axis_values(row):
    values = dict(row["axes"])
    values.setdefault("fusion", row["fusion"])
    values.setdefault("mode", row["mode"])
    return values


def determined_by(rows, axis, other):
    """Whether `other` follows from `axis` (zipped axes do): one value of it
    for each value of `axis`."""
    seen = {}
    for row in rows:
        values = axis_values(row)
        if seen.setdefault(str(values.get(axis)), str(values.get(other))) != str(values.get(other)):
            return False
    return True


def swept_axes(rows):
    """The axes that take more than one value, in the order the rows name
    them; of zipped axes (each determines the other) only the first."""
    names = []
    for row in rows:
        names += [axis for axis in axis_values(row) if axis not in names]
    axes = []
    for axis in names:
        if len({str(axis_values(row).get(axis)) for row in rows}) < 2:
            continue
        if not any(determined_by(rows, axis, kept) and determined_by(rows, kept, axis)
                   for kept in axes):
            axes.append(axis)
    return axes


def log_scale_if_wide(panel, which, values):
    """Log scale on an axis whose values span a factor of ten or more; a
    narrower span reads better on a linear one."""
    values = [value for value in values if value > 0]
    if values and max(values) >= 10 * min(values):
        getattr(panel, f"set_{which}scale")("log")


def sort_key(value):
    return (0, value, "") if isinstance(value, (int, float)) else (1, 0, str(value))


def save(figure, title, path):
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def plot_axis(rows, axis, axes, out_dir):
    """BY-AXIS.png: a line per model and combination of the other free axes."""
    free = [other for other in axes if other != axis and not determined_by(rows, axis, other)]
    lines = {}
    for row in rows:
        values = axis_values(row)
        label = " ".join([row["model"]] + [f"{other}={values.get(other)}" for other in free])
        lines.setdefault(label, []).append((values[axis], row["report"]))
    ticks = sorted({values for line in lines.values() for values, _ in line}, key=sort_key)
    numeric = all(isinstance(value, (int, float)) for value in ticks)
    figure, panels = plt.subplots(1, len(METRICS), figsize=(6 * len(METRICS), 4.5))
    for panel, (_, title, metric) in zip(panels, METRICS):
        plotted = []
        for label, points in lines.items():
            points.sort(key=lambda point: sort_key(point[0]))
            xs = [value if numeric else ticks.index(value) for value, _ in points]
            ys = [metric(report) for _, report in points]
            panel.plot(xs, ys, marker="o", label=label)
            plotted += ys
        panel.set_xlabel(axis)
        panel.set_ylabel(title)
        if numeric and min(ticks) > 0 and max(ticks) / min(ticks) >= 8:
            panel.set_xscale("log", base=2)
        if not numeric:
            panel.set_xticks(range(len(ticks)), [str(tick) for tick in ticks])
        log_scale_if_wide(panel, "y", plotted)
        panel.grid(True, alpha=0.3)
    panels[0].legend(fontsize="small")
    chart = f"by-{axis.replace('.', '-')}.png"
    return save(figure, f"against {axis}", os.path.join(out_dir, chart))


def plot_pareto(rows, axes, name, ylabel, cost, out_dir):
    """PARETO-NAME.png: cycles against a cost, one panel per model, the
    Pareto-optimal points marked, joined and labelled with their values of
    the swept AXES."""
    models = list(dict.fromkeys(row["model"] for row in rows))
    columns = min(3, len(models))
    count = math.ceil(len(models) / columns)
    figure, panels = plt.subplots(count, columns, figsize=(5.5 * columns, 4.5 * count),
                                  squeeze=False)
    for panel, model in zip(panels.flat, models):
        mine = [row for row in rows if row["model"] == model]
        points = [(row["report"]["total_cycles"], cost(row)) for row in mine]
        front = pareto_front(points)
        panel.scatter(*zip(*points), color="tab:blue", alpha=0.6, label="points")
        panel.plot(*zip(*(points[i] for i in front)), color="tab:red", marker="*", markersize=12,
                   drawstyle="steps-post", label="Pareto-optimal")
        for i in front:
            values = axis_values(mine[i])
            panel.annotate(" ".join(str(values.get(axis)) for axis in axes), points[i],
                           fontsize=7, textcoords="offset points", xytext=(4, 4))
        log_scale_if_wide(panel, "x", [x for x, _ in points])
        log_scale_if_wide(panel, "y", [y for _, y in points])
        panel.set_title(model)
        panel.set_xlabel("total cycles")
        panel.set_ylabel(ylabel)
        panel.grid(True, alpha=0.3)
        panel.legend(fontsize="small")
    for panel in list(panels.flat)[len(models):]:
        panel.axis("off")
    return save(figure, f"Pareto-optimal points labelled with {' '.join(axes)}",
                os.path.join(out_dir, f"pareto-{name}.png"))


def plot(results, out_dir=None):
    """Writes the charts of RESULTS (results.jsonl or its directory) into
    OUT_DIR (default: RESULTS' directory/plots); returns their paths."""
    path, rows = read_rows(results)
    out_dir = out_dir or os.path.join(os.path.dirname(os.path.abspath(path)), "plots")
    os.makedirs(out_dir, exist_ok=True)
    axes = swept_axes(rows)
    charts = [plot_axis(rows, axis, axes, out_dir) for axis in axes]
    charts.append(plot_pareto(rows, axes, "energy", "energy (uJ)",
                              lambda row: row["report"]["energy_pj"]["total"] / 1e6, out_dir))
    charts.append(plot_pareto(rows, axes, "area", "area proxy: PEs + SRAM bytes",
                              lambda row: area_proxy(row["config"]), out_dir))
    return charts
