// RUN: tpu-opt %s --split-input-file --verify-diagnostics

func.func @contraction(%a: tensor<4x8xf32>, %w: tensor<7x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{contraction sizes differ: lhs is 4x8, rhs is 7x3}}
  %m = tpu.matmul %a, %w : tensor<4x8xf32>, tensor<7x3xf32> -> tensor<4x3xf32>
  return %m : tensor<4x3xf32>
}

// -----

func.func @matmul_result(%a: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{result must be 4x3, got 4x4}}
  %m = tpu.matmul %a, %w : tensor<4x8xf32>, tensor<8x3xf32> -> tensor<4x4xf32>
  return %m : tensor<4x4xf32>
}

// -----

func.func @binary_broadcast(%a: tensor<4x3xf32>, %b: tensor<2x1xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{rhs must be 4x3, 1x3, 4x1 or 1x1, got 2x1}}
  %s = tpu.binary add %a, %b : tensor<4x3xf32>, tensor<2x1xf32> -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}

// -----

func.func @row_reduce_result(%a: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{result must be 4x1, got 4x3}}
  %s = tpu.row_reduce sum %a : tensor<4x3xf32> -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}

// -----

func.func @clamp_bounds(%a: tensor<4x3xf32>, %bounds: tensor<1x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{bounds must be 1x2 (lo, hi), got 1x3}}
  %c = tpu.clamp %a, %bounds : tensor<4x3xf32>, tensor<1x3xf32>
  return %c : tensor<4x3xf32>
}

// -----

func.func @view_count(%a: tensor<4x3xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{element counts differ: 12 vs 5}}
  %v = tpu.view %a : tensor<4x3xf32> -> tensor<5xf32>
  return %v : tensor<5xf32>
}

// -----

func.func @batch_matmul_batches(%a: tensor<2x4x8xf32>, %w: tensor<3x8x5xf32>) -> tensor<2x4x5xf32> {
  // expected-error @+1 {{batch sizes differ: lhs has 2, rhs has 3}}
  %m = tpu.batch_matmul %a, %w : tensor<2x4x8xf32>, tensor<3x8x5xf32> -> tensor<2x4x5xf32>
  return %m : tensor<2x4x5xf32>
}

// -----

func.func @batch_matmul_contraction(%a: tensor<2x4x8xf32>, %w: tensor<2x7x5xf32>) -> tensor<2x4x5xf32> {
  // expected-error @+1 {{contraction sizes differ: lhs is 4x8, rhs is 7x5}}
  %m = tpu.batch_matmul %a, %w : tensor<2x4x8xf32>, tensor<2x7x5xf32> -> tensor<2x4x5xf32>
  return %m : tensor<2x4x5xf32>
}

// -----

func.func @batch_matmul_result(%a: tensor<2x4x8xf32>, %w: tensor<2x8x5xf32>) -> tensor<2x4x4xf32> {
  // expected-error @+1 {{result must be 2x4x5, got 2x4x4}}
  %m = tpu.batch_matmul %a, %w : tensor<2x4x8xf32>, tensor<2x8x5xf32> -> tensor<2x4x4xf32>
  return %m : tensor<2x4x4xf32>
}

// -----

func.func @transpose_not_permutation(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{perms must be a permutation of the axes}}
  %t = tpu.transpose %x {perms = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<2x2xf32>
  return %t : tensor<2x2xf32>
}

// -----

func.func @transpose_result(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{result axis 0 must have size 3 (input axis 1), got 2}}
  %t = tpu.transpose %x {perms = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %t : tensor<2x3xf32>
}

// -----

func.func @transpose_rank(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{perms, input and result must have one entry per axis, got 3, 2 and 2}}
  %t = tpu.transpose %x {perms = array<i64: 1, 0, 2>} : tensor<2x3xf32> -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}

// -----

func.func @im2col_result(%x: tensor<1x4x4x2xf32>) -> tensor<16x8xf32> {
  // expected-error @+1 {{result must be 9x8, got 16x8}}
  %r = tpu.im2col %x {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : tensor<1x4x4x2xf32> -> tensor<16x8xf32>
  return %r : tensor<16x8xf32>
}

// -----

func.func @im2col_window(%x: tensor<1x2x2x2xf32>) -> tensor<1x18xf32> {
  // expected-error @+1 {{the window does not fit the padded input}}
  %r = tpu.im2col %x {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : tensor<1x2x2x2xf32> -> tensor<1x18xf32>
  return %r : tensor<1x18xf32>
}

// -----

func.func @im2col_stride(%x: tensor<1x4x4x2xf32>) -> tensor<9x8xf32> {
  // expected-error @+1 {{kernel, stride and dilation must be two positive sizes each}}
  %r = tpu.im2col %x {kernel = array<i64: 2, 2>, stride = array<i64: 0, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : tensor<1x4x4x2xf32> -> tensor<9x8xf32>
  return %r : tensor<9x8xf32>
}

// -----

func.func @im2col_pad(%x: tensor<1x4x4x2xf32>) -> tensor<9x8xf32> {
  // expected-error @+1 {{pad must be four non-negative sizes (top, bottom, left, right)}}
  %r = tpu.im2col %x {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 0, -1, 0, 0>} : tensor<1x4x4x2xf32> -> tensor<9x8xf32>
  return %r : tensor<9x8xf32>
}

// -----

func.func @slice_outside(%x: tensor<4x6xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{axis 1: [4, 7) is outside the input's 6}}
  %r = tpu.slice %x {start = array<i64: 0, 4>} : tensor<4x6xf32> -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

func.func @concat_sum(%a: tensor<2x3xf32>, %b: tensor<2x2xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{the inputs add up to 5 on axis 1, the result has 6}}
  %c = tpu.concat %a, %b {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x2xf32> -> tensor<2x6xf32>
  return %c : tensor<2x6xf32>
}

// -----

func.func @concat_other_axis(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{inputs must match the result on axis 0}}
  %c = tpu.concat %a, %b {axis = 1 : i64} : tensor<2x3xf32>, tensor<3x2xf32> -> tensor<2x5xf32>
  return %c : tensor<2x5xf32>
}

// -----

func.func @pad_result(%x: tensor<2x3xf32>, %fill: tensor<1x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{result axis 0 must have size 5, got 4}}
  %p = tpu.pad %x, %fill {low = array<i64: 1, 0>, high = array<i64: 2, 0>} : tensor<2x3xf32>, tensor<1x3xf32> -> tensor<4x3xf32>
  return %p : tensor<4x3xf32>
}

// -----

func.func @pad_negative(%x: tensor<2x3xf32>, %fill: tensor<1x3xf32>) -> tensor<1x3xf32> {
  // expected-error @+1 {{padding must not be negative}}
  %p = tpu.pad %x, %fill {low = array<i64: -1, 0>, high = array<i64: 0, 0>} : tensor<2x3xf32>, tensor<1x3xf32> -> tensor<1x3xf32>
  return %p : tensor<1x3xf32>
}

// -----

func.func @im2col_fill(%x: tensor<1x4x4x2xf32>) -> tensor<16x8xf32> {
  // expected-error @+1 {{with padding needs a fill row}}
  %r = tpu.im2col %x {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 0, 1, 0, 1>} : tensor<1x4x4x2xf32> -> tensor<16x8xf32>
  return %r : tensor<16x8xf32>
}

// -----

func.func @pad_fill(%x: tensor<2x3xf32>, %fill: tensor<1x4xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{fill must be one row of 1 to 3 values, got 1x4}}
  %p = tpu.pad %x, %fill {low = array<i64: 1, 0>, high = array<i64: 0, 0>} : tensor<2x3xf32>, tensor<1x4xf32> -> tensor<3x3xf32>
  return %p : tensor<3x3xf32>
}

// -----

func.func @fused_empty(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{has no operations}}
  %r = tpu.fused -> tensor<2xf32> {
    tpu.yield %x : tensor<2xf32>
  }
  return %r : tensor<2xf32>
}

// -----

func.func @gather_index_rows(%t: tensor<2x4x3xf32>, %i: tensor<3x5xi32>) -> tensor<2x5x3xf32> {
  // expected-error @+1 {{'tpu.gather' op has 3 rows of indices for 2 tables (one row, or one per table)}}
  %g = tpu.gather %t, %i : tensor<2x4x3xf32>, tensor<3x5xi32> -> tensor<2x5x3xf32>
  return %g : tensor<2x5x3xf32>
}

// -----

func.func @gather_result(%t: tensor<2x4x3xf32>, %i: tensor<1x5xi32>) -> tensor<2x5x4xf32> {
  // expected-error @+1 {{'tpu.gather' op result must be 2x5x3}}
  %g = tpu.gather %t, %i : tensor<2x4x3xf32>, tensor<1x5xi32> -> tensor<2x5x4xf32>
  return %g : tensor<2x5x4xf32>
}

// -----

func.func @window_reduce_result(%x: tensor<1x4x4x2xf32>) -> tensor<9x4xf32> {
  // expected-error @+1 {{result must be 9x2, got 9x4}}
  %r = tpu.window_reduce max %x {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : tensor<1x4x4x2xf32> -> tensor<9x4xf32>
  return %r : tensor<9x4xf32>
}

// -----

func.func @window_reduce_no_fill(%x: tensor<1x4x4x2xf32>) -> tensor<16x2xf32> {
  // expected-error @+1 {{with padding needs a fill row}}
  %r = tpu.window_reduce max %x {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} : tensor<1x4x4x2xf32> -> tensor<16x2xf32>
  return %r : tensor<16x2xf32>
}

// -----

func.func @window_reduce_short_fill(%x: tensor<1x4x4x2xf32>, %fill: tensor<1x1xf32>) -> tensor<16x2xf32> {
  // expected-error @+1 {{fill must be one row of 2 values}}
  %r = tpu.window_reduce max %x fill %fill : tensor<1x1xf32> {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>} : tensor<1x4x4x2xf32> -> tensor<16x2xf32>
  return %r : tensor<16x2xf32>
}

// -----

func.func @window_reduce_max_weights(%x: tensor<1x4x4x2xf32>, %w: tensor<4x2xf32>, %b: tensor<1x2xf32>) -> tensor<9x2xf32> {
  // expected-error @+1 {{weights need kind sum and no scale}}
  %r = tpu.window_reduce max %x weights %w : tensor<4x2xf32> bias %b : tensor<1x2xf32> {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : tensor<1x4x4x2xf32> -> tensor<9x2xf32>
  return %r : tensor<9x2xf32>
}

// -----

func.func @window_reduce_weights_shape(%x: tensor<1x4x4x2xf32>, %w: tensor<2x4xf32>, %b: tensor<1x2xf32>) -> tensor<9x2xf32> {
  // expected-error @+1 {{weights must be 4x2}}
  %r = tpu.window_reduce sum %x weights %w : tensor<2x4xf32> bias %b : tensor<1x2xf32> {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : tensor<1x4x4x2xf32> -> tensor<9x2xf32>
  return %r : tensor<9x2xf32>
}

// -----

func.func @window_reduce_no_bias(%x: tensor<1x4x4x2xf32>, %w: tensor<4x2xf32>) -> tensor<9x2xf32> {
  // expected-error @+1 {{weights need a bias of 1x2 or 1x1}}
  %r = tpu.window_reduce sum %x weights %w : tensor<4x2xf32> {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : tensor<1x4x4x2xf32> -> tensor<9x2xf32>
  return %r : tensor<9x2xf32>
}

// -----

func.func @window_reduce_bias_alone(%x: tensor<1x4x4x2xf32>, %b: tensor<1x2xf32>) -> tensor<9x2xf32> {
  // expected-error @+1 {{a bias needs weights}}
  %r = tpu.window_reduce sum %x bias %b : tensor<1x2xf32> {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : tensor<1x4x4x2xf32> -> tensor<9x2xf32>
  return %r : tensor<9x2xf32>
}

// -----

func.func @window_reduce_scale(%x: tensor<1x4x4x2xf32>, %s: tensor<9x1xf32>) -> tensor<9x2xf32> {
  // expected-error @+1 {{scale needs kind sum and must be 1x1 or 9x2}}
  %r = tpu.window_reduce sum %x scale %s : tensor<9x1xf32> {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>} : tensor<1x4x4x2xf32> -> tensor<9x2xf32>
  return %r : tensor<9x2xf32>
}
