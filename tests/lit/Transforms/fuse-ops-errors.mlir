// RUN: tpu-opt %s --tpu-fuse="mode=everything" --verify-diagnostics

// expected-error @+1 {{tpu-fuse: mode must be none, epilogue or full, got 'everything'}}
func.func @main(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  return %x : tensor<4x3xf32>
}
