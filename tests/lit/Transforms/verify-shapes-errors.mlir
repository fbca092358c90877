// RUN: tpu-opt %s --tpu-verify-shapes --split-input-file --verify-diagnostics

// A result shape TOSA's verifier accepts as compatible (a dynamic dimension)
// is not static.
func.func @dynamic(%a: tensor<1x4x8xf32>, %b: tensor<1x8x6xf32>) -> tensor<1x?x6xf32> {
  // expected-error @+1 {{'tosa.matmul' op has a tensor of unknown or dynamic shape ('tensor<1x?x6xf32>'); the TPU compiler needs static shapes}}
  %m = tosa.matmul %a, %b : (tensor<1x4x8xf32>, tensor<1x8x6xf32>) -> tensor<1x?x6xf32>
  return %m : tensor<1x?x6xf32>
}

// -----

func.func @unranked(%a: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'tosa.exp' op has a tensor of unknown or dynamic shape ('tensor<*xf32>'); the TPU compiler needs static shapes}}
  %e = tosa.exp %a : (tensor<*xf32>) -> tensor<*xf32>
  return %e : tensor<*xf32>
}

// -----

// Static shapes TOSA's verifiers let through but the operands contradict.
func.func @wrong_matmul(%a: tensor<1x4x8xf32>, %b: tensor<1x8x6xf32>) -> tensor<1x4x5xf32> {
  // expected-error @+1 {{'tosa.matmul' op result 0 is declared tensor<1x4x5xf32> but its operands give 1x4x6}}
  %m = tosa.matmul %a, %b : (tensor<1x4x8xf32>, tensor<1x8x6xf32>) -> tensor<1x4x5xf32>
  return %m : tensor<1x4x5xf32>
}

// -----

func.func @wrong_conv(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x7x8x4xf32> {
  // expected-error @+1 {{'tosa.conv2d' op result 0 is declared tensor<1x7x8x4xf32> but its operands give 1x8x8x4}}
  %c = tosa.conv2d %x, %w, %b {pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x7x8x4xf32>
  return %c : tensor<1x7x8x4xf32>
}
