// RUN: tpu-opt %s --tpu-forward-stores | FileCheck %s
// RUN: tpu-opt %s --tpu-forward-stores --tpu-forward-stores | FileCheck %s

// Loads of what a store wrote, from words still on chip, become v.copy on
// the compute queue (tpu-8x8: 8 lanes, DRAM latency 100). The stores stay.
#target = #tpu.target<name = "tpu-8x8", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>
module attributes {tpu.target = #target} {

// Two column tiles stored side by side in 4 x 12 rows, loaded back as one
// run of 48 words: a copy per tile row (4 words, from the later store,
// then 8), after a token from the load that wrote the words they read
// (the relu's, in place); the later load into the copies' source waits for
// them.
// CHECK-LABEL: func.func @columnTiles
// CHECK:      tpu.inst dma.ld dram_addr=0x200
// CHECK-NEXT: %[[LOADED:.*]] = tpu.signal load -> compute
// CHECK:      tpu.inst dma.st dram_addr=0x400 {{.*}} rows=4 cols=8
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x420 {{.*}} rows=4 cols=4
// CHECK-NEXT: tpu.await %[[LOADED]]
// CHECK-NEXT: tpu.inst v.copy dst_space=sp dst_addr=4104 src_space=acc src_addr=32 rows=1 cols=4
// CHECK-NEXT: tpu.inst v.copy dst_space=sp dst_addr=4116 src_space=acc src_addr=36 rows=1 cols=4
// CHECK-COUNT-2: tpu.inst v.copy {{.*}} cols=4
// CHECK-NEXT: tpu.inst v.copy dst_space=sp dst_addr=4096 src_space=acc src_addr=0 rows=1 cols=8
// CHECK-NEXT: tpu.inst v.copy dst_space=sp dst_addr=4108 src_space=acc src_addr=8 rows=1 cols=8
// CHECK-COUNT-2: tpu.inst v.copy {{.*}} cols=8
// CHECK-NEXT: %[[COPIED:.*]] = tpu.signal compute -> load
// CHECK-NOT:  dma.ld dram_addr=0x400
// CHECK:      tpu.await %[[COPIED]]
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x600 {{.*}} space=acc sram_addr=0
func.func @columnTiles() {
  tpu.inst dma.ld dram_addr=0x200 dram_stride=12 space=acc sram_addr=0 sram_stride=12 rows=4 cols=12 dtype=f32
  %in = tpu.signal load -> compute
  tpu.await %in
  tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=6 cols=8
  %done = tpu.signal compute -> store
  tpu.await %done
  tpu.inst dma.st dram_addr=0x400 dram_stride=12 space=acc sram_addr=0 sram_stride=8 rows=4 cols=8 dtype=f32
  tpu.inst dma.st dram_addr=0x420 dram_stride=12 space=acc sram_addr=32 sram_stride=4 rows=4 cols=4 dtype=f32
  tpu.inst dma.ld dram_addr=0x400 dram_stride=48 space=sp sram_addr=4096 sram_stride=48 rows=1 cols=48 dtype=f32
  %filled = tpu.signal load -> compute
  tpu.inst dma.ld dram_addr=0x600 dram_stride=8 space=acc sram_addr=0 sram_stride=8 rows=1 cols=8 dtype=f32
  tpu.await %filled
  tpu.inst mxu.ldw src_addr=4096 src_stride=8 rows=6 cols=8
  return
}

// The forwarded load's bytes leave its source op's count in tpu.work (the
// bytes its instructions move, which its roofline bounds): 96 - 8 x 4.
// CHECK-LABEL: func.func @uncharged
// CHECK-SAME: source_ops = [{dram_bytes = 64 : i64, {{.*}}name = "consumer"
// CHECK-SAME: {dram_bytes = 32 : i64, {{.*}}name = "producer"
func.func @uncharged() attributes {tpu.work = {dram_bytes = 64 : i64, source_ops = [
    {dram_bytes = 96 : i64, gemms = array<i64>, name = "consumer", transcendental_elements = 0 : i64, vector_elements = 0 : i64},
    {dram_bytes = 32 : i64, gemms = array<i64>, name = "producer", transcendental_elements = 0 : i64, vector_elements = 8 : i64}]}} {
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=1 cols=8 dtype=f32 loc("producer")
  tpu.inst dma.ld dram_addr=0x400 dram_stride=8 space=sp sram_addr=64 sram_stride=8 rows=1 cols=8 dtype=f32 loc("consumer")
  tpu.inst mxu.ldw src_addr=64 src_stride=8 rows=1 cols=8 loc("consumer")
  return
}

// An earlier store of the same DRAM (an intermediate's place reused) is
// shadowed by the later one: the copy is from the later store's words.
// CHECK-LABEL: func.func @latestStore
// CHECK:      tpu.inst v.copy dst_space=sp dst_addr=64 src_space=sp src_addr=256 rows=1 cols=8
// CHECK-NOT:  dma.ld
func.func @latestStore() {
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=128 sram_stride=8 rows=1 cols=8 dtype=f32
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=256 sram_stride=8 rows=1 cols=8 dtype=f32
  tpu.inst dma.ld dram_addr=0x400 dram_stride=8 space=sp sram_addr=64 sram_stride=8 rows=1 cols=8 dtype=f32
  tpu.inst mxu.ldw src_addr=64 src_stride=8 rows=1 cols=8
  return
}

// A bf16 value whose first half a later load replaces before the vector
// unit reads it: only the matrix unit reads the copied words.
// CHECK-LABEL: func.func @partlyReloaded
// CHECK:      tpu.inst v.copy dst_space=sp dst_addr=64 src_space=sp src_addr=0 rows=1 cols=8
// CHECK:      tpu.inst dma.ld dram_addr=0x800
func.func @partlyReloaded() {
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=1 cols=8 dtype=bf16
  tpu.inst dma.ld dram_addr=0x400 dram_stride=8 space=sp sram_addr=64 sram_stride=8 rows=1 cols=8 dtype=bf16
  tpu.inst mxu.ldw src_addr=64 src_stride=8 rows=1 cols=8
  tpu.inst dma.ld dram_addr=0x800 dram_stride=4 space=sp sram_addr=64 sram_stride=4 rows=1 cols=4 dtype=f32
  tpu.inst v.relu dst_space=sp dst_addr=128 src_space=sp src_addr=64 rows=1 cols=4
  return
}

// Not forwarded: the relu overwrites the stored words before the load
// (@overwritten); a store through the corner turn, whose on-chip words are
// not in the DRAM order (@transposedStore); a byte the load reads was
// never stored (@partial); a bf16 value read by the vector unit, which
// would see it unrounded (@bf16Vector);
// a load the group makes after compute, which its transfer hides behind
// (@afterCompute), or a second load of one store's words (@secondLoad);
// copies that save less than half the DRAM latency (@tooSlow: 64 words in
// 64 runs, 5 cycles each, against 50 + 32 bus cycles).
// CHECK-LABEL: func.func @overwritten
// CHECK-NOT:  v.copy
// CHECK:      tpu.inst dma.ld dram_addr=0x400
func.func @overwritten() {
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=1 cols=8 dtype=f32
  tpu.inst v.relu dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=1 cols=8
  tpu.inst dma.ld dram_addr=0x400 dram_stride=8 space=sp sram_addr=64 sram_stride=8 rows=1 cols=8 dtype=f32
  return
}

// CHECK-LABEL: func.func @transposedStore
// CHECK-NOT:  v.copy
// CHECK:      tpu.inst dma.ld dram_addr=0x400
func.func @transposedStore() {
  tpu.inst dma.st dram_addr=0x400 dram_stride=4 space=sp sram_addr=0 sram_stride=2 rows=2 cols=4 dtype=f32 transpose=1
  tpu.inst dma.ld dram_addr=0x400 dram_stride=8 space=sp sram_addr=64 sram_stride=8 rows=1 cols=8 dtype=f32
  tpu.inst mxu.ldw src_addr=64 src_stride=8 rows=1 cols=8
  return
}

// CHECK-LABEL: func.func @partial
// CHECK-NOT:  v.copy
// CHECK:      tpu.inst dma.ld dram_addr=0x400
func.func @partial() {
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=1 cols=8 dtype=f32
  tpu.inst dma.ld dram_addr=0x400 dram_stride=9 space=sp sram_addr=64 sram_stride=9 rows=1 cols=9 dtype=f32
  return
}

// CHECK-LABEL: func.func @bf16Vector
// CHECK-NOT:  v.copy
// CHECK:      tpu.inst dma.ld dram_addr=0x400
func.func @bf16Vector() {
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=1 cols=8 dtype=bf16
  tpu.inst dma.ld dram_addr=0x400 dram_stride=8 space=sp sram_addr=64 sram_stride=8 rows=1 cols=8 dtype=bf16
  tpu.inst v.relu dst_space=sp dst_addr=128 src_space=sp src_addr=64 rows=1 cols=8
  return
}

// CHECK-LABEL: func.func @bf16Matrix
// CHECK:      tpu.inst v.copy dst_space=sp dst_addr=64 src_space=sp src_addr=0 rows=1 cols=8
// CHECK-NOT:  dma.ld
func.func @bf16Matrix() {
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=1 cols=8 dtype=bf16
  tpu.inst dma.ld dram_addr=0x400 dram_stride=8 space=sp sram_addr=64 sram_stride=8 rows=1 cols=8 dtype=bf16
  tpu.inst mxu.ldw src_addr=64 src_stride=8 rows=1 cols=8
  return
}

// CHECK-LABEL: func.func @afterCompute
// CHECK-NOT:  v.copy
// CHECK:      tpu.inst dma.ld dram_addr=0x400
func.func @afterCompute() {
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=1 cols=8 dtype=f32
  tpu.inst v.relu dst_space=sp dst_addr=256 src_space=sp src_addr=128 rows=1 cols=8
  tpu.inst dma.ld dram_addr=0x400 dram_stride=8 space=sp sram_addr=64 sram_stride=8 rows=1 cols=8 dtype=f32
  return
}

// CHECK-LABEL: func.func @secondLoad
// CHECK:      tpu.inst v.copy dst_space=sp dst_addr=64
// CHECK:      tpu.inst dma.ld dram_addr=0x420
func.func @secondLoad() {
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=2 cols=8 dtype=f32
  tpu.inst dma.ld dram_addr=0x400 dram_stride=8 space=sp sram_addr=64 sram_stride=8 rows=1 cols=8 dtype=f32
  tpu.inst dma.ld dram_addr=0x420 dram_stride=8 space=sp sram_addr=128 sram_stride=8 rows=1 cols=8 dtype=f32
  return
}

// CHECK-LABEL: func.func @tooSlow
// CHECK-NOT:  v.copy
// CHECK:      tpu.inst dma.ld dram_addr=0x400
func.func @tooSlow() {
  tpu.inst dma.st dram_addr=0x400 dram_stride=1 space=sp sram_addr=0 sram_stride=2 rows=64 cols=1 dtype=f32
  tpu.inst dma.ld dram_addr=0x400 dram_stride=64 space=sp sram_addr=1024 sram_stride=64 rows=1 cols=64 dtype=f32
  return
}

// A load of one store's words: the copies go ahead of that store, before
// its compute -> store token, where the words are final. The store holds
// the banks it reads until it completes, so copies after it would wait for
// its latency and bus time; ahead of it, it waits for theirs. The copies'
// token for the group's later load into their destination follows them.
// CHECK-LABEL: func.func @aheadOfStore
// CHECK:      tpu.inst v.relu
// CHECK-NEXT: tpu.inst v.copy dst_space=sp dst_addr=4096 src_space=acc src_addr=0 rows=1 cols=64
// CHECK-NEXT: %[[COPIED:.*]] = tpu.signal compute -> load
// CHECK-NEXT: %[[DONE:.*]] = tpu.signal compute -> store
// CHECK-NEXT: tpu.await %[[DONE]]
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x400
// CHECK:      tpu.inst mxu.ldw
// CHECK-NEXT: tpu.await %[[COPIED]]
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x800 {{.*}} sram_addr=4096
func.func @aheadOfStore() {
  tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=8 cols=8
  %done = tpu.signal compute -> store
  tpu.await %done
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=acc sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.inst dma.ld dram_addr=0x400 dram_stride=64 space=sp sram_addr=4096 sram_stride=64 rows=1 cols=64 dtype=f32
  %in = tpu.signal load -> compute
  tpu.await %in
  tpu.inst mxu.ldw src_addr=4096 src_stride=8 rows=8 cols=8
  tpu.inst dma.ld dram_addr=0x800 dram_stride=64 space=sp sram_addr=4096 sram_stride=64 rows=1 cols=64 dtype=f32
  return
}

// Two tiles' stores: the copies from the last one go ahead of it, those
// from the earlier one (which they would wait for anyway, and which would
// hold the last store back) stay where the load was.
// CHECK-LABEL: func.func @earlierStore
// CHECK:      tpu.inst v.relu dst_space=acc dst_addr=32
// CHECK-NEXT: tpu.inst v.copy dst_space=sp dst_addr=4128 src_space=acc src_addr=32 rows=1 cols=32
// CHECK-NEXT: tpu.signal compute -> store
// CHECK:      tpu.inst dma.st dram_addr=0x480
// CHECK-NEXT: tpu.inst v.copy dst_space=sp dst_addr=4096 src_space=acc src_addr=0 rows=1 cols=32
// CHECK-NOT:  dma.ld
func.func @earlierStore() {
  tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=4 cols=8
  %first = tpu.signal compute -> store
  tpu.await %first
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=acc sram_addr=0 sram_stride=8 rows=4 cols=8 dtype=f32
  tpu.inst v.relu dst_space=acc dst_addr=32 src_space=acc src_addr=32 rows=4 cols=8
  %second = tpu.signal compute -> store
  tpu.await %second
  tpu.inst dma.st dram_addr=0x480 dram_stride=8 space=acc sram_addr=32 sram_stride=8 rows=4 cols=8 dtype=f32
  tpu.inst dma.ld dram_addr=0x400 dram_stride=64 space=sp sram_addr=4096 sram_stride=64 rows=1 cols=64 dtype=f32
  %in = tpu.signal load -> compute
  tpu.await %in
  tpu.inst mxu.ldw src_addr=4096 src_stride=8 rows=8 cols=8
  return
}

// The copies' destination is what the store before is still reading (too
// little compute since for its latency and 256 bytes): ahead of the last
// store, they would wait for that one and hold the last store back. They
// stay where the load was.
// CHECK-LABEL: func.func @destinationBeingStored
// CHECK:      tpu.inst dma.st dram_addr=0x400
// CHECK-NEXT: tpu.inst v.copy dst_space=sp dst_addr=4096 src_space=acc src_addr=0 rows=1 cols=64
func.func @destinationBeingStored() {
  tpu.inst dma.st dram_addr=0x600 dram_stride=64 space=sp sram_addr=4096 sram_stride=64 rows=1 cols=64 dtype=f32
  tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=8 cols=8
  %done = tpu.signal compute -> store
  tpu.await %done
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=acc sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.inst dma.ld dram_addr=0x400 dram_stride=64 space=sp sram_addr=4096 sram_stride=64 rows=1 cols=64 dtype=f32
  %in = tpu.signal load -> compute
  tpu.await %in
  tpu.inst mxu.ldw src_addr=4096 src_stride=8 rows=8 cols=8
  return
}

// A second load of the same store's words is left to DRAM, also when the
// pass runs again on its own output (tpuc reading back --emit=isa): the
// copies just before the store mark its first load forwarded.
// CHECK-LABEL: func.func @secondLoadAhead
// CHECK:      tpu.inst v.copy dst_space=sp dst_addr=4096
// CHECK-NOT:  tpu.inst v.copy
// CHECK:      tpu.inst dma.ld dram_addr=0x400 {{.*}} sram_addr=8192
func.func @secondLoadAhead() {
  tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=8 cols=8
  %done = tpu.signal compute -> store
  tpu.await %done
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=acc sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.inst dma.ld dram_addr=0x400 dram_stride=64 space=sp sram_addr=4096 sram_stride=64 rows=1 cols=64 dtype=f32
  tpu.inst dma.ld dram_addr=0x400 dram_stride=64 space=sp sram_addr=8192 sram_stride=64 rows=1 cols=64 dtype=f32
  %in = tpu.signal load -> compute
  tpu.await %in
  tpu.inst mxu.ldw src_addr=4096 src_stride=8 rows=8 cols=8
  tpu.inst mxu.ldw src_addr=8192 src_stride=8 rows=8 cols=8
  return
}

}
