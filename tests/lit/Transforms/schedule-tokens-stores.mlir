// RUN: tpu-opt %s --tpu-schedule-tokens | FileCheck %s
// RUN: tpu-opt %s --tpu-schedule-tokens --tpu-schedule-tokens | FileCheck %s

// What waits for a store: a load of DRAM it writes or into on-chip words
// it reads, a compute instruction writing words it reads; each waits for
// the last such store only (a token pushed right after it), not for every
// store before a tpu.depend from the store queue. Running the pass again
// (on the tokens it wrote) changes nothing.
#target = #tpu.target<name = "tpu-8x8", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>
module attributes {tpu.target = #target} {

// Two column tiles of a 16-column matrix, side by side in its rows: the
// load of the first waits for its store alone, and a load of other DRAM
// into other words for none.
// CHECK-LABEL: func.func @columnTile
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x0
// CHECK-NEXT: tpu.inst sync.push from=store to=load
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x20
// CHECK-NEXT: tpu.inst sync.pop from=store to=load
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x400
// CHECK-NEXT: return
func.func @columnTile() {
  tpu.inst dma.st dram_addr=0x0 dram_stride=16 space=acc sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.inst dma.st dram_addr=0x20 dram_stride=16 space=acc sram_addr=64 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.depend store -> load
  tpu.inst dma.ld dram_addr=0x0 dram_stride=16 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.inst dma.ld dram_addr=0x400 dram_stride=8 space=sp sram_addr=64 sram_stride=8 rows=8 cols=8 dtype=f32
  return
}

// A staging buffer: the load into the words the store reads waits for it,
// with no tpu.depend asking.
// CHECK-LABEL: func.func @staging
// CHECK-NEXT: tpu.inst dma.st
// CHECK-NEXT: tpu.inst sync.push from=store to=load
// CHECK-NEXT: tpu.inst sync.pop from=store to=load
// CHECK-NEXT: tpu.inst dma.ld
// CHECK-NEXT: return
func.func @staging() {
  tpu.inst dma.st dram_addr=0x0 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.inst dma.ld dram_addr=0x400 dram_stride=8 space=sp sram_addr=32 sram_stride=8 rows=8 cols=8 dtype=f32
  return
}

// Two accumulator tiles stored: the weights' load reads the scratchpad
// and waits for nothing; the product into the first tile waits for the
// first store, the relu over the second for the second.
// CHECK-LABEL: func.func @accumulators
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x0
// CHECK-NEXT: tpu.inst sync.push from=store to=compute
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x100
// CHECK-NEXT: tpu.inst sync.push from=store to=compute
// CHECK-NEXT: tpu.inst mxu.ldw
// CHECK-NEXT: tpu.inst sync.pop from=store to=compute
// CHECK-NEXT: tpu.inst mxu.mm
// CHECK-NEXT: tpu.inst sync.pop from=store to=compute
// CHECK-NEXT: tpu.inst v.relu
// CHECK-NEXT: return
func.func @accumulators() {
  tpu.inst dma.st dram_addr=0x0 dram_stride=8 space=acc sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.inst dma.st dram_addr=0x100 dram_stride=8 space=acc sram_addr=2048 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.depend store -> compute
  tpu.inst mxu.ldw src_addr=0 src_stride=8 rows=8 cols=8
  tpu.inst mxu.mm src_addr=64 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
  tpu.inst v.relu dst_space=acc dst_addr=2048 src_space=acc src_addr=2048 rows=8 cols=8
  return
}

}
