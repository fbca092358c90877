// RUN: tpu-opt %s --tpu-lower-tosa --canonicalize | FileCheck %s

// A Gemm as the ONNX importer writes it: rank-3 tosa.matmul between reshapes,
// then a bias broadcast over rows. The reshapes become views that fold away.
// CHECK-LABEL: func.func @gemm_bias_relu
// CHECK-SAME: (%[[X:.*]]: tensor<8x64xf32>, %[[W:.*]]: tensor<64x100xf32>, %[[B:.*]]: tensor<100xf32>)
// CHECK: %[[M:.*]] = tpu.matmul %[[X]], %[[W]] : tensor<8x64xf32>, tensor<64x100xf32> -> tensor<8x100xf32>
// CHECK: %[[BR:.*]] = tpu.view %[[B]] : tensor<100xf32> -> tensor<1x100xf32>
// CHECK: %[[S:.*]] = tpu.binary add %[[M]], %[[BR]] : tensor<8x100xf32>, tensor<1x100xf32> -> tensor<8x100xf32>
// CHECK: %[[R:.*]] = tpu.unary relu %[[S]] : tensor<8x100xf32>
// CHECK: return %[[R]]
// CHECK-NOT: tosa.
func.func @gemm_bias_relu(%x: tensor<8x64xf32>, %w: tensor<64x100xf32>, %b: tensor<100xf32>) -> tensor<8x100xf32> {
  %a = tosa.reshape %x {new_shape = array<i64: 1, 8, 64>} : (tensor<8x64xf32>) -> tensor<1x8x64xf32>
  %bw = tosa.reshape %w {new_shape = array<i64: 1, 64, 100>} : (tensor<64x100xf32>) -> tensor<1x64x100xf32>
  %m = tosa.matmul %a, %bw : (tensor<1x8x64xf32>, tensor<1x64x100xf32>) -> tensor<1x8x100xf32>
  %y = tosa.reshape %m {new_shape = array<i64: 8, 100>} : (tensor<1x8x100xf32>) -> tensor<8x100xf32>
  %b2 = tosa.reshape %b {new_shape = array<i64: 1, 100>} : (tensor<100xf32>) -> tensor<1x100xf32>
  %s = tosa.add %y, %b2 : (tensor<8x100xf32>, tensor<1x100xf32>) -> tensor<8x100xf32>
  %r = tosa.clamp %s {min_int = 0 : i64, max_int = 9223372036854775807 : i64, min_fp = 0.0 : f32, max_fp = 3.40282347E+38 : f32} : (tensor<8x100xf32>) -> tensor<8x100xf32>
  return %r : tensor<8x100xf32>
}

// Commutative ops take the broadcast operand on either side; a clamp that is
// not a ReLU reads its bounds from memory, a 1x2 constant; rank-3 tensors are
// viewed as rows.
// CHECK-LABEL: func.func @broadcast_forms
// CHECK: %[[BOUNDS:.*]] = arith.constant dense<{{\[\[}}-1.000000e+00, 6.000000e+00]]> : tensor<1x2xf32>
// CHECK: tpu.binary mul %{{.*}}, %{{.*}} : tensor<6x5xf32>, tensor<1x1xf32> -> tensor<6x5xf32>
// CHECK: tpu.binary max %{{.*}}, %{{.*}} : tensor<6x5xf32>, tensor<6x5xf32> -> tensor<6x5xf32>
// CHECK: tpu.clamp %{{.*}}, %[[BOUNDS]] : tensor<6x5xf32>, tensor<1x2xf32>
// CHECK: tpu.view %{{.*}} : tensor<6x5xf32> -> tensor<2x3x5xf32>
func.func @broadcast_forms(%x: tensor<2x3x5xf32>, %s: tensor<1x1x1xf32>) -> tensor<2x3x5xf32> {
  %m = tosa.mul %s, %x {shift = 0 : i8} : (tensor<1x1x1xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %n = tosa.maximum %m, %x : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %c = tosa.clamp %n {min_int = 0 : i64, max_int = 0 : i64, min_fp = -1.0 : f32, max_fp = 6.0 : f32} : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  return %c : tensor<2x3x5xf32>
}

// Constants become arith.constant; views of them fold into the constant.
// CHECK-LABEL: func.func @constants
// CHECK: %[[C:.*]] = arith.constant dense<{{.*}}> : tensor<1x3xf32>
// CHECK: tpu.binary sub %{{.*}}, %[[C]]
func.func @constants(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %c = "tosa.const"() {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %c2 = tosa.reshape %c {new_shape = array<i64: 1, 3>} : (tensor<3xf32>) -> tensor<1x3xf32>
  %s = tosa.sub %x, %c2 : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}

// Softmax as the importer writes it: row reductions over the last axis
// (kept with size 1) become tpu.row_reduce, and the [M, 1] column they give
// is a column operand of tpu.binary; exp and reciprocal are tpu.unary.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<8x40xf32>)
// CHECK: %[[MAX:.*]] = tpu.row_reduce max %[[X]] : tensor<8x40xf32> -> tensor<8x1xf32>
// CHECK: %[[D:.*]] = tpu.binary sub %[[X]], %[[MAX]] : tensor<8x40xf32>, tensor<8x1xf32> -> tensor<8x40xf32>
// CHECK: %[[E:.*]] = tpu.unary exp %[[D]] : tensor<8x40xf32>
// CHECK: %[[SUM:.*]] = tpu.row_reduce sum %[[E]] : tensor<8x40xf32> -> tensor<8x1xf32>
// CHECK: %[[R:.*]] = tpu.unary reciprocal %[[SUM]] : tensor<8x1xf32>
// CHECK: %[[Y:.*]] = tpu.binary mul %[[E]], %[[R]] : tensor<8x40xf32>, tensor<8x1xf32> -> tensor<8x40xf32>
// CHECK: return %[[Y]]
func.func @softmax(%x: tensor<8x40xf32>) -> tensor<8x40xf32> {
  %m = tosa.reduce_max %x {axis = 1 : i32} : (tensor<8x40xf32>) -> tensor<8x1xf32>
  %d = tosa.sub %x, %m : (tensor<8x40xf32>, tensor<8x1xf32>) -> tensor<8x40xf32>
  %e = tosa.exp %d : (tensor<8x40xf32>) -> tensor<8x40xf32>
  %s = tosa.reduce_sum %e {axis = 1 : i32} : (tensor<8x40xf32>) -> tensor<8x1xf32>
  %r = tosa.reciprocal %s : (tensor<8x1xf32>) -> tensor<8x1xf32>
  %y = tosa.mul %r, %e {shift = 0 : i8} : (tensor<8x1xf32>, tensor<8x40xf32>) -> tensor<8x40xf32>
  return %y : tensor<8x40xf32>
}

// Rank 3: the reduction is over the rows of the [2*4, 6] view; rsqrt is a
// tpu.unary.
// CHECK-LABEL: func.func @rank3_rsqrt
// CHECK: %[[S:.*]] = tpu.row_reduce sum %{{.*}} : tensor<8x6xf32> -> tensor<8x1xf32>
// CHECK: %[[Q:.*]] = tpu.unary rsqrt %[[S]] : tensor<8x1xf32>
// CHECK: tpu.binary mul %{{.*}}, %[[Q]] : tensor<8x6xf32>, tensor<8x1xf32> -> tensor<8x6xf32>
func.func @rank3_rsqrt(%x: tensor<2x4x6xf32>) -> tensor<2x4x6xf32> {
  %s = tosa.reduce_sum %x {axis = 2 : i32} : (tensor<2x4x6xf32>) -> tensor<2x4x1xf32>
  %q = tosa.rsqrt %s : (tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
  %y = tosa.mul %x, %q {shift = 0 : i8} : (tensor<2x4x6xf32>, tensor<2x4x1xf32>) -> tensor<2x4x6xf32>
  return %y : tensor<2x4x6xf32>
}

// A batched matmul (attention scores per head) stays 3-D: one tpu.batch_matmul.
// CHECK-LABEL: func.func @batched_matmul
// CHECK: %[[M:.*]] = tpu.batch_matmul %{{.*}}, %{{.*}} : tensor<4x32x16xf32>, tensor<4x16x32xf32> -> tensor<4x32x32xf32>
// CHECK: return %[[M]]
func.func @batched_matmul(%q: tensor<4x32x16xf32>, %k: tensor<4x16x32xf32>) -> tensor<4x32x32xf32> {
  %m = tosa.matmul %q, %k : (tensor<4x32x16xf32>, tensor<4x16x32xf32>) -> tensor<4x32x32xf32>
  return %m : tensor<4x32x32xf32>
}

// A transpose with constant perms keeps its N-D shapes; the i32 perms
// constant is left unused.
// CHECK-LABEL: func.func @transpose
// CHECK: %[[T:.*]] = tpu.transpose %{{.*}} {perms = array<i64: 0, 2, 1, 3>} : tensor<1x32x4x16xf32> -> tensor<1x4x32x16xf32>
// CHECK: return %[[T]]
func.func @transpose(%x: tensor<1x32x4x16xf32>) -> tensor<1x4x32x16xf32> {
  %p = "tosa.const"() {value = dense<[0, 2, 1, 3]> : tensor<4xi32>} : () -> tensor<4xi32>
  %t = tosa.transpose %x, %p : (tensor<1x32x4x16xf32>, tensor<4xi32>) -> tensor<1x4x32x16xf32>
  return %t : tensor<1x4x32x16xf32>
}

// conv2d: im2col of the NHWC input, a matmul with the OHWI weights laid out
// as [KH*KW*C, O] (computed at compile time) and a bias row.
// CHECK-LABEL: func.func @conv2d
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<{{\[}}[5.000000e-01, -5.000000e-01]]> : tensor<1x2xf32>
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : tensor<1x1xf32>
// CHECK: %[[X:.*]] = tpu.im2col %{{.*}}, %[[ZEROS]] {dilation = array<i64: 1, 1>, kernel = array<i64: 1, 2>, pad = array<i64: 0, 0, 1, 0>, stride = array<i64: 1, 1>} : tensor<1x3x3x1xf32>, tensor<1x1xf32> -> tensor<9x2xf32>
// CHECK: %[[M:.*]] = tpu.matmul %[[X]], %[[W]] : tensor<9x2xf32>, tensor<2x2xf32> -> tensor<9x2xf32>
// CHECK: %[[S:.*]] = tpu.binary add %[[M]], %[[B]] : tensor<9x2xf32>, tensor<1x2xf32> -> tensor<9x2xf32>
// CHECK: tpu.view %[[S]] : tensor<9x2xf32> -> tensor<1x3x3x2xf32>
func.func @conv2d(%x: tensor<1x3x3x1xf32>) -> tensor<1x3x3x2xf32> {
  %w = "tosa.const"() {value = dense<[[[[1.0], [2.0]]], [[[3.0], [4.0]]]]> : tensor<2x1x2x1xf32>} : () -> tensor<2x1x2x1xf32>
  %b = "tosa.const"() {value = dense<[0.5, -0.5]> : tensor<2xf32>} : () -> tensor<2xf32>
  %y = tosa.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 1, 0>, stride = array<i64: 1, 1>} : (tensor<1x3x3x1xf32>, tensor<2x1x2x1xf32>, tensor<2xf32>) -> tensor<1x3x3x2xf32>
  return %y : tensor<1x3x3x2xf32>
}

// conv2d with run-time weights (a training step's parameters): the OHWI
// weights viewed as [O, KH*KW*C] and transposed in the program to the
// [KH*KW*C, O] matrix of the same matmul.
// CHECK-LABEL: func.func @conv2d_runtime_weights
// CHECK: %[[X:.*]] = tpu.im2col %{{.*}}, %{{.*}} {{.*}}kernel = array<i64: 1, 2>{{.*}} : tensor<1x3x3x1xf32>, tensor<1x1xf32> -> tensor<9x2xf32>
// CHECK: %[[WV:.*]] = tpu.view %{{.*}} : tensor<2x1x2x1xf32> -> tensor<2x2xf32>
// CHECK: %[[W:.*]] = tpu.transpose %[[WV]] {perms = array<i64: 1, 0>} : tensor<2x2xf32> -> tensor<2x2xf32>
// CHECK: %[[M:.*]] = tpu.matmul %[[X]], %[[W]] : tensor<9x2xf32>, tensor<2x2xf32> -> tensor<9x2xf32>
// CHECK: tpu.binary add %[[M]], %{{.*}} : tensor<9x2xf32>, tensor<1x2xf32> -> tensor<9x2xf32>
func.func @conv2d_runtime_weights(%x: tensor<1x3x3x1xf32>, %w: tensor<2x1x2x1xf32>, %b: tensor<2xf32>) -> tensor<1x3x3x2xf32> {
  %y = tosa.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 1, 0>, stride = array<i64: 1, 1>} : (tensor<1x3x3x1xf32>, tensor<2x1x2x1xf32>, tensor<2xf32>) -> tensor<1x3x3x2xf32>
  return %y : tensor<1x3x3x2xf32>
}

// Logic on compares (the max-pool gradient's first arg-max): the compares'
// 1/0 masks, not a = 1 - a, a and b = a b, a or b = max(a, b); a select
// with a zero false branch is a multiply by the mask, a general one
// x c + y (1 - c).
// CHECK-LABEL: func.func @logical_masks
// CHECK-DAG: %[[NEG:.*]] = arith.constant dense<-1.000000e+00> : tensor<1x1xf32>
// CHECK-DAG: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<1x1xf32>
// CHECK: %[[A:.*]] = tpu.binary eq %arg0, %arg1 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK: %[[B:.*]] = tpu.binary gt %arg0, %arg2 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK: %[[NA0:.*]] = tpu.binary mul %[[A]], %[[NEG]]
// CHECK: %[[NA:.*]] = tpu.binary add %[[NA0]], %[[ONE]]
// CHECK: %[[AND:.*]] = tpu.binary mul %[[B]], %[[NA]]
// CHECK: %[[OR:.*]] = tpu.binary max %[[A]], %[[AND]]
// CHECK: %[[S1:.*]] = tpu.binary mul %arg1, %[[AND]]
// CHECK: %[[T:.*]] = tpu.binary mul %arg1, %[[OR]]
// CHECK: %[[NOR0:.*]] = tpu.binary mul %[[OR]], %[[NEG]]
// CHECK: %[[NOR:.*]] = tpu.binary add %[[NOR0]], %[[ONE]]
// CHECK: %[[F:.*]] = tpu.binary mul %arg2, %[[NOR]]
// CHECK: %[[S2:.*]] = tpu.binary add %[[T]], %[[F]]
// CHECK: return %[[S1]], %[[S2]], %[[OR]]
func.func @logical_masks(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>, %z: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %zero = "tosa.const"() {value = dense<0.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %a = tosa.equal %x, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %b = tosa.greater %x, %z : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %na = tosa.logical_not %a : (tensor<2x3xi1>) -> tensor<2x3xi1>
  %and = tosa.logical_and %b, %na : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %or = tosa.logical_or %a, %and : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %s1 = tosa.select %and, %y, %zero : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<1x1xf32>) -> tensor<2x3xf32>
  %s2 = tosa.select %or, %y, %z : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = tosa.cast %or : (tensor<2x3xi1>) -> tensor<2x3xf32>
  return %s1, %s2, %c : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// tosa.reverse other than ArgMax's select_last_index (the flipped kernel of
// a convolution's input gradient): a slice per index of the axis, last
// first, and their concat.
// CHECK-LABEL: func.func @reverse_kernel
// CHECK: %[[S2:.*]] = tpu.slice %arg0 {start = array<i64: 0, 2, 0, 0>} : tensor<2x3x2x1xf32> -> tensor<2x1x2x1xf32>
// CHECK: %[[S1:.*]] = tpu.slice %arg0 {start = array<i64: 0, 1, 0, 0>} : tensor<2x3x2x1xf32> -> tensor<2x1x2x1xf32>
// CHECK: %[[S0:.*]] = tpu.slice %arg0 {start = array<i64: 0, 0, 0, 0>} : tensor<2x3x2x1xf32> -> tensor<2x1x2x1xf32>
// CHECK: %[[C:.*]] = tpu.concat %[[S2]], %[[S1]], %[[S0]] {axis = 1 : i64}
// CHECK: return %[[C]]
func.func @reverse_kernel(%w: tensor<2x3x2x1xf32>) -> tensor<2x3x2x1xf32> {
  %r = tosa.reverse %w {axis = 1 : i32} : (tensor<2x3x2x1xf32>) -> tensor<2x3x2x1xf32>
  return %r : tensor<2x3x2x1xf32>
}

// depthwise_conv2d: a window reduction over the input held on chip, the
// sum of each tap times its weight row ([KH*KW, C]: the HWCM weights
// without a multiplier), plus the bias row; no im2col.
// CHECK-LABEL: func.func @depthwise
// CHECK-DAG: %[[B:.*]] = arith.constant dense<5.000000e-01> : tensor<1x3xf32>
// CHECK-DAG: %[[W:.*]] = arith.constant dense<1.000000e+00> : tensor<2x3xf32>
// CHECK-NOT: tpu.im2col
// CHECK: tpu.window_reduce sum %arg0 weights %[[W]] : tensor<2x3xf32> bias %[[B]] : tensor<1x3xf32> {dilation = array<i64: 1, 1>, kernel = array<i64: 2, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : tensor<1x4x2x3xf32> -> tensor<6x3xf32>
func.func @depthwise(%x: tensor<1x4x2x3xf32>) -> tensor<1x3x2x3xf32> {
  %w = "tosa.const"() {value = dense<1.0> : tensor<2x1x3x1xf32>} : () -> tensor<2x1x3x1xf32>
  %b = "tosa.const"() {value = dense<0.5> : tensor<3xf32>} : () -> tensor<3xf32>
  %y = tosa.depthwise_conv2d %x, %w, %b {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x2x3xf32>, tensor<2x1x3x1xf32>, tensor<3xf32>) -> tensor<1x3x2x3xf32>
  return %y : tensor<1x3x2x3xf32>
}

// depthwise_conv2d with run-time weights (a training step's): the weights
// viewed as [KH*KW, C].
// CHECK-LABEL: func.func @depthwise_runtime_weights
// CHECK: %[[W:.*]] = tpu.view %arg1 : tensor<2x1x3x1xf32> -> tensor<2x3xf32>
// CHECK: tpu.window_reduce sum %arg0 weights %[[W]] : tensor<2x3xf32> bias %{{.*}} : tensor<1x3xf32> {{.*}} -> tensor<6x3xf32>
func.func @depthwise_runtime_weights(%x: tensor<1x4x2x3xf32>, %w: tensor<2x1x3x1xf32>) -> tensor<1x3x2x3xf32> {
  %b = "tosa.const"() {value = dense<0.5> : tensor<3xf32>} : () -> tensor<3xf32>
  %y = tosa.depthwise_conv2d %x, %w, %b {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x2x3xf32>, tensor<2x1x3x1xf32>, tensor<3xf32>) -> tensor<1x3x2x3xf32>
  return %y : tensor<1x3x2x3xf32>
}

// depthwise_conv2d with a channel multiplier of 2: per multiplier m the tap
// sum with the weights [KH*KW*C, M] column m, then the two [P*C, 1] sums
// joined as the columns of [P*C, 2], which is [P, C*2] (output channel
// c*2 + m), plus the bias row.
// CHECK-LABEL: func.func @depthwise_multiplier
// CHECK: %[[X:.*]] = tpu.im2col %{{.*}} -> tensor<6x6xf32>
// CHECK: %[[W:.*]] = tpu.view %arg1 : tensor<2x1x3x2xf32> -> tensor<6x2xf32>
// CHECK: %[[M0:.*]] = tpu.slice %[[W]] {start = array<i64: 0, 0>} : tensor<6x2xf32> -> tensor<6x1xf32>
// CHECK: tpu.view %[[M0]] : tensor<6x1xf32> -> tensor<2x3xf32>
// CHECK: %[[S0:.*]] = tpu.binary add
// CHECK: %[[C0:.*]] = tpu.view %[[S0]] : tensor<6x3xf32> -> tensor<18x1xf32>
// CHECK: %[[M1:.*]] = tpu.slice %[[W]] {start = array<i64: 0, 1>} : tensor<6x2xf32> -> tensor<6x1xf32>
// CHECK: %[[S1:.*]] = tpu.binary add
// CHECK: %[[C1:.*]] = tpu.view %[[S1]] : tensor<6x3xf32> -> tensor<18x1xf32>
// CHECK: %[[J:.*]] = tpu.concat %[[C0]], %[[C1]] {axis = 1 : i64} : tensor<18x1xf32>, tensor<18x1xf32> -> tensor<18x2xf32>
// CHECK: %[[V:.*]] = tpu.view %[[J]] : tensor<18x2xf32> -> tensor<6x6xf32>
// CHECK: tpu.binary add %[[V]], %{{.*}} : tensor<6x6xf32>, tensor<1x6xf32> -> tensor<6x6xf32>
func.func @depthwise_multiplier(%x: tensor<1x4x2x3xf32>, %w: tensor<2x1x3x2xf32>) -> tensor<1x3x2x6xf32> {
  %b = "tosa.const"() {value = dense<0.5> : tensor<6xf32>} : () -> tensor<6xf32>
  %y = tosa.depthwise_conv2d %x, %w, %b {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x2x3xf32>, tensor<2x1x3x2xf32>, tensor<6xf32>) -> tensor<1x3x2x6xf32>
  return %y : tensor<1x3x2x6xf32>
}

// max_pool2d: the maximum of the taps over the input held on chip, padded
// with the lowest float (a fill row of C values).
// CHECK-LABEL: func.func @max_pool
// CHECK: %[[LOWEST:.*]] = arith.constant dense<-3.40282347E+38> : tensor<1x3xf32>
// CHECK-NOT: tpu.im2col
// CHECK: tpu.window_reduce max %arg0 fill %[[LOWEST]] : tensor<1x3xf32> {dilation = array<i64: 1, 1>, kernel = array<i64: 1, 2>, pad = array<i64: 0, 0, 1, 0>, stride = array<i64: 1, 2>} : tensor<1x2x4x3xf32> -> tensor<4x3xf32>
func.func @max_pool(%x: tensor<1x2x4x3xf32>) -> tensor<1x2x2x3xf32> {
  %y = tosa.max_pool2d %x {kernel = array<i64: 1, 2>, pad = array<i64: 0, 0, 1, 0>, stride = array<i64: 1, 2>} : (tensor<1x2x4x3xf32>) -> tensor<1x2x2x3xf32>
  return %y : tensor<1x2x2x3xf32>
}

// avg_pool2d without padding (here a global one): the sum of the taps
// times 1/(KH*KW), one scalar.
// CHECK-LABEL: func.func @avg_pool
// CHECK: %[[QUARTER:.*]] = arith.constant dense<2.500000e-01> : tensor<1x1xf32>
// CHECK: tpu.window_reduce sum %arg0 scale %[[QUARTER]] : tensor<1x1xf32> {{.*}}kernel = array<i64: 2, 2>{{.*}} : tensor<1x2x2x3xf32> -> tensor<1x3xf32>
func.func @avg_pool(%x: tensor<1x2x2x3xf32>) -> tensor<1x1x1x3xf32> {
  %y = tosa.avg_pool2d %x {acc_type = f32, kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x2x2x3xf32>) -> tensor<1x1x1x3xf32>
  return %y : tensor<1x1x1x3xf32>
}

// slice, concat and pad keep their N-D shapes; the i32 padding is unused,
// and the pad value becomes a row the DMA engine stores into the padding.
// CHECK-LABEL: func.func @copies
// CHECK: %[[FILL:.*]] = arith.constant dense<1.500000e+00> : tensor<1x4xf32>
// CHECK: %[[S:.*]] = tpu.slice %{{.*}} {start = array<i64: 0, 1, 0, 0>} : tensor<1x4x4x2xf32> -> tensor<1x3x3x2xf32>
// CHECK: %[[C:.*]] = tpu.concat %[[S]], %[[S]] {axis = 3 : i64} : tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32> -> tensor<1x3x3x4xf32>
// CHECK: tpu.pad %[[C]], %[[FILL]] {high = array<i64: 0, 2, 0, 0>, low = array<i64: 0, 1, 1, 0>} : tensor<1x3x3x4xf32>, tensor<1x4xf32> -> tensor<1x6x4x4xf32>
func.func @copies(%x: tensor<1x4x4x2xf32>) -> tensor<1x6x4x4xf32> {
  %s = tosa.slice %x {size = array<i64: 1, 3, 3, 2>, start = array<i64: 0, 1, 0, 0>} : (tensor<1x4x4x2xf32>) -> tensor<1x3x3x2xf32>
  %c = tosa.concat %s, %s {axis = 3 : i32} : (tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>) -> tensor<1x3x3x4xf32>
  %p = "tosa.const"() {value = dense<[[0, 0], [1, 2], [1, 0], [0, 0]]> : tensor<4x2xi32>} : () -> tensor<4x2xi32>
  %v = "tosa.const"() {value = dense<1.5> : tensor<f32>} : () -> tensor<f32>
  %y = tosa.pad %c, %p, %v : (tensor<1x3x3x4xf32>, tensor<4x2xi32>, tensor<f32>) -> tensor<1x6x4x4xf32>
  return %y : tensor<1x6x4x4xf32>
}

// erf: Abramowitz & Stegun 7.1.26 on the vector unit, made odd by a sign
// from a clamp.
// CHECK-LABEL: func.func @erf
// CHECK-DAG: %[[SIGN_BOUNDS:.*]] = arith.constant dense<{{\[\[}}-1.000000e+00, 1.000000e+00]]> : tensor<1x2xf32>
// CHECK: %[[NEG:.*]] = tpu.binary mul %[[X:.*]], %{{.*}} : tensor<4x8xf32>, tensor<1x1xf32>
// CHECK: %[[ABS:.*]] = tpu.binary max %[[X]], %[[NEG]]
// CHECK: tpu.unary reciprocal
// CHECK-COUNT-4: tpu.binary add
// CHECK: tpu.unary exp
// CHECK: %[[SIGN:.*]] = tpu.clamp %{{.*}}, %[[SIGN_BOUNDS]] : tensor<4x8xf32>, tensor<1x2xf32>
// CHECK: %[[R:.*]] = tpu.binary mul %{{.*}}, %[[SIGN]] : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK: return %[[R]]
func.func @erf(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = tosa.erf %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// A reduction over another axis moves it last with a transpose; min is
// -max(-x); a reduction followed only by size-1 axes is a view.
// CHECK-LABEL: func.func @reduce_other_axes
// CHECK: %[[T:.*]] = tpu.transpose %{{.*}} {perms = array<i64: 0, 2, 1>} : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
// CHECK: tpu.row_reduce sum %{{.*}} : tensor<8x3xf32> -> tensor<8x1xf32>
// CHECK: %[[N:.*]] = tpu.binary mul %{{.*}}, %{{.*}} : tensor<6x4xf32>, tensor<1x1xf32>
// CHECK: %[[M:.*]] = tpu.row_reduce max %[[N]] : tensor<6x4xf32> -> tensor<6x1xf32>
// CHECK: tpu.binary mul %[[M]], %{{.*}} : tensor<6x1xf32>, tensor<1x1xf32>
func.func @reduce_other_axes(%x: tensor<2x3x4xf32>) -> (tensor<2x1x4xf32>, tensor<2x3x1xf32>) {
  %s = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  %m = tosa.reduce_min %x {axis = 2 : i32} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  return %s, %m : tensor<2x1x4xf32>, tensor<2x3x1xf32>
}

// Negate multiplies by -1, abs is max(x, -x), a broadcast left operand of
// sub is -rhs + lhs, and a tile is a concat of copies.
// CHECK-LABEL: func.func @negate_abs_sub_tile
// CHECK: %[[NEG:.*]] = tpu.binary mul %{{.*}}, %[[MINUS:.*]] : tensor<4x3xf32>, tensor<1x1xf32>
// CHECK: %[[NX:.*]] = tpu.binary mul %{{.*}}, %[[MINUS]]
// CHECK: tpu.binary max %{{.*}}, %[[NX]] : tensor<4x3xf32>, tensor<4x3xf32>
// CHECK: %[[NR:.*]] = tpu.binary mul %{{.*}}, %[[MINUS]]
// CHECK: tpu.binary add %[[NR]], %{{.*}} : tensor<4x3xf32>, tensor<1x3xf32>
// CHECK: tpu.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : tensor<1x3xf32>, tensor<1x3xf32> -> tensor<2x3xf32>
func.func @negate_abs_sub_tile(%x: tensor<4x3xf32>, %r: tensor<1x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x3xf32>) {
  %n = tosa.negate %x : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %a = tosa.abs %x : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %s = tosa.sub %r, %x : (tensor<1x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %t = tosa.tile %r {multiples = array<i64: 2, 1>} : (tensor<1x3xf32>) -> tensor<2x3xf32>
  return %n, %a, %s, %t : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x3xf32>
}

// Gather with run-time indices, as the importer writes it for int64 ids: a
// cast to i32, numpy's wrap of negative indices (which dma.gather does
// itself), a tile over the tables. What is left is the input, now int32,
// viewed as one row of indices shared by the 4 tables.
// CHECK-LABEL: func.func @gather_ids
// CHECK-SAME: (%[[IDS:.*]]: tensor<2x3xi32>, %[[X:.*]]: tensor<4x16x5xf32>) -> tensor<4x6x5xf32>
// CHECK: %[[ROW:.*]] = tpu.view %[[IDS]] : tensor<2x3xi32> -> tensor<1x6xi32>
// CHECK: %[[G:.*]] = tpu.gather %[[X]], %[[ROW]] : tensor<4x16x5xf32>, tensor<1x6xi32> -> tensor<4x6x5xf32>
// CHECK: return %[[G]]
// CHECK-NOT: tosa.
func.func @gather_ids(%ids: tensor<2x3xi64>, %x: tensor<4x16x5xf32>) -> tensor<4x6x5xf32> {
  %dim = "tosa.const"() <{value = dense<16> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %zero = "tosa.const"() <{value = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %i32 = tosa.cast %ids : (tensor<2x3xi64>) -> tensor<2x3xi32>
  %row = tosa.reshape %i32 {new_shape = array<i64: 1, 6>} : (tensor<2x3xi32>) -> tensor<1x6xi32>
  %negative = tosa.greater %zero, %row : (tensor<1x1xi32>, tensor<1x6xi32>) -> tensor<1x6xi1>
  %wrapped = tosa.add %row, %dim : (tensor<1x6xi32>, tensor<1x1xi32>) -> tensor<1x6xi32>
  %index = tosa.select %negative, %wrapped, %row : (tensor<1x6xi1>, tensor<1x6xi32>, tensor<1x6xi32>) -> tensor<1x6xi32>
  %tiled = tosa.tile %index {multiples = array<i64: 4, 1>} : (tensor<1x6xi32>) -> tensor<4x6xi32>
  %g = tosa.gather %x, %tiled : (tensor<4x16x5xf32>, tensor<4x6xi32>) -> tensor<4x6x5xf32>
  return %g : tensor<4x6x5xf32>
}
