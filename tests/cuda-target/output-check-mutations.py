#!/usr/bin/env python3
"""The CUDA target's output check catches wrong answers: the MLP's generated
source, run in emulation, passes; each deliberately wrong variant of it (an
output scaled by 1.5, a dropped bias, a dropped K tile, a bias read one
column off) must fail the check and exit 1.

usage: output-check-mutations.py TPUC ROOT WORKDIR"""
import os
import re
import subprocess
import sys


def emulate(root, source, work):
    env = dict(os.environ, TPU_CUDA_EMULATE_CACHE=work)
    return subprocess.run([os.path.join(root, "scripts", "cuda-emulate"), source, "--data",
                           os.path.join(root, "models", "mlp", "test_data_set_0")],
                          capture_output=True, text=True, env=env)


def main():
    tpuc, root, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    source = os.path.join(work, "mlp.cu")
    subprocess.run([tpuc, os.path.join(root, "models", "mlp", "model.onnx"), "--target=cuda",
                    "-o", source], check=True)
    text = open(source).read()
    # Each mutation: a pattern in the second layer's kernel and its replacement.
    mutations = {
        "scaled output": (r"(t1\[i0\] = )(v\d+);", r"\g<1>1.5f * \g<2>;"),
        "dropped bias": (r"(k1_fc2_epilogue \{.*?const float v\d+ = )acc \+ v\d+;", r"\g<1>acc;"),
        "dropped K tile": (r"(k1_fc2_epilogue\{cst1, t1\}, 8, 10, )100(, smem\))", r"\g<1>68\g<2>"),
        "bias one column off": (r"(k1_fc2_epilogue \{.*?cst1\[)(\w+)(\])", r"\g<1>(\g<2> + 1) % 10\g<3>"),
    }
    failures = []
    baseline = emulate(root, source, work)
    if baseline.returncode != 0 or "PASS" not in baseline.stdout:
        failures.append(f"the unmutated source fails: {baseline.stdout}{baseline.stderr}")
    for name, (pattern, replacement) in mutations.items():
        mutated, count = re.subn(pattern, replacement, text, count=1, flags=re.S)
        if count != 1:
            failures.append(f"{name}: the pattern no longer matches the generated source")
            continue
        path = os.path.join(work, re.sub(r"\W+", "-", name) + ".cu")
        with open(path, "w") as f:
            f.write(mutated)
        run = emulate(root, path, work)
        caught = run.returncode == 1 and "FAIL" in run.stdout
        print(f"{name}: {'caught' if caught else 'NOT caught'}")
        if not caught:
            failures.append(f"{name}: exit {run.returncode}, {run.stdout.strip()}")
    for failure in failures:
        print(f"output-check-mutations: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
