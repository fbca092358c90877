// RUN: tpu-opt %s --tpu-plan-memory | FileCheck %s
// RUN: tpu-opt %s --tpu-plan-memory --tpu-plan-memory | FileCheck %s
// RUN: tpu-opt %s --tpu-plan-memory --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=NAMES

// DRAM as the program sees it: the constants from 0, then the inputs, then
// the results' region, each 64-byte aligned. Planning again changes nothing.

// Unfused softmax: the input takes 1280 bytes at 0, so the region starts
// at 1280. rowmax's column (64 bytes aligned) is free once sub has read it,
// and rowsum's column reuses it; sub's result (8x40 = 1280 bytes) is free
// once exp has read it, and the reciprocal takes its first 64 bytes; exp's
// result lives until mul, so mul needs new space. The region is 1280 * 3 +
// 64 bytes. No reduction feeds the output.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%arg0: tensor<8x40xf32> {tpu.dram_address = 0 : i64})
// CHECK-SAME: -> (tensor<8x40xf32> {tpu.reduction_length = 0 : i64})
// CHECK-SAME: tpu.dram_bytes = 5184 : i64
// CHECK: tpu.row_reduce max %arg0 {tpu.dram_address = 1280 : i64}
// CHECK: tpu.binary sub {{.*}} {tpu.dram_address = 1344 : i64}
// CHECK: tpu.unary exp {{.*}} {tpu.dram_address = 2624 : i64}
// CHECK: tpu.row_reduce sum {{.*}} {tpu.dram_address = 1280 : i64}
// CHECK: tpu.unary reciprocal {{.*}} {tpu.dram_address = 1344 : i64}
// CHECK: tpu.binary mul {{.*}} {tpu.dram_address = 3904 : i64}
func.func @softmax(%x: tensor<8x40xf32>) -> tensor<8x40xf32> {
  %max = tpu.row_reduce max %x : tensor<8x40xf32> -> tensor<8x1xf32>
  %d = tpu.binary sub %x, %max : tensor<8x40xf32>, tensor<8x1xf32> -> tensor<8x40xf32>
  %e = tpu.unary exp %d : tensor<8x40xf32>
  %s = tpu.row_reduce sum %e : tensor<8x40xf32> -> tensor<8x1xf32>
  %r = tpu.unary reciprocal %s : tensor<8x1xf32>
  %y = tpu.binary mul %e, %r : tensor<8x40xf32>, tensor<8x1xf32> -> tensor<8x40xf32>
  return %y : tensor<8x40xf32>
}

// A view shares its input's buffer and keeps it alive: %m's buffer is free
// once the view's reader (the exp) has run, and the fusion group's value, the
// only one of the group with a buffer, reuses it. %e is returned through a
// view, so it keeps its buffer. The group reads %f and %w2 from above. The
// reduction lengths count K along each output's longest chain.
// CHECK-LABEL: func.func @views_and_groups
// CHECK-SAME: -> (tensor<4x4xf32> {tpu.reduction_length = 12 : i64}, tensor<4x4xf32> {tpu.reduction_length = 8 : i64})
// CHECK-SAME: tpu.dram_bytes = 448 : i64
// CHECK: tpu.matmul {{.*}} {tpu.dram_address = 320 : i64}
// CHECK-NEXT: tpu.view
// CHECK-NOT: tpu.dram_address
// CHECK: tpu.unary exp {{.*}} {tpu.dram_address = 384 : i64}
// CHECK-NEXT: tpu.view
// CHECK-NEXT: tpu.fused attributes {tpu.dram_address = 320 : i64}
// CHECK-NEXT: tpu.matmul
// CHECK-NOT: tpu.dram_address
// CHECK: tpu.yield
func.func @views_and_groups(%x: tensor<4x8xf32>, %w: tensor<8x4xf32>, %w2: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %m = tpu.matmul %x, %w : tensor<4x8xf32>, tensor<8x4xf32> -> tensor<4x4xf32>
  %v = tpu.view %m : tensor<4x4xf32> -> tensor<2x8xf32>
  %e = tpu.unary exp %v : tensor<2x8xf32>
  %f = tpu.view %e : tensor<2x8xf32> -> tensor<4x4xf32>
  %r = tpu.fused -> tensor<4x4xf32> {
    %g = tpu.matmul %f, %w2 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %relu = tpu.unary relu %g : tensor<4x4xf32>
    tpu.yield %relu : tensor<4x4xf32>
  }
  return %r, %f : tensor<4x4xf32>, tensor<4x4xf32>
}

// Constants go into the bundle's constant segment at 0, in order, each
// 64-byte aligned, as tpu.dram_constant. Outputs without a buffer of their
// own (an input, a constant, a tensor returned twice) get a copy.
// CHECK-LABEL: func.func @constants_and_copies
// CHECK-SAME: (%arg0: tensor<2x3xf32> {tpu.dram_address = 128 : i64})
// CHECK-NEXT: %[[C0:.*]] = tpu.dram_constant 0x0 dense<1.000000e+00> : tensor<1x3xf32>
// CHECK-NEXT: %[[C1:.*]] = tpu.dram_constant 0x40 dense<2.000000e+00> : tensor<2x3xf32>
// CHECK-NEXT: %[[S:.*]] = tpu.binary add %arg0, %[[C0]] {tpu.dram_address = 192 : i64}
// CHECK-NEXT: %[[IN:.*]] = tpu.unary copy %arg0 {tpu.dram_address = 256 : i64}
// CHECK-NEXT: %[[K:.*]] = tpu.unary copy %[[C1]] {tpu.dram_address = 320 : i64}
// CHECK-NEXT: %[[TWICE:.*]] = tpu.unary copy %[[S]] {tpu.dram_address = 384 : i64}
// CHECK-NEXT: return %[[S]], %[[IN]], %[[K]], %[[TWICE]]
// NAMES: tpu.unary copy %arg0 {{.*}}loc("copy to output 1")
// NAMES-NEXT: tpu.unary copy {{.*}}loc("copy to output 2")
// NAMES-NEXT: tpu.unary copy {{.*}}loc("copy to output 3")
func.func @constants_and_copies(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %one = arith.constant dense<1.0> : tensor<1x3xf32>
  %two = arith.constant dense<2.0> : tensor<2x3xf32>
  %s = tpu.binary add %x, %one : tensor<2x3xf32>, tensor<1x3xf32> -> tensor<2x3xf32>
  return %s, %x, %two, %s : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
