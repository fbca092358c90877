// RUN: tpu-opt %s --tpu-verify-shapes | FileCheck %s

// Static shapes that agree with what the operations infer pass unchanged.
// CHECK-LABEL: func.func @consistent
// CHECK: tosa.matmul %arg0, %arg1 : (tensor<1x4x8xf32>, tensor<1x8x6xf32>) -> tensor<1x4x6xf32>
// CHECK: tosa.add
func.func @consistent(%a: tensor<1x4x8xf32>, %b: tensor<1x8x6xf32>, %c: tensor<1x1x6xf32>) -> tensor<1x4x6xf32> {
  %m = tosa.matmul %a, %b : (tensor<1x4x8xf32>, tensor<1x8x6xf32>) -> tensor<1x4x6xf32>
  %s = tosa.add %m, %c : (tensor<1x4x6xf32>, tensor<1x1x6xf32>) -> tensor<1x4x6xf32>
  return %s : tensor<1x4x6xf32>
}
