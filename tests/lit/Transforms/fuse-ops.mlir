// RUN: tpu-opt %s --tpu-fuse="mode=epilogue" | FileCheck %s --check-prefixes=CHECK,EPILOGUE
// RUN: tpu-opt %s --tpu-fuse="mode=full" | FileCheck %s --check-prefixes=CHECK,FULL
// RUN: tpu-opt %s --tpu-fuse | FileCheck %s --check-prefixes=CHECK,FULL

// A dense layer: the bias add and the ReLU join the matmul's group in both
// modes; the group numbers count from 0 per function.
// CHECK-LABEL: func.func @dense
// CHECK: tpu.matmul {{.*}} {tpu.fusion_group = 0 : i64}
// CHECK: tpu.binary add {{.*}} {tpu.fusion_group = 0 : i64}
// CHECK: tpu.unary relu {{.*}} {tpu.fusion_group = 0 : i64}
func.func @dense(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %b: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %m = tpu.matmul %x, %w : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
  %s = tpu.binary add %m, %b : tensor<4x3xf32>, tensor<1x3xf32> -> tensor<4x3xf32>
  %r = tpu.unary relu %s : tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// A residual block's end: the residual (defined before the matmul) joins,
// also as the first operand of a commutative add; a clamp joins.
// CHECK-LABEL: func.func @residual
// CHECK: tpu.matmul {{.*}} {tpu.fusion_group = 0 : i64}
// CHECK: tpu.binary add %arg2, {{.*}} {tpu.fusion_group = 0 : i64}
// CHECK: tpu.clamp {{.*}} {max = 6.000000e+00 : f32, min = 0.000000e+00 : f32, tpu.fusion_group = 0 : i64}
func.func @residual(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %res: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %m = tpu.matmul %x, %w : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
  %s = tpu.binary add %res, %m : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %c = tpu.clamp %s {min = 0.0 : f32, max = 6.0 : f32} : tensor<4x3xf32>
  return %c : tensor<4x3xf32>
}

// Where a chain stops: a value with two users is the group's last (it goes
// to DRAM); a subtraction from another value (the chain value second) does
// not join; neither does an operand computed after the head, nor a column in
// an epilogue. A chain of one is no group.
// CHECK-LABEL: func.func @stops
// CHECK: %[[M:.*]] = tpu.matmul {{.*}} {tpu.fusion_group = 0 : i64}
// CHECK: %[[S:.*]] = tpu.binary add %[[M]], {{.*}} {tpu.fusion_group = 0 : i64}
// CHECK: %[[E:.*]] = tpu.unary exp %[[S]] {tpu.fusion_group = 0 : i64}
// CHECK: %[[M1:.*]] = tpu.matmul %arg0, %arg1 :
// CHECK: tpu.binary sub %arg0, %[[M1]] :
// CHECK: tpu.binary add %[[E]], %[[E]] :
// CHECK: %[[M2:.*]] = tpu.matmul %arg0, %arg1 :
// EPILOGUE: %[[L:.*]] = tpu.unary exp %arg0 :
// EPILOGUE: tpu.binary mul %[[M2]], %[[L]] :
// FULL: %[[L:.*]] = tpu.unary exp %arg0 {tpu.fusion_group = 1 : i64}
// FULL: tpu.binary mul %[[M2]], %[[L]] {tpu.fusion_group = 1 : i64}
// CHECK: %[[M3:.*]] = tpu.matmul %arg0, %arg1 :
// CHECK: tpu.binary mul %[[M3]], %arg4 :
// CHECK: tpu.matmul %arg0, %arg1 :
// CHECK-NOT: fusion_group
func.func @stops(%x: tensor<4x3xf32>, %w: tensor<3x3xf32>, %b: tensor<1x3xf32>, %y: tensor<4x3xf32>,
                 %col: tensor<4x1xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  %m = tpu.matmul %x, %w : tensor<4x3xf32>, tensor<3x3xf32> -> tensor<4x3xf32>
  %s = tpu.binary add %m, %b : tensor<4x3xf32>, tensor<1x3xf32> -> tensor<4x3xf32>
  %e = tpu.unary exp %s : tensor<4x3xf32>
  %m1 = tpu.matmul %x, %w : tensor<4x3xf32>, tensor<3x3xf32> -> tensor<4x3xf32>
  %d = tpu.binary sub %x, %m1 : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %e2 = tpu.binary add %e, %e : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %m2 = tpu.matmul %x, %w : tensor<4x3xf32>, tensor<3x3xf32> -> tensor<4x3xf32>
  %late = tpu.unary exp %x : tensor<4x3xf32>
  %p = tpu.binary mul %m2, %late : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
  %m3 = tpu.matmul %x, %w : tensor<4x3xf32>, tensor<3x3xf32> -> tensor<4x3xf32>
  %q = tpu.binary mul %m3, %col : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<4x3xf32>
  %alone = tpu.matmul %x, %w : tensor<4x3xf32>, tensor<3x3xf32> -> tensor<4x3xf32>
  return %e2, %d, %p, %q, %alone : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

// Elementwise chains without a matmul (softmax's tail, a scaled shift) are
// groups in full mode only; a column operand is fine there.
// CHECK-LABEL: func.func @elementwise
// EPILOGUE-NOT: fusion_group
// FULL: tpu.binary sub {{.*}} {tpu.fusion_group = 0 : i64}
// FULL: tpu.unary exp {{.*}} {tpu.fusion_group = 0 : i64}
// FULL: tpu.binary mul {{.*}} {tpu.fusion_group = 0 : i64}
func.func @elementwise(%x: tensor<4x3xf32>, %col: tensor<4x1xf32>, %s: tensor<1x1xf32>) -> tensor<4x3xf32> {
  %d = tpu.binary sub %x, %col : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<4x3xf32>
  %e = tpu.unary exp %d : tensor<4x3xf32>
  %m = tpu.binary mul %e, %s : tensor<4x3xf32>, tensor<1x1xf32> -> tensor<4x3xf32>
  return %m : tensor<4x3xf32>
}

// A whole softmax is one row-local group in full mode: row reductions and
// column operands included, since every member works on whole rows.
// CHECK-LABEL: func.func @softmax
// EPILOGUE-NOT: fusion_group
// FULL-COUNT-6: {tpu.fusion_group = 0 : i64}
// FULL-NOT: fusion_group
func.func @softmax(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %max = tpu.row_reduce max %x : tensor<4x6xf32> -> tensor<4x1xf32>
  %d = tpu.binary sub %x, %max : tensor<4x6xf32>, tensor<4x1xf32> -> tensor<4x6xf32>
  %e = tpu.unary exp %d : tensor<4x6xf32>
  %s = tpu.row_reduce sum %e : tensor<4x6xf32> -> tensor<4x1xf32>
  %r = tpu.unary reciprocal %s : tensor<4x1xf32>
  %y = tpu.binary mul %e, %r : tensor<4x6xf32>, tensor<4x1xf32> -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// Not when an intermediate is needed outside (here, returned): only the last
// value leaves a group. The ops after that value still group.
// CHECK-LABEL: func.func @escaping
// FULL: tpu.row_reduce max %arg0 :
// FULL: tpu.binary sub {{.*}} {tpu.fusion_group = 0 : i64}
// FULL: tpu.unary exp {{.*}} {tpu.fusion_group = 0 : i64}
func.func @escaping(%x: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x1xf32>) {
  %max = tpu.row_reduce max %x : tensor<4x6xf32> -> tensor<4x1xf32>
  %d = tpu.binary sub %x, %max : tensor<4x6xf32>, tensor<4x1xf32> -> tensor<4x6xf32>
  %e = tpu.unary exp %d : tensor<4x6xf32>
  return %e, %max : tensor<4x6xf32>, tensor<4x1xf32>
}
