"""SCALE-Sim's inputs: topology CSVs become one model per layer, a .cfg
becomes a config (docs/sweep.md#scale-sim).

A convolution layer (IFMAP height and width, filter height and width,
channels, number of filters, stride; no padding, as in SCALE-Sim) is an ONNX
Conv of a [1, C, H, W] input; a GEMM layer (M, N, K) is a MatMul of an
[M, K] input by a [K, N] constant. Both run on the array as a GEMM of
M = output pixels (or M) rows, K = filter height x width x channels (or K)
and N = filters (or N), the view SCALE-Sim takes of them.
"""
import configparser
import copy
import csv
import json
import math
import os
import re

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import reference_ops as ref
from toolchain import ROOT
from tpusweep import SweepError

CONV_FIELDS = ("IFMAP Height", "IFMAP Width", "Filter Height", "Filter Width", "Channels",
               "Num Filter", "Strides")
GEMM_FIELDS = ("M", "N", "K")
# The .cfg keys this reads (section architecture_presets); the others (offsets,
# banks, interface bandwidth) have no counterpart here.
CFG_KEYS = ("ArrayHeight", "ArrayWidth", "IfmapSramSzkB", "FilterSramSzkB", "OfmapSramSzkB",
            "Bandwidth", "Dataflow")
# SCALE-Sim counts bandwidth in words a cycle; a word here is a bf16 element.
BYTES_PER_WORD = 2


def read_topology(path):
    """[{name, M, N, K, conv: {...} or None}] of a SCALE-Sim topology CSV,
    convolution or GEMM form, told apart by the header."""
    try:
        with open(path, newline="") as f:
            rows = [[cell.strip() for cell in row] for row in csv.reader(f)]
    except (OSError, UnicodeDecodeError) as problem:
        reason = getattr(problem, "strerror", None) or problem
        raise SweepError(f"{path}: cannot read the topology: {reason}")
    rows = [[cell for cell in row if cell] for row in rows]
    rows = [row for row in rows if row]
    if not rows:
        raise SweepError(f"{path}: empty topology")
    header = rows[0][1:]
    if [h.lower() for h in header] == [f.lower() for f in CONV_FIELDS]:
        fields = CONV_FIELDS
    elif [h.upper() for h in header] == list(GEMM_FIELDS):
        fields = GEMM_FIELDS
    else:
        raise SweepError(f"{path}:1: expected a SCALE-Sim header 'Layer name, "
                    f"{', '.join(CONV_FIELDS)}' or 'Layer, M, N, K'")
    layers = []
    for number, row in enumerate(rows[1:], start=2):
        if len(row) != len(fields) + 1:
            raise SweepError(f"{path}:{number}: expected {len(fields) + 1} fields, got {len(row)}")
        try:
            values = dict(zip(fields, (int(cell) for cell in row[1:])))
        except ValueError:
            raise SweepError(f"{path}:{number}: the sizes must be integers: {', '.join(row[1:])}")
        if min(values.values()) < 1:
            raise SweepError(f"{path}:{number}: the sizes must be positive")
        layers.append(gemm_of(row[0], values, f"{path}:{number}"))
    if not layers:
        raise SweepError(f"{path}: no layers")
    return layers


def gemm_of(name, values, origin):
    if "M" in values:
        return {"name": name, "M": values["M"], "N": values["N"], "K": values["K"], "conv": None}
    height, width = values["IFMAP Height"], values["IFMAP Width"]
    kernel = (values["Filter Height"], values["Filter Width"])
    stride = values["Strides"]
    if kernel[0] > height or kernel[1] > width:
        raise SweepError(f"{origin}: the filter is larger than the IFMAP")
    out_h, out_w = (height - kernel[0]) // stride + 1, (width - kernel[1]) // stride + 1
    conv = {"height": height, "width": width, "kernel": kernel, "channels": values["Channels"],
            "filters": values["Num Filter"], "stride": stride}
    return {"name": name, "M": out_h * out_w, "N": values["Num Filter"],
            "K": kernel[0] * kernel[1] * values["Channels"], "conv": conv}


def weight_stationary_cycles(layer, rows, cols):
    """SCALE-Sim's closed form for weight-stationary: ceil(K/R) * ceil(N/C)
    folds of 2R + C + M - 2 cycles each."""
    return math.ceil(layer["K"] / rows) * math.ceil(layer["N"] / cols) * (
        2 * rows + cols + layer["M"] - 2)


def mapping_efficiency(layer, rows, cols):
    """SCALE-Sim's mapping efficiency: the fraction of the array's PEs that
    hold a weight, averaged over the folds."""
    return layer["K"] * layer["N"] / (
        math.ceil(layer["K"] / rows) * rows * math.ceil(layer["N"] / cols) * cols)


def layer_model(layer, seed, directory):
    """Writes DIRECTORY/model.onnx and its test_data_set_0 (random inputs and
    weights of fixed seed, numpy's expected output)."""
    rng = np.random.default_rng(seed)
    conv = layer["conv"]
    if conv:
        x = rng.standard_normal((1, conv["channels"], conv["height"], conv["width"]))
        w = rng.standard_normal((conv["filters"], conv["channels"], *conv["kernel"])) / math.sqrt(
            layer["K"])
        x, w = x.astype(np.float32), w.astype(np.float32)
        y = ref.conv2d(x, w, strides=(conv["stride"],) * 2)
        node = helper.make_node("Conv", ["x", "w"], ["y"], name=layer["name"],
                                kernel_shape=list(conv["kernel"]), strides=[conv["stride"]] * 2)
    else:
        x = rng.standard_normal((layer["M"], layer["K"])).astype(np.float32)
        w = (rng.standard_normal((layer["K"], layer["N"])) / math.sqrt(layer["K"])).astype(
            np.float32)
        y = (x.astype(np.float64) @ w).astype(np.float32)
        node = helper.make_node("MatMul", ["x", "w"], ["y"], name=layer["name"])
    graph = helper.make_graph([node], re.sub(r"\W", "_", layer["name"]),
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, y.shape)],
                              [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, producer_name="tpu-sweep",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    data = os.path.join(directory, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(directory, "model.onnx"))
    for name, array in (("input_0", x), ("output_0", y)):
        with open(os.path.join(data, f"{name}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(array, name[:-2]).SerializeToString())


def topology_models(path, model_root):
    """[(model name, model.onnx, test data, layer)] for each layer of a
    topology, written under MODEL_ROOT/STEM/LAYER unless already there."""
    stem = os.path.splitext(os.path.basename(path))[0]
    models = []
    for seed, layer in enumerate(read_topology(path)):
        directory = os.path.join(model_root, stem, re.sub(r"[^\w.-]", "_", layer["name"]))
        stamp = os.path.join(directory, "layer.json")
        described = json.dumps({"layer": layer, "seed": seed}, sort_keys=True)
        if not os.path.exists(stamp) or open(stamp).read() != described:
            layer_model(layer, seed, directory)
            with open(stamp, "w") as f:
                f.write(described)
        models.append((f"{stem}/{layer['name']}", os.path.join(directory, "model.onnx"),
                       os.path.join(directory, "test_data_set_0"), layer))
    return models


def read_config(path):
    """A config dict from a SCALE-Sim .cfg: the array's height and width, the
    SRAMs (IFMAP + filter SRAM as the scratchpad, OFMAP SRAM as the
    accumulator) and the bandwidth; the rest from the tpu-32x32 preset."""
    parser = configparser.ConfigParser()
    parser.optionxform = str
    try:
        with open(path) as f:
            parser.read_file(f)
    except OSError as problem:
        raise SweepError(f"{path}: cannot read the SCALE-Sim config: {problem.strerror}")
    except configparser.Error as problem:
        raise SweepError(f"{path}: not a SCALE-Sim config: {' '.join(str(problem).split())}")
    if not parser.has_section("architecture_presets"):
        raise SweepError(f"{path}: no [architecture_presets] section")
    section = {key.lower(): value.strip() for key, value in parser["architecture_presets"].items()}
    missing = [key for key in CFG_KEYS if key.lower() not in section]
    if missing:
        raise SweepError(f"{path}: architecture_presets: {missing[0]}: missing")
    dataflow = section["dataflow"].lower()
    if dataflow != "ws":
        raise SweepError(f"{path}: Dataflow is '{section['dataflow']}', but this array is "
                    f"weight-stationary: only 'ws' maps onto it")

    def number(key, kind=int):
        try:
            return kind(section[key.lower()])
        except ValueError:
            raise SweepError(f"{path}: architecture_presets: {key}: not a number "
                        f"('{section[key.lower()]}')")

    with open(os.path.join(ROOT, "configs", "tpu-32x32.json")) as f:
        config = copy.deepcopy(json.load(f))
    run_name = parser.get("general", "run_name", fallback=None)
    config["name"] = run_name.strip() if run_name else os.path.splitext(os.path.basename(path))[0]
    config["array"]["rows"] = number("ArrayHeight")
    config["array"]["cols"] = number("ArrayWidth")
    config["vector"]["lanes"] = config["array"]["cols"]
    config["scratchpad"]["kib"] = number("IfmapSramSzkB") + number("FilterSramSzkB")
    config["accumulator"]["kib"] = number("OfmapSramSzkB")
    config["dram"]["bytes_per_cycle"] = number("Bandwidth", float) * BYTES_PER_WORD
    return config


# SCALE-Sim's COMPUTE_REPORT.csv columns, then ours.
REPORT_COLUMNS = ("LayerID", "Total Cycles", "Stall Cycles", "Overall Util %",
                  "Mapping Efficiency %", "Compute Util %", "SCALE-Sim WS Cycles", "MACs",
                  "DRAM Bytes", "Energy uJ", "Status")


def compute_report_row(row):
    """One layer's COMPUTE_REPORT columns from a sweep result row: total
    cycles; stall cycles, the matrix unit's stalled cycles; overall
    utilization, MACs over the array's PE-cycles; mapping efficiency, as
    SCALE-Sim defines it; compute utilization, MACs over the PE-cycles the
    matrix unit was busy."""
    layer, config = row["layer"], row["config"]
    rows, cols = config["array"]["rows"], config["array"]["cols"]
    figures = {"LayerID": layer["name"],
               "Mapping Efficiency %": round(100 * mapping_efficiency(layer, rows, cols), 3),
               "SCALE-Sim WS Cycles": weight_stationary_cycles(layer, rows, cols),
               "Status": row["status"] if row["status"] == "ok" else row["error"]}
    report = row.get("report")
    if report:
        matrix = report["units"]["matrix"]
        figures.update({
            "Total Cycles": report["total_cycles"],
            "Stall Cycles": sum(matrix["stalled"].values()),
            "Overall Util %": round(100 * report["mxu_utilization"], 3),
            "Compute Util %": round(100 * report["macs"] / (rows * cols * matrix["busy"]), 3)
            if matrix["busy"] else 0.0,
            "MACs": report["macs"],
            "DRAM Bytes": report["dram_bytes_read"] + report["dram_bytes_written"],
            "Energy uJ": round(report["energy_pj"]["total"] / 1e6, 3)})
    return figures
