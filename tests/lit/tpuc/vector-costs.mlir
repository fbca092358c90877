// A target's transcendental figures reach the simulator through the bundle:
// v.exp runs at transcendental_cycles_per_group cycles for each group of
// lanes and costs vector_transcendental_pj an element; v.add 1 cycle and
// vector_element_pj. Left out, both keys charge v.exp as an add.
// RUN: tpuc %s -o %t.tpub
// RUN: tpusim %t.tpub --mode cycle --report %t.cycle.json
// RUN: tpusim %t.tpub --mode fast --report %t.fast.json
// RUN: %python %S/Inputs/vector_figures.py %t.cycle.json %t.fast.json | FileCheck %s
// RUN: sed -e 's/, transcendental_cycles_per_group = 3//' -e 's/vector_transcendental_pj = 6.0, //' %s > %t.defaults.mlir
// RUN: tpuc %t.defaults.mlir -o %t.defaults.tpub
// RUN: tpusim %t.defaults.tpub --report %t.defaults.json
// RUN: %python %S/Inputs/vector_figures.py %t.defaults.json | FileCheck %s --check-prefix=DEFAULTS

// 3 rows of ceil(10 / 8) = 2 groups each: v.exp occupies the unit for
// 4 + 6 * 3 = 22 cycles, then v.add for 4 + 6 = 10; 30 elements each, at
// 6 pJ and 1 pJ.
// CHECK-COUNT-2: total_cycles 32 vector_elements 60 vector_transcendental_elements 30 vector_pj 210.0
// DEFAULTS: total_cycles 20 vector_elements 60 vector_transcendental_elements 30 vector_pj 60.0

#target = #tpu.target<name = "slow-transcendentals", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4, transcendental_cycles_per_group = 3>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, vector_transcendental_pj = 6.0, dram_byte_pj = 100.0,
              static_mw = 50.0>>
module attributes {tpu.target = #target} {
  func.func @main() attributes {tpu.dram_bytes = 64 : i64} {
    tpu.inst v.exp dst_space=sp dst_addr=64 src_space=sp src_addr=0 rows=3 cols=10
    tpu.inst v.add dst_space=acc dst_addr=0 src_space=sp src_addr=0 rows=3 cols=10 src2_space=sp src2_addr=64 broadcast=none
    return
  }
}
