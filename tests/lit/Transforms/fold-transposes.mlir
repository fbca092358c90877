// RUN: tpu-opt %s --split-input-file --tpu-fold-transposes --canonicalize | FileCheck %s

// A Gemm's weight gradient (x^T dy)^T becomes dy^T x: one transpose, of dy.
// CHECK-LABEL: func.func @weight_gradient
// CHECK-SAME: (%[[H:.*]]: tensor<8x100xf32>, %[[DY:.*]]: tensor<1x8x10xf32>)
// CHECK: %[[DYT:.*]] = tosa.transpose %[[DY]], %{{.*}} : (tensor<1x8x10xf32>, tensor<3xi32>) -> tensor<1x10x8xf32>
// CHECK: %[[H3:.*]] = tosa.reshape %[[H]] {new_shape = array<i64: 1, 8, 100>}
// CHECK: %[[G:.*]] = tosa.matmul %[[DYT]], %[[H3]] : (tensor<1x10x8xf32>, tensor<1x8x100xf32>) -> tensor<1x10x100xf32>
// CHECK: %[[DW:.*]] = tosa.reshape %[[G]] {new_shape = array<i64: 10, 100>}
// CHECK-NOT: tosa.transpose
// CHECK: return %[[DW]]
func.func @weight_gradient(%h: tensor<8x100xf32>, %dy: tensor<1x8x10xf32>) -> tensor<10x100xf32> {
  %p021 = "tosa.const"() <{value = dense<[0, 2, 1]> : tensor<3xi32>}> : () -> tensor<3xi32>
  %p10 = "tosa.const"() <{value = dense<[1, 0]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %h3 = tosa.reshape %h {new_shape = array<i64: 1, 8, 100>} : (tensor<8x100xf32>) -> tensor<1x8x100xf32>
  %ht = tosa.transpose %h3, %p021 : (tensor<1x8x100xf32>, tensor<3xi32>) -> tensor<1x100x8xf32>
  %g = tosa.matmul %ht, %dy : (tensor<1x100x8xf32>, tensor<1x8x10xf32>) -> tensor<1x100x10xf32>
  %g2 = tosa.reshape %g {new_shape = array<i64: 100, 10>} : (tensor<1x100x10xf32>) -> tensor<100x10xf32>
  %dw = tosa.transpose %g2, %p10 : (tensor<100x10xf32>, tensor<2xi32>) -> tensor<10x100xf32>
  return %dw : tensor<10x100xf32>
}

// -----

// The input gradient reads (W^T)^T: W itself.
// CHECK-LABEL: func.func @input_gradient
// CHECK-SAME: (%[[W:.*]]: tensor<10x100xf32>, %[[DY:.*]]: tensor<1x8x10xf32>)
// CHECK-NOT: tosa.transpose
// CHECK: %[[W3:.*]] = tosa.reshape %[[W]] {new_shape = array<i64: 1, 10, 100>}
// CHECK: tosa.matmul %[[DY]], %[[W3]] : (tensor<1x8x10xf32>, tensor<1x10x100xf32>) -> tensor<1x8x100xf32>
func.func @input_gradient(%w: tensor<10x100xf32>, %dy: tensor<1x8x10xf32>) -> tensor<1x8x100xf32> {
  %p021 = "tosa.const"() <{value = dense<[0, 2, 1]> : tensor<3xi32>}> : () -> tensor<3xi32>
  %p10 = "tosa.const"() <{value = dense<[1, 0]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %wt = tosa.transpose %w, %p10 : (tensor<10x100xf32>, tensor<2xi32>) -> tensor<100x10xf32>
  %w3 = tosa.reshape %wt {new_shape = array<i64: 1, 100, 10>} : (tensor<100x10xf32>) -> tensor<1x100x10xf32>
  %back = tosa.transpose %w3, %p021 : (tensor<1x100x10xf32>, tensor<3xi32>) -> tensor<1x10x100xf32>
  %dx = tosa.matmul %dy, %back : (tensor<1x8x10xf32>, tensor<1x10x100xf32>) -> tensor<1x8x100xf32>
  return %dx : tensor<1x8x100xf32>
}

// -----

// A transposed matmul of plain operands stays: rewritten, it would take two
// transposes instead of one.
// CHECK-LABEL: func.func @plain
// CHECK: %[[M:.*]] = tosa.matmul %arg0, %arg1
// CHECK: tosa.transpose %[[M]]
func.func @plain(%a: tensor<1x4x6xf32>, %b: tensor<1x6x5xf32>) -> tensor<1x5x4xf32> {
  %p021 = "tosa.const"() <{value = dense<[0, 2, 1]> : tensor<3xi32>}> : () -> tensor<3xi32>
  %m = tosa.matmul %a, %b : (tensor<1x4x6xf32>, tensor<1x6x5xf32>) -> tensor<1x4x5xf32>
  %t = tosa.transpose %m, %p021 : (tensor<1x4x5xf32>, tensor<3xi32>) -> tensor<1x5x4xf32>
  return %t : tensor<1x5x4xf32>
}
