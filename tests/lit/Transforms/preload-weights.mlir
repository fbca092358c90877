// RUN: tpu-opt %s --tpu-preload-weights | FileCheck %s
// RUN: tpu-opt %s --tpu-preload-weights --tpu-preload-weights | FileCheck %s

// A weight tile load queued behind vector work moves up to the last
// product before it, with the awaits of its tile (tpu-8x8).
#target = #tpu.target<name = "tpu-8x8", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>
module attributes {tpu.target = #target} {

// The next group's first weight tile, loaded before the product's
// activations (so there when the product runs): it goes right after the
// product (and the weights release that follows it), its panel's await
// with it; the bias row's await stays with the add.
// CHECK-LABEL: func.func @afterEpilogue
// CHECK:      tpu.inst mxu.mm src_addr=0
// CHECK-NEXT: tpu.signal compute -> load weights
// CHECK-NEXT: tpu.await %[[PANEL:.*]]
// CHECK-NEXT: tpu.inst mxu.ldw src_addr=8192
// CHECK-NEXT: tpu.await %[[BIAS:.*]]
// CHECK-NEXT: tpu.inst v.add
// CHECK-NEXT: tpu.inst v.relu
// CHECK:      tpu.inst dma.st
// CHECK-NEXT: tpu.stored
// CHECK-NEXT: tpu.inst mxu.mm src_addr=256
func.func @afterEpilogue() {
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=4096 sram_stride=8 rows=8 cols=8 dtype=f32
  %w1 = tpu.signal load -> compute
  tpu.inst dma.ld dram_addr=0x300 dram_stride=8 space=sp sram_addr=8192 sram_stride=8 rows=8 cols=8 dtype=f32
  %w2 = tpu.signal load -> compute
  tpu.inst dma.ld dram_addr=0x200 dram_stride=8 space=sp sram_addr=12288 sram_stride=8 rows=1 cols=8 dtype=f32
  %bias = tpu.signal load -> compute
  tpu.inst dma.ld dram_addr=0x100 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  %x = tpu.signal load -> compute
  tpu.await %w1
  tpu.inst mxu.ldw src_addr=4096 src_stride=8 rows=8 cols=8
  tpu.await %x
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
  %released = tpu.signal compute -> load weights
  tpu.await %bias
  tpu.inst v.add dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=8 cols=8 src2_space=sp src2_addr=12288 broadcast=row
  tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=8 cols=8
  %done = tpu.signal compute -> store
  tpu.await %done
  tpu.inst dma.st dram_addr=0x400 dram_stride=8 space=acc sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  %y = tpu.stored 0x400 : tensor<8x8xf32>
  tpu.await %w2
  tpu.inst mxu.ldw src_addr=8192 src_stride=8 rows=8 cols=8
  tpu.inst mxu.mm src_addr=256 src_stride=8 dst_addr=1024 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
  return
}

// The tile loaded after the product's activations and a bias row: its
// 288 bytes after the DRAM latency (136 cycles at 8 bytes a cycle) would
// still be on their way when the array is done (8 rows streamed, 16 of
// drain), and the vector work would wait for them. It stays.
// CHECK-LABEL: func.func @lateTile
// CHECK:      tpu.inst v.relu
// CHECK:      tpu.await
// CHECK-NEXT: tpu.inst mxu.ldw src_addr=8192
func.func @lateTile() {
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=4096 sram_stride=8 rows=8 cols=8 dtype=f32
  %w1 = tpu.signal load -> compute
  tpu.inst dma.ld dram_addr=0x100 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  %x = tpu.signal load -> compute
  tpu.inst dma.ld dram_addr=0x200 dram_stride=8 space=sp sram_addr=12288 sram_stride=8 rows=1 cols=8 dtype=f32
  %bias = tpu.signal load -> compute
  tpu.inst dma.ld dram_addr=0x300 dram_stride=8 space=sp sram_addr=8192 sram_stride=8 rows=8 cols=8 dtype=f32
  %w2 = tpu.signal load -> compute
  tpu.await %w1
  tpu.inst mxu.ldw src_addr=4096 src_stride=8 rows=8 cols=8
  tpu.await %x
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
  tpu.await %bias
  tpu.inst v.add dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=8 cols=8 src2_space=sp src2_addr=12288 broadcast=row
  tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=8 cols=8
  tpu.await %w2
  tpu.inst mxu.ldw src_addr=8192 src_stride=8 rows=8 cols=8
  return
}

// Copies into the words the tile is read from: it stays after them.
// CHECK-LABEL: func.func @tileWritten
// CHECK:      tpu.inst v.copy
// CHECK-NEXT: tpu.await
// CHECK-NEXT: tpu.inst mxu.ldw src_addr=4096
func.func @tileWritten() {
  tpu.inst dma.ld dram_addr=0x100 dram_stride=8 space=sp sram_addr=4096 sram_stride=8 rows=8 cols=8 dtype=f32
  %w = tpu.signal load -> compute
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  %x = tpu.signal load -> compute
  tpu.await %x
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
  tpu.inst v.copy dst_space=sp dst_addr=4096 src_space=acc src_addr=0 rows=1 cols=64
  tpu.await %w
  tpu.inst mxu.ldw src_addr=4096 src_stride=8 rows=8 cols=8
  return
}

// The tile's token is signalled after the product: waiting for it there
// could wait for a load that waits for the vector work. It stays.
// CHECK-LABEL: func.func @laterToken
// CHECK:      tpu.inst v.relu
// CHECK:      tpu.inst dma.ld
// CHECK-NEXT: tpu.signal load -> compute
// CHECK-NEXT: tpu.await
// CHECK-NEXT: tpu.inst mxu.ldw
func.func @laterToken() {
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
  tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=8 cols=8
  %free = tpu.signal compute -> load
  tpu.await %free
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=4096 sram_stride=8 rows=8 cols=8 dtype=f32
  %w = tpu.signal load -> compute
  tpu.await %w
  tpu.inst mxu.ldw src_addr=4096 src_stride=8 rows=8 cols=8
  return
}

// A depend of the compute queue on the load queue may be all that orders
// the tile after its load: the weight load stays after it. So it does
// where no vector work lies in between, and after another weight load.
// CHECK-LABEL: func.func @stays
// CHECK:      tpu.inst v.relu
// CHECK-NEXT: tpu.depend load -> compute
// CHECK-NEXT: tpu.inst mxu.ldw src_addr=4096
// CHECK-NEXT: tpu.inst mxu.mm
// CHECK-NEXT: tpu.inst mxu.ldw src_addr=4160
// CHECK-NEXT: tpu.inst mxu.ldw src_addr=4224
func.func @stays() {
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
  tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=8 cols=8
  tpu.depend load -> compute
  tpu.inst mxu.ldw src_addr=4096 src_stride=8 rows=8 cols=8
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
  tpu.inst mxu.ldw src_addr=4160 src_stride=8 rows=8 cols=8
  tpu.inst mxu.ldw src_addr=4224 src_stride=8 rows=8 cols=8
  return
}

// Tokens already scheduled (tpuc reading back --emit=isa runs the pass
// again): a sync instruction between stops the move, also where no load
// in the block writes the tile (weights an earlier program left on chip).
// CHECK-LABEL: func.func @scheduledTokens
// CHECK:      tpu.inst v.relu
// CHECK-NEXT: tpu.inst sync.pop from=load to=compute
// CHECK-NEXT: tpu.inst mxu.ldw
func.func @scheduledTokens() {
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
  tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=8 cols=8
  tpu.inst sync.pop from=load to=compute
  tpu.inst mxu.ldw src_addr=4096 src_stride=8 rows=8 cols=8
  return
}

// The tile's token is awaited after the product, by the vector work, not
// right before the weight load: moved above that await, the weight load
// could read the tile before it arrives. It stays.
// CHECK-LABEL: func.func @tileAwaitedLater
// CHECK:      tpu.inst v.relu
// CHECK-NEXT: tpu.inst mxu.ldw src_addr=4096
func.func @tileAwaitedLater() {
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  %x = tpu.signal load -> compute
  tpu.inst dma.ld dram_addr=0x100 dram_stride=8 space=sp sram_addr=4096 sram_stride=8 rows=8 cols=8 dtype=f32
  %w = tpu.signal load -> compute
  tpu.await %x
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
  tpu.await %w
  tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=8 cols=8
  tpu.inst mxu.ldw src_addr=4096 src_stride=8 rows=8 cols=8
  return
}

// Among products: each tile's weight load goes up to where the plane it
// writes is free, so that it overlaps the rest of the tile before (R + n
// - 1 = 15 rows on 8x8, from that tile's first product, flip=1). The
// second tile's plane holds nothing yet: right after the first product.
// The third tile's plane is the first tile's, whose last product leaves
// the array 15 rows into the second tile: after its second product, with
// the weights release and the await between (its token is there: the
// compute queue waited for a later one).
// CHECK-LABEL: func.func @overlapped
// CHECK:      tpu.inst mxu.ldw src_addr=4096
// CHECK-NEXT: tpu.inst mxu.mm src_addr=0 {{.*}} flip=1
// CHECK-NEXT: tpu.inst mxu.ldw src_addr=4160
// CHECK-NEXT: tpu.inst mxu.mm src_addr=64 {{.*}} flip=0
// CHECK-NEXT: tpu.inst mxu.mm src_addr=0 {{.*}} flip=1
// CHECK-NEXT: tpu.inst mxu.mm src_addr=64 {{.*}} flip=0
// CHECK-NEXT: tpu.signal compute -> load weights
// CHECK-NEXT: tpu.await %[[W3:.*]]
// CHECK-NEXT: tpu.inst mxu.ldw src_addr=4224
// CHECK-NEXT: tpu.inst mxu.mm src_addr=128 {{.*}} flip=0
// CHECK-NEXT: tpu.inst mxu.mm src_addr=0 {{.*}} flip=1
func.func @overlapped() {
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=4096 sram_stride=8 rows=24 cols=8 dtype=f32
  %w = tpu.signal load -> compute
  tpu.inst dma.ld dram_addr=0x300 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=24 cols=8 dtype=f32
  %x = tpu.signal load -> compute
  tpu.await %x
  tpu.inst mxu.ldw src_addr=4096 src_stride=8 rows=8 cols=8
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
  tpu.inst mxu.mm src_addr=64 src_stride=8 dst_addr=64 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=0
  tpu.inst mxu.ldw src_addr=4160 src_stride=8 rows=8 cols=8
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=1 flip=1
  tpu.inst mxu.mm src_addr=64 src_stride=8 dst_addr=64 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=1 flip=0
  tpu.inst mxu.mm src_addr=128 src_stride=8 dst_addr=128 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=0
  %released = tpu.signal compute -> load weights
  tpu.await %w
  tpu.inst mxu.ldw src_addr=4224 src_stride=8 rows=8 cols=8
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=1 flip=1
  return
}

// Too few rows after the tile's first product for the plane to be free
// (12 of 15), and a release of more than weights (the products' buffers)
// between: the weight loads stay.
// CHECK-LABEL: func.func @notYetFree
// CHECK:      tpu.inst mxu.mm src_addr=64 {{.*}} rows=4 {{.*}} flip=0
// CHECK-NEXT: tpu.inst mxu.ldw src_addr=4224
// CHECK:      tpu.inst mxu.mm src_addr=128
// CHECK-NEXT: tpu.signal compute -> load
// CHECK-NEXT: tpu.inst mxu.ldw src_addr=4288
func.func @notYetFree() {
  tpu.inst mxu.ldw src_addr=4096 src_stride=8 rows=8 cols=8
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
  tpu.inst mxu.ldw src_addr=4160 src_stride=8 rows=8 cols=8
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=4 cols=8 dtype=bf16 accumulate=1 flip=1
  tpu.inst mxu.mm src_addr=32 src_stride=8 dst_addr=32 dst_stride=8 rows=4 cols=8 dtype=bf16 accumulate=1 flip=0
  tpu.inst mxu.mm src_addr=64 src_stride=8 dst_addr=64 dst_stride=8 rows=4 cols=8 dtype=bf16 accumulate=1 flip=0
  tpu.inst mxu.ldw src_addr=4224 src_stride=8 rows=8 cols=8
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=1 flip=1
  tpu.inst mxu.mm src_addr=64 src_stride=8 dst_addr=64 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=0
  tpu.inst mxu.mm src_addr=128 src_stride=8 dst_addr=128 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=0
  %free = tpu.signal compute -> load
  tpu.inst mxu.ldw src_addr=4288 src_stride=8 rows=8 cols=8
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=1 flip=1
  return
}

// A program read back at the ISA level (its tokens scheduled): the
// weight loads keep their places among the products, where tpuc put them
// the first time (what held one back then, a depend or a stored value, is
// no instruction now).
// CHECK-LABEL: func.func @scheduledProducts
// CHECK:      tpu.inst mxu.mm src_addr=128
// CHECK-NEXT: tpu.inst mxu.ldw src_addr=4224
func.func @scheduledProducts() {
  tpu.inst sync.pop from=load to=compute
  tpu.inst mxu.ldw src_addr=4096 src_stride=8 rows=8 cols=8
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
  tpu.inst mxu.ldw src_addr=4160 src_stride=8 rows=8 cols=8
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=1 flip=1
  tpu.inst mxu.mm src_addr=64 src_stride=8 dst_addr=64 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=1 flip=0
  tpu.inst mxu.mm src_addr=128 src_stride=8 dst_addr=128 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=0
  tpu.inst mxu.ldw src_addr=4224 src_stride=8 rows=8 cols=8
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=1 flip=1
  return
}

// An await of the store queue's token between the products (the store
// that read these accumulators last): no estimate says when it comes (the
// load tokens' would let it go up, 600 rows streaming against the store's
// 132 cycles), so the weight load stays after it, here where it was.
// CHECK-LABEL: func.func @storeToken
// CHECK:      tpu.inst mxu.mm src_addr=128
// CHECK-NEXT: tpu.await
// CHECK-NEXT: tpu.inst mxu.ldw src_addr=4224
func.func @storeToken() {
  tpu.inst mxu.ldw src_addr=4096 src_stride=8 rows=8 cols=8
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
  %done = tpu.signal compute -> store
  tpu.await %done
  tpu.inst dma.st dram_addr=0x0 dram_stride=8 space=acc sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  %read = tpu.signal store -> compute
  tpu.inst mxu.ldw src_addr=4160 src_stride=8 rows=8 cols=8
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=64 dst_stride=8 rows=200 cols=8 dtype=bf16 accumulate=0 flip=1
  tpu.inst mxu.mm src_addr=64 src_stride=8 dst_addr=128 dst_stride=8 rows=200 cols=8 dtype=bf16 accumulate=0 flip=0
  tpu.inst mxu.mm src_addr=128 src_stride=8 dst_addr=192 dst_stride=8 rows=200 cols=8 dtype=bf16 accumulate=0 flip=0
  tpu.await %read
  tpu.inst mxu.ldw src_addr=4224 src_stride=8 rows=8 cols=8
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
  return
}

}
