// RUN: tpu-opt %s --tpu-lower-matmuls --verify-diagnostics

// A pool in a matmul's epilogue needs the convolution's bands of whole
// windows (tpu-plan-tiles takes it out of the group where the convolution
// gets none); a matmul plan of rows would pool the wrong products.
#target = #tpu.target<name = "tpu-8x8", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>
module attributes {tpu.target = #target} {
  func.func @pool_of_rows(%x: tensor<16x8xf32> {tpu.dram_address = 0 : i64}, %w: tensor<8x8xf32> {tpu.dram_address = 512 : i64}) -> tensor<4x8xf32> {
    // expected-error @+1 {{a pool in the epilogue of a matmul not planned as a convolution}}
    %y = tpu.fused attributes {tpu.dram_address = 1024 : i64} -> tensor<4x8xf32> {
      %m = tpu.matmul %x, %w {tpu.tiling = #tpu.matmul_tiling<tile_m = 16, tile_n = 8, tile_k = 8, k_block = 8, activations = [0, 128], weights = [4096, 8192], operands = [], accumulators = [0, 2048]>} : tensor<16x8xf32>, tensor<8x8xf32> -> tensor<16x8xf32>
      %v = tpu.view %m : tensor<16x8xf32> -> tensor<1x4x4x8xf32>
      %p = tpu.window_reduce max %v {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : tensor<1x4x4x8xf32> -> tensor<4x8xf32>
      tpu.yield %p : tensor<4x8xf32>
    }
    return %y : tensor<4x8xf32>
  }
}
