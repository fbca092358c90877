// tpuc accepts TOSA-level MLIR, as exported by other frameworks or written by
// hand; tpu-opt's named pipeline does the same lowering.
// RUN: tpuc %s --emit=asm --config tpu-8x8 | FileCheck %s --check-prefixes=CHECK,FUSED
// RUN: tpuc %s --emit=asm --config tpu-8x8 --fusion=none | FileCheck %s --check-prefixes=CHECK,UNFUSED
// RUN: tpu-opt %s --tpu-lower | FileCheck %s --check-prefix=PIPELINE

// A 4x12 times 12x6 product: two K steps (8 + 4) on the 8x8 array, one
// column tile of 6, then a scalar multiply on the vector unit: fused, in the
// accumulators before the store (through the reshape, which moves nothing);
// unfused, on the stored result; either way on the dense 4x6 words as 3
// rows of the 8 lanes.
// CHECK: # {{[0-9]+}} instructions for 'tpu-8x8' (8x8 array)
// CHECK: mxu.ldw src_addr=4096 src_stride=6 rows=8 cols=6
// CHECK: mxu.mm {{.*}} rows=4 cols=8 dtype=bf16 accumulate=0 flip=1
// CHECK: mxu.ldw src_addr=4144 src_stride=6 rows=4 cols=6
// CHECK: mxu.mm {{.*}} rows=4 cols=4 dtype=bf16 accumulate=1 flip=1
// FUSED: v.mul dst_space=acc {{.*}} rows=3 cols=8 {{.*}} broadcast=scalar
// CHECK: dma.st {{.*}} space=acc sram_addr=0 sram_stride=24 rows=1 cols=24 dtype=f32
// UNFUSED: v.mul dst_space=sp {{.*}} rows=3 cols=8 {{.*}} broadcast=scalar
// CHECK: halt

// PIPELINE: tpu.fused
// PIPELINE-NEXT: tpu.matmul %arg0, %arg1 {{.*}}: tensor<4x12xf32>, tensor<12x6xf32> -> tensor<4x6xf32>
// PIPELINE-NEXT: tpu.binary mul
func.func @main(%x: tensor<4x12xf32>, %w: tensor<12x6xf32>) -> tensor<4x6xf32> {
  %a = tosa.reshape %x {new_shape = array<i64: 1, 4, 12>} : (tensor<4x12xf32>) -> tensor<1x4x12xf32>
  %b = tosa.reshape %w {new_shape = array<i64: 1, 12, 6>} : (tensor<12x6xf32>) -> tensor<1x12x6xf32>
  %m = tosa.matmul %a, %b : (tensor<1x4x12xf32>, tensor<1x12x6xf32>) -> tensor<1x4x6xf32>
  %y = tosa.reshape %m {new_shape = array<i64: 4, 6>} : (tensor<1x4x6xf32>) -> tensor<4x6xf32>
  %s = "tosa.const"() {value = dense<0.5> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %z = tosa.mul %y, %s {shift = 0 : i8} : (tensor<4x6xf32>, tensor<1x1xf32>) -> tensor<4x6xf32>
  return %z : tensor<4x6xf32>
}
