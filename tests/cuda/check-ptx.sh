#!/bin/sh
# Usage: check-ptx.sh NVCC PRELUDE_DIR SOURCE.cu OUT.ptx
# Compiles SOURCE.cu to sm_80 PTX and checks that the device library's instructions are there:
# the bf16 tensor-core mma, ldmatrix (plain and .trans), cp.async with zero fill, and the
# wait_group 2 of a 4-stage pipeline.
set -eu
"$1" -std=c++17 -arch=sm_80 -ptx -I "$2" "$3" -o "$4"
for instruction in \
  'mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32' \
  'ldmatrix.sync.aligned.m8n8.x4.shared.b16' \
  'ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16' \
  'cp.async.cg.shared.global' \
  'cp.async.commit_group' \
  'cp.async.wait_group 2'; do
  if ! grep -qF "$instruction" "$4"; then
    echo "check-ptx: no '$instruction' in $4" >&2
    exit 1
  fi
done
