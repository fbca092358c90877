// RUN: tpu-opt %s --tpu-assign-target="config=tpu-9x9" --split-input-file --verify-diagnostics
// RUN: tpu-opt %s --tpu-assign-target="config=tpu-8x8" | not tpu-opt --tpu-assign-target="config=tpu-32x32" 2>&1 | FileCheck %s --check-prefix=CONFLICT
// CONFLICT: error: the module is compiled for 'tpu-8x8'; it cannot be compiled for 'tpu-32x32' too

// expected-error @+1 {{no preset config named 'tpu-9x9' (presets: tpu-128x128, tpu-32x32, tpu-8x8; or give a .json file)}}
module {
  func.func @main(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
    return %x : tensor<4x3xf32>
  }
}
