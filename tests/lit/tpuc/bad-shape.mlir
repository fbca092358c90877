// TOSA from elsewhere with a result shape its operands contradict: one line,
// naming the place and the op, and exit 1.
// RUN: not tpuc %s --emit=asm 2>&1 | FileCheck %s
// CHECK: tpuc: error: {{.*}}bad-shape.mlir:8:8: 'tosa.matmul' op result 0 is declared tensor<1x4x5xf32> but its operands give 1x4x6
// CHECK-NOT: error

func.func @main(%a: tensor<1x4x8xf32>, %b: tensor<1x8x6xf32>) -> tensor<1x4x5xf32> {
  %m = tosa.matmul %a, %b : (tensor<1x4x8xf32>, tensor<1x8x6xf32>) -> tensor<1x4x5xf32>
  return %m : tensor<1x4x5xf32>
}
