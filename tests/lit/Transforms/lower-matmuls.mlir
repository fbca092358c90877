// RUN: tpu-opt %s --tpu-lower-matmuls | FileCheck %s
// RUN: tpu-opt %s --tpu-lower-matmuls --tpu-lower-matmuls | FileCheck %s

// Matmuls, planned by hand for the tpu-8x8 target (the tiling as
// tpu-plan-tiles writes it, the DRAM places as tpu-plan-memory does), to the
// matrix unit's instructions. Running the pass again changes nothing.
#target = #tpu.target<name = "tpu-8x8", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>
module attributes {tpu.target = #target} {

// A matmul with a fused bias, as its tiling says: K = 16 in two steps of 8
// over one activation block, the weight panel double-buffered; each fill is
// announced by a token (tpu.signal) the array awaits, and each buffer is
// released by one its next fill would await (the block right after the
// array's last read of it). The bias row, the epilogue's one operand (the
// plan's `operands`), comes into its buffer in the scratchpad with the
// tile's last step, before the array runs, and is added in the
// accumulators before the one store. The panel is released as soon as
// its weight tiles are in the array (a `weights` token, which does not
// wait for the products); the block after the array's last read of it.
// The 16 x 8 panel and the 8 x 16
// block are contiguous in DRAM (all of their matrix's columns), as on
// chip: each moves as one DMA row of 128, one request.
// CHECK-LABEL: func.func @dense
// CHECK: tpu.inst dma.ld dram_addr=0x200 dram_stride=128 space=sp sram_addr=4096 sram_stride=128 rows=1 cols=128 dtype=f32
// CHECK-NEXT: %[[PANEL:.*]] = tpu.signal load -> compute
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0 dram_stride=128 space=sp sram_addr=0 sram_stride=128 rows=1 cols=128 dtype=f32
// CHECK-NEXT: %[[BLOCK:.*]] = tpu.signal load -> compute
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x400 dram_stride=8 space=sp sram_addr=12288 sram_stride=8 rows=1 cols=8 dtype=f32
// CHECK-NEXT: %[[BIAS:.*]] = tpu.signal load -> compute
// CHECK-NEXT: tpu.await %[[PANEL]]
// CHECK-NEXT: tpu.inst mxu.ldw src_addr=4096 src_stride=8 rows=8 cols=8
// CHECK-NEXT: tpu.await %[[BLOCK]]
// CHECK-NEXT: tpu.inst mxu.mm src_addr=0 src_stride=16 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
// CHECK-NEXT: tpu.inst mxu.ldw src_addr=4160 src_stride=8 rows=8 cols=8
// CHECK-NEXT: tpu.inst mxu.mm src_addr=8 src_stride=16 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=1 flip=1
// CHECK-NEXT: tpu.signal compute -> load{{$}}
// CHECK-NEXT: tpu.signal compute -> load weights
// CHECK-NEXT: tpu.await %[[BIAS]]
// CHECK-NEXT: tpu.inst v.add dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=8 cols=8 src2_space=sp src2_addr=12288 broadcast=row
// CHECK: %[[TILE:.*]] = tpu.signal compute -> store
// CHECK-NEXT: tpu.await %[[TILE]]
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x440 dram_stride=64 space=acc sram_addr=0 sram_stride=64 rows=1 cols=64 dtype=f32
// CHECK-NEXT: tpu.signal store -> compute
// CHECK-NEXT: tpu.stored 0x440 from %arg0, %arg1, %arg2
// CHECK-NOT: tpu.fused
  func.func @dense(%x: tensor<8x16xf32> {tpu.dram_address = 0 : i64}, %w: tensor<16x8xf32> {tpu.dram_address = 512 : i64}, %b: tensor<1x8xf32> {tpu.dram_address = 1024 : i64}) -> tensor<8x8xf32> {
    %y = tpu.fused attributes {tpu.dram_address = 1088 : i64} -> tensor<8x8xf32> {
      %m = tpu.matmul %x, %w {tpu.tiling = #tpu.matmul_tiling<tile_m = 8, tile_n = 8, tile_k = 8, k_block = 16, activations = [0, 128], weights = [4096, 8192], operands = [12288], accumulators = [0, 2048]>} : tensor<8x16xf32>, tensor<16x8xf32> -> tensor<8x8xf32>
      %s = tpu.binary add %m, %b : tensor<8x8xf32>, tensor<1x8xf32> -> tensor<8x8xf32>
      tpu.yield %s : tensor<8x8xf32>
    }
    return %y : tensor<8x8xf32>
  }
// Two epilogue operands, a bias row and a residual tile, over two K steps
// (a weight panel each). Each has its own buffer (two different addresses
// in `operands`): the residual, a whole tile, loads with the tile's first
// step, the bias row with its last, both before the array gets to them.
// CHECK-LABEL: func.func @operands_ahead
// CHECK: tpu.inst dma.ld dram_addr=0x200 {{.*}} sram_addr=4096
// CHECK-NEXT: tpu.signal load -> compute
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0 {{.*}} sram_addr=0
// CHECK-NEXT: tpu.signal load -> compute
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x500 dram_stride=64 space=sp sram_addr=12296 sram_stride=64 rows=1 cols=64 dtype=f32
// CHECK-NEXT: %[[RESIDUAL:.*]] = tpu.signal load -> compute
// CHECK: tpu.inst mxu.mm src_addr=0 {{.*}} accumulate=0
// CHECK: tpu.inst dma.ld dram_addr=0x400 dram_stride=8 space=sp sram_addr=12288 sram_stride=8 rows=1 cols=8 dtype=f32
// CHECK-NEXT: %[[BIAS:.*]] = tpu.signal load -> compute
// CHECK: tpu.inst mxu.mm src_addr=128 {{.*}} accumulate=1
// CHECK-NEXT: tpu.signal compute -> load
// CHECK-NEXT: tpu.signal compute -> load
// CHECK-NEXT: tpu.await %[[BIAS]]
// CHECK-NEXT: tpu.inst v.add {{.*}} src2_space=sp src2_addr=12288 broadcast=row
// CHECK-NEXT: tpu.signal compute -> load
// CHECK-NEXT: tpu.await %[[RESIDUAL]]
// CHECK-NEXT: tpu.inst v.add {{.*}} src2_space=sp src2_addr=12296 broadcast=none
  func.func @operands_ahead(%x: tensor<8x16xf32> {tpu.dram_address = 0 : i64}, %w: tensor<16x8xf32> {tpu.dram_address = 512 : i64}, %b: tensor<1x8xf32> {tpu.dram_address = 1024 : i64}, %r: tensor<8x8xf32> {tpu.dram_address = 1280 : i64}) -> tensor<8x8xf32> {
    %y = tpu.fused attributes {tpu.dram_address = 1536 : i64} -> tensor<8x8xf32> {
      %m = tpu.matmul %x, %w {tpu.tiling = #tpu.matmul_tiling<tile_m = 8, tile_n = 8, tile_k = 8, k_block = 8, activations = [0, 128], weights = [4096, 8192], operands = [12288, 12296], accumulators = [0, 2048]>} : tensor<8x16xf32>, tensor<16x8xf32> -> tensor<8x8xf32>
      %s = tpu.binary add %m, %b : tensor<8x8xf32>, tensor<1x8xf32> -> tensor<8x8xf32>
      %t = tpu.binary add %s, %r : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
      tpu.yield %t : tensor<8x8xf32>
    }
    return %y : tensor<8x8xf32>
  }
// The same with one buffer the two share (equal addresses, what a tiling
// short of scratchpad plans): each loads in the epilogue just before its
// op, the second after the first op has released the buffer.
// CHECK-LABEL: func.func @operands_shared
// CHECK: tpu.inst mxu.mm src_addr=128 {{.*}} accumulate=1
// CHECK-NEXT: tpu.signal compute -> load
// CHECK-NEXT: tpu.signal compute -> load
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x400 dram_stride=8 space=sp sram_addr=12288 sram_stride=8 rows=1 cols=8 dtype=f32
// CHECK-NEXT: %[[BIAS:.*]] = tpu.signal load -> compute
// CHECK-NEXT: tpu.await %[[BIAS]]
// CHECK-NEXT: tpu.inst v.add {{.*}} src2_space=sp src2_addr=12288 broadcast=row
// CHECK-NEXT: %[[FREE:.*]] = tpu.signal compute -> load
// CHECK-NEXT: tpu.await %[[FREE]]
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x500 dram_stride=64 space=sp sram_addr=12288 sram_stride=64 rows=1 cols=64 dtype=f32
// CHECK-NEXT: %[[RESIDUAL:.*]] = tpu.signal load -> compute
// CHECK-NEXT: tpu.await %[[RESIDUAL]]
// CHECK-NEXT: tpu.inst v.add {{.*}} src2_space=sp src2_addr=12288 broadcast=none
  func.func @operands_shared(%x: tensor<8x16xf32> {tpu.dram_address = 0 : i64}, %w: tensor<16x8xf32> {tpu.dram_address = 512 : i64}, %b: tensor<1x8xf32> {tpu.dram_address = 1024 : i64}, %r: tensor<8x8xf32> {tpu.dram_address = 1280 : i64}) -> tensor<8x8xf32> {
    %y = tpu.fused attributes {tpu.dram_address = 1536 : i64} -> tensor<8x8xf32> {
      %m = tpu.matmul %x, %w {tpu.tiling = #tpu.matmul_tiling<tile_m = 8, tile_n = 8, tile_k = 8, k_block = 8, activations = [0, 128], weights = [4096, 8192], operands = [12288, 12288], accumulators = [0, 2048]>} : tensor<8x16xf32>, tensor<16x8xf32> -> tensor<8x8xf32>
      %s = tpu.binary add %m, %b : tensor<8x8xf32>, tensor<1x8xf32> -> tensor<8x8xf32>
      %t = tpu.binary add %s, %r : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
      tpu.yield %t : tensor<8x8xf32>
    }
    return %y : tensor<8x8xf32>
  }
// An output tile of 32 columns (four 8-wide chunks of the array, each its own
// weight tile) over K = 64 (eight steps): 64 compute instructions, more than
// the compute queue's 32 entries, so the next tile's weight panel is issued
// before this tile's compute (software pipelining): the in-order front end
// would otherwise hand it to the load queue only as the array finishes.
// Each step's panel comes before its block: the array loads the first
// weight tile while the block arrives. A panel is 32 of the 64 weight
// columns, its rows 64 apart in DRAM: a DMA row each.
// CHECK-LABEL: func.func @wide_tiles
// CHECK: tpu.inst dma.ld dram_addr=0x800 dram_stride=64 space=sp sram_addr=4096 sram_stride=32 rows=64 cols=32 dtype=f32
// CHECK: tpu.inst dma.ld dram_addr=0x0 dram_stride=512 space=sp sram_addr=0 sram_stride=512 rows=1 cols=512 dtype=f32
// CHECK: tpu.inst dma.ld dram_addr=0x880 dram_stride=64 space=sp sram_addr=8192 sram_stride=32 rows=64 cols=32 dtype=f32
// CHECK-NOT: dma.ld
// CHECK: tpu.inst mxu.ldw src_addr=4096 src_stride=32 rows=8 cols=8
// CHECK-NEXT: tpu.await
// CHECK-NEXT: tpu.inst mxu.mm src_addr=0 src_stride=64 dst_addr=0 dst_stride=32 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
// CHECK-NEXT: tpu.inst mxu.ldw src_addr=4104 src_stride=32 rows=8 cols=8
// CHECK-NEXT: tpu.inst mxu.mm src_addr=0 src_stride=64 dst_addr=8 dst_stride=32 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
// CHECK-COUNT-60: tpu.inst mxu.
// CHECK-NOT: tpu.inst mxu.
// CHECK: tpu.inst dma.st dram_addr=0x4800 dram_stride=64 space=acc sram_addr=0 sram_stride=32 rows=8 cols=32 dtype=f32
  func.func @wide_tiles(%x: tensor<8x64xf32> {tpu.dram_address = 0 : i64}, %w: tensor<64x64xf32> {tpu.dram_address = 2048 : i64}) -> tensor<8x64xf32> {
    %m = tpu.matmul %x, %w {tpu.dram_address = 18432 : i64, tpu.tiling = #tpu.matmul_tiling<tile_m = 8, tile_n = 32, tile_k = 8, k_block = 64, activations = [0, 0], weights = [4096, 8192], operands = [], accumulators = [0, 2048]>} : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32>
    return %m : tensor<8x64xf32>
  }
// A row band of all of K = 128 in two pieces of 64 columns, a bank each
// (a band of more than one piece lists each piece's buffer): each piece
// its own transfer and token, the array waiting for the second only at its
// first K step. The band's last tile releases each piece after its last
// read, and the next band's piece goes into that bank right away, before
// the tile's other piece is done. Both row tiles multiply with the one
// 128 x 16 panel: it loads once, and the last tile releases it.
// CHECK-LABEL: func.func @band_pieces
// CHECK: tpu.inst dma.ld dram_addr=0x10000 dram_stride=2048 space=sp sram_addr=8192 sram_stride=2048 rows=1 cols=2048 dtype=f32
// CHECK-NEXT: %[[PANEL:.*]] = tpu.signal load -> compute
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0 dram_stride=128 space=sp sram_addr=0 sram_stride=64 rows=64 cols=64 dtype=f32
// CHECK-NEXT: %[[PIECE0:.*]] = tpu.signal load -> compute
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x100 dram_stride=128 space=sp sram_addr=4096 sram_stride=64 rows=64 cols=64 dtype=f32
// CHECK-NEXT: %[[PIECE1:.*]] = tpu.signal load -> compute
// CHECK: tpu.await %[[PANEL]]
// CHECK-NEXT: tpu.inst mxu.ldw src_addr=8192 src_stride=16 rows=8 cols=8
// CHECK-NEXT: tpu.await %[[PIECE0]]
// CHECK-NEXT: tpu.inst mxu.mm src_addr=0 src_stride=64 dst_addr=0 dst_stride=16 rows=64 cols=8 dtype=bf16 accumulate=0 flip=1
// CHECK-COUNT-30: tpu.inst mxu.
// CHECK-NEXT: %[[FREE0:.*]] = tpu.signal compute -> load
// CHECK-NEXT: tpu.await %[[FREE0]]
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x8000 dram_stride=128 space=sp sram_addr=0 sram_stride=64 rows=64 cols=64 dtype=f32
// CHECK-NEXT: tpu.signal load -> compute
// CHECK-NEXT: tpu.inst mxu.ldw src_addr=9216 src_stride=16 rows=8 cols=8
// CHECK-NEXT: tpu.await %[[PIECE1]]
// CHECK-NEXT: tpu.inst mxu.mm src_addr=4096 src_stride=64 dst_addr=0 dst_stride=16 rows=64 cols=8 dtype=bf16 accumulate=1 flip=1
// CHECK-NOT: dram_addr=0x10000
// CHECK: tpu.inst dma.ld dram_addr=0x8100
// CHECK-NOT: dram_addr=0x10000
// CHECK: tpu.await %[[PANEL]]
// CHECK-NOT: dram_addr=0x10000
// CHECK: tpu.signal compute -> load weights
// CHECK-NOT: dram_addr=0x10000
// CHECK: tpu.stored
  func.func @band_pieces(%x: tensor<128x128xf32> {tpu.dram_address = 0 : i64}, %w: tensor<128x16xf32> {tpu.dram_address = 65536 : i64}) -> tensor<128x16xf32> {
    %m = tpu.matmul %x, %w {tpu.dram_address = 73728 : i64, tpu.tiling = #tpu.matmul_tiling<tile_m = 64, tile_n = 16, tile_k = 8, k_block = 128, activations = [0, 4096], weights = [8192, 12288], operands = [], accumulators = [0, 2048]>} : tensor<128x128xf32>, tensor<128x16xf32> -> tensor<128x16xf32>
    return %m : tensor<128x16xf32>
  }
// Weight panels shorter than the block (panel_rows = 32 of K = 128): the
// band's two pieces of 64 columns stay on chip while each tile's four
// panels stream through the two weight buffers, each panel a transfer of
// 32 rows released after its step. The second panel's K steps read the
// first piece from column 32 on without waiting for it again; the third's
// wait for the second piece. The first piece is released after the second
// panel's last read of it, and the next band's first piece goes there.
// CHECK-LABEL: func.func @short_panels
// CHECK: tpu.inst dma.ld dram_addr=0x10000 dram_stride=512 space=sp sram_addr=8192 sram_stride=512 rows=1 cols=512 dtype=f32
// CHECK-NEXT: %[[PANEL0:.*]] = tpu.signal load -> compute
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0 dram_stride=128 space=sp sram_addr=0 sram_stride=64 rows=64 cols=64 dtype=f32
// CHECK-NEXT: %[[PIECE0:.*]] = tpu.signal load -> compute
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x100 dram_stride=128 space=sp sram_addr=4096 sram_stride=64 rows=64 cols=64 dtype=f32
// CHECK-NEXT: %[[PIECE1:.*]] = tpu.signal load -> compute
// CHECK-NEXT: tpu.await %[[PANEL0]]
// CHECK-NEXT: tpu.inst mxu.ldw src_addr=8192 src_stride=16 rows=8 cols=8
// CHECK-NEXT: tpu.await %[[PIECE0]]
// CHECK-NEXT: tpu.inst mxu.mm src_addr=0 src_stride=64 dst_addr=0 dst_stride=16 rows=64 cols=8 dtype=bf16 accumulate=0 flip=1
// CHECK-COUNT-14: tpu.inst mxu.
// CHECK-NEXT: %[[FREEPANEL0:.*]] = tpu.signal compute -> load
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x10800 dram_stride=512 space=sp sram_addr=12288 sram_stride=512 rows=1 cols=512 dtype=f32
// CHECK-NEXT: %[[PANEL1:.*]] = tpu.signal load -> compute
// CHECK-NEXT: tpu.await %[[PANEL1]]
// CHECK-NEXT: tpu.inst mxu.ldw src_addr=12288 src_stride=16 rows=8 cols=8
// CHECK-NEXT: tpu.inst mxu.mm src_addr=32 src_stride=64 dst_addr=0 dst_stride=16 rows=64 cols=8 dtype=bf16 accumulate=1 flip=1
// CHECK-COUNT-14: tpu.inst mxu.
// CHECK-NEXT: %[[FREEPIECE0:.*]] = tpu.signal compute -> load
// CHECK-NEXT: tpu.signal compute -> load
// CHECK-NEXT: tpu.await %[[FREEPANEL0]]
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x11000 dram_stride=512 space=sp sram_addr=8192 sram_stride=512 rows=1 cols=512 dtype=f32
// CHECK-NEXT: %[[PANEL2:.*]] = tpu.signal load -> compute
// CHECK-NEXT: tpu.await %[[PANEL2]]
// CHECK-NEXT: tpu.inst mxu.ldw src_addr=8192 src_stride=16 rows=8 cols=8
// CHECK-NEXT: tpu.await %[[PIECE1]]
// CHECK-NEXT: tpu.inst mxu.mm src_addr=4096 src_stride=64 dst_addr=0 dst_stride=16 rows=64 cols=8 dtype=bf16 accumulate=1 flip=1
// CHECK: tpu.await %[[FREEPIECE0]]
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x8000 dram_stride=128 space=sp sram_addr=0 sram_stride=64 rows=64 cols=64 dtype=f32
  func.func @short_panels(%x: tensor<128x128xf32> {tpu.dram_address = 0 : i64}, %w: tensor<128x16xf32> {tpu.dram_address = 65536 : i64}) -> tensor<128x16xf32> {
    %m = tpu.matmul %x, %w {tpu.dram_address = 73728 : i64, tpu.tiling = #tpu.matmul_tiling<tile_m = 64, tile_n = 16, tile_k = 8, k_block = 128, panel_rows = 32, activations = [0, 4096], weights = [8192, 12288], operands = [], accumulators = [0, 2048]>} : tensor<128x128xf32>, tensor<128x16xf32> -> tensor<128x16xf32>
    return %m : tensor<128x16xf32>
  }
// Two matmuls of one output tile each, the second reading the first's
// result: the first's tile goes to the first accumulator buffer, and the
// second's to the other one, which the first's store does not read, so
// that its products need not wait for that store to drain.
// CHECK-LABEL: func.func @clear_of_last_store
// CHECK: tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8
// CHECK: tpu.inst dma.st dram_addr=0x200 dram_stride=64 space=acc sram_addr=0
// CHECK: tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=2048 dst_stride=8 rows=8 cols=8
// CHECK: tpu.inst dma.st dram_addr=0x300 dram_stride=64 space=acc sram_addr=2048
  func.func @clear_of_last_store(%x: tensor<8x8xf32> {tpu.dram_address = 0 : i64}, %w: tensor<8x8xf32> {tpu.dram_address = 256 : i64}) -> tensor<8x8xf32> {
    %m = tpu.matmul %x, %w {tpu.dram_address = 512 : i64, tpu.tiling = #tpu.matmul_tiling<tile_m = 8, tile_n = 8, tile_k = 8, k_block = 8, activations = [0, 0], weights = [4096, 8192], operands = [], accumulators = [0, 2048]>} : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
    %n = tpu.matmul %m, %w {tpu.dram_address = 768 : i64, tpu.tiling = #tpu.matmul_tiling<tile_m = 8, tile_n = 8, tile_k = 8, k_block = 8, activations = [0, 0], weights = [4096, 8192], operands = [], accumulators = [0, 2048]>} : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
    return %n : tensor<8x8xf32>
  }
}
