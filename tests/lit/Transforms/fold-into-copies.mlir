// RUN: tpu-opt %s --tpu-fold-into-copies --mlir-print-debuginfo | FileCheck %s
// RUN: tpu-opt %s --tpu-fold-into-copies --tpu-fold-into-copies --mlir-print-debuginfo | FileCheck %s

// An in-place elementwise op whose results only copies read: the copies
// apply it, and it goes.
#target = #tpu.target<name = "tpu-8x8", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>
module attributes {tpu.target = #target} {

// The tile's two rows copied into a band (a token between them stays): each
// copy becomes the ReLU, with its source location. Later the tile's words
// are written again (an mxu.mm that overwrites them), so what reads them
// after that reads new values.
// CHECK-LABEL: func.func @folded
// CHECK-NOT:  v.relu dst_space=acc
// CHECK:      tpu.inst v.relu dst_space=sp dst_addr=4096 src_space=acc src_addr=0 rows=1 cols=8 loc(#[[RELU:loc[0-9]*]])
// CHECK-NEXT: %{{.*}} = tpu.signal compute -> load
// CHECK-NEXT: tpu.inst v.relu dst_space=sp dst_addr=4106 src_space=acc src_addr=8 rows=1 cols=8 loc(#[[RELU]])
// CHECK-NEXT: tpu.inst mxu.mm
// CHECK-NEXT: tpu.inst dma.st
// (#[[RELU]] is checked at the end, where the locations are printed.)
func.func @folded() {
  tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=2 cols=8 loc("relu")
  tpu.inst v.copy dst_space=sp dst_addr=4096 src_space=acc src_addr=0 rows=1 cols=8 loc("consumer")
  %t = tpu.signal compute -> load
  tpu.inst v.copy dst_space=sp dst_addr=4106 src_space=acc src_addr=8 rows=1 cols=8 loc("consumer")
  tpu.inst mxu.mm src_addr=4096 src_stride=10 dst_addr=0 dst_stride=8 rows=2 cols=8 dtype=bf16 accumulate=0 flip=0
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=acc sram_addr=0 sram_stride=8 rows=2 cols=8 dtype=f32
  return
}

// A transcendental in the scratchpad folds the same way.
// CHECK-LABEL: func.func @transcendental
// CHECK-NEXT: tpu.inst v.exp dst_space=acc dst_addr=64 src_space=sp src_addr=16 rows=1 cols=16
// CHECK-NEXT: return
func.func @transcendental() {
  tpu.inst v.exp dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=4 cols=8
  tpu.inst v.copy dst_space=acc dst_addr=64 src_space=sp src_addr=16 rows=1 cols=16
  return
}

// Another reader of the results keeps the op: a store, an mxu.mm that
// accumulates into them, a vector op.
// CHECK-LABEL: func.func @otherReaders
// CHECK:      v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0
// CHECK:      v.copy
// CHECK:      v.relu dst_space=acc dst_addr=64 src_space=acc src_addr=64
// CHECK:      v.copy
// CHECK:      v.relu dst_space=acc dst_addr=128 src_space=acc src_addr=128
// CHECK:      v.copy
func.func @otherReaders() {
  tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=1 cols=8
  tpu.inst v.copy dst_space=sp dst_addr=4096 src_space=acc src_addr=0 rows=1 cols=8
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=acc sram_addr=4 sram_stride=8 rows=1 cols=2 dtype=f32
  tpu.inst v.relu dst_space=acc dst_addr=64 src_space=acc src_addr=64 rows=1 cols=8
  tpu.inst v.copy dst_space=sp dst_addr=4096 src_space=acc src_addr=64 rows=1 cols=8
  tpu.inst mxu.mm src_addr=4096 src_stride=8 dst_addr=64 dst_stride=8 rows=1 cols=8 dtype=bf16 accumulate=1 flip=0
  tpu.inst v.relu dst_space=acc dst_addr=128 src_space=acc src_addr=128 rows=1 cols=8
  tpu.inst v.copy dst_space=sp dst_addr=4096 src_space=acc src_addr=128 rows=1 cols=8
  tpu.inst v.add dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=1 cols=8 src2_space=acc src2_addr=128 broadcast=none
  return
}

// A copy of words partly written since the op (a load into two of them)
// keeps it, and the copy before that load with it.
// CHECK-LABEL: func.func @partlyWritten
// CHECK-NEXT: v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0
// CHECK-NEXT: v.copy dst_space=sp dst_addr=4096 src_space=acc src_addr=0 rows=1 cols=4
// CHECK-NEXT: dma.ld
// CHECK-NEXT: v.copy dst_space=sp dst_addr=4104 src_space=acc src_addr=0 rows=1 cols=8
func.func @partlyWritten() {
  tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=1 cols=8
  tpu.inst v.copy dst_space=sp dst_addr=4096 src_space=acc src_addr=0 rows=1 cols=4
  tpu.inst dma.ld dram_addr=0x400 dram_stride=2 space=acc sram_addr=6 sram_stride=2 rows=1 cols=2 dtype=f32
  tpu.inst v.copy dst_space=sp dst_addr=4104 src_space=acc src_addr=0 rows=1 cols=8
  return
}

// Binary ops, ops into other words and results no copy reads stay.
// CHECK-LABEL: func.func @notFolded
// CHECK-NEXT: v.add
// CHECK-NEXT: v.copy
// CHECK-NEXT: v.relu dst_space=acc dst_addr=64 src_space=acc src_addr=0
// CHECK-NEXT: v.copy
// CHECK-NEXT: v.relu dst_space=acc dst_addr=128 src_space=acc src_addr=128
// CHECK-NEXT: return
func.func @notFolded() {
  tpu.inst v.add dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=1 cols=8 src2_space=sp src2_addr=0 broadcast=row
  tpu.inst v.copy dst_space=sp dst_addr=4096 src_space=acc src_addr=0 rows=1 cols=8
  tpu.inst v.relu dst_space=acc dst_addr=64 src_space=acc src_addr=0 rows=1 cols=8
  tpu.inst v.copy dst_space=sp dst_addr=4096 src_space=acc src_addr=64 rows=1 cols=8
  tpu.inst v.relu dst_space=acc dst_addr=128 src_space=acc src_addr=128 rows=1 cols=8
  return
}

}

// CHECK: #[[RELU]] = loc("relu")
