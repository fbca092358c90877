#!/usr/bin/env bash
# scripts/bench-gpu without a GPU (docs/gpu.md): --prepare writes the MLP's
# sources for sm_80 and sm_90a into WORK; --build-only builds them and
# tests/cuda/bench-gemm.cu as on an H200 (sm_90: the sm_90a sources, and
# bench-gemm with the Hopper GEMM) and as on an A100 (sm_80); then the build
# line the sm_90a source states must build it.
# usage: bench-gpu-build.sh TPUC ROOT WORKDIR NVCC
set -euo pipefail
tpuc=$1 root=$2 work=$3 nvcc=$4
rm -rf "$work"
PATH="$(dirname "$nvcc"):$PATH"
export PATH
"$root/scripts/bench-gpu" --prepare --out "$work" --models mlp --tpuc "$tpuc"
"$root/scripts/bench-gpu" --build-only --arch sm_90 --out "$work"
if ! grep -q hopper_gemm_kernel "$work/bin/bench-gemm"; then
  echo "bench-gemm built for sm_90 has no Hopper GEMM"
  exit 1
fi
"$root/scripts/bench-gpu" --build-only --arch sm_80 --out "$work"
source=$work/src/sm_90a/mlp-full.cu
line=$(sed -n 's|^//   build: nvcc ||p' "$source")
line=${line/THIS.cu/$source}
read -ra arguments <<<"${line/-o model/-o $work/mlp-full-sm_90a}"
echo "the source's build line: nvcc ${arguments[*]}"
"$nvcc" "${arguments[@]}"
