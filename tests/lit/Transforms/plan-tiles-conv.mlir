// RUN: tpu-opt %s --split-input-file --tpu-plan-tiles --mlir-print-elementsattrs-with-hex-if-larger=-1 | FileCheck %s

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
// rows of 16 x 64 words (6144) leave room for two weight panels but not
// a second band (one buffer: inputs = [0, 0]). Panels of 32 x 16: a
// panel is free once its tiles are loaded into the array (a weights-only
// release), so small ones cost the array nothing and the first arrives
// sooner. Panel rows of 16 columns: 8-column rows (32 bytes) would wait
// on DRAM latency (16 requests in flight). The epilogue's operand (none
// here) follows the input band in its last bank.
// CHECK-LABEL: func.func @resnet_conv
// CHECK: tpu.im2col
// CHECK-NOT: tpu.tiling
// CHECK-SAME: -> tensor<256x576xf32>
// CHECK: tpu.matmul {{.*}}tpu.tiling = #tpu.conv_tiling<band = 4, tile_n = 16, tile_k = 8, k_block = 32, inputs = [0, 0], weights = [8192, 12288], operands = [], accumulators = [0, 2048]>
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

// lenet5's second convolution (5x5, 6 channels in, 16 out) on 128x128: its
// 150 x 16 weights load in less than the DRAM latency (9.6 KB at 128 B a
// cycle), so they come in one panel (k_block = K): panels of one 30-row K
// step each would be refilled, making the load queue wait for the array
// to free a buffer and holding up the next layers' loads behind them.
// CHECK-LABEL: func.func @small_weights
// CHECK: tpu.matmul {{.*}}tpu.tiling = #tpu.conv_tiling<band = 10, tile_n = 16, tile_k = 30, k_block = 150,
module attributes {tpu.target = #tpu.target<name = "tpu-128x128", clock_ghz = 1.0,
    array = <rows = 128, cols = 128, dtype = bf16>,
    scratchpad = <kib = 8192, banks = 16>, accumulator = <kib = 2048, banks = 8>,
    vector = <lanes = 128, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 128.0, latency_cycles = 100, max_outstanding = 64>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>} {
func.func @small_weights(%x: tensor<1x14x14x6xf32>, %w: tensor<150x16xf32>) -> tensor<100x16xf32> {
  %rows = tpu.im2col %x {kernel = array<i64: 5, 5>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : tensor<1x14x14x6xf32> -> tensor<100x150xf32>
  %y = tpu.matmul %rows, %w : tensor<100x150xf32>, tensor<150x16xf32> -> tensor<100x16xf32>
  return %y : tensor<100x16xf32>
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

// -----

// A band in pieces (32x32): with its weights a constant, the band of a
// 3x3 convolution of 64 channels whose K steps are one tap's 32 channels
// splits into two pieces of 32 channels, a buffer each, so that the array
// starts on the first piece's 9 steps while the second loads. The weight
// rows (here each row's value is its index) are reordered as the steps
// go: every tap's channels 0-31 (rows 0-31, 64-95, ...), then every tap's
// channels 32-63 (from row 32), so that a panel is still one transfer.
// CHECK-LABEL: func.func @band_in_pieces
// CHECK: arith.constant dense<{{\[}}[0.000000e+00], {{.*}}[3.100000e+01], [6.400000e+01], {{.*}}[5.430000e+02], [3.200000e+01], {{.*}}[5.750000e+02]]>
// CHECK: tpu.matmul {{.*}}tpu.tiling = #tpu.conv_tiling<band = 14, tile_n = 1, tile_k = 32, k_block = 576, pieces = 2, inputs = [0, 16384],
module attributes {tpu.target = #tpu.target<name = "tpu-32x32", clock_ghz = 1.0,
    array = <rows = 32, cols = 32, dtype = bf16>,
    scratchpad = <kib = 512, banks = 8>, accumulator = <kib = 128, banks = 4>,
    vector = <lanes = 32, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 32.0, latency_cycles = 100, max_outstanding = 64>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>} {
func.func @band_in_pieces(%x: tensor<1x16x16x64xf32>) -> tensor<196x1xf32> {
  %w = arith.constant dense<[[0.0], [1.0], [2.0], [3.0], [4.0], [5.0], [6.0], [7.0], [8.0], [9.0], [10.0], [11.0], [12.0], [13.0], [14.0], [15.0], [16.0], [17.0], [18.0], [19.0], [20.0], [21.0], [22.0], [23.0], [24.0], [25.0], [26.0], [27.0], [28.0], [29.0], [30.0], [31.0], [32.0], [33.0], [34.0], [35.0], [36.0], [37.0], [38.0], [39.0], [40.0], [41.0], [42.0], [43.0], [44.0], [45.0], [46.0], [47.0], [48.0], [49.0], [50.0], [51.0], [52.0], [53.0], [54.0], [55.0], [56.0], [57.0], [58.0], [59.0], [60.0], [61.0], [62.0], [63.0], [64.0], [65.0], [66.0], [67.0], [68.0], [69.0], [70.0], [71.0], [72.0], [73.0], [74.0], [75.0], [76.0], [77.0], [78.0], [79.0], [80.0], [81.0], [82.0], [83.0], [84.0], [85.0], [86.0], [87.0], [88.0], [89.0], [90.0], [91.0], [92.0], [93.0], [94.0], [95.0], [96.0], [97.0], [98.0], [99.0], [100.0], [101.0], [102.0], [103.0], [104.0], [105.0], [106.0], [107.0], [108.0], [109.0], [110.0], [111.0], [112.0], [113.0], [114.0], [115.0], [116.0], [117.0], [118.0], [119.0], [120.0], [121.0], [122.0], [123.0], [124.0], [125.0], [126.0], [127.0], [128.0], [129.0], [130.0], [131.0], [132.0], [133.0], [134.0], [135.0], [136.0], [137.0], [138.0], [139.0], [140.0], [141.0], [142.0], [143.0], [144.0], [145.0], [146.0], [147.0], [148.0], [149.0], [150.0], [151.0], [152.0], [153.0], [154.0], [155.0], [156.0], [157.0], [158.0], [159.0], [160.0], [161.0], [162.0], [163.0], [164.0], [165.0], [166.0], [167.0], [168.0], [169.0], [170.0], [171.0], [172.0], [173.0], [174.0], [175.0], [176.0], [177.0], [178.0], [179.0], [180.0], [181.0], [182.0], [183.0], [184.0], [185.0], [186.0], [187.0], [188.0], [189.0], [190.0], [191.0], [192.0], [193.0], [194.0], [195.0], [196.0], [197.0], [198.0], [199.0], [200.0], [201.0], [202.0], [203.0], [204.0], [205.0], [206.0], [207.0], [208.0], [209.0], [210.0], [211.0], [212.0], [213.0], [214.0], [215.0], [216.0], [217.0], [218.0], [219.0], [220.0], [221.0], [222.0], [223.0], [224.0], [225.0], [226.0], [227.0], [228.0], [229.0], [230.0], [231.0], [232.0], [233.0], [234.0], [235.0], [236.0], [237.0], [238.0], [239.0], [240.0], [241.0], [242.0], [243.0], [244.0], [245.0], [246.0], [247.0], [248.0], [249.0], [250.0], [251.0], [252.0], [253.0], [254.0], [255.0], [256.0], [257.0], [258.0], [259.0], [260.0], [261.0], [262.0], [263.0], [264.0], [265.0], [266.0], [267.0], [268.0], [269.0], [270.0], [271.0], [272.0], [273.0], [274.0], [275.0], [276.0], [277.0], [278.0], [279.0], [280.0], [281.0], [282.0], [283.0], [284.0], [285.0], [286.0], [287.0], [288.0], [289.0], [290.0], [291.0], [292.0], [293.0], [294.0], [295.0], [296.0], [297.0], [298.0], [299.0], [300.0], [301.0], [302.0], [303.0], [304.0], [305.0], [306.0], [307.0], [308.0], [309.0], [310.0], [311.0], [312.0], [313.0], [314.0], [315.0], [316.0], [317.0], [318.0], [319.0], [320.0], [321.0], [322.0], [323.0], [324.0], [325.0], [326.0], [327.0], [328.0], [329.0], [330.0], [331.0], [332.0], [333.0], [334.0], [335.0], [336.0], [337.0], [338.0], [339.0], [340.0], [341.0], [342.0], [343.0], [344.0], [345.0], [346.0], [347.0], [348.0], [349.0], [350.0], [351.0], [352.0], [353.0], [354.0], [355.0], [356.0], [357.0], [358.0], [359.0], [360.0], [361.0], [362.0], [363.0], [364.0], [365.0], [366.0], [367.0], [368.0], [369.0], [370.0], [371.0], [372.0], [373.0], [374.0], [375.0], [376.0], [377.0], [378.0], [379.0], [380.0], [381.0], [382.0], [383.0], [384.0], [385.0], [386.0], [387.0], [388.0], [389.0], [390.0], [391.0], [392.0], [393.0], [394.0], [395.0], [396.0], [397.0], [398.0], [399.0], [400.0], [401.0], [402.0], [403.0], [404.0], [405.0], [406.0], [407.0], [408.0], [409.0], [410.0], [411.0], [412.0], [413.0], [414.0], [415.0], [416.0], [417.0], [418.0], [419.0], [420.0], [421.0], [422.0], [423.0], [424.0], [425.0], [426.0], [427.0], [428.0], [429.0], [430.0], [431.0], [432.0], [433.0], [434.0], [435.0], [436.0], [437.0], [438.0], [439.0], [440.0], [441.0], [442.0], [443.0], [444.0], [445.0], [446.0], [447.0], [448.0], [449.0], [450.0], [451.0], [452.0], [453.0], [454.0], [455.0], [456.0], [457.0], [458.0], [459.0], [460.0], [461.0], [462.0], [463.0], [464.0], [465.0], [466.0], [467.0], [468.0], [469.0], [470.0], [471.0], [472.0], [473.0], [474.0], [475.0], [476.0], [477.0], [478.0], [479.0], [480.0], [481.0], [482.0], [483.0], [484.0], [485.0], [486.0], [487.0], [488.0], [489.0], [490.0], [491.0], [492.0], [493.0], [494.0], [495.0], [496.0], [497.0], [498.0], [499.0], [500.0], [501.0], [502.0], [503.0], [504.0], [505.0], [506.0], [507.0], [508.0], [509.0], [510.0], [511.0], [512.0], [513.0], [514.0], [515.0], [516.0], [517.0], [518.0], [519.0], [520.0], [521.0], [522.0], [523.0], [524.0], [525.0], [526.0], [527.0], [528.0], [529.0], [530.0], [531.0], [532.0], [533.0], [534.0], [535.0], [536.0], [537.0], [538.0], [539.0], [540.0], [541.0], [542.0], [543.0], [544.0], [545.0], [546.0], [547.0], [548.0], [549.0], [550.0], [551.0], [552.0], [553.0], [554.0], [555.0], [556.0], [557.0], [558.0], [559.0], [560.0], [561.0], [562.0], [563.0], [564.0], [565.0], [566.0], [567.0], [568.0], [569.0], [570.0], [571.0], [572.0], [573.0], [574.0], [575.0]]> : tensor<576x1xf32>
  %rows = tpu.im2col %x {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : tensor<1x16x16x64xf32> -> tensor<196x576xf32>
  %y = tpu.matmul %rows, %w : tensor<196x576xf32>, tensor<576x1xf32> -> tensor<196x1xf32>
  return %y : tensor<196x1xf32>
}
}

// -----

// A pool of 2x2 windows ending the epilogue (docs/compiler.md, "Pools in a
// convolution's epilogue"): the band is whole windows, 14 output rows of
// lenet5's conv1 (28x28, 5x5, 6 channels) on 32x32, where the same
// convolution without the pool takes bands of 7; the pool has no plan of
// its own (it runs on its head's tiles).
// CHECK-LABEL: func.func @pooled
// CHECK: tpu.matmul {{.*}}tpu.tiling = #tpu.conv_tiling<band = 14,
// CHECK-NOT: tpu.tiling
// CHECK: tpu.window_reduce max
// CHECK-NOT: tpu.tiling
// CHECK-LABEL: func.func @unpooled
// CHECK: tpu.matmul {{.*}}tpu.tiling = #tpu.conv_tiling<band = 7,
module attributes {tpu.target = #tpu.target<name = "tpu-32x32", clock_ghz = 1.0,
    array = <rows = 32, cols = 32, dtype = bf16>,
    scratchpad = <kib = 512, banks = 8>, accumulator = <kib = 128, banks = 4>,
    vector = <lanes = 32, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 32.0, latency_cycles = 100, max_outstanding = 32>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>} {
func.func @pooled(%x: tensor<1x32x32x1xf32>, %w: tensor<25x6xf32>, %b: tensor<1x6xf32>) -> tensor<196x6xf32> {
  %rows = tpu.im2col %x {kernel = array<i64: 5, 5>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : tensor<1x32x32x1xf32> -> tensor<784x25xf32>
  %g = tpu.fused -> tensor<196x6xf32> {
    %y = tpu.matmul %rows, %w : tensor<784x25xf32>, tensor<25x6xf32> -> tensor<784x6xf32>
    %a = tpu.binary add %y, %b : tensor<784x6xf32>, tensor<1x6xf32> -> tensor<784x6xf32>
    %r = tpu.unary relu %a : tensor<784x6xf32>
    %v = tpu.view %r : tensor<784x6xf32> -> tensor<1x28x28x6xf32>
    %p = tpu.window_reduce max %v {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : tensor<1x28x28x6xf32> -> tensor<196x6xf32>
    tpu.yield %p : tensor<196x6xf32>
  }
  return %g : tensor<196x6xf32>
}
func.func @unpooled(%x: tensor<1x32x32x1xf32>, %w: tensor<25x6xf32>, %b: tensor<1x6xf32>) -> tensor<784x6xf32> {
  %rows = tpu.im2col %x {kernel = array<i64: 5, 5>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : tensor<1x32x32x1xf32> -> tensor<784x25xf32>
  %g = tpu.fused -> tensor<784x6xf32> {
    %y = tpu.matmul %rows, %w : tensor<784x25xf32>, tensor<25x6xf32> -> tensor<784x6xf32>
    %a = tpu.binary add %y, %b : tensor<784x6xf32>, tensor<1x6xf32> -> tensor<784x6xf32>
    %r = tpu.unary relu %a : tensor<784x6xf32>
    tpu.yield %r : tensor<784x6xf32>
  }
  return %g : tensor<784x6xf32>
}
}

// -----

// Where no band of whole pool windows fits (an 8 KiB scratchpad holds the
// padded input rows of one output row of this 64x64x8 convolution, not of
// two), tpu-plan-tiles takes the pool (and the view before it) out of the
// group: the convolution takes bands of one row, and the pool runs on its
// own, with a window reduction's plan.
// CHECK-LABEL: func.func @no_pooled_band
// CHECK: tpu.fused -> tensor<4096x8xf32> {
// CHECK-NEXT: tpu.matmul {{.*}}#tpu.conv_tiling<band = 1,
// CHECK-NEXT: tpu.binary add
// CHECK-NEXT: tpu.yield
// CHECK-NEXT: }
// CHECK-NEXT: tpu.view
// CHECK-NEXT: tpu.window_reduce max {{.*}}tpu.tiling = #tpu.window_tiling<
module attributes {tpu.target = #tpu.target<name = "tiny", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 8, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>} {
func.func @no_pooled_band(%x: tensor<1x64x64x8xf32>, %w: tensor<72x8xf32>, %b: tensor<1x8xf32>, %fill: tensor<1x8xf32>) -> tensor<1024x8xf32> {
  %rows = tpu.im2col %x, %fill {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} : tensor<1x64x64x8xf32>, tensor<1x8xf32> -> tensor<4096x72xf32>
  %g = tpu.fused -> tensor<1024x8xf32> {
    %y = tpu.matmul %rows, %w : tensor<4096x72xf32>, tensor<72x8xf32> -> tensor<4096x8xf32>
    %a = tpu.binary add %y, %b : tensor<4096x8xf32>, tensor<1x8xf32> -> tensor<4096x8xf32>
    %v = tpu.view %a : tensor<4096x8xf32> -> tensor<1x64x64x8xf32>
    %p = tpu.window_reduce max %v {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : tensor<1x64x64x8xf32> -> tensor<1024x8xf32>
    tpu.yield %p : tensor<1024x8xf32>
  }
  return %g : tensor<1024x8xf32>
}
}
