#!/usr/bin/env python3
"""CUDA bundles through the runtime (docs/gpu.md#running-cuda-bundles-through-the-runtime):
tpuc --target=cuda -o OUT.tpub, then tpusim runs the bundle through the CUDA
backend and checks its outputs against the model's expected ones.

usage: check-cuda-bundle.py CASE TPUC TPUSIM MODEL_DIR WORKDIR [GPU]
  GPU (default sm_80) is tpuc's --gpu.
  run        the model in emulation: every output PASS, the report's kernel
             times marked as host times;
  gpu        the model on this machine's GPU; exit 77 (skipped) when
             nvidia-smi finds none;
  gpu-build  without a GPU (skipped with one): with a stand-in nvidia-smi the
             backend builds the library with nvcc (for GPU and for sm_90a,
             whose wgmma nvcc must not build as compute_90 PTX) and loads it,
             and the CUDA
             runtime's error comes back from the entry point as a one-line
             error instead of ending the process;
  mutations  wrong answers fail the check: a source that scales an output, a
             corrupted expected output; a kernel table that disagrees with
             the source is a one-line error;
  cache      the second run finds the library in the cache and compiles
             nothing; another source is compiled anew;
  errors     corrupt and truncated bundles, options for the other kind of
             bundle and (without a GPU) the default --cuda=gpu are one-line
             errors with exit status 1."""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib

def run(command):
    return subprocess.run(command, capture_output=True, text=True)


def fail(message, result=None):
    print(f"FAIL: {message}")
    if result is not None:
        print(f"--- exit {result.returncode}\n--- stdout\n{result.stdout}--- stderr\n{result.stderr}")
    sys.exit(1)


def expect_pass(result, what):
    if result.returncode != 0 or "PASS" not in result.stdout or "FAIL" in result.stdout:
        fail(f"{what}: expected every output to PASS", result)


def expect_check_failure(result, what):
    if result.returncode != 1 or "FAIL" not in result.stdout:
        fail(f"{what}: expected the output check to FAIL with exit 1", result)
    print(f"{what}: caught")


def expect_one_line_error(result, what, text):
    lines = result.stderr.splitlines()
    if (result.returncode != 1 or result.stdout or len(lines) != 1 or
            not lines[0].startswith("tpusim: error: ") or text not in lines[0]):
        fail(f"{what}: expected exit 1 and one line 'tpusim: error: ...{text}...'", result)
    print(f"{what}: {lines[0]}")


# A bundle's parts (docs/bundle.md): a CUDA bundle has no instructions, and its
# constants section is the source.
def read_bundle(path):
    data = open(path, "rb").read()
    (header,) = struct.unpack_from("<I", data, 8)
    instructions, metadata_bytes = struct.unpack_from("<II", data, 16)
    (source_bytes,) = struct.unpack_from("<Q", data, 24)
    if instructions != 0:
        fail(f"{path}: a CUDA bundle has no instructions, this one {instructions}")
    metadata = json.loads(data[header:header + metadata_bytes])
    source = data[header + metadata_bytes:header + metadata_bytes + source_bytes]
    return data[:header], metadata, source.decode()


def write_bundle(path, header, metadata, source):
    encoded = source.encode()
    metadata["cuda"]["source_bytes"] = len(encoded)
    text = json.dumps(metadata).encode()
    data = bytearray(header) + text + encoded
    struct.pack_into("<I", data, 20, len(text))
    struct.pack_into("<Q", data, 24, len(encoded))
    struct.pack_into("<I", data, 12, zlib.crc32(bytes(data[16:])))
    open(path, "wb").write(bytes(data))


def gpu_present():
    return shutil.which("nvidia-smi") is not None and \
        subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0


def main():
    case, tpuc, tpusim, model_dir, work = sys.argv[1:6]
    gpu = sys.argv[6] if len(sys.argv) > 6 else "sm_80"
    os.makedirs(work, exist_ok=True)
    bundle = os.path.join(work, "model.tpub")
    compiled = run([tpuc, os.path.join(model_dir, "model.onnx"), "--target=cuda", f"--gpu={gpu}",
                    "-o", bundle])
    if compiled.returncode != 0:
        fail("tpuc --target=cuda -o model.tpub", compiled)
    data = os.path.join(model_dir, "test_data_set_0")
    cache = os.path.join(work, "cache")

    def tpusim_run(path, *options, data_dir=data, execution="emulate"):
        return run([tpusim, path, f"--cuda={execution}", "--cuda-cache", cache, "--data", data_dir,
                    *options])

    if case == "run":
        report = os.path.join(work, "report.json")
        result = tpusim_run(bundle, "--report", report)
        print(result.stdout, end="")
        expect_pass(result, "emulation")
        json_report = json.load(open(report))
        kernels = json_report["kernels"]
        if (json_report["execution"] != "emulation" or "total_host_ms" not in json_report or
                "total_ms" in json_report or not kernels or
                any("host_ms" not in k or "ms" in k for k in kernels) or
                not all(output["pass"] for output in json_report["outputs"])):
            fail(f"the report does not mark its times as host times: {json_report}")
        if [k["name"] for k in kernels] != [k["name"] for k in read_bundle(bundle)[1]["cuda"]["kernels"]]:
            fail("the report's kernels are not the bundle's")
    elif case == "gpu":
        if not gpu_present():
            print("skipped: nvidia-smi finds no GPU")
            sys.exit(77)
        report = os.path.join(work, "report.json")
        result = tpusim_run(bundle, "--report", report, execution="gpu")
        print(result.stdout, end="")
        expect_pass(result, "gpu")
        json_report = json.load(open(report))
        if json_report["execution"] != "gpu" or any("ms" not in k for k in json_report["kernels"]):
            fail(f"the report has no GPU times: {json_report}")
    elif case == "gpu-build":
        if gpu_present():
            print("skipped: this machine has a GPU, which the gpu case uses")
            sys.exit(77)
        fake = os.path.join(work, "fake-bin")
        os.makedirs(fake, exist_ok=True)
        with open(os.path.join(fake, "nvidia-smi"), "w") as script:
            script.write("#!/bin/sh\necho 'GPU 0: stand-in'\n")
        os.chmod(os.path.join(fake, "nvidia-smi"), 0o755)
        shutil.rmtree(cache, ignore_errors=True)
        env = dict(os.environ, PATH=fake + os.pathsep + os.environ["PATH"])
        hopper = os.path.join(work, "model-sm_90a.tpub")
        if run([tpuc, os.path.join(model_dir, "model.onnx"), "--target=cuda", "--gpu=sm_90a",
                "-o", hopper]).returncode != 0:
            fail("tpuc --target=cuda --gpu=sm_90a -o model-sm_90a.tpub")
        for path in (bundle, hopper):
            result = subprocess.run([tpusim, path, "--cuda-cache", cache, "--data", data],
                                    capture_output=True, text=True, env=env)
            expect_one_line_error(result, f"{os.path.basename(path)}: the GPU build without a GPU",
                                  "CUDA run failed: cudaMalloc")
        libraries = [name for name in os.listdir(cache) if name.startswith("cuda-") and name.endswith(".so")]
        if len(libraries) != 2:
            fail(f"expected two nvcc-built libraries in {cache}: {os.listdir(cache)}")
    elif case == "mutations":
        expect_pass(tpusim_run(bundle), "the unmutated bundle")
        header, metadata, source = read_bundle(bundle)
        # The last kernel's result scaled by 1.5 as it is stored.
        scaled, count = re.subn(r"(t\d+\[i0\] = )(v\d+);", r"\g<1>1.5f * \g<2>;", source)
        if count == 0:
            fail("the scaling pattern no longer matches the generated source")
        write_bundle(os.path.join(work, "scaled.tpub"), header, metadata, scaled)
        expect_check_failure(tpusim_run(os.path.join(work, "scaled.tpub")), "scaled outputs")
        # The expected output's last element (raw_data ends the file) made wrong.
        wrong_data = os.path.join(work, "wrong-data")
        shutil.rmtree(wrong_data, ignore_errors=True)
        shutil.copytree(data, wrong_data)
        expected = os.path.join(wrong_data, "output_0.pb")
        raw = bytearray(open(expected, "rb").read())
        (last,) = struct.unpack_from("<f", raw, len(raw) - 4)
        struct.pack_into("<f", raw, len(raw) - 4, 4 * last + 1)
        open(expected, "wb").write(bytes(raw))
        expect_check_failure(tpusim_run(bundle, data_dir=wrong_data), "a wrong expected output")
        # A kernel table the source does not have.
        metadata["cuda"]["kernels"].append(dict(metadata["cuda"]["kernels"][0], name="extra"))
        write_bundle(os.path.join(work, "extra-kernel.tpub"), header, metadata, source)
        expect_one_line_error(tpusim_run(os.path.join(work, "extra-kernel.tpub")),
                              "a kernel table longer than the source's", "kernels")
    elif case == "cache":
        shutil.rmtree(cache, ignore_errors=True)
        first, second = tpusim_run(bundle), tpusim_run(bundle)
        expect_pass(first, "first run")
        expect_pass(second, "second run")
        if "cuda: built " not in first.stdout:
            fail("the first run, with an empty cache, did not compile", first)
        if "cuda: cached build " not in second.stdout or "cuda: built " in second.stdout:
            fail("the second run compiled again", second)
        libraries = [name for name in os.listdir(cache) if name.endswith(".so")]
        if len(libraries) != 1:
            fail(f"expected one library in the cache, found {libraries}")
        header, metadata, source = read_bundle(bundle)
        write_bundle(os.path.join(work, "other.tpub"), header, metadata, source + "\n// other\n")
        other = tpusim_run(os.path.join(work, "other.tpub"))
        if "cuda: built " not in other.stdout:
            fail("another source found the first one's library", other)
        print("first run compiled, second found the cache, another source compiled anew")
    elif case == "errors":
        raw = bytearray(open(bundle, "rb").read())
        corrupt = os.path.join(work, "corrupt.tpub")
        raw[len(raw) // 2] ^= 0x20
        open(corrupt, "wb").write(bytes(raw))
        expect_one_line_error(tpusim_run(corrupt), "a flipped bit", "checksum mismatch")
        truncated = os.path.join(work, "truncated.tpub")
        open(truncated, "wb").write(open(bundle, "rb").read()[:-100])
        expect_one_line_error(tpusim_run(truncated), "a truncated bundle", "truncated")
        expect_one_line_error(tpusim_run(bundle, "--mode", "cycle"), "--mode on a CUDA bundle",
                              "--mode is for accelerator bundles")
        expect_one_line_error(tpusim_run(bundle, "--max-cycles", "10"),
                              "--max-cycles on a CUDA bundle", "--max-cycles is for accelerator")
        accelerator = os.path.join(work, "accelerator.tpub")
        if run([tpuc, os.path.join(model_dir, "model.onnx"), "-o", accelerator]).returncode != 0:
            fail("tpuc -o accelerator.tpub")
        expect_one_line_error(tpusim_run(accelerator), "--cuda on an accelerator bundle",
                              "is for CUDA bundles")
        if not gpu_present():
            expect_one_line_error(run([tpusim, bundle, "--cuda-cache", cache]),
                                  "the default --cuda=gpu without a GPU", "--cuda=emulate")
        source = os.path.join(work, "model.cu")
        if run([tpuc, os.path.join(model_dir, "model.onnx"), "--target=cuda", "-o", source]).returncode != 0 \
                or not open(source).read().startswith("// Generated by tpuc --target=cuda"):
            fail("-o OUT.cu no longer writes the CUDA source")
    else:
        fail(f"unknown case '{case}'")


if __name__ == "__main__":
    main()
