// RUN: tpu-opt %s --tpu-lower-tosa --canonicalize | FileCheck %s

// A training step's integers (tpu-autodiff's cross-entropy): int64 labels
// become an f32 input the host fills from int64, compared with f32 class
// ids; the argmax inside the graph is an fp32 index, compared with the
// labels; the correct count is summed in fp32 and stored as int32 words.
// CHECK-LABEL: func.func @labels
// CHECK-SAME: %[[LABELS:[^:]*]]: tensor<4xf32> {tpu.host_type = i64}
// CHECK-SAME: -> (tensor<4x3xf32>, tensor<1xi32>)
// CHECK-DAG: %[[IDS:.*]] = arith.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00]]> : tensor<1x3xf32>
// CHECK: %[[COLUMN:.*]] = tpu.view %[[LABELS]] : tensor<4xf32> -> tensor<4x1xf32>
// CHECK: %[[TILED:.*]] = tpu.concat %[[COLUMN]], %[[COLUMN]], %[[COLUMN]]
// CHECK: %[[ONEHOT:.*]] = tpu.binary eq %[[TILED]], %[[IDS]]
// CHECK: tpu.row_reduce max
// CHECK: %[[INDEX:.*]] = tpu.binary add
// CHECK-DAG: %[[LROW:.*]] = tpu.view %[[LABELS]] : tensor<4xf32> -> tensor<1x4xf32>
// CHECK-DAG: %[[ROW:.*]] = tpu.view %[[INDEX]] : tensor<4x1xf32> -> tensor<1x4xf32>
// CHECK: %[[HIT:.*]] = tpu.binary eq %[[ROW]], %[[LROW]]
// CHECK: %[[COUNT:.*]] = tpu.row_reduce sum %[[HIT]] : tensor<1x4xf32> -> tensor<1x1xf32>
// CHECK: %[[WORDS:.*]] = tpu.to_int %[[COUNT]] : tensor<1x1xf32> -> tensor<1x1xi32>
// CHECK: %[[OUT:.*]] = tpu.view %[[WORDS]] : tensor<1x1xi32> -> tensor<1xi32>
// CHECK: return %[[ONEHOT]], %[[OUT]]
// CHECK-NOT: tosa.
func.func @labels(%x: tensor<4x3xf32>, %labels: tensor<4xi64>) -> (tensor<4x3xf32>, tensor<1xi32>) {
  %ids = "tosa.const"() <{value = dense<[[0, 1, 2]]> : tensor<1x3xi32>}> : () -> tensor<1x3xi32>
  %one = "tosa.const"() <{value = dense<1.0> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %zero = "tosa.const"() <{value = dense<0.0> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %l32 = tosa.cast %labels : (tensor<4xi64>) -> tensor<4xi32>
  %column = tosa.reshape %l32 {new_shape = array<i64: 4, 1>} : (tensor<4xi32>) -> tensor<4x1xi32>
  %tiled = tosa.tile %column {multiples = array<i64: 1, 3>} : (tensor<4x1xi32>) -> tensor<4x3xi32>
  %hit = tosa.equal %tiled, %ids : (tensor<4x3xi32>, tensor<1x3xi32>) -> tensor<4x3xi1>
  %onehot = tosa.select %hit, %one, %zero : (tensor<4x3xi1>, tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<4x3xf32>
  %predicted = tosa.argmax %x {axis = 1 : i32} : (tensor<4x3xf32>) -> tensor<4xi32>
  %right = tosa.equal %predicted, %l32 : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %ones = tosa.cast %right : (tensor<4xi1>) -> tensor<4xi32>
  %correct = tosa.reduce_sum %ones {axis = 0 : i32} : (tensor<4xi32>) -> tensor<1xi32>
  return %onehot, %correct : tensor<4x3xf32>, tensor<1xi32>
}
