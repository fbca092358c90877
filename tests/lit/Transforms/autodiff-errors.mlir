// RUN: tpu-opt %s --split-input-file --tpu-autodiff --verify-diagnostics
// RUN: not tpu-opt %s --split-input-file --tpu-autodiff="loss=hinge" 2>&1 | FileCheck %s --check-prefix=LOSS
// RUN: not tpu-opt %s --split-input-file --tpu-autodiff="optimizer=adam" 2>&1 | FileCheck %s --check-prefix=OPTIMIZER
// RUN: not tpu-opt %s --split-input-file --tpu-autodiff="lr=-1" 2>&1 | FileCheck %s --check-prefix=LR
// RUN: not tpu-opt %s --split-input-file --tpu-autodiff="momentum=1" 2>&1 | FileCheck %s --check-prefix=MOMENTUM
// RUN: not tpu-opt %s --split-input-file --tpu-autodiff="trainable=w,v" 2>&1 | FileCheck %s --check-prefix=TRAINABLE

// LOSS: loss must be cross-entropy or mse, got 'hinge'
// OPTIMIZER: optimizer must be sgd or momentum, got 'adam'
// LR: lr must be a positive number, got -1
// MOMENTUM: momentum must be in [0, 1), got 1
// TRAINABLE: no float parameter named 'v' to train

// An op on the path from a parameter to the loss without a rule: the error
// is on the op, whose location names the ONNX node in imported models.
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %w = "tosa.const"() <{value = dense<1.0> : tensor<2x3xf32>}> {tpu.name = "w"} : () -> tensor<2x3xf32>
  // expected-error @+1 {{no gradient rule for tosa.reduce_prod (it lies between a trainable parameter and the loss)}}
  %e = tosa.reduce_prod %w {axis = 1 : i32} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %y = tosa.add %x, %e : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// A pad whose padding is not a constant.
func.func @main(%x: tensor<2x3xf32>, %p: tensor<2x2xi32>) -> tensor<4x5xf32> {
  %w = "tosa.const"() <{value = dense<1.0> : tensor<2x3xf32>}> {tpu.name = "w"} : () -> tensor<2x3xf32>
  %a = tosa.add %x, %w : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // expected-error @+1 {{training needs a pad with constant padding}}
  %y = tosa.pad %a, %p : (tensor<2x3xf32>, tensor<2x2xi32>) -> tensor<4x5xf32>
  return %y : tensor<4x5xf32>
}

// -----

// expected-error @+1 {{training needs one model output, @main has 2}}
func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  return %x, %x : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// expected-error @+1 {{cross-entropy needs a [batch, classes] output, @main's is 'tensor<2x3x4xf32>'}}
func.func @main(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  return %x : tensor<2x3x4xf32>
}

// -----

// expected-error @+1 {{nothing to train: @main has no named float constant}}
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %w = "tosa.const"() <{value = dense<1.0> : tensor<2x3xf32>}> : () -> tensor<2x3xf32>
  %y = tosa.add %x, %w : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// expected-error @+1 {{no function @main to train}}
module {
  func.func @forward(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
    return %x : tensor<2x3xf32>
  }
}
