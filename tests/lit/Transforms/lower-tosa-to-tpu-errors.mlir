// RUN: tpu-opt %s --tpu-lower-tosa --split-input-file --verify-diagnostics

func.func @middle_axis_broadcast(%x: tensor<2x4x3xf32>, %c: tensor<2x1x3xf32>) -> tensor<2x4x3xf32> {
  // expected-error @+1 {{'tosa.add' op broadcast is not supported by the vector unit: the smaller operand must match in shape, be one row of the last dimension, one column (size 1 in the last dimension only) or one element}}
  %s = tosa.add %x, %c : (tensor<2x4x3xf32>, tensor<2x1x3xf32>) -> tensor<2x4x3xf32>
  return %s : tensor<2x4x3xf32>
}

// -----

func.func @reduce_not_last_axis(%x: tensor<4x3xf32>) -> tensor<1x3xf32> {
  // expected-error @+1 {{'tosa.reduce_sum' op over axis 0 is not supported by the TPU lowering (only the last axis, 1)}}
  %s = tosa.reduce_sum %x {axis = 0 : i32} : (tensor<4x3xf32>) -> tensor<1x3xf32>
  return %s : tensor<1x3xf32>
}

// -----

func.func @sub_broadcast_lhs(%r: tensor<1x3xf32>, %x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'tosa.sub' op broadcast is not supported by the vector unit}}
  %s = tosa.sub %r, %x : (tensor<1x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}

// -----

func.func @unsupported(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'tosa.floor' op is not supported by the TPU lowering}}
  %t = tosa.floor %x : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %t : tensor<4x3xf32>
}

// -----

func.func @integer(%x: tensor<4x3xi32>) -> tensor<4x3xi32> {
  // expected-error @+1 {{'tosa.add' op is supported on static-shape f32 tensors only}}
  %s = tosa.add %x, %x : (tensor<4x3xi32>, tensor<4x3xi32>) -> tensor<4x3xi32>
  return %s : tensor<4x3xi32>
}

// -----

func.func @transpose_dynamic_perms(%x: tensor<2x3xf32>, %p: tensor<2xi32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'tosa.transpose' op with non-constant perms is not supported by the TPU lowering}}
  %t = tosa.transpose %x, %p : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}

// -----

func.func @conv_dynamic_weights(%x: tensor<1x4x4x2xf32>, %w: tensor<3x1x1x2xf32>, %b: tensor<3xf32>) -> tensor<1x4x4x3xf32> {
  // expected-error @+1 {{'tosa.conv2d' op with non-constant weights is not supported by the TPU lowering}}
  %y = tosa.conv2d %x, %w, %b {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xf32>, tensor<3x1x1x2xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  return %y : tensor<1x4x4x3xf32>
}

// -----

func.func @depthwise_multiplier(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x4xf32> {
  %w = "tosa.const"() {value = dense<1.0> : tensor<1x1x2x2xf32>} : () -> tensor<1x1x2x2xf32>
  %b = "tosa.const"() {value = dense<0.0> : tensor<4xf32>} : () -> tensor<4xf32>
  // expected-error @+1 {{'tosa.depthwise_conv2d' op with a channel multiplier other than 1 is not supported by the TPU lowering}}
  %y = tosa.depthwise_conv2d %x, %w, %b {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// -----

func.func @pad_dynamic(%x: tensor<2x3xf32>, %p: tensor<2x2xi32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'tosa.pad' op with non-constant padding is not supported by the TPU lowering}}
  %y = tosa.pad %x, %p : (tensor<2x3xf32>, tensor<2x2xi32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

func.func @compare_as_data(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xi1> {
  // expected-error @+1 {{'tosa.greater' op is supported by the TPU lowering as the condition of a select or cast to f32 only, not as an operand of 'func.return'}}
  %gt = tosa.greater %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  return %gt : tensor<4x8xi1>
}

// -----

func.func @select_on_input(%c: tensor<4x8xi1>, %x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'tosa.select' op is supported by the TPU lowering with a compare (greater, greater_equal, equal) as its condition only}}
  %s = tosa.select %c, %x, %y : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}
