// RUN: tpu-opt %s --tpu-fuse="mode=epilogue" | FileCheck %s --check-prefixes=CHECK,EPILOGUE
// RUN: tpu-opt %s --tpu-fuse="mode=full" | FileCheck %s --check-prefixes=CHECK,FULL
// RUN: tpu-opt %s --tpu-fuse | FileCheck %s --check-prefixes=CHECK,FULL
// RUN: tpu-opt %s --tpu-fuse="mode=none" | FileCheck %s --check-prefix=NONE

// Groups form on the graph (TOSA), as the systolic target allows.
// NONE-NOT: tpu.fused
#target = #tpu.target<name = "tpu-8x8", clock_ghz = 1.0,
    array = <rows = 8, cols = 8, dtype = bf16>,
    scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
    vector = <lanes = 8, pipeline_latency = 4>,
    dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
    energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
              vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>
module attributes {tpu.target = #target} {

// A dense layer: the bias add and the ReLU join the matmul in both modes,
// through the reshape between them (it keeps the matrix view, so it moves
// nothing); the group takes the matmul's place and yields the last value.
// CHECK-LABEL: func.func @dense
// CHECK: %[[G:.*]] = tpu.fused -> tensor<4x3xf32> {
// CHECK-NEXT: tosa.matmul
// CHECK-NEXT: tosa.reshape
// CHECK-NEXT: tosa.add
// CHECK-NEXT: %[[R:.*]] = tosa.clamp
// CHECK-NEXT: tpu.yield %[[R]] : tensor<4x3xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[G]]
func.func @dense(%x: tensor<1x4x8xf32>, %w: tensor<1x8x3xf32>, %b: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %m = tosa.matmul %x, %w : (tensor<1x4x8xf32>, tensor<1x8x3xf32>) -> tensor<1x4x3xf32>
  %v = tosa.reshape %m {new_shape = array<i64: 4, 3>} : (tensor<1x4x3xf32>) -> tensor<4x3xf32>
  %s = tosa.add %v, %b : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  %r = tosa.clamp %s {min_fp = 0.0 : f32, max_fp = 3.40282347E+38 : f32, min_int = 0 : i64, max_int = 9223372036854775807 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// A residual block's end: the residual (defined before the matmul) joins as
// the first operand of a commutative add; a convolution heads a group, and
// is a group even alone (its bias is an epilogue of its own).
// CHECK-LABEL: func.func @convolutions
// CHECK: tpu.fused
// CHECK-NEXT: tosa.conv2d
// CHECK-NEXT: tosa.add %arg2,
// CHECK-NEXT: tosa.clamp
// CHECK-NEXT: tpu.yield
// CHECK: tpu.fused
// CHECK-NEXT: tosa.conv2d
// CHECK-NEXT: tpu.yield
func.func @convolutions(%x: tensor<1x4x4x2xf32>, %w: tensor<2x1x1x2xf32>, %res: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) {
  %bias = "tosa.const"() {value = dense<0.5> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = tosa.conv2d %x, %w, %bias {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x4x4x2xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %s = tosa.add %res, %c : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %r = tosa.clamp %s {min_fp = 0.0 : f32, max_fp = 6.0 : f32, min_int = 0 : i64, max_int = 6 : i64} : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %alone = tosa.conv2d %x, %w, %bias {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x4x4x2xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  return %r, %alone : tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>
}

// Where an epilogue stops: a value with two users is the group's last (it
// goes to memory); a subtraction from another value (the chain value
// second) does not join; neither does an operand computed after the head,
// nor a column, which the systolic target's vector unit cannot spread over
// a tile in the accumulators. A matmul alone is no group.
// CHECK-LABEL: func.func @stops
// CHECK: %[[G0:.*]] = tpu.fused
// CHECK-NEXT: tosa.matmul
// CHECK-NEXT: tosa.add
// CHECK-NEXT: %[[E:.*]] = tosa.exp
// CHECK-NEXT: tpu.yield %[[E]]
// CHECK: %[[M1:.*]] = tosa.matmul
// CHECK-NEXT: tosa.sub %arg0, %[[M1]]
// CHECK-NEXT: tosa.add %[[G0]], %[[G0]]
// CHECK-NEXT: %[[M2:.*]] = tosa.matmul
// EPILOGUE-NEXT: %[[L:.*]] = tosa.exp %arg0
// EPILOGUE-NEXT: tosa.mul %[[M2]], %[[L]]
// FULL-NEXT: tpu.fused
// FULL-NEXT: %[[L:.*]] = tosa.exp %arg0
// FULL-NEXT: tosa.mul %[[M2]], %[[L]]
// FULL-NEXT: tpu.yield
// FULL-NEXT: }
// CHECK-NEXT: %[[M3:.*]] = tosa.matmul
// CHECK-NEXT: tosa.mul %[[M3]], %arg4
// CHECK-NEXT: tosa.matmul
// CHECK-NOT: tpu.fused
func.func @stops(%x: tensor<1x4x3xf32>, %w: tensor<1x3x3xf32>, %b: tensor<1x1x3xf32>, %y: tensor<1x4x3xf32>,
                 %col: tensor<1x4x1xf32>) -> (tensor<1x4x3xf32>, tensor<1x4x3xf32>, tensor<1x4x3xf32>, tensor<1x4x3xf32>, tensor<1x4x3xf32>) {
  %m = tosa.matmul %x, %w : (tensor<1x4x3xf32>, tensor<1x3x3xf32>) -> tensor<1x4x3xf32>
  %s = tosa.add %m, %b : (tensor<1x4x3xf32>, tensor<1x1x3xf32>) -> tensor<1x4x3xf32>
  %e = tosa.exp %s : (tensor<1x4x3xf32>) -> tensor<1x4x3xf32>
  %m1 = tosa.matmul %x, %w : (tensor<1x4x3xf32>, tensor<1x3x3xf32>) -> tensor<1x4x3xf32>
  %d = tosa.sub %x, %m1 : (tensor<1x4x3xf32>, tensor<1x4x3xf32>) -> tensor<1x4x3xf32>
  %e2 = tosa.add %e, %e : (tensor<1x4x3xf32>, tensor<1x4x3xf32>) -> tensor<1x4x3xf32>
  %m2 = tosa.matmul %x, %w : (tensor<1x4x3xf32>, tensor<1x3x3xf32>) -> tensor<1x4x3xf32>
  %late = tosa.exp %x : (tensor<1x4x3xf32>) -> tensor<1x4x3xf32>
  %p = tosa.mul %m2, %late {shift = 0 : i8} : (tensor<1x4x3xf32>, tensor<1x4x3xf32>) -> tensor<1x4x3xf32>
  %m3 = tosa.matmul %x, %w : (tensor<1x4x3xf32>, tensor<1x3x3xf32>) -> tensor<1x4x3xf32>
  %q = tosa.mul %m3, %col {shift = 0 : i8} : (tensor<1x4x3xf32>, tensor<1x4x1xf32>) -> tensor<1x4x3xf32>
  %alone = tosa.matmul %x, %w : (tensor<1x4x3xf32>, tensor<1x3x3xf32>) -> tensor<1x4x3xf32>
  return %e2, %d, %p, %q, %alone : tensor<1x4x3xf32>, tensor<1x4x3xf32>, tensor<1x4x3xf32>, tensor<1x4x3xf32>, tensor<1x4x3xf32>
}

// A batched matmul runs batch by batch on the systolic array: no epilogue.
// CHECK-LABEL: func.func @batched
// EPILOGUE-NOT: tpu.fused
func.func @batched(%a: tensor<2x4x3xf32>, %b: tensor<2x3x3xf32>) -> tensor<2x4x3xf32> {
  %m = tosa.matmul %a, %b : (tensor<2x4x3xf32>, tensor<2x3x3xf32>) -> tensor<2x4x3xf32>
  %e = tosa.exp %m : (tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  return %e : tensor<2x4x3xf32>
}

// A whole softmax is one row-local group in full mode: row reductions and
// column operands included, since every member works on whole rows.
// CHECK-LABEL: func.func @softmax
// EPILOGUE-NOT: tpu.fused
// FULL: tpu.fused -> tensor<4x6xf32> {
// FULL-COUNT-6: tosa.
// FULL-NEXT: tpu.yield
func.func @softmax(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %max = tosa.reduce_max %x {axis = 1 : i32} : (tensor<4x6xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %max : (tensor<4x6xf32>, tensor<4x1xf32>) -> tensor<4x6xf32>
  %e = tosa.exp %d : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = tosa.reduce_sum %e {axis = 1 : i32} : (tensor<4x6xf32>) -> tensor<4x1xf32>
  %r = tosa.reciprocal %s : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = tosa.mul %e, %r {shift = 0 : i8} : (tensor<4x6xf32>, tensor<4x1xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// Not when an intermediate is needed outside (here, returned): only the last
// value leaves a group. The ops after that value still group. A reduction
// over another axis than the last is no row-local op.
// CHECK-LABEL: func.func @escaping
// FULL: tosa.reduce_max %arg0
// FULL-NEXT: tpu.fused
// FULL-NEXT: tosa.sub
// FULL-NEXT: tosa.exp
// FULL-NEXT: tpu.yield
// FULL: tosa.reduce_sum {{.*}} {axis = 0 : i32}
// FULL-NOT: tpu.fused
func.func @escaping(%x: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x1xf32>, tensor<1x6xf32>) {
  %max = tosa.reduce_max %x {axis = 1 : i32} : (tensor<4x6xf32>) -> tensor<4x1xf32>
  %d = tosa.sub %x, %max : (tensor<4x6xf32>, tensor<4x1xf32>) -> tensor<4x6xf32>
  %e = tosa.exp %d : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %c = tosa.reduce_sum %e {axis = 0 : i32} : (tensor<4x6xf32>) -> tensor<1x6xf32>
  return %e, %max, %c : tensor<4x6xf32>, tensor<4x1xf32>, tensor<1x6xf32>
}

// Erf is a group on its own in full mode (it lowers to a chain of vector
// ops); a pool that runs as a window reduction loads its own bands of
// input rows from memory, so it joins no group and the clamp before it
// stays alone (lower-window-reductions.mlir has a pool that is a group).
// CHECK-LABEL: func.func @on_their_own
// EPILOGUE-NOT: tpu.fused
// FULL: tpu.fused
// FULL-NEXT: tosa.erf
// FULL-NEXT: tpu.yield
// FULL-NEXT: }
// FULL-NEXT: tosa.clamp
// FULL-NEXT: tosa.max_pool2d
// FULL-NOT: tpu.fused
func.func @on_their_own(%x: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x2x2x2xf32>) {
  %e = tosa.erf %x : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %c = tosa.clamp %x {min_fp = 0.0 : f32, max_fp = 6.0 : f32, min_int = 0 : i64, max_int = 6 : i64} : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %p = tosa.max_pool2d %c {kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x4x4x2xf32>) -> tensor<1x2x2x2xf32>
  return %e, %p : tensor<1x4x4x2xf32>, tensor<1x2x2x2xf32>
}

// A pool whose windows tile the image ends its convolution's epilogue in
// both modes (the vector unit combines each band's windows in the
// accumulators); its result is the group's. Not one with padding, one
// whose windows overlap, one after a residual (a whole-tile operand), nor
// one after a 1x1 convolution (a plain matmul of rows).
// CHECK-LABEL: func.func @pooled
// CHECK: %[[G:.*]] = tpu.fused -> tensor<1x3x3x2xf32> {
// CHECK-NEXT: tosa.conv2d
// CHECK-NEXT: tosa.clamp
// CHECK-NEXT: %[[P:.*]] = tosa.max_pool2d
// CHECK-NEXT: tpu.yield %[[P]] : tensor<1x3x3x2xf32>
// CHECK: tpu.fused -> tensor<1x6x6x2xf32>
// CHECK: tosa.avg_pool2d {{.*}}pad = array<i64: 1, 1, 1, 1>
// CHECK: tpu.fused -> tensor<1x6x6x2xf32>
// CHECK: tosa.max_pool2d {{.*}}kernel = array<i64: 3, 3>{{.*}}stride = array<i64: 1, 1>
// CHECK: tpu.fused -> tensor<1x6x6x2xf32>
// CHECK-NEXT: tosa.conv2d
// CHECK-NEXT: tosa.add
// CHECK-NEXT: tpu.yield
// CHECK-NEXT: }
// CHECK-NEXT: tosa.max_pool2d
// CHECK: tpu.fused -> tensor<1x6x6x2xf32>
// CHECK-NEXT: tosa.conv2d
// CHECK-NEXT: tpu.yield
// CHECK-NEXT: }
// CHECK-NEXT: tosa.max_pool2d
func.func @pooled(%x: tensor<1x6x6x2xf32>, %w: tensor<2x3x3x2xf32>, %w1: tensor<2x1x1x2xf32>, %res: tensor<1x6x6x2xf32>) -> (tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>, tensor<1x4x4x2xf32>, tensor<1x3x3x2xf32>, tensor<1x2x2x2xf32>) {
  %bias = "tosa.const"() {value = dense<0.5> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = tosa.conv2d %x, %w, %bias {pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x6x6x2xf32>, tensor<2x3x3x2xf32>, tensor<2xf32>) -> tensor<1x6x6x2xf32>
  %r = tosa.clamp %c {min_fp = 0.0 : f32, max_fp = 6.0 : f32, min_int = 0 : i64, max_int = 6 : i64} : (tensor<1x6x6x2xf32>) -> tensor<1x6x6x2xf32>
  %p = tosa.max_pool2d %r {kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x6x6x2xf32>) -> tensor<1x3x3x2xf32>
  %c2 = tosa.conv2d %x, %w, %bias {pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x6x6x2xf32>, tensor<2x3x3x2xf32>, tensor<2xf32>) -> tensor<1x6x6x2xf32>
  %padded = tosa.avg_pool2d %c2 {acc_type = f32, kernel = array<i64: 2, 2>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x6x6x2xf32>) -> tensor<1x3x3x2xf32>
  %c3 = tosa.conv2d %x, %w, %bias {pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x6x6x2xf32>, tensor<2x3x3x2xf32>, tensor<2xf32>) -> tensor<1x6x6x2xf32>
  %overlapping = tosa.max_pool2d %c3 {kernel = array<i64: 3, 3>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x6x6x2xf32>) -> tensor<1x4x4x2xf32>
  %c4 = tosa.conv2d %x, %w, %bias {pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x6x6x2xf32>, tensor<2x3x3x2xf32>, tensor<2xf32>) -> tensor<1x6x6x2xf32>
  %s = tosa.add %res, %c4 : (tensor<1x6x6x2xf32>, tensor<1x6x6x2xf32>) -> tensor<1x6x6x2xf32>
  %residual = tosa.max_pool2d %s {kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x6x6x2xf32>) -> tensor<1x3x3x2xf32>
  %c5 = tosa.conv2d %x, %w1, %bias {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>} : (tensor<1x6x6x2xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x6x6x2xf32>
  %pointwise = tosa.max_pool2d %c5 {kernel = array<i64: 3, 3>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 3, 3>} : (tensor<1x6x6x2xf32>) -> tensor<1x2x2x2xf32>
  return %p, %padded, %overlapping, %residual, %pointwise : tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>, tensor<1x4x4x2xf32>, tensor<1x3x3x2xf32>, tensor<1x2x2x2xf32>
}

}
