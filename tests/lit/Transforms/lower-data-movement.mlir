// RUN: tpu-opt %s --tpu-lower-data-movement | FileCheck %s

// Data movement, planned by hand for the tpu-8x8 target, to DMA transfers
// through the scratchpad: the copies staged below the fill row, where the
// plan says.
#target = #tpu.target<name = "tpu-8x8", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>
module attributes {tpu.target = #target} {
// A transpose: the input's rows (contiguous along the result's columns) load
// transposed, so the staging holds the result's rows, which store as they
// are; a batch's loads, one token, its stores.
// CHECK-LABEL: func.func @transpose
// CHECK-NEXT: tpu.depend compute -> load
// CHECK-NEXT: tpu.depend store -> load
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0 dram_stride=2 space=sp sram_addr=0 sram_stride=4 rows=4 cols=2 dtype=f32 transpose=1
// CHECK-NEXT: tpu.depend load -> store
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x40 dram_stride=4 space=sp sram_addr=0 sram_stride=4 rows=2 cols=4 dtype=f32{{$}}
// CHECK-NEXT: tpu.stored 0x40 from %arg0
  func.func @transpose(%x: tensor<4x2xf32> {tpu.dram_address = 0 : i64}) -> tensor<2x4xf32> {
    %t = tpu.transpose %x {perms = array<i64: 1, 0>, tpu.dram_address = 64 : i64, tpu.tiling = #tpu.copy_tiling<staging = 16384>} : tensor<4x2xf32> -> tensor<2x4xf32>
    return %t : tensor<2x4xf32>
  }
// A weight [O, K] = [40, 24] to [K, O] through a 256-word staging: 16 x 16
// blocks (square, so runs are 16 long on both DRAM sides), one per batch; the
// last column of blocks is 8 wide (24 = 16 + 8).
// CHECK-LABEL: func.func @weight_transpose
// CHECK-NEXT: tpu.depend compute -> load
// CHECK-NEXT: tpu.depend store -> load
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0 dram_stride=24 space=sp sram_addr=0 sram_stride=16 rows=16 cols=16 dtype=f32 transpose=1
// CHECK-NEXT: tpu.depend load -> store
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x1000 dram_stride=40 space=sp sram_addr=0 sram_stride=16 rows=16 cols=16 dtype=f32{{$}}
// CHECK-NEXT: tpu.depend compute -> load
// CHECK-NEXT: tpu.depend store -> load
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x40 dram_stride=24 space=sp sram_addr=0 sram_stride=16 rows=16 cols=8 dtype=f32 transpose=1
// CHECK-NEXT: tpu.depend load -> store
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x1a00 dram_stride=40 space=sp sram_addr=0 sram_stride=16 rows=8 cols=16 dtype=f32{{$}}
// CHECK-NEXT: tpu.depend compute -> load
// CHECK-NEXT: tpu.depend store -> load
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x600 dram_stride=24 space=sp sram_addr=0 sram_stride=16 rows=16 cols=16 dtype=f32 transpose=1
// CHECK-NEXT: tpu.depend load -> store
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x1040 dram_stride=40 space=sp sram_addr=0 sram_stride=16 rows=16 cols=16 dtype=f32{{$}}
// CHECK-COUNT-3: transpose=1
// CHECK-NOT: transpose=1
// CHECK: tpu.stored 0x1000 from %arg0
  func.func @weight_transpose(%w: tensor<40x24xf32> {tpu.dram_address = 0 : i64}) -> tensor<24x40xf32> {
    %t = tpu.transpose %w {perms = array<i64: 1, 0>, tpu.dram_address = 4096 : i64, tpu.tiling = #tpu.copy_tiling<staging = 256>} : tensor<40x24xf32> -> tensor<24x40xf32>
    return %t : tensor<24x40xf32>
  }
// Attention heads back together, [4, 32, 16] -> [32, 4, 16]: the row axis
// is the longest one (32 positions, strided on both sides), so each head
// moves as one block of 32 rows, not each position as 4 rows.
// CHECK-LABEL: func.func @merge_heads
// CHECK-NEXT: tpu.depend compute -> load
// CHECK-NEXT: tpu.depend store -> load
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0 dram_stride=16 space=sp sram_addr=0 sram_stride=16 rows=32 cols=16 dtype=f32
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x800 dram_stride=16 space=sp sram_addr=512 sram_stride=16 rows=32 cols=16 dtype=f32
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x1000 dram_stride=16 space=sp sram_addr=1024 sram_stride=16 rows=32 cols=16 dtype=f32
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x1800 dram_stride=16 space=sp sram_addr=1536 sram_stride=16 rows=32 cols=16 dtype=f32
// CHECK-NEXT: tpu.depend load -> store
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x2000 dram_stride=64 space=sp sram_addr=0 sram_stride=16 rows=32 cols=16 dtype=f32
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x2040 dram_stride=64 space=sp sram_addr=512 sram_stride=16 rows=32 cols=16 dtype=f32
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x2080 dram_stride=64 space=sp sram_addr=1024 sram_stride=16 rows=32 cols=16 dtype=f32
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x20c0 dram_stride=64 space=sp sram_addr=1536 sram_stride=16 rows=32 cols=16 dtype=f32
// CHECK-NEXT: tpu.stored 0x2000 from %arg0
  func.func @merge_heads(%x: tensor<1x4x32x16xf32> {tpu.dram_address = 0 : i64}) -> tensor<1x32x4x16xf32> {
    %t = tpu.transpose %x {perms = array<i64: 0, 2, 1, 3>, tpu.dram_address = 8192 : i64, tpu.tiling = #tpu.copy_tiling<staging = 16384>} : tensor<1x4x32x16xf32> -> tensor<1x32x4x16xf32>
    return %t : tensor<1x32x4x16xf32>
  }
// A pad: the fill row comes into the top of the scratchpad, then the input
// into its box and the fill row (sram_stride=0) into the border around it,
// each element once. Along axis 0 the border is rows 0-1 (8 words: two fill
// rows of 3, one transfer, and 2 words) and row 4 (a fill row and 1 word);
// along axis 1 it is column 0 of rows 2-3 (one transfer of 1-word rows).
// CHECK-LABEL: func.func @pad
// CHECK: tpu.inst dma.ld dram_addr=0x0 dram_stride=3 space=sp sram_addr=16381 sram_stride=3 rows=1 cols=3 dtype=f32
// CHECK: tpu.inst dma.ld dram_addr=0x40 dram_stride=3 space=sp sram_addr=0 sram_stride=3 rows=2 cols=3 dtype=f32
// CHECK-NEXT: tpu.depend load -> store
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x98 dram_stride=2 space=sp sram_addr=16381 sram_stride=0 rows=1 cols=2 dtype=f32
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x80 dram_stride=3 space=sp sram_addr=16381 sram_stride=0 rows=2 cols=3 dtype=f32
// CHECK-NEXT: tpu.inst dma.st dram_addr=0xcc dram_stride=1 space=sp sram_addr=16381 sram_stride=0 rows=1 cols=1 dtype=f32
// CHECK-NEXT: tpu.inst dma.st dram_addr=0xc0 dram_stride=3 space=sp sram_addr=16381 sram_stride=0 rows=1 cols=3 dtype=f32
// CHECK-NEXT: tpu.inst dma.st dram_addr=0xa0 dram_stride=4 space=sp sram_addr=16381 sram_stride=0 rows=2 cols=1 dtype=f32
// CHECK-NEXT: tpu.inst dma.st dram_addr=0xa4 dram_stride=4 space=sp sram_addr=0 sram_stride=3 rows=2 cols=3 dtype=f32
// CHECK-NOT: dma.st
// CHECK: return
  func.func @pad(%x: tensor<2x3xf32> {tpu.dram_address = 64 : i64}) -> tensor<5x4xf32> {
    %fill = tpu.dram_constant 0x0 dense<1.5> : tensor<1x3xf32>
    %p = tpu.pad %x, %fill {low = array<i64: 2, 1>, high = array<i64: 1, 0>, tpu.dram_address = 128 : i64, tpu.tiling = #tpu.copy_tiling<staging = 16381, fill = 16381>} : tensor<2x3xf32>, tensor<1x3xf32> -> tensor<5x4xf32>
    return %p : tensor<5x4xf32>
  }
// im2col of a 1x2 window with one column of left padding on a 3x3 image:
// per tap, the output rows whose input is inside the image are one strided
// copy, the rest get the fill value (tap 0's first column of each row: one
// element per row, 6 words apart).
// CHECK-LABEL: func.func @im2col
// CHECK: tpu.inst dma.ld dram_addr=0x0 dram_stride=1 space=sp sram_addr=16383 sram_stride=1 rows=1 cols=1 dtype=f32
// CHECK-COUNT-3: tpu.inst dma.ld dram_addr={{.*}} rows=1 cols=2 dtype=f32
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x40 dram_stride=9 space=sp sram_addr=6 sram_stride=9 rows=1 cols=9 dtype=f32
// CHECK-NEXT: tpu.depend load -> store
// CHECK-COUNT-3: tpu.inst dma.st {{.*}} sram_stride=1 rows=2 cols=1 dtype=f32
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x80 dram_stride=6 space=sp sram_addr=16383 sram_stride=0 rows=3 cols=1 dtype=f32
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x84 dram_stride=2 space=sp sram_addr=6 sram_stride=1 rows=9 cols=1 dtype=f32
  func.func @im2col(%x: tensor<1x3x3x1xf32> {tpu.dram_address = 64 : i64}) -> tensor<9x2xf32> {
    %zeros = tpu.dram_constant 0x0 dense<0.0> : tensor<1x1xf32>
    %r = tpu.im2col %x, %zeros {dilation = array<i64: 1, 1>, kernel = array<i64: 1, 2>, pad = array<i64: 0, 0, 1, 0>, stride = array<i64: 1, 1>, tpu.dram_address = 128 : i64, tpu.tiling = #tpu.copy_tiling<staging = 16383, fill = 16383>} : tensor<1x3x3x1xf32>, tensor<1x1xf32> -> tensor<9x2xf32>
    return %r : tensor<9x2xf32>
  }
// A gather from two tables with one row of indices for both, staged in 12
// words: batches of 3 rows (3 words each, and an index word each). Per
// batch the int32 indices come into word 0, dma.gather puts the rows after
// them, and stores write the rows out.
// CHECK-LABEL: func.func @gather
// CHECK: tpu.inst dma.ld dram_addr=0x80 dram_stride=3 space=sp sram_addr=0 sram_stride=3 rows=1 cols=3 dtype=i32
// CHECK-NEXT: tpu.inst dma.gather dram_addr=0x0 sram_addr=3 src_addr=0 rows=3 cols=3 dtype=f32 bound=4
// CHECK-NEXT: tpu.depend load -> store
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x100 dram_stride=3 space=sp sram_addr=3 sram_stride=3 rows=3 cols=3 dtype=f32
// CHECK: tpu.inst dma.ld dram_addr=0x8c dram_stride=2 space=sp sram_addr=0 sram_stride=2 rows=1 cols=2 dtype=i32
// CHECK-NEXT: tpu.inst dma.gather dram_addr=0x0 sram_addr=2 src_addr=0 rows=2 cols=3 dtype=f32 bound=4
// CHECK-NEXT: tpu.depend load -> store
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x124 dram_stride=3 space=sp sram_addr=2 sram_stride=3 rows=2 cols=3 dtype=f32
// CHECK: tpu.inst dma.gather dram_addr=0x30 sram_addr=3 src_addr=0 rows=3 cols=3 dtype=f32 bound=4
// CHECK: tpu.inst dma.st dram_addr=0x13c dram_stride=3 space=sp sram_addr=3 sram_stride=3 rows=3 cols=3 dtype=f32
// CHECK: tpu.inst dma.gather dram_addr=0x30 sram_addr=2 src_addr=0 rows=2 cols=3 dtype=f32 bound=4
// CHECK: tpu.inst dma.st dram_addr=0x160 dram_stride=3 space=sp sram_addr=2 sram_stride=3 rows=2 cols=3 dtype=f32
// CHECK-NOT: tpu.inst
// CHECK: tpu.stored 0x100
  func.func @gather(%table: tensor<2x4x3xf32> {tpu.dram_address = 0 : i64}, %ids: tensor<1x5xi32> {tpu.dram_address = 128 : i64}) -> tensor<2x5x3xf32> {
    %g = tpu.gather %table, %ids {tpu.dram_address = 256 : i64, tpu.tiling = #tpu.copy_tiling<staging = 12>} : tensor<2x4x3xf32>, tensor<1x5xi32> -> tensor<2x5x3xf32>
    return %g : tensor<2x5x3xf32>
  }
}
