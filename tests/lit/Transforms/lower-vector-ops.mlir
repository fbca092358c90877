// RUN: tpu-opt %s --tpu-lower-vector-ops | FileCheck %s
// RUN: tpu-opt %s --tpu-lower-vector-ops --tpu-lower-vector-ops | FileCheck %s

// The vector unit's operations, planned by hand for the tpu-8x8 target (the
// tiles as tpu-plan-tiles writes them, the DRAM places as tpu-plan-memory
// does), to instructions, each result then the tensor the program stored.
// Running the pass again changes nothing.
#target = #tpu.target<name = "tpu-8x8", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>
module attributes {tpu.target = #target} {

// One vector op: the clamp's bounds at 0, the input at 64, the result at
// 320. A tile is loaded once its buffer's earlier readers and DRAM's earlier
// writers are done; the unit waits for the loads, the store for the unit.
// CHECK-LABEL: func.func @clamp
// CHECK-NEXT: %[[BOUNDS:.*]] = tpu.dram_constant 0x0 dense<{{\[\[}}0.000000e+00, 6.000000e+00]]> : tensor<1x2xf32>
// CHECK-NEXT: tpu.depend compute -> load
// CHECK-NEXT: tpu.depend store -> load
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x40 dram_stride=64 space=sp sram_addr=0 sram_stride=64 rows=1 cols=64 dtype=f32
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0 dram_stride=2 space=sp sram_addr=64 sram_stride=2 rows=1 cols=2 dtype=f32
// CHECK-NEXT: tpu.depend load -> compute
// CHECK-NEXT: tpu.depend store -> compute
// CHECK-NEXT: tpu.inst v.clamp dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=8 cols=8 src2_space=sp src2_addr=64 broadcast=scalar
// CHECK-NEXT: tpu.depend compute -> store
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x140 dram_stride=64 space=sp sram_addr=0 sram_stride=64 rows=1 cols=64 dtype=f32
// CHECK-NEXT: %[[Y:.*]] = tpu.stored 0x140 from %arg0, %[[BOUNDS]] : tensor<8x8xf32>, tensor<1x2xf32> -> tensor<8x8xf32>
// CHECK-NEXT: return %[[Y]]
  func.func @clamp(%x: tensor<8x8xf32> {tpu.dram_address = 64 : i64}) -> tensor<8x8xf32> {
    %bounds = tpu.dram_constant 0x0 dense<[[0.0, 6.0]]> : tensor<1x2xf32>
    %y = tpu.clamp %x, %bounds {tpu.dram_address = 320 : i64, tpu.tiling = #tpu.vector_tiling<rows = 8, cols = 8, input = 0, operand = 64, output = 0>} : tensor<8x8xf32>, tensor<1x2xf32>
    return %y : tensor<8x8xf32>
  }


// A conversion to int32 words (ArgMax's indices): v.cvt.f2i, and the store
// moves i32 elements. The dense 8 x 1 tile runs as one row of the 8 lanes.
// CHECK-LABEL: func.func @to_int
// CHECK: tpu.inst dma.ld dram_addr=0x40 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=1 cols=8 dtype=f32
// CHECK: tpu.inst v.cvt.f2i dst_space=sp dst_addr=8 src_space=sp src_addr=0 rows=1 cols=8
// CHECK: tpu.inst dma.st dram_addr=0x80 dram_stride=8 space=sp sram_addr=8 sram_stride=8 rows=1 cols=8 dtype=i32
// CHECK-NEXT: %[[Y:.*]] = tpu.stored 0x80 from %arg0 : tensor<8x1xf32> -> tensor<8x1xi32>
// CHECK-NEXT: return %[[Y]]
  func.func @to_int(%x: tensor<8x1xf32> {tpu.dram_address = 64 : i64}) -> tensor<8x1xi32> {
    %y = tpu.to_int %x {tpu.dram_address = 128 : i64, tpu.tiling = #tpu.vector_tiling<rows = 8, cols = 1, input = 0, output = 8>} : tensor<8x1xf32> -> tensor<8x1xi32>
    return %y : tensor<8x1xi32>
  }

// A row-local group (a softmax's tail: x - max, exp): each tile of whole
// rows is loaded once with the column it needs, the members run on
// scratchpad buffers (the column spread over the rows: broadcast=column), and only
// the group's value is stored. The loads announce the tile to the vector
// unit, whose ops announce it to the store. The exp, with no operand that
// follows the rows, sees the dense 4 x 6 words as 3 rows of the 8 lanes.
// CHECK-LABEL: func.func @row_group
// CHECK: tpu.inst dma.ld dram_addr=0x0 dram_stride=24 space=sp sram_addr=0 sram_stride=24 rows=1 cols=24 dtype=f32
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x80 dram_stride=4 space=sp sram_addr=24 sram_stride=4 rows=1 cols=4 dtype=f32
// CHECK-NEXT: %[[TILE:.*]] = tpu.signal load -> compute
// CHECK-NEXT: tpu.await %[[TILE]]
// CHECK-NEXT: tpu.inst v.sub dst_space=sp dst_addr=28 src_space=sp src_addr=0 rows=4 cols=6 src2_space=sp src2_addr=24 broadcast=column
// CHECK-NEXT: tpu.inst v.exp {{.*}} rows=3 cols=8
// CHECK-NEXT: %[[DONE:.*]] = tpu.signal compute -> store
// CHECK-NEXT: tpu.await %[[DONE]]
// CHECK-NEXT: tpu.inst dma.st dram_addr=0xc0 dram_stride=24 {{.*}} rows=1 cols=24 dtype=f32
// CHECK-NEXT: tpu.signal store -> load
// CHECK-NEXT: tpu.stored 0xc0 from %arg0, %arg1
  func.func @row_group(%x: tensor<4x6xf32> {tpu.dram_address = 0 : i64}, %max: tensor<4x1xf32> {tpu.dram_address = 128 : i64}) -> tensor<4x6xf32> {
    %e = tpu.fused attributes {tpu.dram_address = 192 : i64, tpu.tiling = #tpu.row_group_tiling<rows = 4, inputs = [0, 24], results = [28, 0]>} -> tensor<4x6xf32> {
      %d = tpu.binary sub %x, %max : tensor<4x6xf32>, tensor<4x1xf32> -> tensor<4x6xf32>
      %exp = tpu.unary exp %d : tensor<4x6xf32>
      tpu.yield %exp : tensor<4x6xf32>
    }
    return %e : tensor<4x6xf32>
  }

// The same group on 2-row tiles in one set of buffers: the next tile's
// loads wait for the store of this one (the tiles follow one another).
// CHECK-LABEL: func.func @row_group_one_set
// CHECK: tpu.inst dma.ld {{.*}} sram_addr=0 {{.*}} rows=1 cols=12
// CHECK-NEXT: tpu.inst dma.ld {{.*}} sram_addr=12 {{.*}} rows=1 cols=2
// CHECK-NEXT: %[[TILE0:.*]] = tpu.signal load -> compute
// CHECK-NEXT: tpu.await %[[TILE0]]
// CHECK: tpu.inst v.exp
// CHECK: tpu.inst dma.st dram_addr=0xc0 {{.*}} sram_addr=0 {{.*}} rows=1 cols=12
// CHECK-NEXT: %[[FREE0:.*]] = tpu.signal store -> load
// CHECK-NEXT: tpu.await %[[FREE0]]
// CHECK-NEXT: tpu.inst dma.ld {{.*}} sram_addr=0 {{.*}} rows=1 cols=12
// CHECK-NEXT: tpu.inst dma.ld {{.*}} sram_addr=12 {{.*}} rows=1 cols=2
// CHECK-NEXT: %[[TILE1:.*]] = tpu.signal load -> compute
// CHECK-NEXT: tpu.await %[[TILE1]]
// CHECK: tpu.inst dma.st dram_addr=0xf0 {{.*}} sram_addr=0 {{.*}} rows=1 cols=12
  func.func @row_group_one_set(%x: tensor<4x6xf32> {tpu.dram_address = 0 : i64}, %max: tensor<4x1xf32> {tpu.dram_address = 128 : i64}) -> tensor<4x6xf32> {
    %e = tpu.fused attributes {tpu.dram_address = 192 : i64, tpu.tiling = #tpu.row_group_tiling<rows = 2, inputs = [0, 12], results = [14, 0]>} -> tensor<4x6xf32> {
      %d = tpu.binary sub %x, %max : tensor<4x6xf32>, tensor<4x1xf32> -> tensor<4x6xf32>
      %exp = tpu.unary exp %d : tensor<4x6xf32>
      tpu.yield %exp : tensor<4x6xf32>
    }
    return %e : tensor<4x6xf32>
  }

// Two sets of buffers, the second 64 words after the first, on 2-row tiles
// of 6 rows: the bias row is loaded once (its fixed place, no set), then
// tile 0 into the first set. Tile 1 loads into the second set before the
// vector unit starts on tile 0; tile 2 goes into the first set again once
// the store of tile 0 has freed it (store -> load), before the vector unit
// starts on tile 1, and so on: the DMA works while the vector unit does.
// The bias add follows the tile's rows (its operand is a row); the
// exponential sees the dense 2 x 4 tile as one row of the 8 lanes.
// CHECK-LABEL: func.func @row_group_two_sets
// CHECK: tpu.inst dma.ld dram_addr=0x100 {{.*}} sram_addr=0 {{.*}} rows=1 cols=4
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x0 {{.*}} sram_addr=16 {{.*}} rows=1 cols=8
// CHECK-NEXT: %[[TILE0:.*]] = tpu.signal load -> compute
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x20 {{.*}} sram_addr=80 {{.*}} rows=1 cols=8
// CHECK-NEXT: %[[TILE1:.*]] = tpu.signal load -> compute
// CHECK-NEXT: tpu.await %[[TILE0]]
// CHECK-NEXT: tpu.inst v.add dst_space=sp dst_addr=24 src_space=sp src_addr=16 rows=2 cols=4 src2_space=sp src2_addr=0 broadcast=row
// CHECK-NEXT: tpu.inst v.exp dst_space=sp dst_addr=16 src_space=sp src_addr=24 rows=1 cols=8
// CHECK-NEXT: %[[DONE0:.*]] = tpu.signal compute -> store
// CHECK-NEXT: tpu.await %[[DONE0]]
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x200 {{.*}} sram_addr=16 {{.*}} rows=1 cols=8
// CHECK-NEXT: %[[FREE0:.*]] = tpu.signal store -> load
// CHECK-NEXT: tpu.await %[[FREE0]]
// CHECK-NEXT: tpu.inst dma.ld dram_addr=0x40 {{.*}} sram_addr=16 {{.*}} rows=1 cols=8
// CHECK-NEXT: %[[TILE2:.*]] = tpu.signal load -> compute
// CHECK-NEXT: tpu.await %[[TILE1]]
// CHECK-NEXT: tpu.inst v.add dst_space=sp dst_addr=88 src_space=sp src_addr=80 rows=2 cols=4 src2_space=sp src2_addr=0 broadcast=row
// CHECK-NEXT: tpu.inst v.exp dst_space=sp dst_addr=80 src_space=sp src_addr=88 rows=1 cols=8
// CHECK-NEXT: %[[DONE1:.*]] = tpu.signal compute -> store
// CHECK-NEXT: tpu.await %[[DONE1]]
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x220 {{.*}} sram_addr=80 {{.*}} rows=1 cols=8
// CHECK-NEXT: tpu.signal store -> load
// CHECK-NEXT: tpu.await %[[TILE2]]
// CHECK-NEXT: tpu.inst v.add dst_space=sp dst_addr=24 src_space=sp src_addr=16
// CHECK-NEXT: tpu.inst v.exp dst_space=sp dst_addr=16 src_space=sp src_addr=24
// CHECK-NEXT: %[[DONE2:.*]] = tpu.signal compute -> store
// CHECK-NEXT: tpu.await %[[DONE2]]
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x240 {{.*}} sram_addr=16 {{.*}} rows=1 cols=8
// CHECK-NEXT: tpu.signal store -> load
// CHECK-NEXT: tpu.stored 0x200 from %arg0, %arg1
  func.func @row_group_two_sets(%x: tensor<6x4xf32> {tpu.dram_address = 0 : i64}, %bias: tensor<1x4xf32> {tpu.dram_address = 256 : i64}) -> tensor<6x4xf32> {
    %e = tpu.fused attributes {tpu.dram_address = 512 : i64, tpu.tiling = #tpu.row_group_tiling<rows = 2, inputs = [16, 0], results = [24, 16], second_set = 64>} -> tensor<6x4xf32> {
      %s = tpu.binary add %x, %bias : tensor<6x4xf32>, tensor<1x4xf32> -> tensor<6x4xf32>
      %exp = tpu.unary exp %s : tensor<6x4xf32>
      tpu.yield %exp : tensor<6x4xf32>
    }
    return %e : tensor<6x4xf32>
  }

// A row reduction: the tile of whole rows, then each row's sum into a
// column after it.
// CHECK-LABEL: func.func @row_sum
// CHECK: tpu.inst dma.ld dram_addr=0x0 dram_stride=24 {{.*}} sram_addr=0 {{.*}} rows=1 cols=24
// CHECK: tpu.inst v.rowsum dst_space=sp dst_addr=24 src_space=sp src_addr=0 rows=4 cols=6
// CHECK: tpu.inst dma.st dram_addr=0x80 dram_stride=4 space=sp sram_addr=24 sram_stride=4 rows=1 cols=4
  func.func @row_sum(%x: tensor<4x6xf32> {tpu.dram_address = 0 : i64}) -> tensor<4x1xf32> {
    %s = tpu.row_reduce sum %x {tpu.dram_address = 128 : i64, tpu.tiling = #tpu.vector_tiling<rows = 4, cols = 6, input = 0, output = 24>} : tensor<4x6xf32> -> tensor<4x1xf32>
    return %s : tensor<4x1xf32>
  }

// A copy (an output that was an input, as tpu-plan-memory makes it) goes
// through the scratchpad: a load, the store waits for it, the store.
// CHECK-LABEL: func.func @copy
// CHECK: tpu.inst dma.ld dram_addr=0x0 {{.*}} rows=1 cols=8
// CHECK-NEXT: tpu.depend load -> store
// CHECK-NEXT: tpu.inst dma.st dram_addr=0x40 {{.*}} rows=1 cols=8
// CHECK-NEXT: %[[COPY:.*]] = tpu.stored 0x40 from %arg0 : tensor<2x4xf32> -> tensor<2x4xf32>
// CHECK: return %[[COPY]]
  func.func @copy(%x: tensor<2x4xf32> {tpu.dram_address = 0 : i64}) -> tensor<2x4xf32> {
    %c = tpu.unary copy %x {tpu.dram_address = 64 : i64, tpu.tiling = #tpu.vector_tiling<rows = 2, cols = 4, input = 0, output = 0>} : tensor<2x4xf32>
    return %c : tensor<2x4xf32>
  }
}
