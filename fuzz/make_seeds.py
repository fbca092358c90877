#!/usr/bin/python3
"""Writes the fuzzers' generated seeds (docs/fuzzing.md) into OUT/HARNESS/:

    onnx-importer  the zoo's small models and every importer test case
                   (tests/lit/import/Inputs/op_models.py)
    bundle         the small zoo models compiled by tpuc for every preset,
                   where the bundle is small too
    assembler      the same programs as assembly, where it is small

    make_seeds.py [--tpuc TPUC] OUT

Without a tpuc there are no bundle and assembler seeds beyond fuzz/corpus/.
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lit", "import", "Inputs"))
import onnx  # noqa: E402
import op_models  # noqa: E402
import toolchain  # noqa: E402

# libFuzzer mutates small inputs best, and fast: the larger zoo models are
# mostly weights, their programs thousands of lines.
MAX_SEED_BYTES = 32 * 1024


def small_zoo_models():
    for name, directory in toolchain.model_dirs().items():
        path = os.path.join(directory, "model.onnx")
        if os.path.getsize(path) <= MAX_SEED_BYTES:
            yield name, path


def write_onnx_seeds(out):
    os.makedirs(out, exist_ok=True)
    for name, path in small_zoo_models():
        with open(path, "rb") as source, open(os.path.join(out, f"zoo-{name}.onnx"), "wb") as f:
            f.write(source.read())
    for name, make in op_models.KINDS.items():
        onnx.save(make()[0], os.path.join(out, f"op-{name}.onnx"))
    for name, make in op_models.ERRORS.items():
        onnx.save(make(), os.path.join(out, f"error-{name}.onnx"))


def write_program_seeds(tpuc, bundles, assembly):
    os.makedirs(bundles, exist_ok=True)
    os.makedirs(assembly, exist_ok=True)
    for name, path in small_zoo_models():
        for preset in toolchain.PRESETS:
            stem = f"{name}-{preset}"
            for emit, out in (("bundle", f"{bundles}/{stem}.tpub"), ("asm", f"{assembly}/{stem}.s")):
                subprocess.run([tpuc, path, f"--config=tpu-{preset}", f"--emit={emit}", "-o", out],
                               check=True)
                if os.path.getsize(out) > MAX_SEED_BYTES:
                    os.remove(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tpuc", help="the tpuc that compiles the bundle and assembly seeds")
    parser.add_argument("out")
    args = parser.parse_args()
    write_onnx_seeds(os.path.join(args.out, "onnx-importer"))
    if args.tpuc and os.path.exists(args.tpuc):
        write_program_seeds(args.tpuc, os.path.join(args.out, "bundle"),
                            os.path.join(args.out, "assembler"))
    else:
        print(f"make_seeds.py: no tpuc at {args.tpuc}: no generated bundle or assembly seeds")


if __name__ == "__main__":
    main()
