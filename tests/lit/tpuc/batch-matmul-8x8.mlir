// A batched matmul is one matmul per batch on that batch's rows: batch b of
// a 3x4x8 lhs starts 4*8 words (128 bytes) after batch b-1, of the 3x8x5
// rhs 8*5 words (160 bytes) after, of the 3x4x5 result 4*5 words (80 bytes);
// each batch's block is contiguous, so it moves as one DMA row.
// Each batch's weight panel is loaded before its activation block (the
// second's, a weight in banks nothing before touches, ahead of the first
// batch's store: tpu-prefetch-constants).
// RUN: tpuc %s --emit=asm --config tpu-8x8 | FileCheck %s
// CHECK-COUNT-3: mxu.mm {{.*}} rows=4 cols=8 dtype=bf16 accumulate=0 flip=1
// CHECK-NOT: mxu.mm
// CHECK: halt
// RUN: tpuc %s --emit=asm --config tpu-8x8 | FileCheck %s --check-prefix=ADDR
// ADDR: dma.ld dram_addr=0x180 dram_stride=40 {{.*}} rows=1 cols=40
// ADDR: dma.ld dram_addr=0x0 dram_stride=32 {{.*}} rows=1 cols=32
// ADDR: dma.ld dram_addr=0x220 dram_stride=40
// ADDR: dma.st dram_addr=0x380 dram_stride=20 {{.*}} rows=1 cols=20
// ADDR: dma.ld dram_addr=0x80 dram_stride=32
// ADDR: dma.st dram_addr=0x3d0 dram_stride=20
// ADDR: dma.ld dram_addr=0x2c0 dram_stride=40
// ADDR: dma.ld dram_addr=0x100 dram_stride=32
// ADDR: dma.st dram_addr=0x420 dram_stride=20
func.func @main(%a: tensor<3x4x8xf32>, %w: tensor<3x8x5xf32>) -> tensor<3x4x5xf32> {
  %m = tosa.matmul %a, %w : (tensor<3x4x8xf32>, tensor<3x8x5xf32>) -> tensor<3x4x5xf32>
  return %m : tensor<3x4x5xf32>
}
