// RUN: tpu-opt %s --tpu-matrix-broadcast | FileCheck %s

// A per-channel constant of an NCL tensor: tiled over the batch at compile
// time, a column of the [6, 5] view.
// CHECK-LABEL: func.func @channel_constant
// CHECK: %[[C:.*]] = "tosa.const"() <{value = dense<{{\[\[}}[1.000000e+00], [2.000000e+00], [3.000000e+00]], {{\[\[}}1.000000e+00], [2.000000e+00], [3.000000e+00]]]> : tensor<2x3x1xf32>}>
// CHECK: %[[CC:.*]] = tosa.reshape %[[C]] {new_shape = array<i64: 6, 1>}
// CHECK: %[[X:.*]] = tosa.reshape %arg0 {new_shape = array<i64: 6, 5>}
// CHECK: %[[M:.*]] = tosa.mul %[[X]], %[[CC]] {shift = 0 : i8} : (tensor<6x5xf32>, tensor<6x1xf32>) -> tensor<6x5xf32>
// CHECK: tosa.reshape %[[M]] {new_shape = array<i64: 2, 3, 5>}
func.func @channel_constant(%x: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  %c = "tosa.const"() <{value = dense<[[[1.0], [2.0], [3.0]]]> : tensor<1x3x1xf32>}> : () -> tensor<1x3x1xf32>
  %y = tosa.mul %x, %c {shift = 0 : i8} : (tensor<2x3x5xf32>, tensor<1x3x1xf32>) -> tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// A run-time operand spanning the trailing axes on the left of sub: a row
// of the [2, 12] view, no copy.
// CHECK-LABEL: func.func @row_on_the_left
// CHECK: %[[R:.*]] = tosa.reshape %arg1 {new_shape = array<i64: 1, 12>}
// CHECK: %[[X:.*]] = tosa.reshape %arg0 {new_shape = array<i64: 2, 12>}
// CHECK: tosa.sub %[[R]], %[[X]] : (tensor<1x12xf32>, tensor<2x12xf32>) -> tensor<2x12xf32>
func.func @row_on_the_left(%x: tensor<2x3x4xf32>, %r: tensor<1x3x4xf32>) -> tensor<2x3x4xf32> {
  %y = tosa.sub %r, %x : (tensor<1x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// Both operands broadcast: the first is tiled to the result.
// CHECK-LABEL: func.func @both_broadcast
// CHECK: tosa.tile %arg0 {multiples = array<i64: 1, 4>} : (tensor<3x1xf32>) -> tensor<3x4xf32>
// CHECK: tosa.add %{{.*}}, %{{.*}} : (tensor<3x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
func.func @both_broadcast(%a: tensor<3x1xf32>, %b: tensor<1x4xf32>) -> tensor<3x4xf32> {
  %y = tosa.add %a, %b : (tensor<3x1xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// Rows, columns and scalars of the [elements / last, last] view stay.
// CHECK-LABEL: func.func @already_matrix_forms
// CHECK-NOT: tosa.reshape
// CHECK-NOT: tosa.tile
func.func @already_matrix_forms(%x: tensor<2x3x4xf32>, %r: tensor<1x1x4xf32>, %c: tensor<2x3x1xf32>, %s: tensor<1x1x1xf32>) -> tensor<2x3x4xf32> {
  %a = tosa.add %x, %r : (tensor<2x3x4xf32>, tensor<1x1x4xf32>) -> tensor<2x3x4xf32>
  %b = tosa.sub %a, %c : (tensor<2x3x4xf32>, tensor<2x3x1xf32>) -> tensor<2x3x4xf32>
  %m = tosa.maximum %s, %b : (tensor<1x1x1xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %m : tensor<2x3x4xf32>
}
