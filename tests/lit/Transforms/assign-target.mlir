// RUN: tpu-opt %s --tpu-assign-target="config=tpu-8x8" | FileCheck %s --check-prefix=PRESET
// RUN: tpu-opt %s --tpu-assign-target | FileCheck %s --check-prefix=DEFAULT
// RUN: tpu-opt %s --tpu-assign-target="config=%configs/tpu-128x128.json" | FileCheck %s --check-prefix=FILE
// RUN: tpu-opt %s --tpu-assign-target="config=tpu-8x8" | tpu-opt --tpu-assign-target | FileCheck %s --check-prefix=PRESET

// A preset by name, every field of it; without a config, the default preset
// (or the target the module already has: the second run keeps tpu-8x8).
// PRESET: #target = #tpu.target<name = "tpu-8x8", clock_ghz = 1.0, array = <rows = 8, cols = 8, dtype = bf16>, scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>, vector = <lanes = 8, pipeline_latency = 4, transcendental_cycles_per_group = 4>, dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>, energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0, vector_element_pj = 1.0, vector_transcendental_pj = 4.0, dram_byte_pj = 100.0, static_mw = 50.0>>
// PRESET: module attributes {tpu.target = #target}
// DEFAULT: #target = #tpu.target<name = "tpu-32x32"
// FILE: #target = #tpu.target<name = "tpu-128x128", clock_ghz = 1.0, array = <rows = 128, cols = 128, dtype = bf16>
func.func @main(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  return %x : tensor<4x3xf32>
}
