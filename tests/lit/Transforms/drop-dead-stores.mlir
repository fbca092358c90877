// RUN: tpu-opt %s --tpu-drop-dead-stores | FileCheck %s
// RUN: tpu-opt %s --tpu-drop-dead-stores --tpu-drop-dead-stores | FileCheck %s

// Stores whose bytes nothing reads again, and no result holds, go, with the
// store queue's wait before them where nothing after relies on it.
#target = #tpu.target<name = "tpu-8x8", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>
module attributes {tpu.target = #target} {

// A value the next group copied (tpu-forward-stores): its store, the
// compute queue's signal and the store queue's await go; the copy stays.
// The store's 256 bytes leave its op's count in tpu.work.
// CHECK-LABEL: func.func @copiedAlready
// CHECK-SAME: source_ops = [{dram_bytes = 64 : i64, {{.*}}name = "producer"
// CHECK:      tpu.inst v.relu
// CHECK-NEXT: tpu.inst v.copy
// CHECK-NEXT: return
func.func @copiedAlready() attributes {tpu.work = {dram_bytes = 0 : i64, source_ops = [
    {dram_bytes = 320 : i64, gemms = array<i64>, name = "producer", transcendental_elements = 0 : i64, vector_elements = 64 : i64}]}} {
  tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=8 cols=8 loc("producer")
  tpu.inst v.copy dst_space=sp dst_addr=4096 src_space=acc src_addr=0 rows=1 cols=64 loc("producer")
  %done = tpu.signal compute -> store
  tpu.await %done
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=acc sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32 loc("producer")
  return
}

// A later load of any of its bytes keeps it: a row of it, and a block of
// another stride whose span meets it (which may share a byte).
// CHECK-LABEL: func.func @readLater
// CHECK:      dma.st dram_addr=0x400
// CHECK:      dma.st dram_addr=0x800
// CHECK:      dma.st dram_addr=0xc00
// CHECK-NOT:  dma.st
func.func @readLater() {
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.inst dma.st dram_addr=0x800 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.inst dma.st dram_addr=0xc00 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=2 cols=8 dtype=f32
  tpu.inst dma.st dram_addr=0xc40 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=2 cols=8 dtype=f32
  tpu.inst dma.ld dram_addr=0x420 dram_stride=8 space=sp sram_addr=64 sram_stride=8 rows=1 cols=8 dtype=f32
  tpu.inst dma.ld dram_addr=0x810 dram_stride=12 space=sp sram_addr=64 sram_stride=8 rows=2 cols=2 dtype=f32
  tpu.inst dma.ld dram_addr=0xc00 dram_stride=16 space=sp sram_addr=64 sram_stride=8 rows=1 cols=16 dtype=f32
  return
}

// Before the load that reads it, a store is kept; a store after the last
// load of its bytes (the place reused) is not.
// CHECK-LABEL: func.func @storedAgain
// CHECK:      dma.st dram_addr=0x400
// CHECK-NEXT: dma.ld dram_addr=0x400
// CHECK-NEXT: return
func.func @storedAgain() {
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=1 cols=8 dtype=f32
  tpu.inst dma.ld dram_addr=0x400 dram_stride=8 space=sp sram_addr=64 sram_stride=8 rows=1 cols=8 dtype=f32
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=128 sram_stride=8 rows=1 cols=8 dtype=f32
  return
}

// The function's result lies in the stored bytes (the second row of it):
// kept.
// CHECK-LABEL: func.func @result
// CHECK:      dma.st dram_addr=0x3e0
// CHECK-NEXT: tpu.stored 0x400
func.func @result(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  tpu.inst dma.st dram_addr=0x3e0 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=2 cols=8 dtype=f32
  %y = tpu.stored 0x400 from %x : tensor<2x8xf32> -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// A gather reads the rows its indices pick: every store before it stays.
// CHECK-LABEL: func.func @gatherLater
// CHECK:      dma.st dram_addr=0x400
// CHECK-NEXT: dma.gather
func.func @gatherLater() {
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=1 cols=8 dtype=f32
  tpu.inst dma.gather dram_addr=0x0 sram_addr=64 src_addr=0 rows=1 cols=8 dtype=f32 bound=4
  return
}

// The await before a dropped store stays where another store after it
// relies on it (the result, stored without a wait of its own).
// CHECK-LABEL: func.func @waitStays
// CHECK:      %[[DONE:.*]] = tpu.signal compute -> store
// CHECK-NEXT: tpu.await %[[DONE]]
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x800
func.func @waitStays(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  tpu.inst v.relu dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=2 cols=8
  %done = tpu.signal compute -> store
  tpu.await %done
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=1 cols=8 dtype=f32
  tpu.inst dma.st dram_addr=0x800 dram_stride=8 space=sp sram_addr=8 sram_stride=8 rows=1 cols=8 dtype=f32
  %y = tpu.stored 0x800 from %x : tensor<1x8xf32> -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}

}
