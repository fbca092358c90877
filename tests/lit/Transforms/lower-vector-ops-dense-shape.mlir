// RUN: tpu-opt %s --tpu-lower-vector-ops | FileCheck %s

// denseShape (ProgramBuilder.cpp) within the ISA's fields: a ReLU on one
// dense tile of 60000 x 12 words, on 8 lanes. Rows of 8 would take the
// fewest groups (90,000) but 90,000 rows do not fit the instruction's
// 16-bit rows field; rows of 16 take as few (45,000 rows of two groups).
// The scratchpad is large enough for the whole tile.
#target = #tpu.target<name = "big-scratchpad", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 8192, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>
module attributes {tpu.target = #target} {
// CHECK-LABEL: func.func @relu
// CHECK: tpu.inst v.relu dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=45000 cols=16
  func.func @relu(%x: tensor<60000x12xf32> {tpu.dram_address = 0 : i64}) -> tensor<60000x12xf32> {
    %y = tpu.unary relu %x {tpu.dram_address = 2880000 : i64, tpu.tiling = #tpu.vector_tiling<rows = 60000, cols = 12, input = 0, output = 0>} : tensor<60000x12xf32>
    return %y : tensor<60000x12xf32>
  }
}
