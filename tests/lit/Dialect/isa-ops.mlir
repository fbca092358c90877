// RUN: tpu-opt %s | tpu-opt | FileCheck %s

// The ISA level reads and prints as the ISA's assembly (docs/isa.md).
// CHECK-LABEL: func.func @instructions
// CHECK-NEXT: %[[W:.*]] = tpu.dram_constant 0x0 dense<1.000000e+00> : tensor<1x4xf32>
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x40 dram_stride=64 space=sp sram_addr=0 sram_stride=64 rows=8 cols=64 dtype=f32
// CHECK-NEXT: %[[T:.*]] = tpu.signal load -> compute
// CHECK-NEXT: tpu.await %[[T]]
// CHECK-NEXT: tpu.depend store -> load
// CHECK-NEXT: tpu.inst mxu.mm src_addr=0 src_stride=64 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
// CHECK-NEXT: tpu.inst sync.push from=compute to=store
// CHECK-NEXT: %{{.*}} = tpu.signal compute -> load weights
// CHECK-NEXT: tpu.inst sync.push from=compute to=load weights=1
// CHECK-NEXT: %[[Y:.*]] = tpu.stored 0x7dc0 : tensor<8x10xf32>
// CHECK-NEXT: tpu.inst halt
func.func @instructions() -> (tensor<1x4xf32>, tensor<8x10xf32>) {
  %w = tpu.dram_constant 0x0 dense<1.0> : tensor<1x4xf32>
  tpu.inst dma.ld dram_addr=0x40 dram_stride=64 space=sp sram_addr=0 sram_stride=64 rows=8 cols=64 dtype=f32
  %t = tpu.signal load -> compute
  tpu.await %t
  tpu.depend store -> load
  tpu.inst mxu.mm src_addr=0 src_stride=64 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
  tpu.inst sync.push from=compute to=store
  %panel = tpu.signal compute -> load weights
  tpu.inst sync.push from=compute to=load weights=1
  %y = tpu.stored 0x7dc0 : tensor<8x10xf32>
  tpu.inst halt
  return %w, %y : tensor<1x4xf32>, tensor<8x10xf32>
}
