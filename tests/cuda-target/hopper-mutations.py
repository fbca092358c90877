#!/usr/bin/env python3
"""The emulation of the Hopper path catches what the hardware would get
wrong: the MLP's and LeNet-5's --gpu=sm_90a sources, run in emulation, pass;
built with a deliberate bug of the device library (TPU_CUDA_MUTATION_*,
prelude/tpu_cuda_sm90a.cuh) they must fail: matrix descriptors saying 64-byte
swizzle instead of 128, a stride byte offset of 512 instead of 1024, wgmma
reading a stage without waiting on its mbarrier. A leading byte offset of
4096 must still pass: K-major swizzled layouts do not use it (PTX ISA), and
the emulation must not invent a dependence the hardware does not have.

usage: hopper-mutations.py TPUC ROOT WORKDIR"""
import os
import subprocess
import sys

MODELS = ["mlp", "lenet5"]  # dense (one and two k tiles) and convolutions
MUTATIONS = {  # name: whether the output check must still pass
    "NONE": True,
    "DESC_SWIZZLE": False,
    "DESC_SBO": False,
    "NO_MBARRIER_WAIT": False,
    "DESC_LBO": True,
}


def emulate(root, source, model, work):
    env = dict(os.environ, TPU_CUDA_EMULATE_CACHE=work)
    return subprocess.run([os.path.join(root, "scripts", "cuda-emulate"), source, "--data",
                           os.path.join(root, "models", model, "test_data_set_0")],
                          capture_output=True, text=True, env=env)


def main():
    tpuc, root, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    failures = []
    for model in MODELS:
        source = os.path.join(work, f"{model}.cu")
        subprocess.run([tpuc, os.path.join(root, "models", model, "model.onnx"), "--target=cuda",
                        "--gpu=sm_90a", "-o", source], check=True)
        text = open(source).read()
        for mutation, passes in MUTATIONS.items():
            path = os.path.join(work, f"{model}-{mutation.lower()}.cu")
            with open(path, "w") as f:
                f.write(f"#define TPU_CUDA_MUTATION TPU_CUDA_MUTATION_{mutation}\n{text}")
            run = emulate(root, path, model, work)
            passed = run.returncode == 0 and "PASS" in run.stdout and "FAIL" not in run.stdout
            outcome = "passes" if passed else "fails"
            print(f"{model} {mutation}: {outcome} ({(run.stdout + run.stderr).strip().splitlines()[:1]})")
            if passed != passes:
                failures.append(f"{model} {mutation}: {outcome}, expected the opposite; exit "
                                f"{run.returncode}, {run.stdout.strip()} {run.stderr.strip()}")
    for failure in failures:
        print(f"hopper-mutations: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
