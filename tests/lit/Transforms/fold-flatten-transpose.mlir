// RUN: tpu-opt %s --tpu-fold-flatten-transpose | FileCheck %s

// A [1, 2, 2, 3] NHWC map flattened in NCHW order into a matmul with
// constant weights: the map is read as it is, and weight row j becomes the
// row the transposed layout put map element j at. Element (h, w, c) of the
// map sat at (c, h, w): rows 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11 (row i
// of the weights holds i).
// CHECK-LABEL: func.func @lenet_flatten
// CHECK-NOT: tosa.transpose
// CHECK: %[[W:.*]] = "tosa.const"() <{value = dense<{{\[\[}}[0.000000e+00], [4.000000e+00], [8.000000e+00], [1.000000e+00], [5.000000e+00], [9.000000e+00], [2.000000e+00], [6.000000e+00], [1.000000e+01], [3.000000e+00], [7.000000e+00], [1.100000e+01]]]> : tensor<1x12x1xf32>}>
// CHECK: %[[R:.*]] = tosa.reshape %arg0 {new_shape = array<i64: 1, 1, 12>} : (tensor<1x2x2x3xf32>) -> tensor<1x1x12xf32>
// CHECK: tosa.matmul %[[R]], %[[W]] : (tensor<1x1x12xf32>, tensor<1x12x1xf32>) -> tensor<1x1x1xf32>
func.func @lenet_flatten(%x: tensor<1x2x2x3xf32>) -> tensor<1x1x1xf32> {
  %perms = "tosa.const"() <{value = dense<[0, 3, 1, 2]> : tensor<4xi32>}> : () -> tensor<4xi32>
  %w = "tosa.const"() <{value = dense<[[[0.0], [1.0], [2.0], [3.0], [4.0], [5.0], [6.0], [7.0], [8.0], [9.0], [10.0], [11.0]]]> : tensor<1x12x1xf32>}> : () -> tensor<1x12x1xf32>
  %t = tosa.transpose %x, %perms : (tensor<1x2x2x3xf32>, tensor<4xi32>) -> tensor<1x3x2x2xf32>
  %r = tosa.reshape %t {new_shape = array<i64: 1, 1, 12>} : (tensor<1x3x2x2xf32>) -> tensor<1x1x12xf32>
  %y = tosa.matmul %r, %w : (tensor<1x1x12xf32>, tensor<1x12x1xf32>) -> tensor<1x1x1xf32>
  return %y : tensor<1x1x1xf32>
}

// A batch of 2: each image is a row of the matmul; the same permutation
// (here of a [2, 3, 2] map to [2, 2, 3]: element (a, b) sat at (b, a),
// rows 0, 3, 1, 4, 2, 5).
// CHECK-LABEL: func.func @batch_of_two
// CHECK-NOT: tosa.transpose
// CHECK: "tosa.const"() <{value = dense<{{\[\[}}[0.000000e+00], [3.000000e+00], [1.000000e+00], [4.000000e+00], [2.000000e+00], [5.000000e+00]]]>
// CHECK: tosa.reshape %arg0 {new_shape = array<i64: 1, 2, 6>} : (tensor<2x3x2xf32>) -> tensor<1x2x6xf32>
func.func @batch_of_two(%x: tensor<2x3x2xf32>) -> tensor<1x2x1xf32> {
  %perms = "tosa.const"() <{value = dense<[0, 2, 1]> : tensor<3xi32>}> : () -> tensor<3xi32>
  %w = "tosa.const"() <{value = dense<[[[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]]]> : tensor<1x6x1xf32>}> : () -> tensor<1x6x1xf32>
  %t = tosa.transpose %x, %perms : (tensor<2x3x2xf32>, tensor<3xi32>) -> tensor<2x2x3xf32>
  %r = tosa.reshape %t {new_shape = array<i64: 1, 2, 6>} : (tensor<2x2x3xf32>) -> tensor<1x2x6xf32>
  %y = tosa.matmul %r, %w : (tensor<1x2x6xf32>, tensor<1x6x1xf32>) -> tensor<1x2x1xf32>
  return %y : tensor<1x2x1xf32>
}

// Splat weights: every row is alike, so they stay as they are.
// CHECK-LABEL: func.func @splat_weights
// CHECK-NOT: tosa.transpose
// CHECK: %[[W:.*]] = "tosa.const"() <{value = dense<2.000000e+00> : tensor<1x12x1xf32>}>
// CHECK: %[[R:.*]] = tosa.reshape %arg0 {new_shape = array<i64: 1, 1, 12>}
// CHECK: tosa.matmul %[[R]], %[[W]]
func.func @splat_weights(%x: tensor<1x2x2x3xf32>) -> tensor<1x1x1xf32> {
  %perms = "tosa.const"() <{value = dense<[0, 3, 1, 2]> : tensor<4xi32>}> : () -> tensor<4xi32>
  %w = "tosa.const"() <{value = dense<2.0> : tensor<1x12x1xf32>}> : () -> tensor<1x12x1xf32>
  %t = tosa.transpose %x, %perms : (tensor<1x2x2x3xf32>, tensor<4xi32>) -> tensor<1x3x2x2xf32>
  %r = tosa.reshape %t {new_shape = array<i64: 1, 1, 12>} : (tensor<1x3x2x2xf32>) -> tensor<1x1x12xf32>
  %y = tosa.matmul %r, %w : (tensor<1x1x12xf32>, tensor<1x12x1xf32>) -> tensor<1x1x1xf32>
  return %y : tensor<1x1x1xf32>
}

// Left alone: weights that are an argument (a trained parameter), and a
// transpose that moves the rows' own axis (the matmul's rows would mix
// images), here of a square matrix, whose rows keep their count.
// CHECK-LABEL: func.func @parameter_weights
// CHECK: tosa.transpose
func.func @parameter_weights(%x: tensor<1x2x2x3xf32>, %w: tensor<1x12x1xf32>) -> tensor<1x1x1xf32> {
  %perms = "tosa.const"() <{value = dense<[0, 3, 1, 2]> : tensor<4xi32>}> : () -> tensor<4xi32>
  %t = tosa.transpose %x, %perms : (tensor<1x2x2x3xf32>, tensor<4xi32>) -> tensor<1x3x2x2xf32>
  %r = tosa.reshape %t {new_shape = array<i64: 1, 1, 12>} : (tensor<1x3x2x2xf32>) -> tensor<1x1x12xf32>
  %y = tosa.matmul %r, %w : (tensor<1x1x12xf32>, tensor<1x12x1xf32>) -> tensor<1x1x1xf32>
  return %y : tensor<1x1x1xf32>
}
// CHECK-LABEL: func.func @rows_axis_moves
// CHECK: tosa.transpose
func.func @rows_axis_moves(%x: tensor<2x2xf32>) -> tensor<1x2x1xf32> {
  %perms = "tosa.const"() <{value = dense<[1, 0]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %w = "tosa.const"() <{value = dense<[[[1.0], [2.0]]]> : tensor<1x2x1xf32>}> : () -> tensor<1x2x1xf32>
  %t = tosa.transpose %x, %perms : (tensor<2x2xf32>, tensor<2xi32>) -> tensor<2x2xf32>
  %r = tosa.reshape %t {new_shape = array<i64: 1, 2, 2>} : (tensor<2x2xf32>) -> tensor<1x2x2xf32>
  %y = tosa.matmul %r, %w : (tensor<1x2x2xf32>, tensor<1x2x1xf32>) -> tensor<1x2x1xf32>
  return %y : tensor<1x2x1xf32>
}
