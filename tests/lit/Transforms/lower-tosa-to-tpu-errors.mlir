// RUN: tpu-opt %s --tpu-lower-tosa --split-input-file --verify-diagnostics

func.func @middle_axis_broadcast(%x: tensor<2x4x3xf32>, %c: tensor<2x1x3xf32>) -> tensor<2x4x3xf32> {
  // expected-error @+1 {{'tosa.add' op broadcast is not supported by the vector unit: after tpu-matrix-broadcast one operand must have the result's shape and the other be a row, a column or one element of its 2-D view}}
  %s = tosa.add %x, %c : (tensor<2x4x3xf32>, tensor<2x1x3xf32>) -> tensor<2x4x3xf32>
  return %s : tensor<2x4x3xf32>
}

// -----

func.func @integer_output(%x: tensor<4x3xf32>) -> tensor<4x3xi32> {
  // expected-error @-1 {{output 0 is 'tensor<4x3xi32>'; the TPU stores float32 tensors and the int64 indices of ArgMax and ArgMin only}}
  %c = tosa.cast %x : (tensor<4x3xf32>) -> tensor<4x3xi32>
  return %c : tensor<4x3xi32>
}

// -----

func.func @unsupported(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'tosa.floor' op is not supported by the TPU lowering}}
  %t = tosa.floor %x : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %t : tensor<4x3xf32>
}

// -----

func.func @integer(%x: tensor<4x3xi32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'tosa.add' op is supported on static-shape f32 tensors only}}
  %s = tosa.add %x, %x : (tensor<4x3xi32>, tensor<4x3xi32>) -> tensor<4x3xi32>
  %f = tosa.cast %s : (tensor<4x3xi32>) -> tensor<4x3xf32>
  return %f : tensor<4x3xf32>
}

// -----

func.func @transpose_dynamic_perms(%x: tensor<2x3xf32>, %p: tensor<2xi32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'tosa.transpose' op with non-constant perms is not supported by the TPU lowering}}
  %t = tosa.transpose %x, %p : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}

// -----

func.func @logical_of_input(%a: tensor<2x3xi1>, %x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %zero = "tosa.const"() {value = dense<0.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  // expected-error @+1 {{'tosa.logical_not' op is supported on static-shape f32 tensors only, got 'tensor<2x3xi1>'}}
  %n = tosa.logical_not %a : (tensor<2x3xi1>) -> tensor<2x3xi1>
  %y = tosa.select %n, %x, %zero : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<1x1xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

func.func @pad_dynamic(%x: tensor<2x3xf32>, %p: tensor<2x2xi32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'tosa.pad' op with non-constant padding is not supported by the TPU lowering}}
  %y = tosa.pad %x, %p : (tensor<2x3xf32>, tensor<2x2xi32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

func.func @compare_as_data(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'tosa.greater' op is supported by the TPU lowering as the condition of a select or cast to f32 only, not as an operand of 'tosa.logical_xor'}}
  %gt = tosa.greater %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %n = tosa.logical_xor %gt, %gt : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  %f = tosa.cast %n : (tensor<4x8xi1>) -> tensor<4x8xf32>
  return %f : tensor<4x8xf32>
}

// -----

func.func @select_on_input(%c: tensor<4x8xi1>, %x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'tosa.select' op is supported by the TPU lowering with a compare (greater, greater_equal, equal) as its condition only}}
  %s = tosa.select %c, %x, %y : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}

// -----

// A wrap by the wrong row count is not the importer's: the indices are a
// computation the TPU does not gather with.
func.func @gather_computed_indices(%ids: tensor<1x6xi32>, %x: tensor<1x16x5xf32>) -> tensor<1x6x5xf32> {
  %dim = "tosa.const"() <{value = dense<15> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %zero = "tosa.const"() <{value = dense<0> : tensor<1x1xi32>}> : () -> tensor<1x1xi32>
  %negative = tosa.greater %zero, %ids : (tensor<1x1xi32>, tensor<1x6xi32>) -> tensor<1x6xi1>
  %wrapped = tosa.add %ids, %dim : (tensor<1x6xi32>, tensor<1x1xi32>) -> tensor<1x6xi32>
  %index = tosa.select %negative, %wrapped, %ids : (tensor<1x6xi1>, tensor<1x6xi32>, tensor<1x6xi32>) -> tensor<1x6xi32>
  // expected-error @+1 {{'tosa.gather' op takes its indices from a computation; the TPU gathers with indices that are a graph input (int64 or int32)}}
  %g = tosa.gather %x, %index : (tensor<1x16x5xf32>, tensor<1x6xi32>) -> tensor<1x6x5xf32>
  return %g : tensor<1x6x5xf32>
}

// -----

// Indices inside the graph are fp32 values (lowerIntegerValues), which an
// integer multiplication does not take.
func.func @argmax_used(%x: tensor<3x5xf32>) -> tensor<3xf32> {
  %0 = tosa.argmax %x {axis = 1 : i32} : (tensor<3x5xf32>) -> tensor<3xi32>
  // expected-error @+1 {{'tosa.mul' op is supported on static-shape f32 tensors only, got 'tensor<3xi32>'}}
  %1 = tosa.mul %0, %0 {shift = 0 : i8} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %2 = tosa.cast %1 : (tensor<3xi32>) -> tensor<3xf32>
  return %2 : tensor<3xf32>
}

// -----

func.func @indices_used(%x: tensor<3x5xf32>) -> (tensor<3xi64>, tensor<3xi64>) {
  %0 = tosa.argmax %x {axis = 1 : i32} : (tensor<3x5xf32>) -> tensor<3xi32>
  // expected-error @+1 {{'tosa.cast' op of ArgMax's indices is supported by the TPU lowering only as a graph output of its own, not used by other operations}}
  %1 = tosa.cast %0 : (tensor<3xi32>) -> tensor<3xi64>
  return %1, %1 : tensor<3xi64>, tensor<3xi64>
}

// -----

func.func @reversed_argmax(%x: tensor<3x5xf32>) -> tensor<3xi64> {
  %r = tosa.reverse %x {axis = 1 : i32} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  // expected-error @+1 {{'tosa.argmax' op of a reversed axis is supported by the TPU lowering only as ArgMax's select_last_index, subtracted from the axis length - 1}}
  %0 = tosa.argmax %r {axis = 1 : i32} : (tensor<3x5xf32>) -> tensor<3xi32>
  %1 = tosa.cast %0 : (tensor<3xi32>) -> tensor<3xi64>
  return %1 : tensor<3xi64>
}

// -----

func.func @reverse_other_axis(%x: tensor<3x5xf32>) -> tensor<5xi64> {
  // expected-error @+1 {{'tosa.reverse' op feeding an argmax is supported by the TPU lowering only as ArgMax's select_last_index, reversing the argmax's axis}}
  %r = tosa.reverse %x {axis = 1 : i32} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %a = tosa.argmax %r {axis = 0 : i32} : (tensor<3x5xf32>) -> tensor<5xi32>
  %c = tosa.cast %a : (tensor<5xi32>) -> tensor<5xi64>
  return %c : tensor<5xi64>
}
