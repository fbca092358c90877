// RUN: tpu-opt %s --split-input-file --verify-diagnostics

// A target written in IR gets the checks of a config file.
// expected-error @+1 {{#tpu.target: scratchpad.banks: must be a power of two in [1, 64] (got 3)}}
module attributes {tpu.target = #tpu.target<name = "bad", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 3>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>} {}

// -----

// The keys a config may leave out are checked when they are there.
// expected-error @+1 {{#tpu.target: vector.transcendental_cycles_per_group: must be an integer in [1, 1000] (got 0)}}
module attributes {tpu.target = #tpu.target<name = "bad", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4, transcendental_cycles_per_group = 0>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>} {}

// -----

// expected-error @+1 {{#tpu.target: energy.vector_transcendental_pj: must be a number in [0, 1000000] (got -4.0)}}
module attributes {tpu.target = #tpu.target<name = "bad", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, vector_transcendental_pj = -4.0, dram_byte_pj = 100.0,
              static_mw = 50.0>>} {}

// -----

// expected-error @+1 {{'tpu.target' must be a #tpu.target, got "tpu-8x8"}}
module attributes {tpu.target = "tpu-8x8"} {}

// -----

// expected-error @+1 {{'tpu.target' belongs on the module}}
func.func @f() attributes {tpu.target = "tpu-8x8"} {
  return
}
