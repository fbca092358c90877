// RUN: tpu-opt %s --tpu-prefetch-constants | FileCheck %s

// A group's leading loads of DRAM the program never stores to (or stored
// to before the previous group's wait: @settled), moved above
// its wait on the groups before (tpu.depend store -> load and compute ->
// load) to right after the load queue's op before it, on the tpu-8x8 target
// (scratchpad banks of 4096 words); a load of what the previous group
// stores, to right after that store (tpu-schedule-tokens has it wait for
// that store). The previous group here loads at 0, applies relu there and
// stores it to 0x400. A group whose leading loads would wait for the banks
// of the groups before moves up by whole banks, half the scratchpad first,
// where it fits there and frees more of them (@relocated, @oneBankUp).
#target = #tpu.target<name = "tpu-8x8", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>
module attributes {tpu.target = #target} {

// A weight panel into bank 2, which the previous group never touches, then
// the group's activations, which the previous group stores, into its bank
// 0: the group moves one bank up, clear of bank 0, the panel goes right
// after that group's fill token, before its relu and store, and the
// activations right after the store.
// CHECK-LABEL: func.func @disjoint
// CHECK:      tpu.signal load -> compute
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0 {{.*}} sram_addr=12288
// CHECK-NEXT: tpu.await
// CHECK-NEXT: tpu.inst v.relu
// CHECK:      tpu.inst dma.st
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x400 {{.*}} sram_addr=4096
// CHECK-NEXT: tpu.depend store -> load
// CHECK-NEXT: tpu.depend compute -> load
func.func @disjoint() {
  tpu.inst dma.ld dram_addr=0x200 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  %filled = tpu.signal load -> compute
  tpu.await %filled
  tpu.inst v.relu dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=8 cols=8
  tpu.depend compute -> store
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.depend store -> load
  tpu.depend compute -> load
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=8192 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.inst dma.ld dram_addr=0x400 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  return
}

// The previous group's array reads bank 3 (its weights at 12288) until its
// release token, pushed before a vector op: the panel into bank 3 (the
// last: the group cannot move up) waits for that token instead, after it.
// CHECK-LABEL: func.func @release
// CHECK:      tpu.inst mxu.ldw src_addr=12288
// CHECK-NEXT: %[[FREE:.*]] = tpu.signal compute -> load
// CHECK-NEXT: tpu.await %[[FREE]]
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0 {{.*}} sram_addr=12288
// CHECK-NEXT: tpu.inst v.relu
// CHECK:      tpu.depend compute -> load
// CHECK-NEXT: return
func.func @release() {
  tpu.inst dma.ld dram_addr=0x200 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  %filled = tpu.signal load -> compute
  tpu.await %filled
  tpu.inst mxu.ldw src_addr=12288 src_stride=8 rows=8 cols=8
  %free = tpu.signal compute -> load
  tpu.inst v.relu dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=8 cols=8
  tpu.depend compute -> store
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.depend store -> load
  tpu.depend compute -> load
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=12288 sram_stride=8 rows=8 cols=8 dtype=f32
  return
}

// Each load goes as early as it may: the panel into bank 2, which the
// previous group never touches, right after that group's fill token; the
// next one into bank 3, which its array reads up to a release token,
// right after that token.
// CHECK-LABEL: func.func @eachAsEarly
// CHECK:      tpu.signal load -> compute
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0 {{.*}} sram_addr=8192
// CHECK:      tpu.inst mxu.ldw
// CHECK-NEXT: %[[FREE:.*]] = tpu.signal compute -> load
// CHECK-NEXT: tpu.await %[[FREE]]
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x100 {{.*}} sram_addr=12288
// CHECK-NEXT: tpu.inst v.relu
func.func @eachAsEarly() {
  tpu.inst dma.ld dram_addr=0x200 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  %filled = tpu.signal load -> compute
  tpu.await %filled
  tpu.inst mxu.ldw src_addr=12288 src_stride=8 rows=8 cols=8
  %free = tpu.signal compute -> load
  tpu.inst v.relu dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=8 cols=8
  tpu.depend compute -> store
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.depend store -> load
  tpu.depend compute -> load
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=8192 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.inst dma.ld dram_addr=0x100 dram_stride=8 space=sp sram_addr=12288 sram_stride=8 rows=8 cols=8 dtype=f32
  return
}

// The same with the array's next instruction right after the token: its
// push would drain the array, and no later token says the array is done,
// so the panel waits for the whole group.
// CHECK-LABEL: func.func @streaming
// CHECK:      tpu.depend compute -> load
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0
func.func @streaming() {
  tpu.inst mxu.ldw src_addr=12288 src_stride=8 rows=8 cols=8
  %free = tpu.signal compute -> load
  tpu.inst mxu.ldw src_addr=0 src_stride=8 rows=8 cols=8
  tpu.depend store -> load
  tpu.depend compute -> load
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=12288 sram_stride=8 rows=8 cols=8 dtype=f32
  return
}

// A later token says as much and drains nothing: the array's next token,
// before a vector op.
// CHECK-LABEL: func.func @laterToken
// CHECK:      tpu.inst mxu.ldw src_addr=0
// CHECK-NEXT: %[[DONE:.*]] = tpu.signal compute -> load
// CHECK-NEXT: tpu.await %[[DONE]]
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0
// CHECK-NEXT: tpu.inst v.relu
func.func @laterToken() {
  tpu.inst mxu.ldw src_addr=12288 src_stride=8 rows=8 cols=8
  %free = tpu.signal compute -> load
  tpu.inst mxu.ldw src_addr=0 src_stride=8 rows=8 cols=8
  %done = tpu.signal compute -> load
  tpu.inst v.relu dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=8 cols=8
  tpu.depend store -> load
  tpu.depend compute -> load
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=12288 sram_stride=8 rows=8 cols=8 dtype=f32
  return
}

// A store may still read bank 3 and no token says when it is done: the
// load stays.
// CHECK-LABEL: func.func @stored
// CHECK:      tpu.depend compute -> load
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0
func.func @stored() {
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=12296 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.depend store -> load
  tpu.depend compute -> load
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=12288 sram_stride=8 rows=8 cols=8 dtype=f32
  return
}

// The same store, then the array reading bank 3 up to a release token: the
// compute's token does not say the store is done, so the load stays.
// CHECK-LABEL: func.func @storedThenRead
// CHECK:      tpu.depend compute -> load
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0
func.func @storedThenRead() {
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=12296 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.inst mxu.ldw src_addr=12288 src_stride=8 rows=8 cols=8
  %free = tpu.signal compute -> load
  tpu.inst v.relu dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=8 cols=8
  tpu.depend store -> load
  tpu.depend compute -> load
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=12288 sram_stride=8 rows=8 cols=8 dtype=f32
  return
}

// A store's token after it (a row group's set released by its store): the
// load waits for it instead, and for the array's release of bank 3 too.
// CHECK-LABEL: func.func @storeReleases
// CHECK:      %[[STORED:.*]] = tpu.signal store -> load
// CHECK-NEXT: tpu.await %[[FREE:.*]]
// CHECK-NEXT: tpu.await %[[STORED]]
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0
// CHECK-NEXT: tpu.depend store -> load
func.func @storeReleases() {
  tpu.inst mxu.ldw src_addr=12288 src_stride=8 rows=8 cols=8
  %free = tpu.signal compute -> load
  tpu.inst v.relu dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=8 cols=8
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=12296 sram_stride=8 rows=8 cols=8 dtype=f32
  %stored = tpu.signal store -> load
  tpu.depend store -> load
  tpu.depend compute -> load
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=12288 sram_stride=8 rows=8 cols=8 dtype=f32
  return
}

// The previous group stores to the DRAM the load reads (one byte of it):
// the load goes right after that store.
// CHECK-LABEL: func.func @follows
// CHECK-NEXT: tpu.inst dma.st
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0
// CHECK-NEXT: tpu.depend store -> load
func.func @follows() {
  tpu.inst dma.st dram_addr=0xfc dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=1 cols=1 dtype=f32
  tpu.depend store -> load
  tpu.depend compute -> load
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=8192 sram_stride=8 rows=8 cols=8 dtype=f32
  return
}

// A later group stores to the DRAM the load reads: the load stays behind
// the wait.
// CHECK-LABEL: func.func @written
// CHECK:      tpu.depend compute -> load
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0
func.func @written() {
  tpu.inst dma.ld dram_addr=0x200 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.depend store -> load
  tpu.depend compute -> load
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=8192 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.depend store -> load
  tpu.depend compute -> load
  tpu.inst dma.st dram_addr=0xfc dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=1 cols=1 dtype=f32
  return
}

// What the program stored before the previous group's wait is settled:
// that wait saw the store complete, so the group's load of it (into bank
// 2, which the previous group never touches) moves as a constant's would.
// The next load reads what the previous group stores: it goes right after
// that store.
// CHECK-LABEL: func.func @settled
// CHECK:      tpu.depend compute -> load
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0 {{.*}} sram_addr=8192
// CHECK-NEXT: tpu.await
// CHECK:      tpu.inst dma.st dram_addr=0x400
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x400 {{.*}} sram_addr=12288
// CHECK-NEXT: tpu.depend store -> load
func.func @settled() {
  tpu.inst dma.st dram_addr=0x0 dram_stride=8 space=sp sram_addr=4096 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.depend store -> load
  tpu.depend compute -> load
  tpu.inst dma.ld dram_addr=0x200 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  %filled = tpu.signal load -> compute
  tpu.await %filled
  tpu.inst v.relu dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=8 cols=8
  tpu.depend compute -> store
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.depend store -> load
  tpu.depend compute -> load
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=8192 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.inst dma.ld dram_addr=0x400 dram_stride=8 space=sp sram_addr=12288 sram_stride=8 rows=8 cols=8 dtype=f32
  return
}

// The load queue's tokens between such loads move up with them, each still
// after the loads it says are done: both panels and their tokens. Without
// a group before, they go to the function's start.
// CHECK-LABEL: func.func @first
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0
// CHECK-NEXT: tpu.signal load -> compute
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x100
// CHECK-NEXT: tpu.signal load -> compute
// CHECK-NEXT: tpu.depend store -> load
// CHECK-NEXT: tpu.depend compute -> load
func.func @first() {
  tpu.depend store -> load
  tpu.depend compute -> load
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=8192 sram_stride=8 rows=8 cols=8 dtype=f32
  %panel = tpu.signal load -> compute
  tpu.inst dma.ld dram_addr=0x100 dram_stride=8 space=sp sram_addr=12288 sram_stride=8 rows=8 cols=8 dtype=f32
  %second = tpu.signal load -> compute
  tpu.await %panel
  tpu.await %second
  return
}

// A token before the group's first load stays, and so do the loads after
// it (above it, it would wait for them).
// CHECK-LABEL: func.func @tokenFirst
// CHECK-NEXT: tpu.depend store -> load
// CHECK-NEXT: tpu.depend compute -> load
// CHECK-NEXT: tpu.signal load -> compute
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0
func.func @tokenFirst() {
  tpu.depend store -> load
  tpu.depend compute -> load
  %early = tpu.signal load -> compute
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=8192 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.await %early
  return
}

// The group's constant goes into bank 0, which the previous group reads
// and stores from to the end, with no token that frees it: the group moves
// to the scratchpad's upper half, every scratchpad address of its
// instructions 2 banks (8192 words) up, and its load then goes ahead of
// the wait, the load of what the previous group stores right after that
// store. Its accumulator addresses stay.
// CHECK-LABEL: func.func @relocated
// CHECK:      tpu.signal load -> compute
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0 {{.*}} sram_addr=8192
// CHECK-NEXT: tpu.await
// CHECK:      tpu.inst dma.st dram_addr=0x400
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x400 {{.*}} sram_addr=8256
// CHECK-NEXT: tpu.depend store -> load
// CHECK-NEXT: tpu.depend compute -> load
// CHECK-NEXT: tpu.inst v.add dst_space=acc dst_addr=0 src_space=sp src_addr=8192 {{.*}} src2_space=sp src2_addr=8256
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x600 {{.*}} space=acc sram_addr=0
func.func @relocated() {
  tpu.inst dma.ld dram_addr=0x200 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  %filled = tpu.signal load -> compute
  tpu.await %filled
  tpu.inst v.relu dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=8 cols=8
  tpu.depend compute -> store
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.depend store -> load
  tpu.depend compute -> load
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.inst dma.ld dram_addr=0x400 dram_stride=8 space=sp sram_addr=64 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.inst v.add dst_space=acc dst_addr=0 src_space=sp src_addr=0 rows=8 cols=8 src2_space=sp src2_addr=64 broadcast=none
  tpu.inst dma.st dram_addr=0x600 dram_stride=8 space=acc sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  return
}

// The same group reaching into bank 2 (word 8256) would not fit 8192 words
// up, but fits one bank (4096 words) up, where its loads are free too.
// CHECK-LABEL: func.func @oneBankUp
// CHECK:      tpu.signal load -> compute
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0 {{.*}} sram_addr=4096
// CHECK-NEXT: tpu.await
// CHECK:      tpu.inst dma.st dram_addr=0x400
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x400 {{.*}} sram_addr=12352
// CHECK-NEXT: tpu.depend store -> load
// CHECK-NEXT: tpu.depend compute -> load
// CHECK-NEXT: tpu.inst v.add dst_space=acc dst_addr=0 src_space=sp src_addr=4096 {{.*}} src2_space=sp src2_addr=12352
func.func @oneBankUp() {
  tpu.inst dma.ld dram_addr=0x200 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  %filled = tpu.signal load -> compute
  tpu.await %filled
  tpu.inst v.relu dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=8 cols=8
  tpu.depend compute -> store
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.depend store -> load
  tpu.depend compute -> load
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.inst dma.ld dram_addr=0x400 dram_stride=8 space=sp sram_addr=8256 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.inst v.add dst_space=acc dst_addr=0 src_space=sp src_addr=0 rows=8 cols=8 src2_space=sp src2_addr=8256 broadcast=none
  tpu.inst dma.st dram_addr=0x600 dram_stride=8 space=acc sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  return
}

// Reaching into the last bank (word 12352), the group fits nowhere higher:
// it stays, and so does its load.
// CHECK-LABEL: func.func @tooHigh
// CHECK:      tpu.depend compute -> load
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0 {{.*}} sram_addr=0
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x400 {{.*}} sram_addr=12352
func.func @tooHigh() {
  tpu.inst dma.ld dram_addr=0x200 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  %filled = tpu.signal load -> compute
  tpu.await %filled
  tpu.inst v.relu dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=8 cols=8
  tpu.depend compute -> store
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.depend store -> load
  tpu.depend compute -> load
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.inst dma.ld dram_addr=0x400 dram_stride=8 space=sp sram_addr=12352 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.inst v.add dst_space=acc dst_addr=0 src_space=sp src_addr=0 rows=8 cols=8 src2_space=sp src2_addr=12352 broadcast=none
  tpu.inst dma.st dram_addr=0x600 dram_stride=8 space=acc sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  return
}

// A weights token (the previous group's panel in bank 3 is free once its
// tile is in the array) releases bank 3 for the next group's panel, but
// not bank 0, which the previous group's mm reads until it completes: the
// load into bank 0 stays behind the group's wait.
// CHECK-LABEL: func.func @weightsRelease
// CHECK:      tpu.inst mxu.mm
// CHECK-NEXT: %[[PANEL:.*]] = tpu.signal compute -> load weights
// CHECK-NEXT: tpu.await %[[PANEL]]
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0 {{.*}} sram_addr=12288
// CHECK-NEXT: tpu.inst v.relu
// CHECK:      tpu.depend compute -> load
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x100 {{.*}} sram_addr=0
func.func @weightsRelease() {
  tpu.inst dma.ld dram_addr=0x200 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  %filled = tpu.signal load -> compute
  tpu.await %filled
  tpu.inst mxu.ldw src_addr=12288 src_stride=8 rows=8 cols=8
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
  %panel = tpu.signal compute -> load weights
  tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=8 cols=8
  tpu.depend compute -> store
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=acc sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.depend store -> load
  tpu.depend compute -> load
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=12288 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.inst dma.ld dram_addr=0x100 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  return
}

}
