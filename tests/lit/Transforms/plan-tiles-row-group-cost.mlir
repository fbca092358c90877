// RUN: tpu-opt %s --tpu-plan-tiles | FileCheck %s

// Whether a row group pays (docs/compiler.md, "Whether a row group pays"),
// pinned on the 1024-word scratchpad of tests/lit/tpuc/Inputs/tpu-8x8-4k.json:
// 8 lanes, vector latency P = 4, DRAM latency L = 100 at 8 B/cycle (a row of
// 100 words holds the bus b = 50 cycles), 16 requests in flight. A transfer
// of n rows takes L + n*b; a vector op on t rows P + t*ceil(cols/8).
#t = #tpu.target<name = "tpu-8x8-4k", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 4, banks = 1>, accumulator = <kib = 4, banks = 1>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>
module attributes {tpu.target = #t} {

// Each add alone: 200 words a row (its two operands), so 5-row tiles, 12 of
// 5 rows and one of 4; a tile of t rows loads two operands, adds and stores:
// 3 (100 + 50t) + 4 + 13t, so 1119 and 956 cycles: 14,384 an add.

// Four inputs summed, 64 x 100: the group's inputs and its last partial sum
// take 5 x 100 words a row, so 2-row tiles: 32 tiles of four 2-row loads,
// three adds and a store, 4 (100 + 100) + 3 (4 + 26) + 200 = 1090 cycles,
// 34,880 in all against three adds alone, 43,152. The group stays.
// CHECK-LABEL: func.func @sum4
// CHECK: tpu.fused attributes {tpu.tiling = #tpu.row_group_tiling<rows = 2,
func.func @sum4(%x0: tensor<64x100xf32>, %x1: tensor<64x100xf32>, %x2: tensor<64x100xf32>, %x3: tensor<64x100xf32>) -> tensor<64x100xf32> {
  %g = tpu.fused -> tensor<64x100xf32> {
    %s1 = tpu.binary add %x0, %x1 : tensor<64x100xf32>, tensor<64x100xf32> -> tensor<64x100xf32>
    %s2 = tpu.binary add %s1, %x2 : tensor<64x100xf32>, tensor<64x100xf32> -> tensor<64x100xf32>
    %s3 = tpu.binary add %s2, %x3 : tensor<64x100xf32>, tensor<64x100xf32> -> tensor<64x100xf32>
    tpu.yield %s3 : tensor<64x100xf32>
  }
  return %g : tensor<64x100xf32>
}

// Six inputs: 7 x 100 words a row leave room for 1-row tiles: 64 tiles of
// 6 (100 + 50) + 5 (4 + 13) + 150 = 1135 cycles, 72,640, against five adds
// alone, 71,920: the latency of the many small loads costs more than the
// round trips it saves. The longest first run that pays is the first three
// adds (the four-input group above: 34,880 against 43,152; four adds in
// 1-row tiles take 61,952 against 57,536); the last two, reading the third's
// sum and two inputs, take 2-row tiles: 32 (3 (100 + 100) + 2 (4 + 26) + 200)
// = 27,520 against 28,768, a group too.
// CHECK-LABEL: func.func @sum6
// CHECK: tpu.fused attributes {tpu.tiling = #tpu.row_group_tiling<rows = 2, inputs = [0, 200, 400, 600],
// CHECK-COUNT-3: tpu.binary add
// CHECK: tpu.yield
// CHECK: tpu.fused attributes {tpu.tiling = #tpu.row_group_tiling<rows = 2, inputs = [0, 200, 400],
// CHECK-COUNT-2: tpu.binary add
// CHECK: tpu.yield
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @sum6(%x0: tensor<64x100xf32>, %x1: tensor<64x100xf32>, %x2: tensor<64x100xf32>, %x3: tensor<64x100xf32>, %x4: tensor<64x100xf32>, %x5: tensor<64x100xf32>) -> tensor<64x100xf32> {
  %g = tpu.fused -> tensor<64x100xf32> {
    %s1 = tpu.binary add %x0, %x1 : tensor<64x100xf32>, tensor<64x100xf32> -> tensor<64x100xf32>
    %s2 = tpu.binary add %s1, %x2 : tensor<64x100xf32>, tensor<64x100xf32> -> tensor<64x100xf32>
    %s3 = tpu.binary add %s2, %x3 : tensor<64x100xf32>, tensor<64x100xf32> -> tensor<64x100xf32>
    %s4 = tpu.binary add %s3, %x4 : tensor<64x100xf32>, tensor<64x100xf32> -> tensor<64x100xf32>
    %s5 = tpu.binary add %s4, %x5 : tensor<64x100xf32>, tensor<64x100xf32> -> tensor<64x100xf32>
    tpu.yield %s5 : tensor<64x100xf32>
  }
  return %g : tensor<64x100xf32>
}

// Eight inputs: still 1-row tiles (9 x 100 words), 64 tiles of
// 8 (100 + 50) + 7 (4 + 13) + 150 = 1469 cycles, 94,016, against seven adds
// alone, 100,688: the group stays.
// CHECK-LABEL: func.func @sum8
// CHECK: tpu.fused attributes {tpu.tiling = #tpu.row_group_tiling<rows = 1,
func.func @sum8(%x0: tensor<64x100xf32>, %x1: tensor<64x100xf32>, %x2: tensor<64x100xf32>, %x3: tensor<64x100xf32>, %x4: tensor<64x100xf32>, %x5: tensor<64x100xf32>, %x6: tensor<64x100xf32>, %x7: tensor<64x100xf32>) -> tensor<64x100xf32> {
  %g = tpu.fused -> tensor<64x100xf32> {
    %s1 = tpu.binary add %x0, %x1 : tensor<64x100xf32>, tensor<64x100xf32> -> tensor<64x100xf32>
    %s2 = tpu.binary add %s1, %x2 : tensor<64x100xf32>, tensor<64x100xf32> -> tensor<64x100xf32>
    %s3 = tpu.binary add %s2, %x3 : tensor<64x100xf32>, tensor<64x100xf32> -> tensor<64x100xf32>
    %s4 = tpu.binary add %s3, %x4 : tensor<64x100xf32>, tensor<64x100xf32> -> tensor<64x100xf32>
    %s5 = tpu.binary add %s4, %x5 : tensor<64x100xf32>, tensor<64x100xf32> -> tensor<64x100xf32>
    %s6 = tpu.binary add %s5, %x6 : tensor<64x100xf32>, tensor<64x100xf32> -> tensor<64x100xf32>
    %s7 = tpu.binary add %s6, %x7 : tensor<64x100xf32>, tensor<64x100xf32> -> tensor<64x100xf32>
    tpu.yield %s7 : tensor<64x100xf32>
  }
  return %g : tensor<64x100xf32>
}

// Six inputs of 200 columns need 1200 words for one row of the group: more
// than the scratchpad. Instead of failing, the members form the longest runs
// that fit and pay: the first three adds (5 x 200 words, 1-row tiles: 16
// (4 (100 + 100) + 3 (4 + 25) + 200) = 17,392 against three adds alone on
// 2-row tiles, 3 x 8 (3 (100 + 200) + 4 + 50) = 22,896), then the last two
// (16 (3 (100 + 100) + 2 (4 + 25) + 200) = 13,728 against 15,264).
// CHECK-LABEL: func.func @too_big
// CHECK: tpu.fused attributes {tpu.tiling = #tpu.row_group_tiling<rows = 1, inputs = [0, 200, 400, 600],
// CHECK-COUNT-3: tpu.binary add
// CHECK: tpu.yield
// CHECK: tpu.fused attributes {tpu.tiling = #tpu.row_group_tiling<rows = 1, inputs = [0, 200, 400],
// CHECK-COUNT-2: tpu.binary add
// CHECK: tpu.yield
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @too_big(%x0: tensor<16x200xf32>, %x1: tensor<16x200xf32>, %x2: tensor<16x200xf32>, %x3: tensor<16x200xf32>, %x4: tensor<16x200xf32>, %x5: tensor<16x200xf32>) -> tensor<16x200xf32> {
  %g = tpu.fused -> tensor<16x200xf32> {
    %s1 = tpu.binary add %x0, %x1 : tensor<16x200xf32>, tensor<16x200xf32> -> tensor<16x200xf32>
    %s2 = tpu.binary add %s1, %x2 : tensor<16x200xf32>, tensor<16x200xf32> -> tensor<16x200xf32>
    %s3 = tpu.binary add %s2, %x3 : tensor<16x200xf32>, tensor<16x200xf32> -> tensor<16x200xf32>
    %s4 = tpu.binary add %s3, %x4 : tensor<16x200xf32>, tensor<16x200xf32> -> tensor<16x200xf32>
    %s5 = tpu.binary add %s4, %x5 : tensor<16x200xf32>, tensor<16x200xf32> -> tensor<16x200xf32>
    tpu.yield %s5 : tensor<16x200xf32>
  }
  return %g : tensor<16x200xf32>
}

// Four inputs of 300 columns: no run of two adds fits (4 x 300 words a
// row), so the adds run on their own (600 words a row each: 1-row tiles).
// CHECK-LABEL: func.func @no_room
// CHECK-NOT: tpu.fused
// CHECK-COUNT-3: tpu.binary add {{.*}}#tpu.vector_tiling<rows = 1, cols = 300,
// CHECK-NOT: tpu.fused
// CHECK: return
func.func @no_room(%x0: tensor<16x300xf32>, %x1: tensor<16x300xf32>, %x2: tensor<16x300xf32>, %x3: tensor<16x300xf32>) -> tensor<16x300xf32> {
  %g = tpu.fused -> tensor<16x300xf32> {
    %s1 = tpu.binary add %x0, %x1 : tensor<16x300xf32>, tensor<16x300xf32> -> tensor<16x300xf32>
    %s2 = tpu.binary add %s1, %x2 : tensor<16x300xf32>, tensor<16x300xf32> -> tensor<16x300xf32>
    %s3 = tpu.binary add %s2, %x3 : tensor<16x300xf32>, tensor<16x300xf32> -> tensor<16x300xf32>
    tpu.yield %s3 : tensor<16x300xf32>
  }
  return %g : tensor<16x300xf32>
}

}
