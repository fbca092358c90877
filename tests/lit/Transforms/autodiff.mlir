// RUN: tpu-opt %s --split-input-file --tpu-autodiff="loss=mse lr=0.5" | FileCheck %s

// The step's signature: inputs, labels, parameters; loss, parameters. MSE's
// gradient 2 (y - t) / N; mul by a broadcast row: dw = sum over the batch
// of dy * x; SGD: w - lr * dw.
// CHECK-LABEL: func.func @main(%arg0: tensor<2x3xf32> {tpu.name = "x"}, %arg1: tensor<2x3xf32> {tpu.name = "labels"}, %arg2: tensor<1x3xf32> {tpu.name = "w"}) -> (tensor<1xf32> {tpu.name = "loss"}, tensor<1x3xf32> {tpu.name = "w"})
// CHECK: %[[Y:.*]] = tosa.mul %arg0, %arg2
// CHECK: %[[D:.*]] = tosa.sub %[[Y]], %arg1
// CHECK: %[[TWO_N:.*]] = "tosa.const"() <{value = dense<0.333333343> : tensor<1x1xf32>}>
// CHECK: %[[DY:.*]] = tosa.mul %[[D]], %[[TWO_N]]
// CHECK: %[[P:.*]] = tosa.mul %[[DY]], %arg0
// CHECK: %[[DW:.*]] = tosa.reduce_sum %[[P]] {axis = 0 : i32} : (tensor<2x3xf32>) -> tensor<1x3xf32>
// CHECK: %[[LR:.*]] = "tosa.const"() <{value = dense<-5.000000e-01> : tensor<1x1xf32>}>
// CHECK: %[[S:.*]] = tosa.mul %[[DW]], %[[LR]]
// CHECK: %[[W:.*]] = tosa.add %[[S]], %arg2
// CHECK: return %{{.*}}, %[[W]] : tensor<1xf32>, tensor<1x3xf32>
func.func @main(%x: tensor<2x3xf32> {tpu.name = "x"}) -> tensor<2x3xf32> {
  %w = "tosa.const"() <{value = dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>}> {tpu.name = "w"} : () -> tensor<1x3xf32>
  %y = tosa.mul %x, %w {shift = 0 : i8} : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// sub: the second operand's gradient negated, summed over its broadcast axis.
// CHECK-LABEL: func.func @main
// CHECK: %[[DY:.*]] = tosa.mul %{{.*}}, %{{.*}} {shift = 0 : i8} : (tensor<2x3xf32>, tensor<1x1xf32>)
// CHECK: %[[N:.*]] = tosa.negate %[[DY]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[DW:.*]] = tosa.reduce_sum %[[N]] {axis = 1 : i32} : (tensor<2x3xf32>) -> tensor<2x1xf32>
// CHECK: tosa.mul %[[DW]]
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %w = "tosa.const"() <{value = dense<1.0> : tensor<2x1xf32>}> {tpu.name = "w"} : () -> tensor<2x1xf32>
  %y = tosa.sub %x, %w : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// matmul: dB = A^T dY batch by batch; no dA, the input needs none.
// CHECK-LABEL: func.func @main
// CHECK: %[[DY:.*]] = tosa.mul %{{.*}}, %{{.*}} {shift = 0 : i8} : (tensor<1x2x4xf32>, tensor<1x1x1xf32>)
// CHECK: %[[PERM:.*]] = "tosa.const"() <{value = dense<[0, 2, 1]> : tensor<3xi32>}>
// CHECK: %[[AT:.*]] = tosa.transpose %arg0, %[[PERM]] : (tensor<1x2x3xf32>, tensor<3xi32>) -> tensor<1x3x2xf32>
// CHECK: %[[DW:.*]] = tosa.matmul %[[AT]], %[[DY]] : (tensor<1x3x2xf32>, tensor<1x2x4xf32>) -> tensor<1x3x4xf32>
// CHECK-NOT: tosa.matmul
// CHECK: tosa.mul %[[DW]]
func.func @main(%x: tensor<1x2x3xf32>) -> tensor<1x2x4xf32> {
  %w = "tosa.const"() <{value = dense<1.0> : tensor<1x3x4xf32>}> {tpu.name = "w"} : () -> tensor<1x3x4xf32>
  %y = tosa.matmul %x, %w : (tensor<1x2x3xf32>, tensor<1x3x4xf32>) -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}

// -----

// reshape back, transpose by the inverse permutation.
// CHECK-LABEL: func.func @main
// CHECK: %[[DY:.*]] = tosa.mul %{{.*}}, %{{.*}} {shift = 0 : i8} : (tensor<1x6xf32>, tensor<1x1xf32>)
// CHECK: %[[R:.*]] = tosa.reshape %[[DY]] {new_shape = array<i64: 3, 2>}
// CHECK: %[[PERM:.*]] = "tosa.const"() <{value = dense<[1, 0]> : tensor<2xi32>}>
// CHECK: %[[DW:.*]] = tosa.transpose %[[R]], %[[PERM]] : (tensor<3x2xf32>, tensor<2xi32>) -> tensor<2x3xf32>
// CHECK: tosa.mul %[[DW]]
func.func @main(%x: tensor<1x6xf32>) -> tensor<1x6xf32> {
  %w = "tosa.const"() <{value = dense<1.0> : tensor<2x3xf32>}> {tpu.name = "w"} : () -> tensor<2x3xf32>
  %p = "tosa.const"() <{value = dense<[1, 0]> : tensor<2xi32>}> : () -> tensor<2xi32>
  %t = tosa.transpose %w, %p : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<3x2xf32>
  %r = tosa.reshape %t {new_shape = array<i64: 1, 6>} : (tensor<3x2xf32>) -> tensor<1x6xf32>
  %y = tosa.add %x, %r : (tensor<1x6xf32>, tensor<1x6xf32>) -> tensor<1x6xf32>
  return %y : tensor<1x6xf32>
}

// -----

// clamp: dy strictly inside the bounds, tested on the output and applied
// as a 1/0 mask built right after the clamp; ReLU's unbounded top needs no
// comparison.
// CHECK-LABEL: func.func @main
// CHECK: %[[A:.*]] = tosa.add %arg0, %arg2
// CHECK: %[[R:.*]] = tosa.clamp %[[A]] {max_fp = 3.40282347E+38
// CHECK: %[[ZERO:.*]] = "tosa.const"() <{value = dense<0.000000e+00> : tensor<1x1xf32>}>
// CHECK: %[[POS:.*]] = tosa.greater %[[R]], %[[ZERO]]
// CHECK: %[[M2:.*]] = tosa.cast %[[POS]] : (tensor<2x3xi1>) -> tensor<2x3xf32>
// CHECK: %[[Y:.*]] = tosa.clamp %[[R]] {max_fp = 6.000000e+00
// CHECK: %[[LO:.*]] = "tosa.const"() <{value = dense<-1.000000e+00> : tensor<1x1xf32>}>
// CHECK: %[[ABOVE:.*]] = tosa.greater %[[Y]], %[[LO]]
// CHECK: %[[HI:.*]] = "tosa.const"() <{value = dense<6.000000e+00> : tensor<1x1xf32>}>
// CHECK: %[[BELOW:.*]] = tosa.greater %[[HI]], %[[Y]]
// CHECK: %[[IN:.*]] = tosa.logical_and %[[ABOVE]], %[[BELOW]]
// CHECK: %[[M1:.*]] = tosa.cast %[[IN]] : (tensor<2x3xi1>) -> tensor<2x3xf32>
// CHECK-NOT: tosa.greater
// CHECK: %[[DY:.*]] = tosa.mul %{{.*}}, %{{.*}} {shift = 0 : i8} : (tensor<2x3xf32>, tensor<1x1xf32>)
// CHECK: %[[D1:.*]] = tosa.mul %[[DY]], %[[M1]]
// CHECK: %[[DW:.*]] = tosa.mul %[[D1]], %[[M2]]
// CHECK: tosa.mul %[[DW]]
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %w = "tosa.const"() <{value = dense<1.0> : tensor<2x3xf32>}> {tpu.name = "w"} : () -> tensor<2x3xf32>
  %a = tosa.add %x, %w : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = tosa.clamp %a {max_fp = 3.40282347E+38 : f32, max_int = 9223372036854775807 : i64, min_fp = 0.000000e+00 : f32, min_int = -9223372036854775808 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %y = tosa.clamp %r {max_fp = 6.0 : f32, max_int = 6 : i64, min_fp = -1.0 : f32, min_int = -1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// sigmoid dy y (1 - y), tanh dy (1 - y^2), reciprocal -dy y^2, log dy / x,
// exp dy y.
// CHECK-LABEL: func.func @main
// CHECK: %[[E:.*]] = tosa.exp %arg2
// CHECK: %[[L:.*]] = tosa.log %[[E]]
// CHECK: %[[R:.*]] = tosa.reciprocal %[[L]]
// CHECK: %[[T:.*]] = tosa.tanh %[[R]]
// CHECK: %[[S:.*]] = tosa.sigmoid %[[T]]
// CHECK: %[[DY:.*]] = tosa.mul %{{.*}}, %{{.*}} {shift = 0 : i8} : (tensor<2x3xf32>, tensor<1x1xf32>)
// CHECK: %[[ONE:.*]] = "tosa.const"() <{value = dense<1.000000e+00> : tensor<1x1xf32>}>
// CHECK: %[[S1:.*]] = tosa.sub %[[ONE]], %[[S]]
// CHECK: %[[S2:.*]] = tosa.mul %[[S]], %[[S1]]
// CHECK: %[[DT:.*]] = tosa.mul %[[DY]], %[[S2]]
// CHECK: %[[TT:.*]] = tosa.mul %[[T]], %[[T]]
// CHECK: %[[ONE2:.*]] = "tosa.const"() <{value = dense<1.000000e+00> : tensor<1x1xf32>}>
// CHECK: %[[T1:.*]] = tosa.sub %[[ONE2]], %[[TT]]
// CHECK: %[[DR:.*]] = tosa.mul %[[DT]], %[[T1]]
// CHECK: %[[RR:.*]] = tosa.mul %[[R]], %[[R]]
// CHECK: %[[R1:.*]] = tosa.mul %[[DR]], %[[RR]]
// CHECK: %[[DL:.*]] = tosa.negate %[[R1]]
// CHECK: %[[INV:.*]] = tosa.reciprocal %[[E]]
// CHECK: %[[DE:.*]] = tosa.mul %[[DL]], %[[INV]]
// CHECK: %[[DW:.*]] = tosa.mul %[[DE]], %[[E]]
// CHECK: tosa.mul %[[DW]]
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %w = "tosa.const"() <{value = dense<1.0> : tensor<2x3xf32>}> {tpu.name = "w"} : () -> tensor<2x3xf32>
  %e = tosa.exp %w : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = tosa.log %e : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = tosa.reciprocal %l : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %t = tosa.tanh %r : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = tosa.sigmoid %t : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}

// -----

// reduce_max: dy shared among the tied maxima; reduce_sum: dy tiled over
// the axis; the two gradients of w added.
// CHECK-LABEL: func.func @main
// CHECK: %[[M:.*]] = tosa.reduce_max %arg2 {axis = 1 : i32}
// CHECK: %[[DY:.*]] = tosa.mul %{{.*}}, %{{.*}} {shift = 0 : i8} : (tensor<2x1xf32>, tensor<1x1xf32>)
// CHECK: %[[EQ:.*]] = tosa.equal %arg2, %[[M]] : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xi1>
// CHECK: %[[ISMAX:.*]] = tosa.select %[[EQ]]
// CHECK: %[[TIES:.*]] = tosa.reduce_sum %[[ISMAX]] {axis = 1 : i32}
// CHECK: %[[INV:.*]] = tosa.reciprocal %[[TIES]]
// CHECK: %[[SHARE:.*]] = tosa.mul %[[DY]], %[[INV]]
// CHECK: %[[DMAX:.*]] = tosa.mul %[[ISMAX]], %[[SHARE]] {shift = 0 : i8} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
// CHECK: %[[DSUM:.*]] = tosa.tile %[[DY]] {multiples = array<i64: 1, 3>} : (tensor<2x1xf32>) -> tensor<2x3xf32>
// CHECK: %[[DW:.*]] = tosa.add %[[DMAX]], %[[DSUM]]
// CHECK: tosa.mul %[[DW]]
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %w = "tosa.const"() <{value = dense<1.0> : tensor<2x3xf32>}> {tpu.name = "w"} : () -> tensor<2x3xf32>
  %s = tosa.reduce_sum %w {axis = 1 : i32} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %m = tosa.reduce_max %w {axis = 1 : i32} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %y = tosa.add %s, %m : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  return %y : tensor<2x1xf32>
}

// -----

// cast between float types casts dy back; abs dy sign(x) (+1 at 0);
// rsqrt -dy y^3 / 2; erf dy 2 / sqrt(pi) exp(-x^2).
// CHECK-LABEL: func.func @main
// CHECK: %[[E:.*]] = tosa.erf %arg2
// CHECK: %[[R:.*]] = tosa.rsqrt %[[E]]
// CHECK: %[[A:.*]] = tosa.abs %[[R]]
// CHECK: %[[DY:.*]] = tosa.mul %{{.*}}, %{{.*}} {shift = 0 : i8} : (tensor<2x3xf32>, tensor<1x1xf32>)
// CHECK: %[[DH:.*]] = tosa.cast %[[DY]] : (tensor<2x3xf32>) -> tensor<2x3xbf16>
// CHECK: %[[DA:.*]] = tosa.cast %[[DH]] : (tensor<2x3xbf16>) -> tensor<2x3xf32>
// CHECK: %[[NEG:.*]] = tosa.negate %[[DA]]
// CHECK: %[[ZERO:.*]] = "tosa.const"() <{value = dense<0.000000e+00> : tensor<1x1xf32>}>
// CHECK: %[[POS:.*]] = tosa.greater_equal %[[R]], %[[ZERO]]
// CHECK: %[[DR:.*]] = tosa.select %[[POS]], %[[DA]], %[[NEG]]
// CHECK: %[[R2:.*]] = tosa.mul %[[R]], %[[R]]
// CHECK: %[[R3:.*]] = tosa.mul %[[R]], %[[R2]]
// CHECK: %[[HALF:.*]] = "tosa.const"() <{value = dense<-5.000000e-01> : tensor<1x1xf32>}>
// CHECK: %[[SLOPE:.*]] = tosa.mul %[[HALF]], %[[R3]]
// CHECK: %[[DE:.*]] = tosa.mul %[[DR]], %[[SLOPE]]
// CHECK: %[[SQ:.*]] = tosa.mul %arg2, %arg2
// CHECK: %[[NSQ:.*]] = tosa.negate %[[SQ]]
// CHECK: %[[G:.*]] = tosa.exp %[[NSQ]]
// CHECK: %[[C:.*]] = "tosa.const"() <{value = dense<1.12837923> : tensor<1x1xf32>}>
// CHECK: %[[GC:.*]] = tosa.mul %[[G]], %[[C]]
// CHECK: %[[DW:.*]] = tosa.mul %[[DE]], %[[GC]]
// CHECK: tosa.mul %[[DW]]
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %w = "tosa.const"() <{value = dense<1.0> : tensor<2x3xf32>}> {tpu.name = "w"} : () -> tensor<2x3xf32>
  %e = tosa.erf %w : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = tosa.rsqrt %e : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %a = tosa.abs %r : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %h = tosa.cast %a : (tensor<2x3xf32>) -> tensor<2x3xbf16>
  %f = tosa.cast %h : (tensor<2x3xbf16>) -> tensor<2x3xf32>
  return %f : tensor<2x3xf32>
}

// -----

// reduce_min: dy shared among the tied minima; select: dy where the
// condition picked the operand; minimum(m, x): m's where m <= x;
// maximum(x, w): w's where not x >= w (the first operand wins ties),
// summed over w's broadcast axis.
// CHECK-LABEL: func.func @main
// CHECK: %[[M:.*]] = tosa.maximum %arg0, %arg3
// CHECK: %[[N:.*]] = tosa.minimum %[[M]], %arg0
// CHECK: %[[S:.*]] = tosa.select %arg1, %[[N]], %arg0
// CHECK: %[[Y:.*]] = tosa.reduce_min %[[S]] {axis = 1 : i32}
// CHECK: %[[DY:.*]] = tosa.mul %{{.*}}, %{{.*}} {shift = 0 : i8} : (tensor<2x1xf32>, tensor<1x1xf32>)
// CHECK: %[[EQ:.*]] = tosa.equal %[[S]], %[[Y]]
// CHECK: %[[IS:.*]] = tosa.select %[[EQ]]
// CHECK: %[[TIES:.*]] = tosa.reduce_sum %[[IS]] {axis = 1 : i32}
// CHECK: %[[INV:.*]] = tosa.reciprocal %[[TIES]]
// CHECK: %[[SHARE:.*]] = tosa.mul %[[DY]], %[[INV]]
// CHECK: %[[DS:.*]] = tosa.mul %[[IS]], %[[SHARE]]
// CHECK: %[[DN:.*]] = tosa.select %arg1, %[[DS]], %{{.*}} : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<1x1xf32>)
// CHECK: %[[MWINS:.*]] = tosa.greater_equal %arg0, %[[M]]
// CHECK: %[[DM:.*]] = tosa.select %[[MWINS]], %[[DN]], %{{.*}}
// CHECK: %[[XWINS:.*]] = tosa.greater_equal %arg0, %arg3 : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xi1>
// CHECK: %[[DWFULL:.*]] = tosa.select %[[XWINS]], %{{.*}}, %[[DM]] : (tensor<2x3xi1>, tensor<1x1xf32>, tensor<2x3xf32>)
// CHECK: %[[DW:.*]] = tosa.reduce_sum %[[DWFULL]] {axis = 0 : i32} : (tensor<2x3xf32>) -> tensor<1x3xf32>
// CHECK: tosa.mul %[[DW]]
func.func @main(%x: tensor<2x3xf32>, %c: tensor<2x3xi1>) -> tensor<2x1xf32> {
  %w = "tosa.const"() <{value = dense<1.0> : tensor<1x3xf32>}> {tpu.name = "w"} : () -> tensor<1x3xf32>
  %m = tosa.maximum %x, %w : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %n = tosa.minimum %m, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = tosa.select %c, %n, %x : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %y = tosa.reduce_min %s {axis = 1 : i32} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %y : tensor<2x1xf32>
}

// -----

// pow a^b: da = dy b a^(b - 1), db = dy y log(a) summed over b's broadcast
// axis.
// CHECK-LABEL: func.func @main
// CHECK: %[[Y:.*]] = tosa.pow %arg2, %arg3
// CHECK: %[[DY:.*]] = tosa.mul %{{.*}}, %{{.*}} {shift = 0 : i8} : (tensor<2x3xf32>, tensor<1x1xf32>)
// CHECK: %[[ONE:.*]] = "tosa.const"() <{value = dense<1.000000e+00> : tensor<1x1xf32>}>
// CHECK: %[[B1:.*]] = tosa.sub %arg3, %[[ONE]]
// CHECK: %[[P:.*]] = tosa.pow %arg2, %[[B1]] : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[BP:.*]] = tosa.mul %arg3, %[[P]]
// CHECK: %[[DA:.*]] = tosa.mul %[[DY]], %[[BP]]
// CHECK: %[[LOG:.*]] = tosa.log %arg2
// CHECK: %[[YL:.*]] = tosa.mul %[[Y]], %[[LOG]]
// CHECK: %[[DBFULL:.*]] = tosa.mul %[[DY]], %[[YL]]
// CHECK: %[[DB:.*]] = tosa.reduce_sum %[[DBFULL]] {axis = 0 : i32} : (tensor<2x3xf32>) -> tensor<1x3xf32>
// CHECK: tosa.mul %[[DA]]
// CHECK: tosa.mul %[[DB]]
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %w = "tosa.const"() <{value = dense<1.0> : tensor<2x3xf32>}> {tpu.name = "w"} : () -> tensor<2x3xf32>
  %p = "tosa.const"() <{value = dense<2.0> : tensor<1x3xf32>}> {tpu.name = "p"} : () -> tensor<1x3xf32>
  %y = tosa.pow %w, %p : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
