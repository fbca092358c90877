#!/usr/bin/python3
"""Runs imported models on the CPU through upstream MLIR and compares them
with numpy's expected outputs, independently of the TPU backend.

    check.py TOOLS_DIR WORK_DIR [--all-ops] [--op KIND]... [--model DIR]...

TOOLS_DIR holds onnx-to-tosa; the TOSA is lowered with mlir-opt (tosa-to-linalg
and friends, bufferization, loops, LLVM) and run by mlir-cpu-runner, with a
wrapper @main that feeds the inputs as constants and prints each result.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

LLVM = "/usr/lib/llvm-19"
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lit", "import", "Inputs"))
import op_models  # noqa: E402

PIPELINE = ",".join([
    "func.func(tosa-to-linalg-named, tosa-to-linalg, tosa-to-arith, tosa-to-tensor,"
    " convert-elementwise-to-linalg)",
    "one-shot-bufferize{bufferize-function-boundaries}",
    "func.func(convert-linalg-to-loops)", "convert-scf-to-cf", "expand-strided-metadata",
    "lower-affine", "finalize-memref-to-llvm",
    "convert-math-to-llvm", "convert-math-to-libm", "convert-arith-to-llvm",
    "convert-func-to-llvm", "convert-cf-to-llvm", "reconcile-unrealized-casts",
])


ELEMENT = {np.dtype(np.float32): "f32", np.dtype(np.int64): "i64", np.dtype(np.int32): "i32"}


def tensor_type(shape, dtype=np.float32):
    return "tensor<" + "".join(f"{d}x" for d in shape) + ELEMENT[np.dtype(dtype)] + ">"


def memref_type(shape, dtype=np.float32):
    return "memref<" + "".join(f"{d}x" for d in shape) + ELEMENT[np.dtype(dtype)] + ">"


def harness(tosa, inputs, outputs):
    """The imported module with @main renamed @model and a new @main that
    calls it on constant inputs and prints every result. Inputs and outputs
    are float32, or int64 or int32 (indices, counts)."""
    module = re.sub(r"\{tpu\.name = \"[^\"]*\"\}", "", tosa).replace("@main(", "@model(", 1)
    module = module.rstrip().rstrip("}")
    inputs, outputs = ([a if a.dtype in (np.int64, np.int32) else a.astype(np.float32)
                        for a in arrays] for arrays in (inputs, outputs))
    lines = ["  func.func private @printMemrefI64(memref<*xi64>)",
             "  func.func private @printMemrefI32(memref<*xi32>)", "  func.func @main() {"]
    for i, array in enumerate(inputs):
        little = {np.dtype(np.int64): "<i8", np.dtype(np.int32): "<i4"}.get(array.dtype, "<f4")
        data = np.ascontiguousarray(array, dtype=little).tobytes().hex().upper()
        lines.append(f'    %in{i} = arith.constant dense<"0x{data}"> : '
                     f'{tensor_type(array.shape, array.dtype)}')
    results = ", ".join(f"%out{i}" for i in range(len(outputs)))
    arg_types = ", ".join(tensor_type(a.shape, a.dtype) for a in inputs)
    result_types = ", ".join(tensor_type(o.shape, o.dtype) for o in outputs)
    lines.append(f"    {results} = func.call @model({', '.join(f'%in{i}' for i in range(len(inputs)))})"
                 f" : ({arg_types}) -> ({result_types})")
    for i, out in enumerate(outputs):
        # A float result is printed as its bits (printMemrefF32 would print 6
        # significant digits).
        printed = np.int32 if out.dtype == np.float32 else out.dtype
        if out.dtype == np.float32:
            lines.append(f"    %bits{i} = arith.bitcast %out{i} : {tensor_type(out.shape)} to "
                         f"{tensor_type(out.shape, np.int32)}")
        element = ELEMENT[np.dtype(printed)]
        ranked = memref_type(out.shape, printed)
        source = f"%bits{i}" if out.dtype == np.float32 else f"%out{i}"
        lines.append(f"    %m{i} = bufferization.to_memref {source} : {ranked}")
        lines.append(f"    %u{i} = memref.cast %m{i} : {ranked} to memref<*x{element}>")
        lines.append(f"    func.call @printMemref{element.upper()}(%u{i}) : (memref<*x{element}>) -> ()")
    lines += ["    return", "  }", "}"]
    return module + "\n" + "\n".join(lines) + "\n"


def execute(work, name, tosa, inputs, outputs):
    """Runs the TOSA module's @main on `inputs` through upstream MLIR on the
    CPU; `outputs` give the results' shapes and types. Returns each result
    as a flat float64 array, float results exactly."""
    source = os.path.join(work, name + ".mlir")
    outputs = [o if o.dtype in (np.int64, np.int32) else o.astype(np.float32)
               for o in map(np.asarray, outputs)]
    with open(source, "w") as f:
        f.write(harness(tosa, inputs, outputs))
    llvm = subprocess.run([f"{LLVM}/bin/mlir-opt", source, f"--pass-pipeline=builtin.module({PIPELINE})"],
                          check=True, capture_output=True, text=True).stdout
    libs = ",".join(f"{LLVM}/lib/lib{lib}.so" for lib in ("mlir_runner_utils", "mlir_c_runner_utils"))
    printed = subprocess.run([f"{LLVM}/bin/mlir-cpu-runner", "-e", "main", "-O2",
                              "-entry-point-result=void", f"-shared-libs={libs}"],
                             input=llvm, check=True, capture_output=True, text=True).stdout
    results = []
    for block, output in zip(printed.split("Unranked Memref")[1:], outputs):
        numbers = np.array([int(n) for n in re.findall(r"-?\d+", block.split("data =")[1])])
        if output.dtype == np.float32:
            numbers = numbers.astype(np.int32).view(np.float32)
        results.append(numbers.astype(np.float64))
    return results


def run(tools, work, name, model_path, inputs, expected):
    tosa = subprocess.run([os.path.join(tools, "onnx-to-tosa"), model_path], check=True,
                          capture_output=True, text=True).stdout
    printed = execute(work, name, tosa, inputs, expected)
    if len(printed) != len(expected):
        return f"{name}: {len(printed)} results printed, {len(expected)} expected"
    failures = []
    for index, (got, want) in enumerate(zip(printed, expected)):
        want = np.asarray(want, dtype=np.float64).ravel()
        # fp32 arithmetic in another order than the reference's, and the
        # last bits of exp, erf and the like.
        tolerance = 1e-4 * max(1.0, np.abs(want).max())
        error = np.abs(got - want).max() if got.shape == want.shape else np.inf
        status = "ok" if error <= tolerance else "MISMATCH"
        print(f"{name} output {index}: max abs error {error:.3g} (tolerance {tolerance:.3g}) {status}")
        if error > tolerance:
            failures.append(f"{name} output {index}")
    return "; ".join(failures)


def checked(tools, work, name, *args):
    try:
        return run(tools, work, name, *args)
    except subprocess.CalledProcessError as error:
        print(error.stderr[:2000])
        return f"{name}: {os.path.basename(error.cmd[0])} failed"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("tools")
    parser.add_argument("work")
    parser.add_argument("--all-ops", action="store_true", help="every case of op_models.py")
    parser.add_argument("--op", action="append", default=[])
    parser.add_argument("--model", action="append", default=[])
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    failures = []
    for kind in list(op_models.KINDS) if args.all_ops else args.op:
        model, inputs, expected = op_models.KINDS[kind]()
        path = os.path.join(args.work, kind + ".onnx")
        onnx.save(model, path)
        failures.append(checked(args.tools, args.work, kind, path, inputs, expected))
    for model_dir in args.model:
        data = os.path.join(model_dir, "test_data_set_0")

        def load(prefix):
            files = sorted(f for f in os.listdir(data) if f.startswith(prefix))
            return [numpy_helper.to_array(onnx.load_tensor(os.path.join(data, f))) for f in files]
        failures.append(checked(args.tools, args.work, os.path.basename(os.path.normpath(model_dir)),
                            os.path.join(model_dir, "model.onnx"), load("input_"), load("output_")))
    failures = [f for f in failures if f]
    if failures:
        print("FAILED: " + "; ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
