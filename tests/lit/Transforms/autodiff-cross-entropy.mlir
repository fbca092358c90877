// RUN: tpu-opt %s --tpu-autodiff="optimizer=momentum momentum=0.75 trainable=b" | FileCheck %s

// Cross-entropy over int64 labels with the correct count; momentum buffers
// after the parameters on both sides; only `b` is trained, `w` stays a
// constant.
// CHECK-LABEL: func.func @main(%arg0: tensor<2x3xf32> {tpu.name = "x"}, %arg1: tensor<2xi64> {tpu.name = "labels"}, %arg2: tensor<1x3xf32> {tpu.name = "b"}, %arg3: tensor<1x3xf32> {tpu.name = "b.momentum"})
// CHECK-SAME: -> (tensor<1xf32> {tpu.name = "loss"}, tensor<1xi32> {tpu.name = "correct"}, tensor<1x3xf32> {tpu.name = "b"}, tensor<1x3xf32> {tpu.name = "b.momentum"})
// CHECK: %[[W:.*]] = "tosa.const"() <{value = dense<2.000000e+00> : tensor<1x3xf32>}> {tpu.name = "w"}
// CHECK: %[[XW:.*]] = tosa.mul %arg0, %[[W]]
// CHECK: %[[Z:.*]] = tosa.add %[[XW]], %arg2
// The one-hot labels.
// CHECK: %[[L32:.*]] = tosa.cast %arg1 : (tensor<2xi64>) -> tensor<2xi32>
// CHECK: %[[IOTA:.*]] = "tosa.const"() <{value = dense<{{\[\[}}0, 1, 2]]> : tensor<1x3xi32>}>
// CHECK: %[[COL:.*]] = tosa.reshape %[[L32]] {new_shape = array<i64: 2, 1>}
// CHECK: %[[HIT:.*]] = tosa.equal %[[COL]], %[[IOTA]] : (tensor<2x1xi32>, tensor<1x3xi32>) -> tensor<2x3xi1>
// CHECK: %[[ONEHOT:.*]] = tosa.select %[[HIT]]
// The loss: mean of log(sum(exp(z - max))) - (z - max)[label].
// CHECK: %[[MAX:.*]] = tosa.reduce_max %[[Z]] {axis = 1 : i32}
// CHECK: %[[SH:.*]] = tosa.sub %[[Z]], %[[MAX]]
// CHECK: %[[EXP:.*]] = tosa.exp %[[SH]]
// CHECK: %[[SUM:.*]] = tosa.reduce_sum %[[EXP]] {axis = 1 : i32}
// CHECK: %[[PICK:.*]] = tosa.mul %[[SH]], %[[ONEHOT]]
// CHECK: %[[PICKED:.*]] = tosa.reduce_sum %[[PICK]] {axis = 1 : i32}
// CHECK: %[[LSE:.*]] = tosa.log %[[SUM]]
// CHECK: %[[ROW:.*]] = tosa.sub %[[LSE]], %[[PICKED]]
// CHECK: %[[HALF:.*]] = "tosa.const"() <{value = dense<5.000000e-01> : tensor<1x1xf32>}>
// CHECK: %[[TOTAL:.*]] = tosa.reduce_sum %[[ROW]] {axis = 0 : i32}
// CHECK: %[[MEAN:.*]] = tosa.mul %[[TOTAL]], %[[HALF]]
// CHECK: %[[LOSS:.*]] = tosa.reshape %[[MEAN]] {new_shape = array<i64: 1>}
// The correct count.
// CHECK: %[[PRED:.*]] = tosa.argmax %[[Z]] {axis = 1 : i32} : (tensor<2x3xf32>) -> tensor<2xi32>
// CHECK: %[[OK:.*]] = tosa.equal %[[PRED]], %[[L32]]
// CHECK: %[[OK32:.*]] = tosa.cast %[[OK]] : (tensor<2xi1>) -> tensor<2xi32>
// CHECK: %[[CORRECT:.*]] = tosa.reduce_sum %[[OK32]] {axis = 0 : i32} : (tensor<2xi32>) -> tensor<1xi32>
// The fused gradient (softmax - onehot) / B, summed over the batch for b.
// CHECK: %[[INV:.*]] = tosa.reciprocal %[[SUM]]
// CHECK: %[[SOFTMAX:.*]] = tosa.mul %[[EXP]], %[[INV]]
// CHECK: %[[DIFF:.*]] = tosa.sub %[[SOFTMAX]], %[[ONEHOT]]
// CHECK: %[[DZ:.*]] = tosa.mul %[[DIFF]], %[[HALF]]
// CHECK: %[[DB:.*]] = tosa.reduce_sum %[[DZ]] {axis = 0 : i32} : (tensor<2x3xf32>) -> tensor<1x3xf32>
// Momentum: v = 0.75 v + g, b -= 0.1 v.
// CHECK: %[[MU:.*]] = "tosa.const"() <{value = dense<7.500000e-01> : tensor<1x1xf32>}>
// CHECK: %[[MV:.*]] = tosa.mul %arg3, %[[MU]]
// CHECK: %[[V:.*]] = tosa.add %[[MV]], %[[DB]]
// CHECK: %[[LR:.*]] = "tosa.const"() <{value = dense<-1.000000e-01> : tensor<1x1xf32>}>
// CHECK: %[[STEP:.*]] = tosa.mul %[[V]], %[[LR]]
// CHECK: %[[B:.*]] = tosa.add %[[STEP]], %arg2
// CHECK: return %[[LOSS]], %[[CORRECT]], %[[B]], %[[V]]
func.func @main(%x: tensor<2x3xf32> {tpu.name = "x"}) -> tensor<2x3xf32> {
  %w = "tosa.const"() <{value = dense<2.0> : tensor<1x3xf32>}> {tpu.name = "w"} : () -> tensor<1x3xf32>
  %b = "tosa.const"() <{value = dense<0.5> : tensor<1x3xf32>}> {tpu.name = "b"} : () -> tensor<1x3xf32>
  %xw = tosa.mul %x, %w {shift = 0 : i8} : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %z = tosa.add %xw, %b : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return %z : tensor<2x3xf32>
}
