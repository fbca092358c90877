// RUN: tpu-opt %s --split-input-file --tpu-plan-tiles | FileCheck %s

// A convolution's matmul (its activations a tpu.im2col) runs on its input
// held on chip wherever a #tpu.conv_tiling fits (docs/compiler.md,
// "Convolutions" and section 6); the im2col then has no plan and writes
// nothing. resnet-block's 3x3 convolutions (64 channels, 16x16, pad 1) on
// each preset, a strided 1x1 convolution, and the fallback when no band
// fits. K steps: runs of a kernel row's KW*C = 192 elements, cut into
// tile_k = min(R, 192) rows; panels of whole K steps up to k_block rows.
// Where each K step is one tap's channels (tile_k divides C = 64), the
// array skips the padding taps and a band holds no padding: its input rows
// are 16 x 64 words; with K steps of two taps (128x128) they are padded to
// 18 x 64.

// 8x8 (16384 scratchpad words): bands of 4 output rows, whose 6 input
// rows of 16 x 64 words (6144) leave room for two 144 x 16 weight
// panels but not a second band (one buffer: inputs = [0, 0]). Panel rows
// of 16 columns: 8-column rows (32 bytes) would wait on DRAM latency (16
// requests in flight). The epilogue's operand (none here) follows the
// input band in its last bank.
// CHECK-LABEL: func.func @resnet_conv
// CHECK: tpu.im2col
// CHECK-NOT: tpu.tiling
// CHECK-SAME: -> tensor<256x576xf32>
// CHECK: tpu.matmul {{.*}}tpu.tiling = #tpu.conv_tiling<band = 4, tile_n = 16, tile_k = 8, k_block = 144, inputs = [0, 0], weights = [8192, 12288], operands = [], accumulators = [0, 2048]>
module attributes {tpu.target = #tpu.target<name = "tpu-8x8", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>} {
func.func @resnet_conv(%x: tensor<1x16x16x64xf32>, %w: tensor<576x64xf32>, %fill: tensor<1x64xf32>) -> tensor<256x64xf32> {
  %rows = tpu.im2col %x, %fill {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} : tensor<1x16x16x64xf32>, tensor<1x64xf32> -> tensor<256x576xf32>
  %y = tpu.matmul %rows, %w : tensor<256x576xf32>, tensor<576x64xf32> -> tensor<256x64xf32>
  return %y : tensor<256x64xf32>
}

// Stride 2 along both axes: a band of 4 output rows reads (4-1)*2 + 1 = 7
// input rows; two bands per image, two images, so two input buffers.
// CHECK-LABEL: func.func @strided
// CHECK: tpu.matmul {{.*}}tpu.tiling = #tpu.conv_tiling<band = 4, tile_n = 16, tile_k = 8, k_block = 8, inputs = [0, 4096], weights = [8192, 12288], operands = [], accumulators = [0, 2048]>
func.func @strided(%x: tensor<2x15x15x8xf32>, %w: tensor<8x16xf32>) -> tensor<128x16xf32> {
  %rows = tpu.im2col %x {kernel = array<i64: 1, 1>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : tensor<2x15x15x8xf32> -> tensor<128x8xf32>
  %y = tpu.matmul %rows, %w : tensor<128x8xf32>, tensor<8x16xf32> -> tensor<128x16xf32>
  return %y : tensor<128x16xf32>
}
}

// -----

// 32x32: the whole image is one band (18 x 16 x 64 input words), two
// 32-column tiles so that the first tile's epilogue and store overlap the
// second's compute, panels of 128 rows (4 K steps) double-buffered.
// CHECK-LABEL: func.func @resnet_conv
// CHECK: tpu.matmul {{.*}}tpu.tiling = #tpu.conv_tiling<band = 16, tile_n = 32, tile_k = 32, k_block = 128, inputs = [0, 0], weights = [32768, 49152], operands = [], accumulators = [0, 8192]>
module attributes {tpu.target = #tpu.target<name = "tpu-32x32", clock_ghz = 1.0,
    array = <rows = 32, cols = 32, dtype = bf16>,
    scratchpad = <kib = 512, banks = 8>, accumulator = <kib = 128, banks = 4>,
    vector = <lanes = 32, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 32.0, latency_cycles = 100, max_outstanding = 64>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>} {
func.func @resnet_conv(%x: tensor<1x16x16x64xf32>, %w: tensor<576x64xf32>, %fill: tensor<1x64xf32>) -> tensor<256x64xf32> {
  %rows = tpu.im2col %x, %fill {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} : tensor<1x16x16x64xf32>, tensor<1x64xf32> -> tensor<256x576xf32>
  %y = tpu.matmul %rows, %w : tensor<256x576xf32>, tensor<576x64xf32> -> tensor<256x64xf32>
  return %y : tensor<256x64xf32>
}

// resnet-block's second convolution with its epilogue: bias row, residual
// tile, ReLU. The bias row (32 words) and the residual (256 x 32 words per
// output tile) each have their part of the operand buffer, side by side
// in one bank after the input band, so that both load while the array
// works; the panels follow, a bank each.
// CHECK-LABEL: func.func @resnet_conv_residual
// CHECK: tpu.matmul {{.*}}tpu.tiling = #tpu.conv_tiling<band = 16, tile_n = 32, tile_k = 32, k_block = 128, inputs = [0, 0], weights = [49152, 65536], operands = [32768, 32800], accumulators = [0, 8192]>
func.func @resnet_conv_residual(%x: tensor<1x16x16x64xf32>, %w: tensor<576x64xf32>, %fill: tensor<1x64xf32>, %b: tensor<1x64xf32>, %r: tensor<256x64xf32>) -> tensor<256x64xf32> {
  %rows = tpu.im2col %x, %fill {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} : tensor<1x16x16x64xf32>, tensor<1x64xf32> -> tensor<256x576xf32>
  %y = tpu.fused -> tensor<256x64xf32> {
    %m = tpu.matmul %rows, %w : tensor<256x576xf32>, tensor<576x64xf32> -> tensor<256x64xf32>
    %biased = tpu.binary add %m, %b : tensor<256x64xf32>, tensor<1x64xf32> -> tensor<256x64xf32>
    %sum = tpu.binary add %biased, %r : tensor<256x64xf32>, tensor<256x64xf32> -> tensor<256x64xf32>
    %relu = tpu.unary relu %sum : tensor<256x64xf32>
    tpu.yield %relu : tensor<256x64xf32>
  }
  return %y : tensor<256x64xf32>
}

// ResNet-18's last stage at batch 8 (2x2 images, here 256 channels): a band
// of 16 output rows is all 8 images, each with its own 4 input rows
// (8 x 4 x 2 x 256 = 16384 words), so each weight panel serves the whole
// batch instead of being loaded once per image.
// CHECK-LABEL: func.func @batch_of_small_images
// CHECK: tpu.matmul {{.*}}tpu.tiling = #tpu.conv_tiling<band = 16, tile_n = 32, tile_k = 32, k_block = 576, inputs = [0, 0], weights = [16384, 49152], operands = [], accumulators = [0, 8192]>
func.func @batch_of_small_images(%x: tensor<8x2x2x256xf32>, %w: tensor<2304x256xf32>, %fill: tensor<1x256xf32>) -> tensor<32x256xf32> {
  %rows = tpu.im2col %x, %fill {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} : tensor<8x2x2x256xf32>, tensor<1x256xf32> -> tensor<32x2304xf32>
  %y = tpu.matmul %rows, %w : tensor<32x2304xf32>, tensor<2304x256xf32> -> tensor<32x256xf32>
  return %y : tensor<32x256xf32>
}
}

// -----

// 128x128: K steps of 128 rows (a run of 192 is two steps, 128 and 64,
// the first of two taps: the band keeps its padding columns), the whole
// image one band, all 64 columns one tile.
// CHECK-LABEL: func.func @resnet_conv
// CHECK: tpu.matmul {{.*}}tpu.tiling = #tpu.conv_tiling<band = 16, tile_n = 64, tile_k = 128, k_block = 256, inputs = [0, 0], weights = [131072, 262144], operands = [], accumulators = [0, 65536]>
module attributes {tpu.target = #tpu.target<name = "tpu-128x128", clock_ghz = 1.0,
    array = <rows = 128, cols = 128, dtype = bf16>,
    scratchpad = <kib = 8192, banks = 16>, accumulator = <kib = 2048, banks = 8>,
    vector = <lanes = 128, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 128.0, latency_cycles = 100, max_outstanding = 64>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>} {
func.func @resnet_conv(%x: tensor<1x16x16x64xf32>, %w: tensor<576x64xf32>, %fill: tensor<1x64xf32>) -> tensor<256x64xf32> {
  %rows = tpu.im2col %x, %fill {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} : tensor<1x16x16x64xf32>, tensor<1x64xf32> -> tensor<256x576xf32>
  %y = tpu.matmul %rows, %w : tensor<256x576xf32>, tensor<576x64xf32> -> tensor<256x64xf32>
  return %y : tensor<256x64xf32>
}
}

// -----

// A 16 KiB scratchpad (4096 words) holds a band of one output row (its 3
// input rows of 16 x 64 words, 3072) and one 32 x 32 weight tile, the only
// panel buffer; but then every weight is loaded again for each of the 16
// bands, and the cost model finds the im2col rows written to DRAM (a copy
// plan) and multiplied (a matmul plan) faster.
// CHECK-LABEL: func.func @resnet_conv
// CHECK: tpu.im2col {{.*}}tpu.tiling = #tpu.copy_tiling<staging = 4032, fill = 4032>
// CHECK: tpu.matmul {{.*}}tpu.tiling = #tpu.matmul_tiling<
module attributes {tpu.target = #tpu.target<name = "tpu-32x32-scratchpad-16k", clock_ghz = 1.0,
    array = <rows = 32, cols = 32, dtype = bf16>,
    scratchpad = <kib = 16, banks = 8>, accumulator = <kib = 128, banks = 4>,
    vector = <lanes = 32, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 32.0, latency_cycles = 100, max_outstanding = 64>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>} {
func.func @resnet_conv(%x: tensor<1x16x16x64xf32>, %w: tensor<576x64xf32>, %fill: tensor<1x64xf32>) -> tensor<256x64xf32> {
  %rows = tpu.im2col %x, %fill {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} : tensor<1x16x16x64xf32>, tensor<1x64xf32> -> tensor<256x576xf32>
  %y = tpu.matmul %rows, %w : tensor<256x576xf32>, tensor<576x64xf32> -> tensor<256x64xf32>
  return %y : tensor<256x64xf32>
}
}

// -----

// ResNet-18's layer4 3x3 convolution at 64x64 (2x2 outputs of 512 channels,
// K = 4608) on 8x8 with its bias and ReLU fused: the input band (4 input
// rows of 2 x 512 words, no padding columns) fills one bank, leaving room
// for panels of 8 x 512 weights. Every load (panel, input band, bias row)
// is a transfer of its own on the load queue, paying the DRAM latency
// before its rows: one K step's panel serves all 512 columns, in rows of
// 1 KiB that the bus, not the latency, bounds. With padding columns the
// band took two banks and the panels were 120 x 32 (the model before
// that, with no latency per transfer and no store term, took 248 x 16, the
// bf16 rows of 32 bytes bound by the latency: 54% slower than unfused).
// CHECK-LABEL: func.func @layer4_conv
// CHECK: tpu.matmul {{.*}}tpu.tiling = #tpu.conv_tiling<band = 2, tile_n = 512, tile_k = 8, k_block = 8, inputs = [0, 0], weights = [8192, 12288], operands = [4096], accumulators = [0, 2048]>
module attributes {tpu.target = #tpu.target<name = "tpu-8x8", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>} {
func.func @layer4_conv(%x: tensor<1x2x2x512xf32>, %b: tensor<1x512xf32>, %fill: tensor<1x512xf32>) -> tensor<4x512xf32> {
  %w = arith.constant dense<0.5> : tensor<4608x512xf32>
  %rows = tpu.im2col %x, %fill {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} : tensor<1x2x2x512xf32>, tensor<1x512xf32> -> tensor<4x4608xf32>
  %y = tpu.fused -> tensor<4x512xf32> {
    %m = tpu.matmul %rows, %w : tensor<4x4608xf32>, tensor<4608x512xf32> -> tensor<4x512xf32>
    %s = tpu.binary add %m, %b : tensor<4x512xf32>, tensor<1x512xf32> -> tensor<4x512xf32>
    %r = tpu.unary relu %s : tensor<4x512xf32>
    tpu.yield %r : tensor<4x512xf32>
  }
  return %y : tensor<4x512xf32>
}
}
