// RUN: tpu-opt %s --tpu-assign-target="config=tpu-8x8" --tpu-plan-memory | FileCheck %s
// RUN: tpu-opt %s --tpu-assign-target="config=tpu-8x8" --tpu-plan-memory="dram-dtype=f32" | FileCheck %s --check-prefix=F32
// RUN: tpu-opt %s --tpu-plan-memory | FileCheck %s --check-prefix=F32
// RUN: not tpu-opt %s --tpu-assign-target="config=tpu-8x8" --tpu-plan-memory="dram-dtype=f16" 2>&1 | FileCheck %s --check-prefix=BAD

// On a bf16 array, what only matrix products read is stored as bf16, at
// two bytes an element: the weights %w (8x16: 256 bytes, so %b follows at
// 0x100, where fp32 would put it at 0x200) and %w2 (through a view), and
// the ReLU's result, which only the second product reads (128 bytes at 704,
// in the first product's freed 256, so the transpose fits in the other
// half, at 832). The bias (read by the vector unit), the first product's
// result (read by the ReLU), the transpose's (the data movement writes
// fp32), the input and the outputs stay fp32.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%arg0: tensor<4x8xf32> {tpu.dram_address = 576 : i64
// CHECK-SAME: tpu.dram_bytes = 1216 : i64
// CHECK-NEXT: tpu.dram_constant 0x0 {{.*}} : tensor<8x16xf32> {tpu.dram_dtype = "bf16"}
// CHECK-NEXT: tpu.dram_constant 0x100 {{.*}} : tensor<1x16xf32>{{$}}
// CHECK-NEXT: tpu.dram_constant 0x140 {{.*}} : tensor<16x8xf32> {tpu.dram_dtype = "bf16"}
// CHECK-NEXT: tpu.view
// CHECK-NEXT: tpu.matmul {{.*}} {tpu.dram_address = 704 : i64}
// CHECK-NEXT: tpu.binary add {{.*}} {tpu.dram_address = 960 : i64}
// CHECK-NEXT: tpu.unary relu {{.*}} {tpu.dram_address = 704 : i64, tpu.dram_dtype = "bf16"}
// CHECK-NEXT: tpu.transpose {{.*}} {perms = array<i64: 1, 0>, tpu.dram_address = 832 : i64}
// CHECK-NEXT: tpu.matmul {{.*}} {tpu.dram_address = 960 : i64}
// CHECK-NEXT: tpu.matmul {{.*}} {tpu.dram_address = 1088 : i64}
// F32-LABEL: func.func @mlp
// F32-NOT: bf16
// F32: return
// BAD: dram-dtype must be array or f32, got 'f16'
func.func @mlp(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x4xf32>) {
  %w = arith.constant dense<0.5> : tensor<8x16xf32>
  %b = arith.constant dense<1.0> : tensor<1x16xf32>
  %w2 = arith.constant dense<0.25> : tensor<16x8xf32>
  %w2v = tpu.view %w2 : tensor<16x8xf32> -> tensor<16x8xf32>
  %h = tpu.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %hb = tpu.binary add %h, %b : tensor<4x16xf32>, tensor<1x16xf32> -> tensor<4x16xf32>
  %r = tpu.unary relu %hb : tensor<4x16xf32>
  %t = tpu.transpose %x {perms = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<8x4xf32>
  %y = tpu.matmul %r, %w2v : tensor<4x16xf32>, tensor<16x8xf32> -> tensor<4x8xf32>
  %z = tpu.matmul %x, %t : tensor<4x8xf32>, tensor<8x4xf32> -> tensor<4x4xf32>
  return %y, %z : tensor<4x8xf32>, tensor<4x4xf32>
}
