// RUN: tpu-opt %s --tpu-fold-constants | FileCheck %s

// ONNX Gemm's beta * C as the importer writes it: a [2] bias times a [1]
// scalar (broadcast), then reshaped; both fold, and the add keeps a
// constant row that an epilogue takes as its bias.
// CHECK-LABEL: func.func @gemm_bias
// CHECK: %[[C:.*]] = "tosa.const"() <{value = dense<{{\[\[}}2.000000e+00, -4.000000e+00]]> : tensor<1x2xf32>}>
// CHECK-NEXT: %[[Y:.*]] = tosa.add %arg0, %[[C]]
// CHECK-NEXT: return %[[Y]]
func.func @gemm_bias(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %c = "tosa.const"() <{value = dense<[1.0, -2.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %beta = "tosa.const"() <{value = dense<2.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %scaled = tosa.mul %c, %beta {shift = 0 : i8} : (tensor<2xf32>, tensor<1xf32>) -> tensor<2xf32>
  %row = tosa.reshape %scaled {new_shape = array<i64: 1, 2>} : (tensor<2xf32>) -> tensor<1x2xf32>
  %y = tosa.add %x, %row : (tensor<3x2xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// Unary ops in a chain, each on the one before: clamp(exp(x) - 1, 0, 1)
// with x = [0, 1, -inf] gives [0, 1, 0] (e - 1 clamped to 1, -1 to 0).
// CHECK-LABEL: func.func @unary_chain
// CHECK: %[[C:.*]] = "tosa.const"() <{value = dense<[0.000000e+00, 1.000000e+00, 0.000000e+00]> : tensor<3xf32>}>
// CHECK-NEXT: return %[[C]]
func.func @unary_chain() -> tensor<3xf32> {
  %x = "tosa.const"() <{value = dense<[0.0, 1.0, 0xFF800000]> : tensor<3xf32>}> : () -> tensor<3xf32>
  %one = "tosa.const"() <{value = dense<1.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %e = tosa.exp %x : (tensor<3xf32>) -> tensor<3xf32>
  %d = tosa.sub %e, %one : (tensor<3xf32>, tensor<1xf32>) -> tensor<3xf32>
  %c = tosa.clamp %d {max_fp = 1.0 : f32, max_int = 1 : i64, min_fp = 0.0 : f32, min_int = 0 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  return %c : tensor<3xf32>
}

// Broadcast along either operand's size-1 axes: a [2, 1] column minus a
// [1, 2] row would be four values from four, so it folds; maximum
// propagates NaN from either side, as the vector unit does.
// CHECK-LABEL: func.func @broadcast_and_nan
// CHECK-DAG: "tosa.const"() <{value = dense<{{\[\[}}9.000000e+00, 8.000000e+00], [1.900000e+01, 1.800000e+01]]> : tensor<2x2xf32>}>
// CHECK-DAG: "tosa.const"() <{value = dense<[0x7FC00000, 0x7FC00000, 3.000000e+00]> : tensor<3xf32>}>
// CHECK-NOT: tosa.sub
// CHECK-NOT: tosa.maximum
func.func @broadcast_and_nan() -> (tensor<2x2xf32>, tensor<3xf32>) {
  %col = "tosa.const"() <{value = dense<[[10.0], [20.0]]> : tensor<2x1xf32>}> : () -> tensor<2x1xf32>
  %row = "tosa.const"() <{value = dense<[[1.0, 2.0]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %d = tosa.sub %col, %row : (tensor<2x1xf32>, tensor<1x2xf32>) -> tensor<2x2xf32>
  %a = "tosa.const"() <{value = dense<[0x7FC00000, 1.0, 3.0]> : tensor<3xf32>}> : () -> tensor<3xf32>
  %b = "tosa.const"() <{value = dense<[1.0, 0x7FC00000, 2.0]> : tensor<3xf32>}> : () -> tensor<3xf32>
  %m = tosa.maximum %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %d, %m : tensor<2x2xf32>, tensor<3xf32>
}

// Left to run: a result larger than its operands together (a 3-column and
// a 3-row make nine), and an op with a value computed at run time.
// CHECK-LABEL: func.func @not_folded
// CHECK: tosa.add
// CHECK: tosa.mul %arg0
func.func @not_folded(%x: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>) {
  %col = "tosa.const"() <{value = dense<[[1.0], [2.0], [3.0]]> : tensor<3x1xf32>}> : () -> tensor<3x1xf32>
  %row = "tosa.const"() <{value = dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>}> : () -> tensor<1x3xf32>
  %outer = tosa.add %col, %row : (tensor<3x1xf32>, tensor<1x3xf32>) -> tensor<3x3xf32>
  %scaled = tosa.mul %x, %col {shift = 0 : i8} : (tensor<3x3xf32>, tensor<3x1xf32>) -> tensor<3x3xf32>
  return %outer, %scaled : tensor<3x3xf32>, tensor<3x3xf32>
}
