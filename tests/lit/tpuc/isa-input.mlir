// tpuc reads the ISA level too and only encodes it: a program written by
// hand (or by tpuc --emit=isa) becomes a bundle, one instruction per
// tpu.inst, each named by its location, and the return is the final halt.
// RUN: tpuc %s --emit=asm | FileCheck %s
// RUN: tpuc %s -o %t.tpub
// RUN: tpu-objdump %t.tpub | FileCheck %s --check-prefix=BUNDLE
// RUN: sed -e 's/tpu.inst sync.push from=compute to=store/tpu.depend compute -> store/' -e '/sync.pop from=compute/d' %s > %t.unscheduled.mlir
// RUN: tpuc %t.unscheduled.mlir --emit=asm | FileCheck %s
// RUN: sed 's/tpu.dram_bytes = 576 : i64//' %s > %t.nosize.mlir
// RUN: not tpuc %t.nosize.mlir -o %t.tpub 2>&1 | FileCheck %s --check-prefix=NOSIZE

// CHECK: # 9 instructions for 'tpu-8x8' (8x8 array)
// CHECK-NEXT: dma.ld dram_addr=0x40 {{.*}} # clamp (Clip)
// CHECK-NEXT: dma.ld dram_addr=0x0 {{.*}} # clamp (Clip)
// CHECK-NEXT: sync.push from=load to=compute # clamp (Clip)
// CHECK-NEXT: sync.pop from=load to=compute # clamp (Clip)
// CHECK-NEXT: v.clamp {{.*}} # clamp (Clip)
// CHECK-NEXT: sync.push from=compute to=store # clamp (Clip)
// CHECK-NEXT: sync.pop from=compute to=store # clamp (Clip)
// CHECK-NEXT: dma.st dram_addr=0x140 {{.*}} # clamp (Clip)
// CHECK-NEXT: halt # halt
// BUNDLE: 9 instructions, 8 constant bytes at 0x0, dram_bytes 0x240
// BUNDLE: x f32[8, 8] at 0x40
// BUNDLE: y f32[8, 8] at 0x140
// NOSIZE: tpuc: error: {{.*}}: holds ISA instructions but no 'tpu.dram_bytes', the DRAM size its program needs

#target = #tpu.target<name = "tpu-8x8", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>
#clamp = loc("clamp (Clip)")
module attributes {tpu.target = #target} {
  func.func @main(%x: tensor<8x8xf32> {tpu.dram_address = 64 : i64, tpu.name = "x"}) -> (tensor<8x8xf32> {tpu.name = "y", tpu.reduction_length = 0 : i64}) attributes {tpu.dram_bytes = 576 : i64} {
    %bounds = tpu.dram_constant 0x0 dense<[[0.0, 6.0]]> : tensor<1x2xf32>
    tpu.inst dma.ld dram_addr=0x40 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32 loc(#clamp)
    tpu.inst dma.ld dram_addr=0x0 dram_stride=2 space=sp sram_addr=64 sram_stride=2 rows=1 cols=2 dtype=f32 loc(#clamp)
    tpu.inst sync.push from=load to=compute loc(#clamp)
    tpu.inst sync.pop from=load to=compute loc(#clamp)
    tpu.inst v.clamp dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=8 cols=8 src2_space=sp src2_addr=64 broadcast=scalar loc(#clamp)
    tpu.inst sync.push from=compute to=store loc(#clamp)
    tpu.inst sync.pop from=compute to=store loc(#clamp)
    tpu.inst dma.st dram_addr=0x140 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=8 cols=8 dtype=f32 loc(#clamp)
    %y = tpu.stored 0x140 : tensor<8x8xf32>
    return %y : tensor<8x8xf32>
  }
}
