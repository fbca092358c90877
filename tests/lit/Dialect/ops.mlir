// RUN: tpu-opt %s | tpu-opt | FileCheck %s
// RUN: tpu-opt %s --canonicalize | FileCheck %s --check-prefix=FOLD

// Every op round-trips through the printer and parser.
// CHECK-LABEL: func.func @all_ops
// CHECK: tpu.matmul %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
// CHECK: tpu.binary add %{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<1x3xf32> -> tensor<4x3xf32>
// CHECK: tpu.unary exp %{{.*}} : tensor<4x3xf32>
// CHECK: tpu.clamp %{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<1x2xf32>
// CHECK: tpu.row_reduce max %{{.*}} : tensor<4x3xf32> -> tensor<4x1xf32>
// CHECK: tpu.binary sub %{{.*}}, %{{.*}} : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<4x3xf32>
// CHECK: tpu.view %{{.*}} : tensor<4x3xf32> -> tensor<12xf32>
func.func @all_ops(%a: tensor<4x8xf32>, %w: tensor<8x3xf32>, %b: tensor<1x3xf32>, %bounds: tensor<1x2xf32>) -> tensor<12xf32> {
  %m = tpu.matmul %a, %w : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<4x3xf32>
  %s = tpu.binary add %m, %b : tensor<4x3xf32>, tensor<1x3xf32> -> tensor<4x3xf32>
  %e = tpu.unary exp %s : tensor<4x3xf32>
  %c = tpu.clamp %e, %bounds : tensor<4x3xf32>, tensor<1x2xf32>
  %r = tpu.row_reduce max %c : tensor<4x3xf32> -> tensor<4x1xf32>
  %d = tpu.binary sub %c, %r : tensor<4x3xf32>, tensor<4x1xf32> -> tensor<4x3xf32>
  %v = tpu.view %d : tensor<4x3xf32> -> tensor<12xf32>
  return %v : tensor<12xf32>
}

// Views of views collapse; a view to the same type disappears; a view of a
// constant becomes a constant.
// FOLD-LABEL: func.func @views
// FOLD-NEXT: %[[C:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00]]> : tensor<1x2xf32>
// FOLD-NEXT: %[[V:.*]] = tpu.view %arg0 : tensor<2x3xf32> -> tensor<6xf32>
// FOLD-NEXT: return %[[V]], %[[C]]
func.func @views(%x: tensor<2x3xf32>) -> (tensor<6xf32>, tensor<1x2xf32>) {
  %a = tpu.view %x : tensor<2x3xf32> -> tensor<3x2xf32>
  %b = tpu.view %a : tensor<3x2xf32> -> tensor<6xf32>
  %c = tpu.view %b : tensor<6xf32> -> tensor<6xf32>
  %k = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %kv = tpu.view %k : tensor<2xf32> -> tensor<1x2xf32>
  return %c, %kv : tensor<6xf32>, tensor<1x2xf32>
}
