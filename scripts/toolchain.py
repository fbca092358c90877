"""What the benchmark and study scripts share: where the tools and presets
are, building them, and the MatMul model they measure."""
import glob
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")


PRESETS = ("8x8", "32x32", "128x128")
FUSION_MODES = ("none", "epilogue", "full")


def tool(name):
    return os.path.join(BIN, name)


def preset(name):
    """The path of a preset config, e.g. preset("128x128")."""
    return os.path.join(ROOT, "configs", f"tpu-{name}.json")


def model_dirs(names=None):
    """{name: directory} of the zoo: models/ and the ones the build generates
    into build/models/; `names` picks some, by name."""
    found = {}
    for base in (os.path.join(ROOT, "models"), os.path.join(ROOT, "build", "models")):
        for path in sorted(glob.glob(os.path.join(base, "*", "model.onnx"))):
            found.setdefault(os.path.basename(os.path.dirname(path)), os.path.dirname(path))
    if not names:
        return found
    missing = [name for name in names if name not in found]
    if missing:
        sys.exit(f"no model named {', '.join(missing)} in models/ or build/models/")
    return {name: found[name] for name in names}


def build():
    subprocess.run([os.path.join(ROOT, "scripts", "build")], check=True, stdout=subprocess.DEVNULL)


def matmul_model(size, path):
    """y = x @ w with x and y size x size inputs and outputs and w a random
    constant (fixed seed)."""
    rng = np.random.default_rng(0)
    weights = numpy_helper.from_array(rng.standard_normal((size, size)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="matmul")], "matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [size, size])], [weights])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)
