// RUN: tpu-opt %s --split-input-file --tpu-lower-tosa --tpu-plan-tiles | FileCheck %s
// RUN: tpu-opt %s --split-input-file --tpu-fuse | FileCheck %s --check-prefix=FUSE
// RUN: tpu-opt %s --split-input-file --tpu-fuse --tpu-lower-tosa --canonicalize --tpu-plan-tiles | FileCheck %s --check-prefix=GROUP

// Pools and depthwise convolutions are window reductions over their input
// held on chip (docs/compiler.md, "Pools and depthwise convolutions").
// ResNet-18's 3x3/2 max pool on 8x8 (16384 scratchpad words): a padded
// input row of 18 pixels is two column phases of 9 x 64 words (1152), and
// a band of 2 output rows (a quarter of 8) reads 5 of them (5760 words)
// and writes 2 x 8 x 64 (1024): two of each after the one operand word.
// CHECK-LABEL: func.func @resnet_max_pool
// CHECK-NOT: tpu.im2col
// CHECK: tpu.window_reduce max %arg0 fill %{{.*}} : tensor<1x64xf32> {{{.*}}tpu.tiling = #tpu.window_tiling<band = 2, inputs = [1, 5761], outputs = [11521, 12545], operands = 0>} : tensor<1x16x16x64xf32> -> tensor<64x64xf32>
// FUSE-LABEL: func.func @resnet_max_pool
// FUSE-NOT: tpu.fused
module attributes {tpu.target = #tpu.target<name = "tpu-8x8", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>} {
func.func @resnet_max_pool(%x: tensor<1x16x16x64xf32>) -> tensor<1x8x8x64xf32> {
  %y = tosa.max_pool2d %x {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x16x16x64xf32>) -> tensor<1x8x8x64xf32>
  return %y : tensor<1x8x8x64xf32>
}
}

// -----

// The same pool with 32x32's memories (8 banks of 16384 words): each buffer
// starts a bank of its own, so that the DMA filling the next band's input or
// storing the last band's output never waits on the bank the vector unit
// reads.
// CHECK-LABEL: func.func @buffers_in_own_banks
// CHECK: tpu.window_reduce max %arg0 fill %{{.*}} : tensor<1x64xf32> {{{.*}}tpu.tiling = #tpu.window_tiling<band = 2, inputs = [16384, 32768], outputs = [49152, 65536], operands = 0>}
// FUSE-LABEL: func.func @buffers_in_own_banks
module attributes {tpu.target = #tpu.target<name = "tpu-32x32", clock_ghz = 1.0,
    array = <rows = 32, cols = 32, dtype = bf16>,
    scratchpad = <kib = 512, banks = 8>, accumulator = <kib = 128, banks = 4>,
    vector = <lanes = 32, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 32.0, latency_cycles = 100, max_outstanding = 64>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 200.0>>} {
func.func @buffers_in_own_banks(%x: tensor<1x16x16x64xf32>) -> tensor<1x8x8x64xf32> {
  %y = tosa.max_pool2d %x {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x16x16x64xf32>) -> tensor<1x8x8x64xf32>
  return %y : tensor<1x8x8x64xf32>
}
}

// -----

// With 8 KiB (2048 words) not even one output row's 3 input rows (3456
// words) fit: the pool writes its im2col matrix and takes the maximum of
// its tap slices, and in full fusion it is a group of its own.
// CHECK-LABEL: func.func @no_band_fits
// CHECK: tpu.im2col
// CHECK-COUNT-8: tpu.binary max
// CHECK-NOT: tpu.window_reduce
// FUSE-LABEL: func.func @no_band_fits
// FUSE: tpu.fused
// FUSE-NEXT: tosa.max_pool2d
module attributes {tpu.target = #tpu.target<name = "tiny", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 8, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>} {
func.func @no_band_fits(%x: tensor<1x16x16x64xf32>) -> tensor<1x8x8x64xf32> {
  %y = tosa.max_pool2d %x {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x16x16x64xf32>) -> tensor<1x8x8x64xf32>
  return %y : tensor<1x8x8x64xf32>
}
}

// -----

// On 128x128 (8 MiB of scratchpad) a band would fit, but a padded input
// row of 302 x 256 words is further apart than a DMA's on-chip stride
// (65,535 words) can reach: im2col.
// CHECK-LABEL: func.func @row_too_wide
// CHECK: tpu.im2col
// CHECK-NOT: tpu.window_reduce
module attributes {tpu.target = #tpu.target<name = "tpu-128x128", clock_ghz = 1.0,
    array = <rows = 128, cols = 128, dtype = bf16>,
    scratchpad = <kib = 8192, banks = 16>, accumulator = <kib = 2048, banks = 8>,
    vector = <lanes = 128, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 64.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>} {
func.func @row_too_wide(%x: tensor<1x4x300x256xf32>) -> tensor<1x4x300x256xf32> {
  %y = tosa.max_pool2d %x {kernel = array<i64: 1, 3>, pad = array<i64: 0, 0, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x4x300x256xf32>) -> tensor<1x4x300x256xf32>
  return %y : tensor<1x4x300x256xf32>
}
}

// -----

// A depthwise convolution and the ReLU6 after it (MobileNetV2's) form a
// group: the clamp runs on each output band in the scratchpad before its
// store, its bounds loaded once with the weights and bias. An add of a
// whole tensor after a pool is left alone: the epilogue's operands are
// loaded once, not per band.
// CHECK-LABEL: func.func @depthwise_relu6
// GROUP-LABEL: func.func @depthwise_relu6
// GROUP: tpu.fused
// GROUP-NEXT: tpu.window_reduce sum
// GROUP-SAME: tpu.tiling = #tpu.window_tiling<band = 2,
// GROUP-NEXT: tpu.clamp
// GROUP-NOT: tpu.tiling
// GROUP-NEXT: tpu.yield
// GROUP: tpu.window_reduce max
// GROUP-NOT: tpu.fused
// GROUP: tpu.binary add
// FUSE-LABEL: func.func @depthwise_relu6
// FUSE: tpu.fused
// FUSE-NEXT: tosa.depthwise_conv2d
// FUSE-NEXT: tosa.clamp
// FUSE-NEXT: tpu.yield
// FUSE: tosa.max_pool2d
// FUSE-NEXT: tosa.add
module attributes {tpu.target = #tpu.target<name = "tpu-32x32", clock_ghz = 1.0,
    array = <rows = 32, cols = 32, dtype = bf16>,
    scratchpad = <kib = 512, banks = 8>, accumulator = <kib = 128, banks = 4>,
    vector = <lanes = 32, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 32.0, latency_cycles = 100, max_outstanding = 64>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 200.0>>} {
func.func @depthwise_relu6(%x: tensor<1x8x8x32xf32>, %w: tensor<3x3x32x1xf32>, %b: tensor<32xf32>, %r: tensor<1x8x8x32xf32>) -> (tensor<1x8x8x32xf32>, tensor<1x8x8x32xf32>) {
  %d = tosa.depthwise_conv2d %x, %w, %b {dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x32xf32>, tensor<3x3x32x1xf32>, tensor<32xf32>) -> tensor<1x8x8x32xf32>
  %c = tosa.clamp %d {min_fp = 0.0 : f32, max_fp = 6.0 : f32, min_int = 0 : i64, max_int = 6 : i64} : (tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32>
  %p = tosa.max_pool2d %x {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32>
  %s = tosa.add %p, %r : (tensor<1x8x8x32xf32>, tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32>
  return %c, %s : tensor<1x8x8x32xf32>, tensor<1x8x8x32xf32>
}
}
