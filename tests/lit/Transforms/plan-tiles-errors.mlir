// RUN: tpu-opt %s --tpu-plan-tiles="config=%S/Inputs/tpu-16x16-tiny.json" --split-input-file --verify-diagnostics
// RUN: not tpu-opt %s --tpu-plan-tiles="config=%t.missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: tpu-plan-tiles: {{.*}}.missing.json: cannot read config: no such file

// A 256-word scratchpad cannot hold two 16 x 16 weight panels.
func.func @too_small(%x: tensor<4x16xf32>, %w: tensor<16x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'tpu.matmul' op config 'tpu-16x16-tiny' has too little scratchpad or accumulator memory for one 16x16 weight tile and one row}}
  %m = tpu.matmul %x, %w : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}
