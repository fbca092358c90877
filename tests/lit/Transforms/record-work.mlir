// RUN: tpu-opt %s --tpu-record-work --mlir-print-local-scope | FileCheck %s

// Each source op's compulsory work, by the name its instructions will carry.
// conv: a 64x36x16 product; it reads the input (all of it: a 3x3 window with
// padding 1 covers every position, 1024 bytes), the fill row (16) and the
// weights (2304), and writes the output (4096); its im2col matrix it writes
// and reads itself, so that is not compulsory: 7440 bytes. res, the epilogue's
// add, loads its operand itself (4096 bytes) and adds 1024 elements; act's
// exp is 1024 transcendental elements on chip. The model: input, fill,
// weights, residual and output once, 11536 bytes.
// CHECK-LABEL: func.func @conv
// CHECK-SAME: tpu.work = {dram_bytes = 11536 : i64, source_ops = [
// CHECK-SAME: {dram_bytes = 0 : i64, gemms = array<i64>, name = "act", transcendental_elements = 1024 : i64, vector_elements = 1024 : i64}
// CHECK-SAME: {dram_bytes = 7440 : i64, gemms = array<i64: 1, 64, 36, 16>, name = "conv", transcendental_elements = 0 : i64, vector_elements = 0 : i64}
// CHECK-SAME: {dram_bytes = 4096 : i64, gemms = array<i64>, name = "res", transcendental_elements = 0 : i64, vector_elements = 1024 : i64}]}
func.func @conv(%x: tensor<1x8x8x4xf32>, %r: tensor<64x16xf32>) -> tensor<64x16xf32> {
  %w = arith.constant dense<1.0> : tensor<36x16xf32>
  %zeros = arith.constant dense<0.0> : tensor<1x4xf32>
  %cols = tpu.im2col %x, %zeros {dilation = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : tensor<1x8x8x4xf32>, tensor<1x4xf32> -> tensor<64x36xf32> loc("conv")
  %y = tpu.fused -> tensor<64x16xf32> {
    %m = tpu.matmul %cols, %w : tensor<64x36xf32>, tensor<36x16xf32> -> tensor<64x16xf32> loc("conv")
    %s = tpu.binary add %m, %r : tensor<64x16xf32>, tensor<64x16xf32> -> tensor<64x16xf32> loc("res")
    %e = tpu.unary exp %s : tensor<64x16xf32> loc("act")
    tpu.yield %e : tensor<64x16xf32>
  } loc("conv")
  return %y : tensor<64x16xf32>
}

// A row group moves its tensors under its first op's name; a slice needs
// only its box (8 of 40 columns: 256 bytes); a tensor one op writes and
// another reads is compulsory for both (softmax reads 1280 bytes and writes
// 1280, the slice reads 256 and writes 256). Max and sum read 320 elements
// each, sub, exp and mul write 320 each, the reciprocal 8: 1608, of which
// exp's and the reciprocal's 328 are transcendental. The model: the input
// and the output, 1536 bytes.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: tpu.work = {dram_bytes = 1536 : i64, source_ops = [
// CHECK-SAME: {dram_bytes = 512 : i64, gemms = array<i64>, name = "cut", transcendental_elements = 0 : i64, vector_elements = 0 : i64}
// CHECK-SAME: {dram_bytes = 2560 : i64, gemms = array<i64>, name = "softmax", transcendental_elements = 328 : i64, vector_elements = 1608 : i64}]}
func.func @softmax(%x: tensor<8x40xf32>) -> tensor<8x8xf32> {
  %y = tpu.fused -> tensor<8x40xf32> {
    %max = tpu.row_reduce max %x : tensor<8x40xf32> -> tensor<8x1xf32> loc("softmax")
    %d = tpu.binary sub %x, %max : tensor<8x40xf32>, tensor<8x1xf32> -> tensor<8x40xf32> loc("softmax")
    %e = tpu.unary exp %d : tensor<8x40xf32> loc("softmax")
    %s = tpu.row_reduce sum %e : tensor<8x40xf32> -> tensor<8x1xf32> loc("softmax")
    %r = tpu.unary reciprocal %s : tensor<8x1xf32> loc("softmax")
    %m = tpu.binary mul %e, %r : tensor<8x40xf32>, tensor<8x1xf32> -> tensor<8x40xf32> loc("softmax")
    tpu.yield %m : tensor<8x40xf32>
  } loc("softmax")
  %cut = tpu.slice %y {start = array<i64: 0, 8>} : tensor<8x40xf32> -> tensor<8x8xf32> loc("cut")
  return %cut : tensor<8x8xf32>
}
