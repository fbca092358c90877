// RUN: tpu-opt %s --tpu-lower-vector-ops | FileCheck %s

// rowCopies (ProgramBuilder.cpp): an add of a row of 2 words on 8 lanes
// leaves 6 lanes idle per tile row. The row is loaded k times side by side
// (one transfer, DRAM stride 0) and the add takes k tile rows as one row of
// k copies: k divides the tile's rows and k x 2 words fit the operand's
// buffer of max(2, lanes) = 8 words (tpu-plan-tiles leaves that room), the
// k of fewest lane groups, the smallest of those, where the groups it saves
// are more than the bus cycles of its k - 1 extra DRAM requests.
#target = #tpu.target<name = "eight-lanes", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>
module attributes {tpu.target = #target} {
// 12 rows: four copies, 3 rows of 8 words (one group each).
// CHECK-LABEL: func.func @twelve_rows
// CHECK: tpu.inst dma.ld dram_addr=0x60 dram_stride=0 space=sp sram_addr=24 sram_stride=2 rows=4 cols=2 dtype=f32
// CHECK: tpu.inst v.add dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=3 cols=8 src2_space=sp src2_addr=24 broadcast=row
  func.func @twelve_rows(%x: tensor<12x2xf32> {tpu.dram_address = 0 : i64}, %b: tensor<1x2xf32> {tpu.dram_address = 96 : i64}) -> tensor<12x2xf32> {
    %y = tpu.binary add %x, %b {tpu.dram_address = 128 : i64, tpu.tiling = #tpu.vector_tiling<rows = 12, cols = 2, input = 0, operand = 24, output = 0>} : tensor<12x2xf32>, tensor<1x2xf32> -> tensor<12x2xf32>
    return %y : tensor<12x2xf32>
  }
// 6 rows: four copies do not divide them; three take 2 groups, two 3.
// CHECK-LABEL: func.func @six_rows
// CHECK: tpu.inst dma.ld dram_addr=0x60 dram_stride=0 space=sp sram_addr=12 sram_stride=2 rows=3 cols=2 dtype=f32
// CHECK: tpu.inst v.add dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=2 cols=6 src2_space=sp src2_addr=12 broadcast=row
  func.func @six_rows(%x: tensor<6x2xf32> {tpu.dram_address = 0 : i64}, %b: tensor<1x2xf32> {tpu.dram_address = 96 : i64}) -> tensor<6x2xf32> {
    %y = tpu.binary add %x, %b {tpu.dram_address = 128 : i64, tpu.tiling = #tpu.vector_tiling<rows = 6, cols = 2, input = 0, operand = 12, output = 0>} : tensor<6x2xf32>, tensor<1x2xf32> -> tensor<6x2xf32>
    return %y : tensor<6x2xf32>
  }
// 7 rows: no copies divide them; the row is loaded once, as before.
// CHECK-LABEL: func.func @seven_rows
// CHECK: tpu.inst dma.ld dram_addr=0x60 dram_stride=2 space=sp sram_addr=14 sram_stride=2 rows=1 cols=2 dtype=f32
// CHECK: tpu.inst v.add dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=7 cols=2 src2_space=sp src2_addr=14 broadcast=row
  func.func @seven_rows(%x: tensor<7x2xf32> {tpu.dram_address = 0 : i64}, %b: tensor<1x2xf32> {tpu.dram_address = 96 : i64}) -> tensor<7x2xf32> {
    %y = tpu.binary add %x, %b {tpu.dram_address = 128 : i64, tpu.tiling = #tpu.vector_tiling<rows = 7, cols = 2, input = 0, operand = 14, output = 0>} : tensor<7x2xf32>, tensor<1x2xf32> -> tensor<7x2xf32>
    return %y : tensor<7x2xf32>
  }
// 2 rows: two copies would save one group for one more DRAM request of
// 8 bytes, a bus cycle at 8 bytes a cycle: no gain, so one copy.
// CHECK-LABEL: func.func @two_rows
// CHECK: tpu.inst dma.ld dram_addr=0x60 dram_stride=2 space=sp sram_addr=4 sram_stride=2 rows=1 cols=2 dtype=f32
// CHECK: tpu.inst v.add dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=2 cols=2 src2_space=sp src2_addr=4 broadcast=row
  func.func @two_rows(%x: tensor<2x2xf32> {tpu.dram_address = 0 : i64}, %b: tensor<1x2xf32> {tpu.dram_address = 96 : i64}) -> tensor<2x2xf32> {
    %y = tpu.binary add %x, %b {tpu.dram_address = 128 : i64, tpu.tiling = #tpu.vector_tiling<rows = 2, cols = 2, input = 0, operand = 4, output = 0>} : tensor<2x2xf32>, tensor<1x2xf32> -> tensor<2x2xf32>
    return %y : tensor<2x2xf32>
  }
}
