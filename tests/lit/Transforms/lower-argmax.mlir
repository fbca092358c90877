// RUN: tpu-opt %s --tpu-lower-tosa --canonicalize | FileCheck %s

// ArgMax as the importer writes it: per row, the maximum, a 1.0/0.0 mask of
// where it is, the mask weighted L - j (the first index has the largest
// weight) and its row maximum, L minus that, then int32 words. The function
// returns those; its result keeps the model's int64 for the host.
// CHECK-LABEL: func.func @first_index
// CHECK-SAME: (%[[X:.*]]: tensor<3x5xf32>) -> (tensor<3x1xi32> {tpu.host_type = i64})
// CHECK-DAG: %[[MINUS:.*]] = arith.constant dense<-1.000000e+00> : tensor<1x1xf32>
// CHECK-DAG: %[[L:.*]] = arith.constant dense<5.000000e+00> : tensor<1x1xf32>
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[\[}}5.000000e+00, 4.000000e+00, 3.000000e+00, 2.000000e+00, 1.000000e+00]]> : tensor<1x5xf32>
// CHECK: %[[M:.*]] = tpu.row_reduce max %[[X]] : tensor<3x5xf32> -> tensor<3x1xf32>
// CHECK: %[[MASK:.*]] = tpu.binary eq %[[X]], %[[M]] : tensor<3x5xf32>, tensor<3x1xf32> -> tensor<3x5xf32>
// CHECK: %[[WM:.*]] = tpu.binary mul %[[MASK]], %[[W]] : tensor<3x5xf32>, tensor<1x5xf32> -> tensor<3x5xf32>
// CHECK: %[[BEST:.*]] = tpu.row_reduce max %[[WM]] : tensor<3x5xf32> -> tensor<3x1xf32>
// CHECK: %[[NEG:.*]] = tpu.binary mul %[[BEST]], %[[MINUS]] : tensor<3x1xf32>, tensor<1x1xf32> -> tensor<3x1xf32>
// CHECK: %[[I:.*]] = tpu.binary add %[[NEG]], %[[L]] : tensor<3x1xf32>, tensor<1x1xf32> -> tensor<3x1xf32>
// CHECK: %[[WORDS:.*]] = tpu.to_int %[[I]] : tensor<3x1xf32> -> tensor<3x1xi32>
// CHECK: return %[[WORDS]]
// CHECK-NOT: tosa.
func.func @first_index(%x: tensor<3x5xf32>) -> tensor<3x1xi64> {
  %0 = tosa.argmax %x {axis = 1 : i32} : (tensor<3x5xf32>) -> tensor<3xi32>
  %1 = tosa.reshape %0 {new_shape = array<i64: 3, 1>} : (tensor<3xi32>) -> tensor<3x1xi32>
  %2 = tosa.cast %1 : (tensor<3x1xi32>) -> tensor<3x1xi64>
  return %2 : tensor<3x1xi64>
}

// select_last_index (ArgMin here, as ArgMax of -x) on a middle axis without
// keepdims: the reverse and the sub from L - 1 go, the unreversed rows (the
// axis moved last) are weighted j + 1 and the index is their row maximum
// - 1; the words are viewed in the output's shape.
// CHECK-LABEL: func.func @last_index
// CHECK-SAME: -> (tensor<2x3xi32> {tpu.host_type = i64})
// CHECK-DAG: %[[MINUS:.*]] = arith.constant dense<-1.000000e+00> : tensor<1x1xf32>
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]]> : tensor<1x4xf32>
// CHECK: %[[NEG:.*]] = tpu.binary mul %{{.*}}, %[[MINUS]] : tensor<8x3xf32>, tensor<1x1xf32> -> tensor<8x3xf32>
// CHECK: %[[T:.*]] = tpu.transpose %{{.*}} {perms = array<i64: 0, 2, 1>} : tensor<2x4x3xf32> -> tensor<2x3x4xf32>
// CHECK: %[[ROWS:.*]] = tpu.view %[[T]] : tensor<2x3x4xf32> -> tensor<6x4xf32>
// CHECK: %[[M:.*]] = tpu.row_reduce max %[[ROWS]] : tensor<6x4xf32> -> tensor<6x1xf32>
// CHECK: %[[MASK:.*]] = tpu.binary eq %[[ROWS]], %[[M]] : tensor<6x4xf32>, tensor<6x1xf32> -> tensor<6x4xf32>
// CHECK: %[[WM:.*]] = tpu.binary mul %[[MASK]], %[[W]] : tensor<6x4xf32>, tensor<1x4xf32> -> tensor<6x4xf32>
// CHECK: %[[BEST:.*]] = tpu.row_reduce max %[[WM]] : tensor<6x4xf32> -> tensor<6x1xf32>
// CHECK: %[[I:.*]] = tpu.binary add %[[BEST]], %[[MINUS]] : tensor<6x1xf32>, tensor<1x1xf32> -> tensor<6x1xf32>
// CHECK: %[[WORDS:.*]] = tpu.to_int %[[I]] : tensor<6x1xf32> -> tensor<6x1xi32>
// CHECK: %[[Y:.*]] = tpu.view %[[WORDS]] : tensor<6x1xi32> -> tensor<2x3xi32>
// CHECK: return %[[Y]]
// CHECK-NOT: tosa.
func.func @last_index(%x: tensor<2x4x3xf32>) -> tensor<2x3xi64> {
  %n = tosa.negate %x : (tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %r = tosa.reverse %n {axis = 1 : i32} : (tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %0 = tosa.argmax %r {axis = 1 : i32} : (tensor<2x4x3xf32>) -> tensor<2x3xi32>
  %end = "tosa.const"() <{value = dense<3> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %1 = tosa.sub %end, %0 : (tensor<1x1xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  %2 = tosa.cast %1 : (tensor<2x3xi32>) -> tensor<2x3xi64>
  return %2 : tensor<2x3xi64>
}
