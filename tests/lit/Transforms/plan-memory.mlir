// RUN: tpu-opt %s --tpu-plan-memory | FileCheck %s

// Unfused softmax: rowmax's column (64 bytes aligned) is free once sub has
// read it, and rowsum's column reuses it; sub's result (8x40 = 1280 bytes) is
// free once exp has read it, and the reciprocal takes its first 64 bytes;
// exp's result lives until mul, so mul needs new space. The region is 1280 *
// 3 + 64 bytes.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: tpu.dram_result_bytes = 3904 : i64
// CHECK: tpu.row_reduce max %arg0 {tpu.dram_offset = 0 : i64}
// CHECK: tpu.binary sub {{.*}} {tpu.dram_offset = 64 : i64}
// CHECK: tpu.unary exp {{.*}} {tpu.dram_offset = 1344 : i64}
// CHECK: tpu.row_reduce sum {{.*}} {tpu.dram_offset = 0 : i64}
// CHECK: tpu.unary reciprocal {{.*}} {tpu.dram_offset = 64 : i64}
// CHECK: tpu.binary mul {{.*}} {tpu.dram_offset = 2624 : i64}
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
// view, so it keeps its buffer. The group reads %f and %w2 from above.
// CHECK-LABEL: func.func @views_and_groups
// CHECK-SAME: tpu.dram_result_bytes = 128 : i64
// CHECK: tpu.matmul {{.*}} {tpu.dram_offset = 0 : i64}
// CHECK-NEXT: tpu.view
// CHECK-NOT: tpu.dram_offset
// CHECK: tpu.unary exp {{.*}} {tpu.dram_offset = 64 : i64}
// CHECK-NEXT: tpu.view
// CHECK-NEXT: tpu.fused attributes {tpu.dram_offset = 0 : i64}
// CHECK-NEXT: tpu.matmul
// CHECK-NOT: tpu.dram_offset
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
