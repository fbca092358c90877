// RUN: tpu-opt %s --tpu-fold-batchnorm | FileCheck %s

// BatchNormalization after a convolution, as the importer writes it: the
// scale goes into each output channel's weights (OHWI: the outer axis) and
// into the bias, the shift into the bias: w = [[1, 2], [3, 4]] * [2, 0.5],
// b = [0.5, -1] * [2, 0.5] + [1, 3].
// CHECK-LABEL: func.func @conv2d
// CHECK-DAG: %[[W:.*]] = "tosa.const"() <{value = dense<{{\[\[\[\[}}2.000000e+00, 4.000000e+00]]], {{\[\[\[}}1.500000e+00, 2.000000e+00]]]]> : tensor<2x1x1x2xf32>}>
// CHECK-DAG: %[[B:.*]] = "tosa.const"() <{value = dense<[2.000000e+00, 2.500000e+00]> : tensor<2xf32>}>
// CHECK: %[[C:.*]] = tosa.conv2d %arg0, %[[W]], %[[B]]
// CHECK-NEXT: return %[[C]]
func.func @conv2d(%x: tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32> {
  %w = "tosa.const"() <{value = dense<[[[[1.0, 2.0]]], [[[3.0, 4.0]]]]> : tensor<2x1x1x2xf32>}> : () -> tensor<2x1x1x2xf32>
  %b = "tosa.const"() <{value = dense<[0.5, -1.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %s = "tosa.const"() <{value = dense<[[[[2.0, 0.5]]]]> : tensor<1x1x1x2xf32>}> : () -> tensor<1x1x1x2xf32>
  %t = "tosa.const"() <{value = dense<[[[[1.0, 3.0]]]]> : tensor<1x1x1x2xf32>}> : () -> tensor<1x1x1x2xf32>
  %c = tosa.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x3x3x2xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x3x3x2xf32>
  %m = tosa.mul %c, %s {shift = 0 : i8} : (tensor<1x3x3x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x3x3x2xf32>
  %y = tosa.add %t, %m : (tensor<1x1x1x2xf32>, tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32>
  return %y : tensor<1x3x3x2xf32>
}

// Depthwise [KH, KW, C, M] weights feed output channel c * M + m, the last
// two axes: with KH = 2, C = 2, M = 1 the weights 1, 2, 3, 4 are channels
// 0, 1, 0, 1 and scale by 10, 100, 10, 100.
// CHECK-LABEL: func.func @depthwise
// CHECK-DAG: %[[W:.*]] = "tosa.const"() <{value = dense<{{\[\[\[\[}}1.000000e+01], [2.000000e+02]]], {{\[\[\[}}3.000000e+01], [4.000000e+02]]]]> : tensor<2x1x2x1xf32>}>
// CHECK-DAG: %[[B:.*]] = "tosa.const"() <{value = dense<[1.000000e+01, 2.000000e+02]> : tensor<2xf32>}>
// CHECK: %[[C:.*]] = tosa.depthwise_conv2d %arg0, %[[W]], %[[B]]
// CHECK-NEXT: return %[[C]]
func.func @depthwise(%x: tensor<1x3x3x2xf32>) -> tensor<1x2x3x2xf32> {
  %w = "tosa.const"() <{value = dense<[[[[1.0], [2.0]]], [[[3.0], [4.0]]]]> : tensor<2x1x2x1xf32>}> : () -> tensor<2x1x2x1xf32>
  %b = "tosa.const"() <{value = dense<[1.0, 2.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %s = "tosa.const"() <{value = dense<[[[[10.0, 100.0]]]]> : tensor<1x1x1x2xf32>}> : () -> tensor<1x1x1x2xf32>
  %c = tosa.depthwise_conv2d %x, %w, %b {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x3x3x2xf32>, tensor<2x1x2x1xf32>, tensor<2xf32>) -> tensor<1x2x3x2xf32>
  %m = tosa.mul %s, %c {shift = 0 : i8} : (tensor<1x1x1x2xf32>, tensor<1x2x3x2xf32>) -> tensor<1x2x3x2xf32>
  return %m : tensor<1x2x3x2xf32>
}

// One scale for every channel, then a shift: both fold into a fully
// connected layer.
// CHECK-LABEL: func.func @fully_connected
// CHECK-DAG: %[[W:.*]] = "tosa.const"() <{value = dense<{{\[\[}}2.000000e+00, 4.000000e+00], [6.000000e+00, 8.000000e+00]]> : tensor<2x2xf32>}>
// CHECK-DAG: %[[B:.*]] = "tosa.const"() <{value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}>
// CHECK: %[[F:.*]] = tosa.fully_connected %arg0, %[[W]], %[[B]]
// CHECK-NEXT: return %[[F]]
func.func @fully_connected(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = "tosa.const"() <{value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>}> : () -> tensor<2x2xf32>
  %b = "tosa.const"() <{value = dense<0.0> : tensor<2xf32>}> : () -> tensor<2xf32>
  %s = "tosa.const"() <{value = dense<2.0> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %t = "tosa.const"() <{value = dense<[[1.0, 2.0]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %f = tosa.fully_connected %x, %w, %b : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %m = tosa.mul %f, %s {shift = 0 : i8} : (tensor<3x2xf32>, tensor<1x1xf32>) -> tensor<3x2xf32>
  %y = tosa.add %m, %t : (tensor<3x2xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}

// A matmul's columns take the scale; it has no bias, so the shift stays.
// CHECK-LABEL: func.func @matmul
// CHECK-DAG: %[[W:.*]] = "tosa.const"() <{value = dense<{{\[\[\[}}1.000000e+01, 2.000000e+02], [3.000000e+01, 4.000000e+02]]]> : tensor<1x2x2xf32>}>
// CHECK-DAG: %[[T:.*]] = "tosa.const"() <{value = dense<{{\[\[\[}}1.000000e+00, 2.000000e+00]]]> : tensor<1x1x2xf32>}>
// CHECK: %[[M:.*]] = tosa.matmul %arg0, %[[W]]
// CHECK-NEXT: %[[Y:.*]] = tosa.add %[[M]], %[[T]]
// CHECK-NEXT: return %[[Y]]
func.func @matmul(%a: tensor<1x3x2xf32>) -> tensor<1x3x2xf32> {
  %w = "tosa.const"() <{value = dense<[[[1.0, 2.0], [3.0, 4.0]]]> : tensor<1x2x2xf32>}> : () -> tensor<1x2x2xf32>
  %s = "tosa.const"() <{value = dense<[[[10.0, 100.0]]]> : tensor<1x1x2xf32>}> : () -> tensor<1x1x2xf32>
  %t = "tosa.const"() <{value = dense<[[[1.0, 2.0]]]> : tensor<1x1x2xf32>}> : () -> tensor<1x1x2xf32>
  %p = tosa.matmul %a, %w : (tensor<1x3x2xf32>, tensor<1x2x2xf32>) -> tensor<1x3x2xf32>
  %m = tosa.mul %p, %s {shift = 0 : i8} : (tensor<1x3x2xf32>, tensor<1x1x2xf32>) -> tensor<1x3x2xf32>
  %y = tosa.add %m, %t : (tensor<1x3x2xf32>, tensor<1x1x2xf32>) -> tensor<1x3x2xf32>
  return %y : tensor<1x3x2xf32>
}

// Not folded: weights that are not constant.
// CHECK-LABEL: func.func @weights_not_constant
// CHECK: tosa.conv2d %arg0, %arg1
// CHECK-NEXT: tosa.mul
// CHECK-NEXT: tosa.add
func.func @weights_not_constant(%x: tensor<1x3x3x2xf32>, %w: tensor<2x1x1x2xf32>) -> tensor<1x3x3x2xf32> {
  %b = "tosa.const"() <{value = dense<[0.5, -1.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %s = "tosa.const"() <{value = dense<[[[[2.0, 0.5]]]]> : tensor<1x1x1x2xf32>}> : () -> tensor<1x1x1x2xf32>
  %t = "tosa.const"() <{value = dense<[[[[1.0, 3.0]]]]> : tensor<1x1x1x2xf32>}> : () -> tensor<1x1x1x2xf32>
  %c = tosa.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x3x3x2xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x3x3x2xf32>
  %m = tosa.mul %c, %s {shift = 0 : i8} : (tensor<1x3x3x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x3x3x2xf32>
  %y = tosa.add %m, %t : (tensor<1x3x3x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x3x3x2xf32>
  return %y : tensor<1x3x3x2xf32>
}

// Not folded: the convolution's result is also read unscaled.
// CHECK-LABEL: func.func @conv_with_second_user
// CHECK: %[[C:.*]] = tosa.conv2d
// CHECK-NEXT: %[[M:.*]] = tosa.mul %[[C]]
// CHECK-NEXT: return %[[M]], %[[C]]
func.func @conv_with_second_user(%x: tensor<1x3x3x2xf32>) -> (tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>) {
  %w = "tosa.const"() <{value = dense<[[[[1.0, 2.0]]], [[[3.0, 4.0]]]]> : tensor<2x1x1x2xf32>}> : () -> tensor<2x1x1x2xf32>
  %b = "tosa.const"() <{value = dense<[0.5, -1.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %s = "tosa.const"() <{value = dense<[[[[2.0, 0.5]]]]> : tensor<1x1x1x2xf32>}> : () -> tensor<1x1x1x2xf32>
  %c = tosa.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x3x3x2xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x3x3x2xf32>
  %m = tosa.mul %c, %s {shift = 0 : i8} : (tensor<1x3x3x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x3x3x2xf32>
  return %m, %c : tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>
}

// Not folded: a scale per row (H), not per output channel, does not commute
// with the convolution; nor does a scale computed at run time.
// CHECK-LABEL: func.func @scale_not_per_channel
// CHECK: %[[C:.*]] = tosa.conv2d
// CHECK-NEXT: %[[M:.*]] = tosa.mul %[[C]]
// CHECK-NEXT: %[[C2:.*]] = tosa.conv2d
// CHECK-NEXT: %[[M2:.*]] = tosa.mul %[[C2]], %arg1
// CHECK-NEXT: return %[[M]], %[[M2]]
func.func @scale_not_per_channel(%x: tensor<1x3x3x2xf32>, %r: tensor<1x1x1x2xf32>) -> (tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>) {
  %w = "tosa.const"() <{value = dense<[[[[1.0, 2.0]]], [[[3.0, 4.0]]]]> : tensor<2x1x1x2xf32>}> : () -> tensor<2x1x1x2xf32>
  %b = "tosa.const"() <{value = dense<[0.5, -1.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %s = "tosa.const"() <{value = dense<[[[[2.0]], [[3.0]], [[4.0]]]]> : tensor<1x3x1x1xf32>}> : () -> tensor<1x3x1x1xf32>
  %c = tosa.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x3x3x2xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x3x3x2xf32>
  %m = tosa.mul %c, %s {shift = 0 : i8} : (tensor<1x3x3x2xf32>, tensor<1x3x1x1xf32>) -> tensor<1x3x3x2xf32>
  %c2 = tosa.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x3x3x2xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x3x3x2xf32>
  %m2 = tosa.mul %c2, %r {shift = 0 : i8} : (tensor<1x3x3x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x3x3x2xf32>
  return %m, %m2 : tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>
}

// Scalars have no channel axis: nothing folds (found by fuzzing: reading the
// channel count of a rank-0 product crashed).
// CHECK-LABEL: func.func @scalar_products
// CHECK: %[[P:.*]] = tosa.mul %arg0, %arg0
// CHECK-NEXT: %[[Q:.*]] = tosa.mul %[[P]], %arg0
// CHECK-NEXT: return %[[Q]]
func.func @scalar_products(%x: tensor<f32>) -> tensor<f32> {
  %p = tosa.mul %x, %x {shift = 0 : i8} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %q = tosa.mul %p, %x {shift = 0 : i8} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %q : tensor<f32>
}
