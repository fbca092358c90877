"""What the benchmark, study and generator scripts share: where the tools,
presets and zoo models are, building them, and the MatMul model they
measure."""
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


ZOO_LIST = os.path.join(ROOT, "models", "zoo.txt")


def zoo():
    """{name: "committed", "generated" or "bench"} from models/zoo.txt, in its
    order."""
    models = {}
    with open(ZOO_LIST) as f:
        for number, line in enumerate(f, start=1):
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split()
            if len(fields) != 2 or fields[1] not in ("committed", "generated", "bench"):
                sys.exit(f"{ZOO_LIST}:{number}: expected 'NAME committed', 'NAME generated' or "
                         f"'NAME bench', got '{line.strip()}'")
            models[fields[0]] = fields[1]
    return models


def model_dirs(names=None):
    """{name: directory} of the zoo: committed models in models/, generated
    and bench ones in build/models/. Without `names`, every committed and
    generated model there is (generated ones once the build has made them);
    `names` picks some, by name, bench models included."""
    kinds = zoo()
    dirs = {name: os.path.join(ROOT, "models" if kind == "committed" else "build/models", name)
            for name, kind in kinds.items()}
    present = {name: d for name, d in dirs.items() if os.path.exists(os.path.join(d, "model.onnx"))}
    if not names:
        return {name: d for name, d in present.items() if kinds[name] != "bench"}
    unknown = [name for name in names if name not in dirs]
    if unknown:
        sys.exit(f"no model named {', '.join(unknown)} in {ZOO_LIST}")
    absent = [dirs[name] for name in names if name not in present]
    if absent:
        sys.exit(f"{', '.join(absent)}: not generated yet; ./scripts/build makes it")
    return {name: dirs[name] for name in names}


def build():
    subprocess.run([os.path.join(ROOT, "scripts", "build")], check=True, stdout=subprocess.DEVNULL)


def matmul_model(path, m, k=None, n=None, data_dir=None):
    """y = x @ w with x an m x k input, w a random k x n constant (fixed seed)
    and y the m x n output; k and n default to m. With `data_dir`, also a
    random x and numpy's y there as input_0.pb and output_0.pb."""
    k, n = k or m, n or m
    rng = np.random.default_rng(0)
    w = rng.standard_normal((k, n)).astype(np.float32)
    weights = numpy_helper.from_array(w, "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="matmul")], "matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])], [weights])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)
    if data_dir:
        os.makedirs(data_dir, exist_ok=True)
        x = rng.standard_normal((m, k)).astype(np.float32)
        for file, name, array in (("input_0", "x", x), ("output_0", "y", x @ w)):
            with open(os.path.join(data_dir, f"{file}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(array, name).SerializeToString())
