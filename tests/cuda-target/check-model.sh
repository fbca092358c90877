#!/usr/bin/env bash
# The CUDA target on one model and fusion mode (docs/gpu.md):
#   emulate: tpuc --target=cuda, then scripts/cuda-emulate runs the source on
#            the CPU and checks every output against test_data_set_0;
#   ptxas:   the source's device code for sm_80, sm_90 and sm_90a with ptxas
#            refusing spills and local memory, and the PTX of every GEMM
#            kernel checked for mma.sync, ldmatrix and (with more than one
#            stage) cp.async;
#   gpu:     built for this machine's GPU and run against test_data_set_0;
#            skipped (exit 77) when nvidia-smi finds no GPU;
#   gpu-sm90a: as gpu, the --gpu=sm_90a source built for sm_90a alone
#            (-gencode arch=compute_90a,code=sm_90a, as its build line says:
#            -arch=native or -arch=sm_90a also build compute_90 PTX, where
#            ptxas refuses wgmma); skipped unless the GPU is an sm_90;
#   unsupported: tpuc refuses the model in one line;
#   emulate-sm90a: as emulate, the source generated with --gpu=sm_90a (the
#            Hopper path: wgmma fed by TMA);
#   ptxas-sm90a: the --gpu=sm_90a source for sm_90a without spills or local
#            memory, its GEMM kernels' PTX checked for wgmma.mma_async,
#            cp.async.bulk.tensor and mbarrier waits; ptxas must refuse the
#            same source for sm_90 (wgmma exists only on sm_90a) when it has
#            a Hopper kernel.
# usage: check-model.sh emulate|ptxas|gpu|unsupported|emulate-sm90a|ptxas-sm90a|gpu-sm90a
#                       TPUC ROOT MODEL_DIR FUSION WORKDIR [NVCC]
set -euo pipefail
mode=$1 tpuc=$2 root=$3 model_dir=$4 fusion=$5 work=$6 nvcc=${7:-nvcc}
gpu=sm_80
case $mode in
*-sm90a) gpu=sm_90a mode=${mode%-sm90a} ;;
esac
if [ "$mode" = gpu ]; then
  if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "skipped: nvidia-smi finds no GPU"
    exit 77
  fi
  arch_flags=(-arch=native)
  if [ "$gpu" = sm_90a ]; then
    capability=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1)
    if [ "$capability" != 9.0 ]; then
      echo "skipped: sm_90a code needs an sm_90 GPU, not compute capability $capability"
      exit 77
    fi
    arch_flags=(-gencode "arch=compute_90a,code=sm_90a")
  fi
fi
mkdir -p "$work"
source=$work/model.cu
if [ "$mode" = unsupported ]; then
  if "$tpuc" "$model_dir/model.onnx" --target=cuda --fusion="$fusion" -o "$source" 2>"$work/err"; then
    echo "compiled; expected a one-line error"
    exit 1
  fi
  cat "$work/err"
  [ "$(wc -l <"$work/err")" -eq 1 ] && grep -q "CUDA\|float32" "$work/err"
  exit
fi
"$tpuc" "$model_dir/model.onnx" --target=cuda --gpu="$gpu" --fusion="$fusion" -o "$source"
case $mode in
emulate)
  TPU_CUDA_EMULATE_CACHE=$work "$root/scripts/cuda-emulate" "$source" \
    --data "$model_dir/test_data_set_0" --report "$work/report.json" | tee "$work/run.txt"
  if grep -q FAIL "$work/run.txt"; then exit 1; fi
  grep -q PASS "$work/run.txt"
  ;;
ptxas)
  if [ "$gpu" = sm_90a ]; then
    "$nvcc" -std=c++17 -O3 -arch=sm_90a -cubin -o "$work/model-sm_90a.cubin" \
      -Xptxas --warn-on-spills,--warn-on-local-memory-usage,--warning-as-error "$source"
    "$nvcc" -std=c++17 -O3 -arch=sm_90a -ptx -o "$work/model.ptx" "$source"
    /usr/bin/python3 "$root/tests/cuda-target/check-ptx.py" "$source" "$work/model.ptx"
    if grep -q "HopperTileConfig<[0-9]" "$source"; then
      if "$nvcc" -std=c++17 -O3 -arch=sm_90 -cubin -o "$work/model-sm_90.cubin" "$source" \
        2>"$work/sm_90.err"; then
        echo "ptxas accepted the sm_90a source for sm_90"
        exit 1
      fi
      grep -q "Instruction 'wgmma.* not supported on .target 'sm_90'" "$work/sm_90.err"
    fi
    exit
  fi
  for arch in sm_80 sm_90 sm_90a; do
    "$nvcc" -std=c++17 -O3 -arch="$arch" -cubin -o "$work/model-$arch.cubin" \
      -Xptxas --warn-on-spills,--warn-on-local-memory-usage,--warning-as-error "$source"
  done
  "$nvcc" -std=c++17 -O3 -arch=sm_80 -ptx -o "$work/model.ptx" "$source"
  /usr/bin/python3 "$root/tests/cuda-target/check-ptx.py" "$source" "$work/model.ptx"
  ;;
gpu)
  "$nvcc" -std=c++17 -O3 "${arch_flags[@]}" -o "$work/model" "$source"
  "$work/model" --data "$model_dir/test_data_set_0" --report "$work/report.json"
  ;;
*)
  echo "check-model.sh: unknown mode '$mode'" >&2
  exit 2
  ;;
esac
