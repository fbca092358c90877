// RUN: tpu-opt %s --tpu-plan-tiles | FileCheck %s

// The tpu-8x8 preset, as tpuc --config tpu-8x8 sets it.
#tpu_8x8 = #tpu.target<name = "tpu-8x8", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>
module attributes {tpu.target = #tpu_8x8} {

// Tiling pinned for the 8x8 preset: a 16384-word scratchpad in 4 banks of
// 4096 words, a 4096-word accumulator in 2 banks of 2048. Among the tilings
// that fit, the cost model (docs/compiler.md) picks the fastest estimate; a
// role whose two addresses are equal has one buffer.

// The MLP's first layer: all 8 rows in one tile, all of K = 64 in one
// activation block of 512 words that nothing refills (one buffer), weight
// panels of 64 x 64 words. Every buffer starts a bank of its own: block 0,
// panels 4096 and 8192. Panel rows of 8 columns (32 bytes, 4 bus cycles)
// would wait on DRAM latency, 16 requests in flight per 100 + 4 cycles;
// 64-column rows keep the bus busy.
// CHECK-LABEL: func.func @dense
// CHECK: tpu.tiling = #tpu.matmul_tiling<tile_m = 8, tile_n = 64, tile_k = 8, k_block = 64, activations = [0, 0], weights = [4096, 8192], operands = [], accumulators = [0, 2048]>
func.func @dense(%x: tensor<8x64xf32>, %w: tensor<64x100xf32>) -> tensor<8x100xf32> {
  %m = tpu.matmul %x, %w : tensor<8x64xf32>, tensor<64x100xf32> -> tensor<8x100xf32>
  return %m : tensor<8x100xf32>
}

// 700 rows: one tile of all N = 24 (three 8-wide chunks, so each block is
// loaded once), as many rows as two 24-column accumulator tiles allow
// (4096 / 24 = 170), halved to 85 so that each 85 x 40 block has a bank of
// its own: packed buffers would share banks and stall.
// CHECK-LABEL: func.func @tall
// CHECK: tpu.tiling = #tpu.matmul_tiling<tile_m = 85, tile_n = 24, tile_k = 8, k_block = 40, activations = [0, 4096], weights = [8192, 12288], operands = [], accumulators = [0, 2048]>
func.func @tall(%x: tensor<700x40xf32>, %w: tensor<40x24xf32>) -> tensor<700x24xf32> {
  %m = tpu.matmul %x, %w : tensor<700x40xf32>, tensor<40x24xf32> -> tensor<700x24xf32>
  return %m : tensor<700x24xf32>
}

// K = 8192 exceeds the 4095 columns a DMA moves: blocks of a multiple of 8
// (4088 halved) that gives every buffer a bank of its own with all 16 rows:
// 16 x 248 = 3968 words. Its last block (8192 = 33 x 248 + 8) has 8-word
// rows that wait on DRAM latency, but every block and panel is a transfer
// that pays the latency once: 34 of each beat the 69 of 120-column blocks
// (125,533 cycles in the simulator against 131,707).
// CHECK-LABEL: func.func @long_k
// CHECK: tpu.tiling = #tpu.matmul_tiling<tile_m = 16, tile_n = 8, tile_k = 8, k_block = 248, activations = [0, 4096], weights = [8192, 12288], operands = [], accumulators = [0, 2048]>
func.func @long_k(%x: tensor<16x8192xf32>, %w: tensor<8192x8xf32>) -> tensor<16x8xf32> {
  %m = tpu.matmul %x, %w : tensor<16x8192xf32>, tensor<8192x8xf32> -> tensor<16x8xf32>
  return %m : tensor<16x8xf32>
}

// A fused residual add loads a 64 x 8 tile per output tile into one operand
// buffer of 512 words in the fourth bank (the epilogue loads it just before
// its one use).
// CHECK-LABEL: func.func @residual
// CHECK: tpu.tiling = #tpu.matmul_tiling<tile_m = 64, tile_n = 8, tile_k = 8, k_block = 32, activations = [0, 0], weights = [4096, 8192], operands = [12288], accumulators = [0, 2048]>
func.func @residual(%x: tensor<64x32xf32>, %w: tensor<32x8xf32>, %r: tensor<64x8xf32>) -> tensor<64x8xf32> {
  %s = tpu.fused -> tensor<64x8xf32> {
    %m = tpu.matmul %x, %w : tensor<64x32xf32>, tensor<32x8xf32> -> tensor<64x8xf32>
    %sum = tpu.binary add %m, %r : tensor<64x8xf32>, tensor<64x8xf32> -> tensor<64x8xf32>
    tpu.yield %sum : tensor<64x8xf32>
  }
  return %s : tensor<64x8xf32>
}

// A batched matmul is planned per batch.
// CHECK-LABEL: func.func @batched
// CHECK: tpu.tiling = #tpu.matmul_tiling<tile_m = 32, tile_n = 16, tile_k = 8, k_block = 16,
func.func @batched(%a: tensor<4x32x16xf32>, %b: tensor<4x16x32xf32>) -> tensor<4x32x32xf32> {
  %m = tpu.batch_matmul %a, %b : tensor<4x32x16xf32>, tensor<4x16x32xf32> -> tensor<4x32x32xf32>
  return %m : tensor<4x32x32xf32>
}

// An epilogue with a one-word bias row (N = 1) and a clamp: each operand
// has its part of the operand buffer, the bias row's 8 words (room for
// the row's copies up to the 8 lanes, rowCopies), then the clamp's two
// bounds, so that both load while the array works.
// CHECK-LABEL: func.func @one_column
// CHECK: activations = [0, 0], weights = [4096, 8192], operands = [12288, 12296]
func.func @one_column(%x: tensor<8x4xf32>, %w: tensor<4x1xf32>, %b: tensor<1x1xf32>, %bounds: tensor<1x2xf32>) -> tensor<8x1xf32> {
  %c = tpu.fused -> tensor<8x1xf32> {
    %m = tpu.matmul %x, %w : tensor<8x4xf32>, tensor<4x1xf32> -> tensor<8x1xf32>
    %s = tpu.binary add %m, %b : tensor<8x1xf32>, tensor<1x1xf32> -> tensor<8x1xf32>
    %clamped = tpu.clamp %s, %bounds : tensor<8x1xf32>, tensor<1x2xf32>
    tpu.yield %clamped : tensor<8x1xf32>
  }
  return %c : tensor<8x1xf32>
}

// One vector op: tiles of as many whole rows as fit with the operand's part
// (2 words of clamp bounds here), the op in place.
// CHECK-LABEL: func.func @vector_ops
// CHECK: tpu.clamp {{.*}} {tpu.tiling = #tpu.vector_tiling<rows = 700, cols = 20, input = 0, operand = 14000, output = 0>}
// CHECK: tpu.binary add {{.*}} {tpu.tiling = #tpu.vector_tiling<rows = 409, cols = 20, input = 0, operand = 8180, output = 0>}
// CHECK: tpu.row_reduce max {{.*}} {tpu.tiling = #tpu.vector_tiling<rows = 700, cols = 20, input = 0, output = 14000>}
func.func @vector_ops(%x: tensor<700x20xf32>, %bounds: tensor<1x2xf32>) -> (tensor<700x20xf32>, tensor<700x20xf32>, tensor<700x1xf32>) {
  %c = tpu.clamp %x, %bounds : tensor<700x20xf32>, tensor<1x2xf32>
  %s = tpu.binary add %x, %c : tensor<700x20xf32>, tensor<700x20xf32> -> tensor<700x20xf32>
  %m = tpu.row_reduce max %x : tensor<700x20xf32> -> tensor<700x1xf32>
  return %c, %s, %m : tensor<700x20xf32>, tensor<700x20xf32>, tensor<700x1xf32>
}

// A row group (x - rowmax(x), exp): the row's 40 words of x, its column,
// then the difference; exp's result takes x's words, free by then. 41 words
// per row, so all 8 rows in one tile: x at 0, the column at 8 * 40.
// CHECK-LABEL: func.func @row_group
// CHECK: tpu.fused attributes {tpu.tiling = #tpu.row_group_tiling<rows = 8, inputs = [0, 320], results = [328, 0]>}
func.func @row_group(%x: tensor<8x40xf32>, %max: tensor<8x1xf32>) -> tensor<8x40xf32> {
  %e = tpu.fused -> tensor<8x40xf32> {
    %d = tpu.binary sub %x, %max : tensor<8x40xf32>, tensor<8x1xf32> -> tensor<8x40xf32>
    %exp = tpu.unary exp %d : tensor<8x40xf32>
    tpu.yield %exp : tensor<8x40xf32>
  }
  return %e : tensor<8x40xf32>
}

// Copies stage in the scratchpad below the fill row that pads.
// CHECK-LABEL: func.func @copies
// CHECK: tpu.transpose {{.*}}tpu.tiling = #tpu.copy_tiling<staging = 16384>
// CHECK: tpu.pad {{.*}}tpu.tiling = #tpu.copy_tiling<staging = 16381, fill = 16381>
func.func @copies(%x: tensor<4x3xf32>, %fill: tensor<1x3xf32>) -> (tensor<3x4xf32>, tensor<5x3xf32>) {
  %t = tpu.transpose %x {perms = array<i64: 1, 0>} : tensor<4x3xf32> -> tensor<3x4xf32>
  %p = tpu.pad %x, %fill {low = array<i64: 1, 0>, high = array<i64: 0, 0>} : tensor<4x3xf32>, tensor<1x3xf32> -> tensor<5x3xf32>
  return %t, %p : tensor<3x4xf32>, tensor<5x3xf32>
}
}
