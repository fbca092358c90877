// RUN: tpu-opt %s --split-input-file --tpu-autodiff="loss=mse" | FileCheck %s

// concat: each operand's part of dy; slice: zeros around dy (here through
// a reverse, whose gradient is reversed); pad: the part of dy over the
// input (the padding value is a constant and gets none). w's two
// gradients added.
// CHECK-LABEL: func.func @main
// CHECK: %[[DY:.*]] = tosa.mul %{{.*}}, %{{.*}} {shift = 0 : i8} : (tensor<2x5xf32>, tensor<1x1xf32>)
// CHECK: %[[DR:.*]] = tosa.slice %[[DY]] {size = array<i64: 2, 4>, start = array<i64: 0, 0>}
// CHECK: %[[DK:.*]] = tosa.slice %[[DY]] {size = array<i64: 2, 1>, start = array<i64: 0, 4>}
// CHECK: %[[KP:.*]] = "tosa.const"() <{value = dense<{{\[\[}}0, 0], [2, 0]]> : tensor<2x2xi32>}>
// CHECK: %[[DW1:.*]] = tosa.pad %[[DK]], %[[KP]], %{{.*}} : (tensor<2x1xf32>, tensor<2x2xi32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK: %[[DS:.*]] = tosa.reverse %[[DR]] {axis = 1 : i32}
// CHECK: %[[SP:.*]] = "tosa.const"() <{value = dense<{{\[\[}}0, 0], [1, 1]]> : tensor<2x2xi32>}>
// CHECK: %[[DP:.*]] = tosa.pad %[[DS]], %[[SP]], %{{.*}} : (tensor<2x4xf32>, tensor<2x2xi32>, tensor<f32>) -> tensor<2x6xf32>
// CHECK: %[[DW2:.*]] = tosa.slice %[[DP]] {size = array<i64: 2, 3>, start = array<i64: 0, 1>}
// CHECK: %[[DW:.*]] = tosa.add %[[DW1]], %[[DW2]]
// CHECK: tosa.mul %[[DW]]
func.func @main(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %w = "tosa.const"() <{value = dense<1.0> : tensor<2x3xf32>}> {tpu.name = "w"} : () -> tensor<2x3xf32>
  %p = "tosa.const"() <{value = dense<[[0, 0], [1, 2]]> : tensor<2x2xi32>}> : () -> tensor<2x2xi32>
  %c = "tosa.const"() <{value = dense<5.0> : tensor<f32>}> : () -> tensor<f32>
  %padded = tosa.pad %w, %p, %c : (tensor<2x3xf32>, tensor<2x2xi32>, tensor<f32>) -> tensor<2x6xf32>
  %s = tosa.slice %padded {start = array<i64: 0, 1>, size = array<i64: 2, 4>} : (tensor<2x6xf32>) -> tensor<2x4xf32>
  %r = tosa.reverse %s {axis = 1 : i32} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %k = tosa.slice %w {start = array<i64: 0, 2>, size = array<i64: 2, 1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %cat = tosa.concat %r, %k {axis = 1 : i32} : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x5xf32>
  %y = tosa.add %x, %cat : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

// gather: the scatter-add as a matmul with the one-hot matrix
// onehot[n, k, w] = (indices[n, w] == k); tile: the copies summed
// ([before, multiple, size, after], the multiple's axis reduced).
// CHECK-LABEL: func.func @main
// CHECK: %[[DY:.*]] = tosa.mul %{{.*}}, %{{.*}} {shift = 0 : i8} : (tensor<2x6xf32>, tensor<1x1xf32>)
// CHECK: %[[DT:.*]] = tosa.transpose %[[DY]]
// CHECK: %[[SPLIT:.*]] = tosa.reshape %[[DT]] {new_shape = array<i64: 1, 2, 3, 2>}
// CHECK: %[[COPIES:.*]] = tosa.reduce_sum %[[SPLIT]] {axis = 1 : i32} : (tensor<1x2x3x2xf32>) -> tensor<1x1x3x2xf32>
// CHECK: %[[DF:.*]] = tosa.reshape %[[COPIES]] {new_shape = array<i64: 3, 2>}
// CHECK: %[[DG:.*]] = tosa.reshape %[[DF]] {new_shape = array<i64: 1, 3, 2>}
// CHECK: %[[ROWS:.*]] = "tosa.const"() <{value = dense<{{\[\[\[}}0], [1], [2], [3]]]> : tensor<1x4x1xi32>}>
// CHECK: %[[IDX:.*]] = tosa.reshape %arg0 {new_shape = array<i64: 1, 1, 3>}
// CHECK: %[[HIT:.*]] = tosa.equal %[[IDX]], %[[ROWS]] : (tensor<1x1x3xi32>, tensor<1x4x1xi32>) -> tensor<1x4x3xi1>
// CHECK: %[[ONEHOT:.*]] = tosa.select %[[HIT]]
// CHECK: %[[DTABLE:.*]] = tosa.matmul %[[ONEHOT]], %[[DG]] : (tensor<1x4x3xf32>, tensor<1x3x2xf32>) -> tensor<1x4x2xf32>
// CHECK: tosa.mul %[[DTABLE]]
func.func @main(%i: tensor<1x3xi32>) -> tensor<2x6xf32> {
  %t = "tosa.const"() <{value = dense<1.0> : tensor<1x4x2xf32>}> {tpu.name = "table"} : () -> tensor<1x4x2xf32>
  %g = tosa.gather %t, %i : (tensor<1x4x2xf32>, tensor<1x3xi32>) -> tensor<1x3x2xf32>
  %f = tosa.reshape %g {new_shape = array<i64: 3, 2>} : (tensor<1x3x2xf32>) -> tensor<3x2xf32>
  %tiled = tosa.tile %f {multiples = array<i64: 2, 1>} : (tensor<3x2xf32>) -> tensor<6x2xf32>
  %perm = "tosa.const"() <{value = dense<[1, 0]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %tr = tosa.transpose %tiled, %perm : (tensor<6x2xf32>, tensor<2xi32>) -> tensor<2x6xf32>
  return %tr : tensor<2x6xf32>
}
