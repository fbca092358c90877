// RUN: tpu-opt %s --tpu-lower-vector-ops --split-input-file --verify-diagnostics

// An operation the plans did not reach is an error on it, and it stays as it
// was.
#target = #tpu.target<name = "tpu-8x8", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>
module attributes {tpu.target = #target} {
  func.func @unplanned(%x: tensor<2x5000xf32> {tpu.dram_address = 0 : i64}) -> tensor<2x1xf32> {
    // expected-error @+1 {{has no tiling; run tpu-plan-tiles first}}
    %s = tpu.row_reduce sum %x {tpu.dram_address = 40000 : i64} : tensor<2x5000xf32> -> tensor<2x1xf32>
    return %s : tensor<2x1xf32>
  }
}
