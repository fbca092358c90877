// RUN: tpu-opt %s --tpu-plan-tiles | FileCheck %s
// RUN: tpu-opt %s --tpu-plan-tiles | tpu-opt --tpu-plan-tiles | FileCheck %s

// A convolution of one input channel (MNIST's first: 28x28, 5x5, pad 2)
// on 32x32 stacks its input rows in the band (#tpu.conv_tiling
// stacked_rows, docs/compiler.md section 6): a window is one K step, not
// five of 5, and tpu-plan-tiles reorders the weight constant's rows to the
// window's order, kernel column by kernel column: row kw*5 + kh is the
// weight of tap (kh, kw), ONNX's row kh*5 + kw (rows 0, 5, 10, 15, 20, 1,
// 6, ...; row i holds i). A band row holds the 6 input rows of two output
// rows (stacked_rows = 6: 6 words a pixel, which the corner turn takes in
// one run a cycle, as it did 5), so a window is 4 * 6 + 5 = 29 words, the
// weight tile's rows between kernel columns zeros from a fill row of 29,
// which replaces the 5 the padding had. Planning the planned IR again
// keeps the plan and the weights: they are reordered once.
// CHECK-LABEL: func.func @stacked_rows
// CHECK: arith.constant dense<{{\[}}[0.000000e+00], [5.000000e+00], [1.000000e+01], [1.500000e+01], [2.000000e+01], [1.000000e+00], [6.000000e+00], [1.100000e+01], [1.600000e+01], [2.100000e+01], [2.000000e+00], {{.*}}, [1.900000e+01], [2.400000e+01]]> : tensor<25x1xf32>
// CHECK-NOT: tensor<1x5xf32>
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : tensor<1x29xf32>
// CHECK-NOT: tensor<1x5xf32>
// CHECK: tpu.im2col %{{.*}}, %[[ZEROS]]
// CHECK: tpu.matmul {{.*}}#tpu.conv_tiling<band = 14, tile_n = 1, tile_k = 32, k_block = 29, stacked_rows = 6,
module attributes {tpu.target = #tpu.target<name = "tpu-32x32", clock_ghz = 1.0,
    array = <rows = 32, cols = 32, dtype = bf16>,
    scratchpad = <kib = 512, banks = 8>, accumulator = <kib = 128, banks = 4>,
    vector = <lanes = 32, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 32.0, latency_cycles = 100, max_outstanding = 64>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>} {
func.func @stacked_rows(%x: tensor<1x28x28x1xf32>) -> tensor<784x1xf32> {
  %w = arith.constant dense<[[0.0], [1.0], [2.0], [3.0], [4.0], [5.0], [6.0], [7.0], [8.0], [9.0], [10.0], [11.0], [12.0], [13.0], [14.0], [15.0], [16.0], [17.0], [18.0], [19.0], [20.0], [21.0], [22.0], [23.0], [24.0]]> : tensor<25x1xf32>
  %fill = arith.constant dense<0.0> : tensor<1x5xf32>
  %rows = tpu.im2col %x, %fill {kernel = array<i64: 5, 5>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 2, 2, 2, 2>} : tensor<1x28x28x1xf32>, tensor<1x5xf32> -> tensor<784x25xf32>
  %y = tpu.matmul %rows, %w : tensor<784x25xf32>, tensor<25x1xf32> -> tensor<784x1xf32>
  return %y : tensor<784x1xf32>
}
}
