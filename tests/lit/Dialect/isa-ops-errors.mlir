// RUN: tpu-opt %s --split-input-file --verify-diagnostics

func.func @mnemonic() {
  // expected-error @+1 {{unknown mnemonic 'mxu.fma'}}
  tpu.inst mxu.fma src_addr=0
  return
}

// -----

func.func @missing_field() {
  // expected-error @+1 {{mxu.ldw: missing field(s) cols}}
  tpu.inst mxu.ldw src_addr=0 src_stride=8 rows=8
  return
}

// -----

func.func @field_range() {
  // expected-error @+1 {{mxu.ldw: field rows = 99999 does not fit in 12 bits (max 4095)}}
  tpu.inst mxu.ldw src_addr=0 src_stride=8 rows=99999 cols=8
  return
}

// -----

func.func @bad_value() {
  // expected-error @+1 {{dma.ld: bad value 'xx' for field space}}
  tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=xx sram_addr=0 sram_stride=8 rows=1 cols=8 dtype=f32
  return
}

// -----

func.func @own_queue() {
  // expected-error @+1 {{signals its own queue}}
  %t = tpu.signal load -> load
  return
}

// -----

func.func @weights_from_load() {
  // expected-error @+1 {{says weight loads are done, which only the compute queue issues}}
  %t = tpu.signal load -> compute weights
  return
}

// -----

func.func @push_weights_from_store() {
  // expected-error @+1 {{sync.push: weights=1 needs from=compute}}
  tpu.inst sync.push from=store to=load weights=1
  return
}

// -----

func.func @fields_generic() {
  // expected-error @+1 {{mxu.ldw has 4 fields, got 2}}
  "tpu.inst"() <{mnemonic = "mxu.ldw", fields = array<i64: 0, 8>}> : () -> ()
  return
}
