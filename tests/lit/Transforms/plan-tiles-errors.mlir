// RUN: tpu-opt %s --tpu-plan-tiles --split-input-file --verify-diagnostics

// A 256-word scratchpad cannot hold one 16 x 16 weight tile and a row of
// activations (272 words): the error says what would.
#tpu_16x16_tiny = #tpu.target<name = "tpu-16x16-tiny", clock_ghz = 1.0,
    array = <rows = 16, cols = 16, dtype = bf16>,
    scratchpad = <kib = 1, banks = 1>, accumulator = <kib = 1, banks = 1>,
    vector = <lanes = 16, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 16.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>
module attributes {tpu.target = #tpu_16x16_tiny} {
  func.func @too_small(%x: tensor<4x16xf32>, %w: tensor<16x16xf32>) -> tensor<4x16xf32> {
    // expected-error @+1 {{'tpu.matmul' op config 'tpu-16x16-tiny' has too little memory for one 16x16 weight tile and one row: it needs at least 2 KiB of scratchpad (has 1) and 1 KiB of accumulator (has 1)}}
    %m = tpu.matmul %x, %w : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
    return %m : tensor<4x16xf32>
  }
}

// -----

// The hardware comes from the module: without a target there is no plan.
// expected-error @+1 {{the module has no 'tpu.target' attribute naming the hardware (tpuc sets it from --config)}}
func.func @no_target(%x: tensor<4x16xf32>, %w: tensor<16x16xf32>) -> tensor<4x16xf32> {
  %m = tpu.matmul %x, %w : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}

// -----

// A row reduction sums a whole row in one instruction: at most 4095 columns.
module attributes {tpu.target = #tpu.target<name = "tpu-8x8", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>} {
  func.func @long_row(%x: tensor<2x5000xf32>) -> tensor<2x1xf32> {
    // expected-error @+1 {{'tpu.row_reduce' op a row reduction over 5000 columns is not supported (at most 4095)}}
    %s = tpu.row_reduce sum %x : tensor<2x5000xf32> -> tensor<2x1xf32>
    return %s : tensor<2x1xf32>
  }
}
