"""A sweep's SPEC (YAML or JSON, docs/sweep.md) and the points it expands to.

A point is one model compiled for one config with one fusion mode and run in
one simulator mode. Its key, a hash of exactly those, names it in the result
files, so that a resumed sweep knows which points are done.
"""
import copy
import hashlib
import itertools
import json
import os

import yaml

from toolchain import ROOT, FUSION_MODES, zoo
from tpusweep import SweepError, one_line, scalesim

SIM_MODES = ("fast", "cycle")
# Axes that are not config keys.
SPECIAL_AXES = ("config", "fusion", "mode")
SPEC_KEYS = ("name", "models", "base", "axes", "zip", "fusion", "mode", "out")
# The config keys a config may leave out (docs/config.md): axes over them
# work on a base that leaves them out too.
OPTIONAL_CONFIG_KEYS = ("vector.transcendental_cycles_per_group", "energy.vector_transcendental_pj")


def load_config(reference, origin):
    """A config as a dict from a preset's name (tpu-8x8), a JSON file or a
    SCALE-Sim .cfg; `origin` names where the reference was written."""
    if reference.endswith(".cfg"):
        return scalesim.read_config(reference)
    path = reference
    if not os.path.exists(path):
        preset = os.path.join(ROOT, "configs", f"{reference}.json")
        if not os.path.exists(preset):
            presets = sorted(name[:-5] for name in os.listdir(os.path.join(ROOT, "configs")))
            raise SweepError(f"{origin}: '{reference}' is neither a config file nor a preset "
                             f"({', '.join(presets)})")
        path = preset
    try:
        with open(path) as f:
            config = json.load(f)
    except (OSError, ValueError) as error:
        raise SweepError(f"{path}: cannot read the config: {one_line(error)}")
    if not isinstance(config, dict):
        raise SweepError(f"{path}: a config is a JSON object")
    return config


def config_keys(config, prefix=""):
    """The dotted names of a config's leaves: array.rows, dram.bytes_per_cycle, ..."""
    keys = []
    for name, value in config.items():
        if isinstance(value, dict):
            keys += config_keys(value, f"{prefix}{name}.")
        else:
            keys.append(prefix + name)
    return keys


def set_key(config, dotted, value):
    *parents, leaf = dotted.split(".")
    for parent in parents:
        config = config[parent]
    config[leaf] = value


def point_key(model_path, config, fusion, mode):
    identity = json.dumps([os.path.abspath(model_path), config, fusion, mode], sort_keys=True)
    return hashlib.sha256(identity.encode()).hexdigest()[:16]


def read_spec_file(path):
    try:
        with open(path) as f:
            text = f.read()
    except OSError as error:
        raise SweepError(f"{path}: cannot read the spec: {error.strerror}")
    try:
        spec = json.loads(text) if path.endswith(".json") else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as error:
        raise SweepError(f"{path}: invalid {'JSON' if path.endswith('.json') else 'YAML'}: "
                         f"{one_line(error)}")
    if not isinstance(spec, dict):
        raise SweepError(f"{path}: a spec is a mapping of {', '.join(SPEC_KEYS)}")
    unknown = [key for key in spec if key not in SPEC_KEYS]
    if unknown:
        raise SweepError(f"{path}: unknown key '{unknown[0]}' (known: {', '.join(SPEC_KEYS)})")
    return spec


def resolve_models(entries, spec_path, model_root):
    """[(name, onnx path, test data directory or None, SCALE-Sim layer or
    None)] for the spec's models:
    zoo names, ONNX files (or directories holding model.onnx) and SCALE-Sim
    topology CSVs, whose layers become models under `model_root`."""
    if not isinstance(entries, list) or not entries:
        raise SweepError(f"{spec_path}: models: a non-empty list of zoo names, ONNX files or "
                         f"SCALE-Sim topology CSVs")
    base = os.path.dirname(os.path.abspath(spec_path))
    zoo_models = zoo()
    models = []
    for entry in entries:
        if not isinstance(entry, str):
            raise SweepError(f"{spec_path}: models: '{entry}' is not a name or a path")
        if entry in zoo_models:
            directory = os.path.join(ROOT, "models" if zoo_models[entry] == "committed"
                                     else "build/models", entry)
            if not os.path.exists(os.path.join(directory, "model.onnx")):
                raise SweepError(f"{spec_path}: models: {entry} is not generated yet; "
                                 f"./scripts/build makes it")
            models.append((entry, os.path.join(directory, "model.onnx"),
                           os.path.join(directory, "test_data_set_0"), None))
            continue
        path = entry if os.path.isabs(entry) else os.path.join(base, entry)
        if not os.path.exists(path):
            raise SweepError(f"{spec_path}: models: '{entry}' is neither a zoo model "
                             f"({', '.join(zoo_models)}) nor an existing file")
        if path.endswith(".csv"):
            models += scalesim.topology_models(path, model_root)
            continue
        if os.path.isdir(path):
            path = os.path.join(path, "model.onnx")
        data = os.path.join(os.path.dirname(path), "test_data_set_0")
        name = os.path.splitext(os.path.basename(path))[0]
        if name == "model":
            name = os.path.basename(os.path.dirname(os.path.abspath(path)))
        models.append((name, path, data if os.path.isdir(data) else None, None))
    return models


def check_values(spec_path, where, values, allowed=None):
    """`where` names the values in messages: "axes: fusion", "mode", ..."""
    if not isinstance(values, list) or not values:
        raise SweepError(f"{spec_path}: {where}: a non-empty list of values")
    for value in values:
        if allowed and value not in allowed:
            raise SweepError(f"{spec_path}: {where}: '{value}' is not one of "
                             f"{', '.join(allowed)}")
        if isinstance(value, (dict, list)) or value is None:
            raise SweepError(f"{spec_path}: {where}: '{value}' is not a single value")


def axis_groups(spec_path, axes, zipped):
    """The axes as groups that vary together: each zip group is one, every
    other axis its own; the points are the product of the groups."""
    if not isinstance(zipped, list) or not all(isinstance(group, list) for group in zipped):
        raise SweepError(f"{spec_path}: zip: a list of lists of axis names")
    grouped = set()
    groups = []
    for group in zipped:
        for axis in group:
            if axis not in axes:
                raise SweepError(f"{spec_path}: zip: '{axis}' is not an axis")
            if axis in grouped:
                raise SweepError(f"{spec_path}: zip: '{axis}' is in two groups")
            grouped.add(axis)
        lengths = {len(axes[axis]) for axis in group}
        if len(lengths) > 1:
            raise SweepError(f"{spec_path}: zip: {', '.join(group)} have different numbers of "
                             f"values ({', '.join(str(len(axes[a])) for a in group)})")
        groups.append([dict(zip(group, values))
                       for values in zip(*(axes[axis] for axis in group))])
    for axis, values in axes.items():
        if axis not in grouped:
            groups.append([{axis: value} for value in values])
    return groups


def expand(spec_path, out_dir=None):
    """(name, results directory, points) of a SPEC file; see expand_spec."""
    return expand_spec(read_spec_file(spec_path), spec_path, out_dir)


def expand_spec(spec, spec_path, out_dir=None):
    """(name, results directory, points) of a spec read from `spec_path`
    (paths in it are relative to its directory); the points in order, models
    outermost, then the axes as written. The directory is `out_dir`, else the
    spec's `out`, else NAME-results in the current directory."""
    name = str(spec.get("name") or os.path.splitext(os.path.basename(spec_path))[0])
    if not out_dir:
        out_dir = (os.path.join(os.path.dirname(os.path.abspath(spec_path)), str(spec["out"]))
                   if spec.get("out") else f"{name}-results")
    out_dir = os.path.abspath(out_dir)
    if "models" not in spec:
        raise SweepError(f"{spec_path}: models: missing")
    base_reference = str(spec.get("base", "tpu-32x32"))
    base = load_config(resolve_path(base_reference, spec_path), f"{spec_path}: base")
    axes = spec.get("axes") or {}
    if not isinstance(axes, dict):
        raise SweepError(f"{spec_path}: axes: a mapping of axis name to a list of values")
    known_keys = config_keys(base)
    known_keys += [key for key in OPTIONAL_CONFIG_KEYS if key not in known_keys]
    for axis, values in axes.items():
        allowed = {"fusion": FUSION_MODES, "mode": SIM_MODES}.get(axis)
        if axis in SPECIAL_AXES or axis in known_keys:
            check_values(spec_path, f"axes: {axis}", values, allowed)
        else:
            raise SweepError(f"{spec_path}: axes: unknown config key '{axis}' (config keys: "
                             f"{', '.join(known_keys)}; also {', '.join(SPECIAL_AXES)})")
    configs = {value: load_config(resolve_path(str(value), spec_path), f"{spec_path}: axes: config")
               for value in axes.get("config", [])}
    fusion = spec.get("fusion", "full")
    mode = spec.get("mode", "fast")
    check_values(spec_path, "fusion", [fusion], FUSION_MODES)
    check_values(spec_path, "mode", [mode], SIM_MODES)
    groups = axis_groups(spec_path, axes, spec.get("zip") or [])
    models = resolve_models(spec["models"], spec_path, os.path.join(out_dir, "models"))

    points = []
    choices = list(itertools.product(*groups))
    for (model, model_path, data, layer), choice in itertools.product(models, choices):
        values = {axis: value for group in choice for axis, value in group.items()}
        config = copy.deepcopy(configs.get(values.get("config"), base))
        for axis, value in values.items():
            if axis not in SPECIAL_AXES:
                set_key(config, axis, value)
        changed = [f"{axis}={value}" for axis, value in values.items() if axis not in SPECIAL_AXES]
        if changed:
            config["name"] = f"{config.get('name', 'config')}[{','.join(changed)}]"
        point_fusion = values.get("fusion", fusion)
        point_mode = values.get("mode", mode)
        points.append({"key": point_key(model_path, config, point_fusion, point_mode),
                       "model": model, "model_path": os.path.abspath(model_path),
                       "data": data and os.path.abspath(data), "axes": values,
                       "config": config, "fusion": point_fusion, "mode": point_mode,
                       "layer": layer})
    return name, out_dir, points


def resolve_path(reference, spec_path):
    """A path in a spec is relative to the spec's directory; a preset's name stays a name."""
    if os.path.isabs(reference) or os.sep not in reference and not reference.endswith(
            (".json", ".cfg")):
        return reference
    return os.path.join(os.path.dirname(os.path.abspath(spec_path)), reference)
