// RUN: tpu-opt %s --tpu-schedule-tokens | FileCheck %s
// RUN: tpu-opt %s --tpu-schedule-tokens --tpu-schedule-tokens | FileCheck %s

// The order between the queues, written by hand, as tokens. Running the
// pass again changes nothing.

// A signal is a push on its `from` queue; an await pops its channel up to
// that token, the tokens before it included; a depend is a push and its pop.
// CHECK-LABEL: func.func @channels
// CHECK-NEXT: tpu.inst dma.ld {{.*}} sram_addr=0 {{.*}}
// CHECK-NEXT: tpu.inst sync.push from=load to=compute
// CHECK-NEXT: tpu.inst dma.ld {{.*}} sram_addr=64 {{.*}}
// CHECK-NEXT: tpu.inst sync.push from=load to=compute
// CHECK-NEXT: tpu.inst sync.pop from=load to=compute
// CHECK-NEXT: tpu.inst sync.pop from=load to=compute
// CHECK-NEXT: tpu.inst v.relu
// CHECK-NEXT: tpu.inst sync.push from=compute to=store
// CHECK-NEXT: tpu.inst sync.pop from=compute to=store
// CHECK-NEXT: tpu.inst dma.st
// CHECK-NEXT: return
func.func @channels() {
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  %first = tpu.signal load -> compute
  tpu.inst dma.ld dram_addr=0x100 dram_stride=8 space=sp sram_addr=64 sram_stride=8 rows=8 cols=8 dtype=f32
  %second = tpu.signal load -> compute
  tpu.await %second
  tpu.await %first
  tpu.inst v.relu dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=8 cols=8
  tpu.depend compute -> store
  tpu.inst dma.st dram_addr=0x200 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  return
}

// A depend is nothing when `from` has issued nothing since its last token to
// `to` (here the push of the signal before it); the next depend, after a
// new load, is a token again.
// CHECK-LABEL: func.func @satisfied
// CHECK-NEXT: tpu.inst dma.ld
// CHECK-NEXT: tpu.inst sync.push from=load to=compute
// CHECK-NEXT: tpu.inst sync.pop from=load to=compute
// CHECK-NEXT: tpu.inst dma.ld
// CHECK-NEXT: tpu.inst sync.push from=load to=compute
// CHECK-NEXT: tpu.inst sync.pop from=load to=compute
// CHECK-NEXT: return
func.func @satisfied() {
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  %loaded = tpu.signal load -> compute
  tpu.await %loaded
  tpu.depend load -> compute
  tpu.inst dma.ld dram_addr=0x100 dram_stride=8 space=sp sram_addr=64 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.depend load -> compute
  return
}

// A depend right after a token nobody has popped yet (tpu-forward-stores
// puts one after a load for copies further on) pops that token: no new
// push, and the await of it later pops nothing more.
// CHECK-LABEL: func.func @pushedNotPopped
// CHECK-NEXT: tpu.inst dma.ld
// CHECK-NEXT: tpu.inst sync.push from=load to=compute
// CHECK-NEXT: tpu.inst sync.pop from=load to=compute
// CHECK-NEXT: tpu.inst v.relu
// CHECK-NEXT: return
func.func @pushedNotPopped() {
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  %loaded = tpu.signal load -> compute
  tpu.depend load -> compute
  tpu.inst v.relu dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=8 cols=8
  tpu.await %loaded
  return
}

// A weights signal is a push with weights=1: it says only that the weight
// loads before it are done (the panel they read may be refilled), not the
// product, so a depend after it still pushes a token of its own before
// the activations the product reads are refilled.
// CHECK-LABEL: func.func @weightsToken
// CHECK-NEXT: tpu.inst mxu.ldw
// CHECK-NEXT: tpu.inst mxu.mm
// CHECK-NEXT: tpu.inst sync.push from=compute to=load weights=1
// CHECK-NEXT: tpu.inst sync.pop from=compute to=load
// CHECK-NEXT: tpu.inst dma.ld {{.*}} sram_addr=64
// CHECK-NEXT: tpu.inst sync.push from=compute to=load{{$}}
// CHECK-NEXT: tpu.inst sync.pop from=compute to=load
// CHECK-NEXT: tpu.inst dma.ld {{.*}} sram_addr=0
// CHECK-NEXT: return
func.func @weightsToken() {
  tpu.inst mxu.ldw src_addr=64 src_stride=8 rows=8 cols=8
  tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
  %panel = tpu.signal compute -> load weights
  tpu.await %panel
  tpu.inst dma.ld dram_addr=0x100 dram_stride=8 space=sp sram_addr=64 sram_stride=8 rows=8 cols=8 dtype=f32
  tpu.depend compute -> load
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  return
}

// A signal nobody awaits is no instruction: a push would hold its queue
// until everything before it completes, for no one. Tokens are numbered
// over the pushes there are.
// CHECK-LABEL: func.func @unawaited
// CHECK-NEXT: tpu.inst mxu.ldw
// CHECK-NEXT: tpu.inst dma.ld
// CHECK-NEXT: tpu.inst sync.push from=load to=compute
// CHECK-NEXT: tpu.inst sync.pop from=load to=compute
// CHECK-NEXT: return
func.func @unawaited() {
  tpu.inst mxu.ldw src_addr=0 src_stride=8 rows=8 cols=8
  %released = tpu.signal compute -> load
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32
  %unused = tpu.signal load -> compute
  %loaded = tpu.signal load -> compute
  tpu.await %loaded
  return
}
