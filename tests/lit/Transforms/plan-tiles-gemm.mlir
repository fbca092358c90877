// RUN: tpu-opt %s --split-input-file --tpu-plan-tiles | FileCheck %s

// The GEMMs of scripts/bench-compiler on each preset: the plans the cost
// model (docs/compiler.md, "Choosing the matmul tiling") picks. The weights
// are constants, as the benchmark's ONNX initializers are, so DRAM holds
// them as bf16 (2 bytes a row element) on these bf16 arrays. With
// k_block = K and a band of several pieces (activationPieceCols), the
// activation addresses are the pieces' buffers, used in turn.

module attributes {tpu.target = #tpu.target<name = "tpu-8x8", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>} {
// 8x8, 256x128x512: weight rows of 8 columns (16 bytes of bf16, 2 bus cycles)
// would wait on DRAM latency (16 requests in flight per 100 cycles); 32
// columns (64 bytes) keep the bus busy, on 32-row tiles.
// CHECK-LABEL: func.func @gemm_256x128x512
// CHECK: tpu.tiling = #tpu.matmul_tiling<tile_m = 32, tile_n = 32, tile_k = 8, k_block = 128, activations = [0, 4096], weights = [8192, 12288], operands = [], accumulators = [0, 2048]>
func.func @gemm_256x128x512(%x: tensor<256x128xf32>) -> tensor<256x512xf32> {
  %w = arith.constant dense<1.0> : tensor<128x512xf32>
  %y = tpu.matmul %x, %w : tensor<256x128xf32>, tensor<128x512xf32> -> tensor<256x512xf32>
  return %y : tensor<256x512xf32>
}
// CHECK-LABEL: func.func @gemm_512x512x512
// CHECK: tpu.tiling = #tpu.matmul_tiling<tile_m = 64, tile_n = 64, tile_k = 8, k_block = 32, activations = [0, 4096], weights = [8192, 12288], operands = [], accumulators = [0, 0]>
func.func @gemm_512x512x512(%x: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %w = arith.constant dense<1.0> : tensor<512x512xf32>
  %y = tpu.matmul %x, %w : tensor<512x512xf32>, tensor<512x512xf32> -> tensor<512x512xf32>
  return %y : tensor<512x512xf32>
}
// CHECK-LABEL: func.func @gemm_1024x1024x1024
// CHECK: tpu.tiling = #tpu.matmul_tiling<tile_m = 64, tile_n = 64, tile_k = 8, k_block = 16, activations = [0, 4096], weights = [8192, 12288], operands = [], accumulators = [0, 0]>
func.func @gemm_1024x1024x1024(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %w = arith.constant dense<1.0> : tensor<1024x1024xf32>
  %y = tpu.matmul %x, %w : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  return %y : tensor<1024x1024xf32>
}
// CHECK-LABEL: func.func @gemm_2048x512x1024
// CHECK: tpu.tiling = #tpu.matmul_tiling<tile_m = 64, tile_n = 64, tile_k = 8, k_block = 32, activations = [0, 4096], weights = [8192, 12288], operands = [], accumulators = [0, 0]>
func.func @gemm_2048x512x1024(%x: tensor<2048x512xf32>) -> tensor<2048x1024xf32> {
  %w = arith.constant dense<1.0> : tensor<512x1024xf32>
  %y = tpu.matmul %x, %w : tensor<2048x512xf32>, tensor<512x1024xf32> -> tensor<2048x1024xf32>
  return %y : tensor<2048x1024xf32>
}
}

// -----

module attributes {tpu.target = #tpu.target<name = "tpu-32x32", clock_ghz = 1.0,
    array = <rows = 32, cols = 32, dtype = bf16>,
    scratchpad = <kib = 512, banks = 8>, accumulator = <kib = 128, banks = 4>,
    vector = <lanes = 32, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 32.0, latency_cycles = 100, max_outstanding = 64>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>} {
// CHECK-LABEL: func.func @gemm_256x128x512
// CHECK: tpu.tiling = #tpu.matmul_tiling<tile_m = 256, tile_n = 32, tile_k = 32, k_block = 128, activations = [0, 16384], weights = [32768, 49152], operands = [], accumulators = [0, 8192]>
func.func @gemm_256x128x512(%x: tensor<256x128xf32>) -> tensor<256x512xf32> {
  %w = arith.constant dense<1.0> : tensor<128x512xf32>
  %y = tpu.matmul %x, %w : tensor<256x128xf32>, tensor<128x512xf32> -> tensor<256x512xf32>
  return %y : tensor<256x512xf32>
}
// 32x32, 512^3: bands of 128 rows x all of K in four one-bank pieces and
// two extra piece buffers, which the next band's first pieces fill while
// this band is in use. Bands of 192 rows (two three-bank pieces, no spare
// bank) would load the bf16 weights once less but wait for each band's
// pieces: 1.26x the bound against 1.24x.
// CHECK-LABEL: func.func @gemm_512x512x512
// CHECK: tpu.tiling = #tpu.matmul_tiling<tile_m = 128, tile_n = 32, tile_k = 32, k_block = 512, activations = [0, 16384, 32768, 49152, 65536, 81920], weights = [98304, 114688], operands = [], accumulators = [0, 8192]>
func.func @gemm_512x512x512(%x: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %w = arith.constant dense<1.0> : tensor<512x512xf32>
  %y = tpu.matmul %x, %w : tensor<512x512xf32>, tensor<512x512xf32> -> tensor<512x512xf32>
  return %y : tensor<512x512xf32>
}
// 32x32, 1024^3: a band of 128 rows x all of K would be the whole
// scratchpad; 96 rows are six banks, in two pieces of 512 columns (three
// banks each), loaded once for all 32 column tiles, while the weights
// stream in panels of 512 rows, a bank each (98304, 114688): A is read
// once (4 MB), not once per column tile.
// CHECK-LABEL: func.func @gemm_1024x1024x1024
// CHECK: tpu.tiling = #tpu.matmul_tiling<tile_m = 96, tile_n = 32, tile_k = 32, k_block = 1024, panel_rows = 512, activations = [0, 49152], weights = [98304, 114688], operands = [], accumulators = [0, 8192]>
func.func @gemm_1024x1024x1024(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %w = arith.constant dense<1.0> : tensor<1024x1024xf32>
  %y = tpu.matmul %x, %w : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  return %y : tensor<1024x1024xf32>
}
// 32x32, 2048x512x1024: the same bands as 512^3.
// CHECK-LABEL: func.func @gemm_2048x512x1024
// CHECK: tpu.tiling = #tpu.matmul_tiling<tile_m = 128, tile_n = 32, tile_k = 32, k_block = 512, activations = [0, 16384, 32768, 49152, 65536, 81920], weights = [98304, 114688], operands = [], accumulators = [0, 8192]>
func.func @gemm_2048x512x1024(%x: tensor<2048x512xf32>) -> tensor<2048x1024xf32> {
  %w = arith.constant dense<1.0> : tensor<512x1024xf32>
  %y = tpu.matmul %x, %w : tensor<2048x512xf32>, tensor<512x1024xf32> -> tensor<2048x1024xf32>
  return %y : tensor<2048x1024xf32>
}
}

// -----

module attributes {tpu.target = #tpu.target<name = "tpu-128x128", clock_ghz = 1.0,
    array = <rows = 128, cols = 128, dtype = bf16>,
    scratchpad = <kib = 8192, banks = 16>, accumulator = <kib = 2048, banks = 8>,
    vector = <lanes = 128, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 128.0, latency_cycles = 100, max_outstanding = 64>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>} {
// CHECK-LABEL: func.func @gemm_256x128x512
// CHECK: tpu.tiling = #tpu.matmul_tiling<tile_m = 256, tile_n = 128, tile_k = 128, k_block = 128, activations = [0, 0], weights = [131072, 262144], operands = [], accumulators = [0, 65536]>
func.func @gemm_256x128x512(%x: tensor<256x128xf32>) -> tensor<256x512xf32> {
  %w = arith.constant dense<1.0> : tensor<128x512xf32>
  %y = tpu.matmul %x, %w : tensor<256x128xf32>, tensor<128x512xf32> -> tensor<256x512xf32>
  return %y : tensor<256x512xf32>
}
// CHECK-LABEL: func.func @gemm_512x512x512
// CHECK: tpu.tiling = #tpu.matmul_tiling<tile_m = 512, tile_n = 128, tile_k = 128, k_block = 512, activations = [0, 131072], weights = [262144, 393216], operands = [], accumulators = [0, 65536]>
func.func @gemm_512x512x512(%x: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %w = arith.constant dense<1.0> : tensor<512x512xf32>
  %y = tpu.matmul %x, %w : tensor<512x512xf32>, tensor<512x512xf32> -> tensor<512x512xf32>
  return %y : tensor<512x512xf32>
}
// 128x128, 1024^3: the whole of A in one band of eight 1024 x 128 pieces,
// a bank each: the array starts on the first piece while the next ones load.
// CHECK-LABEL: func.func @gemm_1024x1024x1024
// CHECK: tpu.tiling = #tpu.matmul_tiling<tile_m = 1024, tile_n = 128, tile_k = 128, k_block = 1024, activations = [0, 131072, 262144, 393216, 524288, 655360, 786432, 917504], weights = [1048576, 1179648], operands = [], accumulators = [0, 131072]>
func.func @gemm_1024x1024x1024(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %w = arith.constant dense<1.0> : tensor<1024x1024xf32>
  %y = tpu.matmul %x, %w : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  return %y : tensor<1024x1024xf32>
}
// 128x128, 2048x512x1024: 2048 rows leave 64 columns per bank, less than
// a K step of 128, but two banks hold one: the band is four pieces of
// two banks each, the array starting on the first while the others load.
// CHECK-LABEL: func.func @gemm_2048x512x1024
// CHECK: tpu.tiling = #tpu.matmul_tiling<tile_m = 2048, tile_n = 128, tile_k = 128, k_block = 512, activations = [0, 262144, 524288, 786432], weights = [1048576, 1179648], operands = [], accumulators = [0, 262144]>
func.func @gemm_2048x512x1024(%x: tensor<2048x512xf32>) -> tensor<2048x1024xf32> {
  %w = arith.constant dense<1.0> : tensor<512x1024xf32>
  %y = tpu.matmul %x, %w : tensor<2048x512xf32>, tensor<512x1024xf32> -> tensor<2048x1024xf32>
  return %y : tensor<2048x1024xf32>
}
}
