// RUN: tpu-opt %s --tpu-plan-tiles | FileCheck %s

// Row groups on two sets of buffers (docs/compiler.md, "Whether a row group
// pays"), pinned on a 1024-word scratchpad in 4 banks of 256 words: 8 lanes,
// vector latency P = 4, a transcendental 4 cycles a group of lanes, DRAM
// latency L = 100 at 8 B/cycle (a row of 16 words holds the bus b = 8
// cycles; 16 requests in flight keep it busy), so a transfer of n rows of
// 16 words takes 100 + 8n cycles and a transcendental on t rows 4 + 8t.
#t = #tpu.target<name = "tpu-8x8-4k-4banks", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 4, banks = 4>, accumulator = <kib = 4, banks = 1>,
    vector = <lanes = 8, pipeline_latency = 4, transcendental_cycles_per_group = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>
module attributes {tpu.target = #t} {

// Three transcendentals on 64 x 16: two buffers of 16 words a row (x, then
// each result into the one its operand's value does not hold), no value
// loaded whole. One set takes up to 32 rows: two tiles of
// load + ops + store = (100 + 8t) + 3 (4 + 8t) + (100 + 8t), 2,984 cycles.
// Two sets, each in banks of its own, take up to 16 rows (32 x 16 = 512
// words: banks 0-1 and 2-3). With t = 16, four tiles: the first load, then
// per tile the longer of its ops (396) and the store before it plus the
// load after it (228 + 228 where both are there), then the last store:
// 228 + 396 + 456 + 456 + 396 + 228 = 2,160 cycles, the fastest (15 rows,
// five tiles: 2,196; 8 rows, eight tiles: 2,704). The DMA is the bound:
// each tile's ops run while the tile before is stored and the next loaded.
// CHECK-LABEL: func.func @pipelined
// CHECK: tpu.fused attributes {tpu.tiling = #tpu.row_group_tiling<rows = 16, inputs = [0], results = [256, 0, 256], second_set = 512>}
func.func @pipelined(%x: tensor<64x16xf32>) -> tensor<64x16xf32> {
  %g = tpu.fused -> tensor<64x16xf32> {
    %a = tpu.unary exp %x : tensor<64x16xf32>
    %b = tpu.unary tanh %a : tensor<64x16xf32>
    %c = tpu.unary sigmoid %b : tensor<64x16xf32>
    tpu.yield %c : tensor<64x16xf32>
  }
  return %g : tensor<64x16xf32>
}

// A bias row and three transcendentals: the row is loaded once, into bank 0
// of its own; 32 words a row in each set, in banks 1 and 2, so 8-row
// tiles. The add takes 4 + 2t, the rest 3 (4 + 8t): 224 cycles on 8 rows,
// less than the store and the load around it (164 + 164); 108 for the row,
// 164 + 224 + 6 x 328 + 224 + 164 = 2,744 for the tiles, 2,852 in all.
// One set would take 31-row tiles: (100 + 8t) + (16 + 26t) + (100 + 8t)
// on 31, 31 and 2 rows and the row, 3,444 cycles.
// CHECK-LABEL: func.func @row_operand
// CHECK: tpu.fused attributes {tpu.tiling = #tpu.row_group_tiling<rows = 8, inputs = [256, 0], results = [384, 256, 384, 256], second_set = 256>}
func.func @row_operand(%x: tensor<64x16xf32>, %b: tensor<1x16xf32>) -> tensor<64x16xf32> {
  %g = tpu.fused -> tensor<64x16xf32> {
    %s = tpu.binary add %x, %b : tensor<64x16xf32>, tensor<1x16xf32> -> tensor<64x16xf32>
    %a = tpu.unary exp %s : tensor<64x16xf32>
    %c = tpu.unary tanh %a : tensor<64x16xf32>
    %d = tpu.unary sigmoid %c : tensor<64x16xf32>
    tpu.yield %d : tensor<64x16xf32>
  }
  return %g : tensor<64x16xf32>
}

// 600 words a row (x, y and the product, 200 columns each): one row fits
// once, two sets in banks of their own do not (600 + 768 words): one set
// of 1-row tiles, the tiles one after another, as before there were two.
// CHECK-LABEL: func.func @one_set
// CHECK: tpu.fused attributes {tpu.tiling = #tpu.row_group_tiling<rows = 1, inputs = [0, 200], results = [400, 0, 200]>}
func.func @one_set(%x: tensor<8x200xf32>, %y: tensor<8x200xf32>) -> tensor<8x200xf32> {
  %g = tpu.fused -> tensor<8x200xf32> {
    %s = tpu.binary mul %x, %y : tensor<8x200xf32>, tensor<8x200xf32> -> tensor<8x200xf32>
    %a = tpu.unary exp %s : tensor<8x200xf32>
    %c = tpu.unary tanh %a : tensor<8x200xf32>
    tpu.yield %c : tensor<8x200xf32>
  }
  return %g : tensor<8x200xf32>
}

}
