// RUN: tpu-opt %s --split-input-file --tpu-autodiff="loss=mse" | FileCheck %s

// conv2d with stride 2 and padding top and left only: (5 + 1 - 3) % 2 = 1,
// so the input's last row and column are read by no window.
// dx: dy spread (stride - 1 zeros between its elements, placed at
// K - 1 - pad = 1 in 5 + 2 = 7 rows and columns; the unread last row gets
// zeros), convolved with the kernel flipped in H and W and its channels
// swapped (OHWI [3,3,3,2] -> [2,3,3,3]).
// CHECK-LABEL: func.func @main
// CHECK: %[[X:.*]] = tosa.add %arg0, %arg2
// CHECK: tosa.conv2d %[[X]], %arg3, %arg4
// CHECK: %[[DY:.*]] = tosa.mul %{{.*}}, %{{.*}} {shift = 0 : i8} : (tensor<1x2x2x3xf32>, tensor<1x1x1x1xf32>)
// CHECK: %[[R1:.*]] = tosa.reverse %arg3 {axis = 1 : i32}
// CHECK: %[[R2:.*]] = tosa.reverse %[[R1]] {axis = 2 : i32}
// CHECK: %[[FLIP:.*]] = tosa.transpose %[[R2]], %{{.*}} : (tensor<3x3x3x2xf32>, tensor<4xi32>) -> tensor<2x3x3x3xf32>
// CHECK: tosa.reshape %[[DY]] {new_shape = array<i64: 1, 2, 1, 2, 3>}
// CHECK: "tosa.const"() <{value = dense<{{\[\[}}0, 0], [0, 0], [0, 1], [0, 0], [0, 0]]> : tensor<5x2xi32>}>
// CHECK: tosa.reshape %{{.*}} {new_shape = array<i64: 1, 4, 2, 3>}
// CHECK: "tosa.const"() <{value = dense<{{\[\[}}0, 0], [1, 2], [0, 0], [0, 0]]> : tensor<4x2xi32>}>
// CHECK: tosa.pad {{.*}} -> tensor<1x7x2x3xf32>
// CHECK: %[[SPREAD:.*]] = tosa.pad {{.*}} -> tensor<1x7x7x3xf32>
// CHECK: %[[DX:.*]] = tosa.conv2d %[[SPREAD]], %[[FLIP]], %{{.*}} {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x7x7x3xf32>, tensor<2x3x3x3xf32>, tensor<2xf32>) -> tensor<1x5x5x2xf32>
// dw: the input padded to the rows the windows read ((2 - 1) 2 + 3 = 4:
// the last row cropped, one padding row on top), channels as the batch,
// convolved with dy (its batch as channels) at stride 1, dilation 2 (the
// forward stride), back to OHWI.
// CHECK: %[[CROP:.*]] = tosa.slice %[[X]] {size = array<i64: 1, 4, 5, 2>, start = array<i64: 0, 0, 0, 0>}
// CHECK: tosa.pad %[[CROP]], {{.*}} -> tensor<1x5x5x2xf32>
// CHECK: tosa.slice %{{.*}} {size = array<i64: 1, 5, 4, 2>, start = array<i64: 0, 0, 0, 0>}
// CHECK: %[[PADDED:.*]] = tosa.pad {{.*}} -> tensor<1x5x5x2xf32>
// CHECK: %[[IMAGE:.*]] = tosa.transpose %[[PADDED]], %{{.*}} -> tensor<2x5x5x1xf32>
// CHECK: %[[KERNEL:.*]] = tosa.transpose %[[DY]], %{{.*}} -> tensor<3x2x2x1xf32>
// CHECK: %[[CORR:.*]] = tosa.conv2d %[[IMAGE]], %[[KERNEL]], %{{.*}} {dilation = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<2x5x5x1xf32>, tensor<3x2x2x1xf32>, tensor<3xf32>) -> tensor<2x3x3x3xf32>
// CHECK: %[[DW:.*]] = tosa.transpose %[[CORR]], %{{.*}} -> tensor<3x3x3x2xf32>
// db: dy summed over N (of size 1: no op), H and W.
// CHECK: %[[B1:.*]] = tosa.reduce_sum %[[DY]] {axis = 1 : i32}
// CHECK: %[[B2:.*]] = tosa.reduce_sum %[[B1]] {axis = 2 : i32}
// CHECK: %[[DB:.*]] = tosa.reshape %[[B2]] {new_shape = array<i64: 3>}
// CHECK: tosa.mul %[[DX]]
// CHECK: tosa.mul %[[DW]]
// CHECK: tosa.mul %[[DB]]
func.func @main(%x: tensor<1x5x5x2xf32>) -> tensor<1x2x2x3xf32> {
  %a = "tosa.const"() <{value = dense<1.0> : tensor<1x5x5x2xf32>}> {tpu.name = "a"} : () -> tensor<1x5x5x2xf32>
  %w = "tosa.const"() <{value = dense<1.0> : tensor<3x3x3x2xf32>}> {tpu.name = "w"} : () -> tensor<3x3x3x2xf32>
  %b = "tosa.const"() <{value = dense<1.0> : tensor<3xf32>}> {tpu.name = "b"} : () -> tensor<3xf32>
  %i = tosa.add %x, %a : (tensor<1x5x5x2xf32>, tensor<1x5x5x2xf32>) -> tensor<1x5x5x2xf32>
  %y = tosa.conv2d %i, %w, %b {pad = array<i64: 1, 0, 1, 0>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>} : (tensor<1x5x5x2xf32>, tensor<3x3x3x2xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  return %y : tensor<1x2x2x3xf32>
}

// -----

// depthwise_conv2d with a channel multiplier of 2, stride 2, dilation 2.
// dx: the spread dy (9 = 5 + 2 (3 - 1) rows) through a depthwise
// convolution with the flipped kernel, one filter per output channel
// ([3,3,4,1]), then each input channel's two summed.
// CHECK-LABEL: func.func @main
// CHECK: %[[X:.*]] = tosa.add %arg0, %arg2
// CHECK: %[[DY:.*]] = tosa.mul %{{.*}}, %{{.*}} {shift = 0 : i8} : (tensor<1x2x2x4xf32>, tensor<1x1x1x1xf32>)
// CHECK: %[[R1:.*]] = tosa.reverse %arg3 {axis = 0 : i32}
// CHECK: %[[R2:.*]] = tosa.reverse %[[R1]] {axis = 1 : i32}
// CHECK: %[[FLIP:.*]] = tosa.reshape %[[R2]] {new_shape = array<i64: 3, 3, 4, 1>}
// CHECK: %[[SPREAD:.*]] = tosa.pad {{.*}} -> tensor<1x9x9x4xf32>
// CHECK: %[[T:.*]] = tosa.depthwise_conv2d %[[SPREAD]], %[[FLIP]], %{{.*}} {dilation = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x9x9x4xf32>, tensor<3x3x4x1xf32>, tensor<4xf32>) -> tensor<1x5x5x4xf32>
// CHECK: %[[T5:.*]] = tosa.reshape %[[T]] {new_shape = array<i64: 1, 5, 5, 2, 2>}
// CHECK: %[[S:.*]] = tosa.reduce_sum %[[T5]] {axis = 4 : i32}
// CHECK: %[[DX:.*]] = tosa.reshape %[[S]] {new_shape = array<i64: 1, 5, 5, 2>}
// dw: the padded input as one image of (n, c) channels, dy's (n, c, m) as
// its depthwise kernel, stride 2 (the dilation) and dilation 2 (the
// stride), summed over n.
// CHECK: %[[P:.*]] = tosa.pad {{.*}} -> tensor<1x7x7x2xf32>
// CHECK: %[[PT:.*]] = tosa.transpose %[[P]], %{{.*}} -> tensor<7x7x1x2xf32>
// CHECK: %[[IMAGE:.*]] = tosa.reshape %[[PT]] {new_shape = array<i64: 1, 7, 7, 2>}
// CHECK: %[[D5:.*]] = tosa.reshape %[[DY]] {new_shape = array<i64: 1, 2, 2, 2, 2>}
// CHECK: %[[DT:.*]] = tosa.transpose %[[D5]], %{{.*}} -> tensor<2x2x1x2x2xf32>
// CHECK: %[[KERNEL:.*]] = tosa.reshape %[[DT]] {new_shape = array<i64: 2, 2, 2, 2>}
// CHECK: %[[C:.*]] = tosa.depthwise_conv2d %[[IMAGE]], %[[KERNEL]], %{{.*}} {dilation = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x7x7x2xf32>, tensor<2x2x2x2xf32>, tensor<4xf32>) -> tensor<1x3x3x4xf32>
// CHECK: %[[C4:.*]] = tosa.reshape %[[C]] {new_shape = array<i64: 3, 3, 1, 4>}
// CHECK: %[[DW:.*]] = tosa.reshape %[[C4]] {new_shape = array<i64: 3, 3, 2, 2>}
// CHECK: tosa.mul %[[DX]]
// CHECK: tosa.mul %[[DW]]
func.func @main(%x: tensor<1x5x5x2xf32>) -> tensor<1x2x2x4xf32> {
  %a = "tosa.const"() <{value = dense<1.0> : tensor<1x5x5x2xf32>}> {tpu.name = "a"} : () -> tensor<1x5x5x2xf32>
  %w = "tosa.const"() <{value = dense<1.0> : tensor<3x3x2x2xf32>}> {tpu.name = "w"} : () -> tensor<3x3x2x2xf32>
  %b = "tosa.const"() <{value = dense<1.0> : tensor<4xf32>}> : () -> tensor<4xf32>
  %i = tosa.add %x, %a : (tensor<1x5x5x2xf32>, tensor<1x5x5x2xf32>) -> tensor<1x5x5x2xf32>
  %y = tosa.depthwise_conv2d %i, %w, %b {pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>, dilation = array<i64: 2, 2>} : (tensor<1x5x5x2xf32>, tensor<3x3x2x2xf32>, tensor<4xf32>) -> tensor<1x2x2x4xf32>
  return %y : tensor<1x2x2x4xf32>
}

// -----

// max_pool2d 2x2 stride 2, windows that tile the image: the taps come from
// one space-to-depth transpose of the input; each tap (row-major window
// order) where it equals the maximum and no earlier tap did gets dy (ties
// go to the first tap only); the shares go back with one concat and one
// depth-to-space transpose.
// CHECK-LABEL: func.func @main
// CHECK: %[[X:.*]] = tosa.add %arg0, %arg2
// CHECK: %[[Y:.*]] = tosa.max_pool2d %[[X]]
// CHECK: %[[DY:.*]] = tosa.mul %{{.*}}, %{{.*}} {shift = 0 : i8} : (tensor<1x2x2x1xf32>, tensor<1x1x1x1xf32>)
// CHECK: %[[IMAGE:.*]] = tosa.reshape %[[X]] {new_shape = array<i64: 1, 2, 2, 2, 2, 1>}
// CHECK: %[[PERM:.*]] = "tosa.const"() <{value = dense<[0, 1, 3, 2, 4, 5]> : tensor<6xi32>}>
// CHECK: %[[BLOCKS:.*]] = tosa.transpose %[[IMAGE]], %[[PERM]]
// CHECK: %[[TAPS:.*]] = tosa.reshape %[[BLOCKS]] {new_shape = array<i64: 1, 2, 2, 4, 1>}
// Tap (0, 0).
// CHECK: tosa.slice %[[TAPS]] {size = array<i64: 1, 2, 2, 1, 1>, start = array<i64: 0, 0, 0, 0, 0>}
// CHECK: %[[TAP0:.*]] = tosa.reshape %{{.*}} {new_shape = array<i64: 1, 2, 2, 1>}
// CHECK: %[[HIT0:.*]] = tosa.equal %[[TAP0]], %[[Y]]
// CHECK: %[[SHARE0:.*]] = tosa.select %[[HIT0]], %[[DY]], %{{.*}}
// CHECK: %[[S0:.*]] = tosa.reshape %[[SHARE0]] {new_shape = array<i64: 1, 2, 2, 1, 1>}
// Tap (0, 1).
// CHECK: tosa.slice %[[TAPS]] {size = array<i64: 1, 2, 2, 1, 1>, start = array<i64: 0, 0, 0, 1, 0>}
// CHECK: %[[HIT1:.*]] = tosa.equal %{{.*}}, %[[Y]]
// CHECK: %[[NOT0:.*]] = tosa.logical_not %[[HIT0]]
// CHECK: %[[FIRST1:.*]] = tosa.logical_and %[[HIT1]], %[[NOT0]]
// CHECK: %[[TAKEN1:.*]] = tosa.logical_or %[[HIT0]], %[[FIRST1]]
// CHECK: tosa.select %[[FIRST1]], %[[DY]], %{{.*}}
// CHECK: %[[S1:.*]] = tosa.reshape
// Taps (1, 0) and (1, 1); the last updates no mask.
// CHECK: tosa.slice %[[TAPS]] {{.*}} start = array<i64: 0, 0, 0, 2, 0>
// CHECK: tosa.logical_not %[[TAKEN1]]
// CHECK: %[[TAKEN2:.*]] = tosa.logical_or %[[TAKEN1]]
// CHECK: %[[S2:.*]] = tosa.reshape
// CHECK: tosa.slice %[[TAPS]] {{.*}} start = array<i64: 0, 0, 0, 3, 0>
// CHECK: tosa.logical_not %[[TAKEN2]]
// CHECK-NOT: tosa.logical_or
// CHECK: %[[S3:.*]] = tosa.reshape
// CHECK: %[[STACKED:.*]] = tosa.concat %[[S0]], %[[S1]], %[[S2]], %[[S3]] {axis = 3 : i32}
// CHECK: %[[SPLIT:.*]] = tosa.reshape %[[STACKED]] {new_shape = array<i64: 1, 2, 2, 2, 2, 1>}
// CHECK: %[[BACK:.*]] = tosa.transpose %[[SPLIT]]
// CHECK: %[[DX:.*]] = tosa.reshape %[[BACK]] {new_shape = array<i64: 1, 4, 4, 1>}
// CHECK-NOT: tosa.add
// CHECK: tosa.mul %[[DX]]
func.func @main(%x: tensor<1x4x4x1xf32>) -> tensor<1x2x2x1xf32> {
  %a = "tosa.const"() <{value = dense<1.0> : tensor<1x4x4x1xf32>}> {tpu.name = "a"} : () -> tensor<1x4x4x1xf32>
  %i = tosa.add %x, %a : (tensor<1x4x4x1xf32>, tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32>
  %y = tosa.max_pool2d %i {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x1xf32>) -> tensor<1x2x2x1xf32>
  return %y : tensor<1x2x2x1xf32>
}

// -----

// max_pool2d 2x2 stride 1 (overlapping windows) with bottom padding: each
// tap is a slice of the input padded with the lowest float, its share is
// placed back at the positions it read and the shares add up.
// CHECK-LABEL: func.func @main
// CHECK: %[[X:.*]] = tosa.add %arg0, %arg2
// CHECK: %[[Y:.*]] = tosa.max_pool2d %[[X]]
// CHECK: %[[DY:.*]] = tosa.mul %{{.*}}, %{{.*}} {shift = 0 : i8} : (tensor<1x3x2x1xf32>, tensor<1x1x1x1xf32>)
// CHECK: %[[LOWEST:.*]] = "tosa.const"() <{value = dense<-3.40282347E+38> : tensor<f32>}>
// CHECK: %[[PADDED:.*]] = tosa.pad %[[X]], %{{.*}}, %[[LOWEST]] {{.*}} -> tensor<1x4x3x1xf32>
// Tap (0, 0): rows 0-2, columns 0-1.
// CHECK: %[[TAP0:.*]] = tosa.slice %[[PADDED]] {size = array<i64: 1, 3, 3, 1>, start = array<i64: 0, 0, 0, 0>}
// CHECK: tosa.slice %[[TAP0]] {size = array<i64: 1, 3, 2, 1>, start = array<i64: 0, 0, 0, 0>}
// CHECK: %[[HIT0:.*]] = tosa.equal %{{.*}}, %[[Y]]
// CHECK: %[[SHARE0:.*]] = tosa.select %[[HIT0]], %[[DY]], %{{.*}}
// CHECK: %[[BACK0:.*]] = tosa.pad %[[SHARE0]], {{.*}} -> tensor<1x3x3x1xf32>
// Tap (0, 1): columns 1-2; its share lands one column right and adds up.
// CHECK: tosa.slice %[[PADDED]] {size = array<i64: 1, 3, 3, 1>, start = array<i64: 0, 0, 0, 0>}
// CHECK: tosa.slice %{{.*}} {size = array<i64: 1, 3, 2, 1>, start = array<i64: 0, 0, 1, 0>}
// CHECK: %[[NOT0:.*]] = tosa.logical_not %[[HIT0]]
// CHECK: %[[FIRST1:.*]] = tosa.logical_and %{{.*}}, %[[NOT0]]
// CHECK: tosa.select %[[FIRST1]], %[[DY]], %{{.*}}
// CHECK: tosa.pad {{.*}} -> tensor<1x3x3x1xf32>
// CHECK: %[[SUM1:.*]] = tosa.add %[[BACK0]], %{{.*}} : (tensor<1x3x3x1xf32>, tensor<1x3x3x1xf32>)
// Taps (1, 0) and (1, 1) read rows 1-3; row 3 is the padding, cropped.
// CHECK: tosa.slice %[[PADDED]] {size = array<i64: 1, 3, 3, 1>, start = array<i64: 0, 1, 0, 0>}
// CHECK: %[[SUM2:.*]] = tosa.add %[[SUM1]]
// CHECK: tosa.slice %[[PADDED]] {size = array<i64: 1, 3, 3, 1>, start = array<i64: 0, 1, 0, 0>}
// CHECK: %[[DX:.*]] = tosa.add %[[SUM2]]
// CHECK: tosa.mul %[[DX]]
func.func @main(%x: tensor<1x3x3x1xf32>) -> tensor<1x3x2x1xf32> {
  %a = "tosa.const"() <{value = dense<1.0> : tensor<1x3x3x1xf32>}> {tpu.name = "a"} : () -> tensor<1x3x3x1xf32>
  %i = tosa.add %x, %a : (tensor<1x3x3x1xf32>, tensor<1x3x3x1xf32>) -> tensor<1x3x3x1xf32>
  %y = tosa.max_pool2d %i {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, pad = array<i64: 0, 1, 0, 0>} : (tensor<1x3x3x1xf32>) -> tensor<1x3x2x1xf32>
  return %y : tensor<1x3x2x1xf32>
}

// -----

// avg_pool2d 3x3 stride 2, padding top and left: dy divided by each
// window's count of input elements (TOSA's divisor leaves the padding out:
// 2 x 2, 2 x 3, 3 x 2, 3 x 3), spread, convolved with a kernel of ones.
// CHECK-LABEL: func.func @main
// CHECK: %[[DY:.*]] = tosa.mul %{{.*}}, %{{.*}} {shift = 0 : i8} : (tensor<1x2x2x1xf32>, tensor<1x1x1x1xf32>)
// CHECK: %[[INV:.*]] = "tosa.const"() <{value = dense<{{\[\[\[\[}}2.500000e-01], [0.166666672]], {{\[\[}}0.166666672], [0.111111112]]]]> : tensor<1x2x2x1xf32>}>
// CHECK: %[[SCALED:.*]] = tosa.mul %[[DY]], %[[INV]]
// CHECK: %[[ONES:.*]] = "tosa.const"() <{value = dense<1.000000e+00> : tensor<3x3x1x1xf32>}>
// CHECK: tosa.reshape %[[SCALED]] {new_shape = array<i64: 1, 2, 1, 2, 1>}
// CHECK: %[[SPREAD:.*]] = tosa.pad {{.*}} -> tensor<1x6x6x1xf32>
// CHECK: %[[DX:.*]] = tosa.depthwise_conv2d %[[SPREAD]], %[[ONES]], %{{.*}} {dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x6x6x1xf32>, tensor<3x3x1x1xf32>, tensor<1xf32>) -> tensor<1x4x4x1xf32>
// CHECK: tosa.mul %[[DX]]
func.func @main(%x: tensor<1x4x4x1xf32>) -> tensor<1x2x2x1xf32> {
  %a = "tosa.const"() <{value = dense<1.0> : tensor<1x4x4x1xf32>}> {tpu.name = "a"} : () -> tensor<1x4x4x1xf32>
  %i = tosa.add %x, %a : (tensor<1x4x4x1xf32>, tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32>
  %y = tosa.avg_pool2d %i {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, pad = array<i64: 1, 0, 1, 0>, acc_type = f32} : (tensor<1x4x4x1xf32>) -> tensor<1x2x2x1xf32>
  return %y : tensor<1x2x2x1xf32>
}

// -----

// avg_pool2d 2x2 stride 2, windows that tile the image: dy / 4 repeated for
// the four taps of each window, put back as blocks (one depth-to-space
// transpose), no convolution.
// CHECK-LABEL: func.func @main
// CHECK: %[[DY:.*]] = tosa.mul %{{.*}}, %{{.*}} {shift = 0 : i8} : (tensor<1x2x2x1xf32>, tensor<1x1x1x1xf32>)
// CHECK: %[[INV:.*]] = "tosa.const"() <{value = dense<2.500000e-01> : tensor<1x2x2x1xf32>}>
// CHECK: %[[SCALED:.*]] = tosa.mul %[[DY]], %[[INV]]
// CHECK: %[[SHARE:.*]] = tosa.reshape %[[SCALED]] {new_shape = array<i64: 1, 2, 2, 1, 1>}
// CHECK: %[[BLOCKS:.*]] = tosa.tile %[[SHARE]] {multiples = array<i64: 1, 1, 1, 4, 1>}
// CHECK: %[[SPLIT:.*]] = tosa.reshape %[[BLOCKS]] {new_shape = array<i64: 1, 2, 2, 2, 2, 1>}
// CHECK: %[[PERM:.*]] = "tosa.const"() <{value = dense<[0, 1, 3, 2, 4, 5]> : tensor<6xi32>}>
// CHECK: %[[BACK:.*]] = tosa.transpose %[[SPLIT]], %[[PERM]]
// CHECK: %[[DX:.*]] = tosa.reshape %[[BACK]] {new_shape = array<i64: 1, 4, 4, 1>}
// CHECK-NOT: tosa.depthwise_conv2d
// CHECK: tosa.mul %[[DX]]
func.func @main(%x: tensor<1x4x4x1xf32>) -> tensor<1x2x2x1xf32> {
  %a = "tosa.const"() <{value = dense<1.0> : tensor<1x4x4x1xf32>}> {tpu.name = "a"} : () -> tensor<1x4x4x1xf32>
  %i = tosa.add %x, %a : (tensor<1x4x4x1xf32>, tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32>
  %y = tosa.avg_pool2d %i {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, acc_type = f32} : (tensor<1x4x4x1xf32>) -> tensor<1x2x2x1xf32>
  return %y : tensor<1x2x2x1xf32>
}
