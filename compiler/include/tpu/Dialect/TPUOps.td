//===- TPUOps.td - the TPU hardware-level dialect -------------*- tablegen -*-===//
//
// Operations the accelerator executes natively, on 2-D row-major fp32 tensors:
// a matrix-unit matmul and vector-unit row operations. The graph level (TOSA)
// lowers into these; the target's plans tile them onto the array and the
// memories of a hardware config, and its lowering passes write instructions.
//
//===----------------------------------------------------------------------===//

#ifndef TPU_OPS
#define TPU_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"
include "tpu/Dialect/TPUAttrs.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class TPU_Op<string mnemonic, list<Trait> traits = []>
    : Op<TPU_Dialect, mnemonic, traits>;

def TPU_FusedOp : TPU_Op<"fused", [RecursiveMemoryEffects, SingleBlock]> {
  let summary = "A fusion group: operations that run together, intermediates on chip";
  let description = [{
    Formed on the target-neutral graph by `tpu-fuse`, with the module's
    target deciding what may join; each target then lowers the region as one
    piece (the systolic array: a matmul with its epilogue in the
    accumulators, a pool or depthwise convolution with its epilogue on its
    output bands in the scratchpad, or row-local ops on tiles of whole rows
    in the scratchpad). The region reads values from above; only what `tpu.yield`
    returns leaves it.

    ```mlir
    %y = tpu.fused -> tensor<8x100xf32> {
      %m = tosa.matmul %x, %w : (tensor<1x8x64xf32>, tensor<1x64x100xf32>) -> tensor<1x8x100xf32>
      %b = tosa.add %m, %bias : (tensor<1x8x100xf32>, tensor<1x1x100xf32>) -> tensor<1x8x100xf32>
      tpu.yield %b : tensor<1x8x100xf32>
    }
    ```
  }];
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict-with-keyword `->` type($results) $body";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    // The group's operations in order, the terminator left out.
    auto getMembers() { return getBody().front().without_terminator(); }
    // The group's first operation: a matmul heads an epilogue.
    ::mlir::Operation &getHead() { return getBody().front().front(); }
    // Whether the head produces output tiles (a matmul, a window
    // reduction) that the other members apply to in place, its epilogue;
    // else the members are row-local ops on tiles of whole rows.
    bool hasEpilogue();
  }];
}

def TPU_YieldOp : TPU_Op<"yield", [Pure, Terminator, HasParent<"FusedOp">]> {
  let summary = "The values that leave a fusion group";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

def TPU_Matrix : 2DTensorOf<[F32]>;

def TPU_MatMulOp : TPU_Op<"matmul", [Pure]> {
  let summary = "Matrix product on the matrix unit";
  let description = [{
    `result = lhs * rhs` for `lhs: MxK` and `rhs: KxN`. The multiplies take
    their operands in the array's type (bf16 rounded to nearest even, or
    int8) and accumulate in fp32 (int32).

    ```mlir
    %y = tpu.matmul %x, %w : tensor<8x64xf32>, tensor<64x100xf32> -> tensor<8x100xf32>
    ```
  }];
  let arguments = (ins TPU_Matrix:$lhs, TPU_Matrix:$rhs);
  let results = (outs TPU_Matrix:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TPU_Batch : 3DTensorOf<[F32]>;

def TPU_BatchMatMulOp : TPU_Op<"batch_matmul", [Pure]> {
  let summary = "Independent matrix products on the matrix unit, one per batch";
  let description = [{
    `result[b] = lhs[b] * rhs[b]` for `lhs: BxMxK` and `rhs: BxKxN`, each
    batch a `tpu.matmul` on the batch's rows of the row-major tensors (no
    data moves between batches). Where `tpu-plan-tiles` packs batches side
    by side on the array (`packed` in the plan), `fill` is a row of zeros
    the block-diagonal weight panel's other words are read from.

    ```mlir
    %y = tpu.batch_matmul %q, %k : tensor<4x32x16xf32>, tensor<4x16x32xf32> -> tensor<4x32x32xf32>
    ```
  }];
  let arguments = (ins TPU_Batch:$lhs, TPU_Batch:$rhs, Optional<TPU_Matrix>:$fill);
  let results = (outs TPU_Batch:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`,` $fill^)? attr-dict `:` type($lhs) `,` type($rhs) (`,` type($fill)^)?
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def TPU_BinaryKind : I32EnumAttr<"BinaryKind", "vector-unit binary operation", [
  I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"sub", 1>, I32EnumAttrCase<"mul", 2>,
  I32EnumAttrCase<"max", 3>, I32EnumAttrCase<"min", 4>, I32EnumAttrCase<"gt", 5>,
  I32EnumAttrCase<"ge", 6>, I32EnumAttrCase<"eq", 7>]> {
  let cppNamespace = "::mlir::tpu";
}

def TPU_BinaryOp : TPU_Op<"binary", [Pure]> {
  let summary = "Elementwise binary operation on the vector unit";
  let description = [{
    `result = lhs <kind> rhs`, where `rhs` has the shape of `lhs` (MxN), is
    one row (1xN) reused for every row, is one element (1x1), or is one
    column (Mx1) whose element r is used across row r: the vector unit's
    `broadcast=none`, `row`, `scalar` or `column`.

    ```mlir
    %y = tpu.binary add %x, %bias : tensor<8x100xf32>, tensor<1x100xf32> -> tensor<8x100xf32>
    ```
  }];
  let arguments = (ins TPU_BinaryKind:$kind, TPU_Matrix:$lhs, TPU_Matrix:$rhs);
  let results = (outs TPU_Matrix:$result);
  let assemblyFormat = [{
    $kind $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TPU_UnaryKind : I32EnumAttr<"UnaryKind", "vector-unit unary operation", [
  I32EnumAttrCase<"relu", 0>, I32EnumAttrCase<"exp", 1>, I32EnumAttrCase<"reciprocal", 2>,
  I32EnumAttrCase<"rsqrt", 3>, I32EnumAttrCase<"copy", 4>, I32EnumAttrCase<"sigmoid", 5>,
  I32EnumAttrCase<"tanh", 6>, I32EnumAttrCase<"log", 7>]> {
  let cppNamespace = "::mlir::tpu";
}

def TPU_UnaryOp : TPU_Op<"unary", [Pure, SameOperandsAndResultType]> {
  let summary = "Elementwise unary operation on the vector unit";
  let description = [{
    ```mlir
    %y = tpu.unary relu %x : tensor<8x100xf32>
    ```
  }];
  let arguments = (ins TPU_UnaryKind:$kind, TPU_Matrix:$input);
  let results = (outs TPU_Matrix:$result);
  let assemblyFormat = "$kind $input attr-dict `:` type($input)";
}

def TPU_ToIntOp : TPU_Op<"to_int", [Pure]> {
  let summary = "Convert fp32 elements to int32 words on the vector unit";
  let description = [{
    `result = input` rounded to nearest even and saturated to int32
    (`v.cvt.f2i`): how integer results (ArgMax's indices), computed in fp32
    where they are exact, become the int32 words the program stores.

    ```mlir
    %i = tpu.to_int %x : tensor<8x1xf32> -> tensor<8x1xi32>
    ```
  }];
  let arguments = (ins TPU_Matrix:$input);
  let results = (outs 2DTensorOf<[I32]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def TPU_ToFloatOp : TPU_Op<"to_float", [Pure]> {
  let summary = "Convert int32 words to fp32 elements on the vector unit";
  let description = [{
    `result = input` as fp32 (`v.cvt.i2f`, exact below 2^24): how integer
    graph inputs that are int32 words in DRAM (a Gather's indices) reach
    the fp32 computation a training step does with them (the one-hot
    compare of the Gather's gradient).

    ```mlir
    %x = tpu.to_float %i : tensor<1x3xi32> -> tensor<1x3xf32>
    ```
  }];
  let arguments = (ins 2DTensorOf<[I32]>:$input);
  let results = (outs TPU_Matrix:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def TPU_ReduceKind : I32EnumAttr<"ReduceKind", "vector-unit row reduction", [
  I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"max", 1>]> {
  let cppNamespace = "::mlir::tpu";
}

def TPU_RowReduceOp : TPU_Op<"row_reduce", [Pure]> {
  let summary = "Sum or maximum of each row on the vector unit";
  let description = [{
    `result[r][0] = input[r][0] <kind> ... <kind> input[r][N-1]`, summed in
    column order (`v.rowsum`, `v.rowmax`).

    ```mlir
    %s = tpu.row_reduce sum %x : tensor<8x40xf32> -> tensor<8x1xf32>
    ```
  }];
  let arguments = (ins TPU_ReduceKind:$kind, TPU_Matrix:$input);
  let results = (outs TPU_Matrix:$result);
  let assemblyFormat = "$kind $input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def TPU_ClampOp : TPU_Op<"clamp", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Clamp every element into [lo, hi] on the vector unit";
  let description = [{
    `result = min(max(input, bounds[0]), bounds[1])`: the vector unit reads
    the bounds from memory (`v.clamp`'s second source), so they are an
    operand, a 1x2 constant.

    ```mlir
    %b = arith.constant dense<[[0.0, 6.0]]> : tensor<1x2xf32>
    %y = tpu.clamp %x, %b : tensor<8x100xf32>, tensor<1x2xf32>
    ```
  }];
  let arguments = (ins TPU_Matrix:$input, TPU_Matrix:$bounds);
  let results = (outs TPU_Matrix:$result);
  let assemblyFormat = "$input `,` $bounds attr-dict `:` type($input) `,` type($bounds)";
  let builders = [OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$bounds), [{
    build($_builder, $_state, input.getType(), input, bounds);
  }]>];
  let hasVerifier = 1;
}

def TPU_TransposeOp : TPU_Op<"transpose", [Pure]> {
  let summary = "Permute the axes of a tensor with strided DMA copies";
  let description = [{
    `result[i_0, ..., i_n] = input[j]` with `j[perms[d]] = i_d`, as TOSA's
    transpose. The DMA moves rows of contiguous elements, so the lowering
    copies runs along the axis that is contiguous on one side and strided
    (one element per DMA row) on the other; axes that stay together move as
    whole blocks.

    ```mlir
    %t = tpu.transpose %x {perms = array<i64: 0, 2, 1, 3>} : tensor<1x32x4x16xf32> -> tensor<1x4x32x16xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$input, DenseI64ArrayAttr:$perms);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def TPU_Im2ColOp : TPU_Op<"im2col", [Pure]> {
  let summary = "Gather the convolution windows of an NHWC tensor into rows";
  let description = [{
    For an `N x H x W x C` input and a `KH x KW` window with `stride`,
    `dilation` and `pad` (top, bottom, left, right), row `(n, oh, ow)` of the
    `[N*OH*OW, KH*KW*C]` result holds the window's elements in `(kh, kw, c)`
    order: `input[n, oh*sh + kh*dh - top, ow*sw + kw*dw - left, c]`, or
    the padding value where that falls in the padding: `fill`, a row of that
    value (as long as a DMA row, up to KH*C: a band that stacks kernel rows
    takes KH of one channel), which the DMA engine stores into the padding;
    without padding there is none, unless tpu-plan-tiles adds a row of
    zeros for a band of stacked rows whose weight tile needs zeros. A
    convolution is then
    a matmul with the `[KH*KW*C, O]` weights. When tpu-plan-tiles plans
    every matmul reading it as a `#tpu.conv_tiling`, those read the input
    on chip and the im2col writes nothing (and has no DRAM place);
    otherwise the lowering writes it with strided DMA copies, one block of
    output-row runs per (kh, kw, n, oh) span.

    ```mlir
    %zeros = arith.constant dense<0.0> : tensor<1x4xf32>
    %x = tpu.im2col %in, %zeros {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>,
                                 dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>}
        : tensor<1x8x8x4xf32>, tensor<1x4xf32> -> tensor<64x36xf32>
    ```
  }];
  let arguments = (ins 4DTensorOf<[F32]>:$input, Optional<TPU_Matrix>:$fill,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$stride,
                       DenseI64ArrayAttr:$dilation, DenseI64ArrayAttr:$pad);
  let results = (outs TPU_Matrix:$result);
  let assemblyFormat = [{
    $input (`,` $fill^)? attr-dict `:` type($input) (`,` type($fill)^)? `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    // Output rows and columns of the convolution (0 when the window does
    // not fit the padded input).
    int64_t getOutputHeight();
    int64_t getOutputWidth();
  }];
}

def TPU_WindowReduceOp : TPU_Op<"window_reduce", [Pure, AttrSizedOperandSegments]> {
  let summary = "Pool or depthwise convolution over an NHWC input held on chip";
  let description = [{
    For an `N x H x W x C` input and a `KH x KW` window with `stride`,
    `dilation` and `pad` (top, bottom, left, right), row `(n, oh, ow)` of
    the `[N*OH*OW, C]` result combines the window's taps
    `input[n, oh*sh + kh*dh - top, ow*sw + kw*dw - left, :]` by `kind`:
    their maximum, or their sum; with `weights` (`[KH*KW, C]`, row `tap`
    the tap's per-channel weights) the sum of each tap times its weights,
    then `bias` (`[1, C]`, or `[1, 1]` for all channels) is added (a
    depthwise convolution); with `scale` the sum is multiplied by it, one
    value for all (`[1, 1]`) or per output position and channel
    (`[OH*OW, C]`, the same for each image: an average's reciprocal
    counts). Padding positions hold the value of `fill` (`[1, C]`), which
    the DMA engine stores there; without padding there is no `fill`. The
    lowering loads the input rows of each band of output rows into the
    scratchpad once, split by column phase for a strided window, and runs
    every tap on the vector unit (`#tpu.window_tiling`).

    ```mlir
    %lowest = arith.constant dense<-3.4e38> : tensor<1x4xf32>
    %y = tpu.window_reduce max %in fill %lowest : tensor<1x4xf32>
           {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>,
            dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>}
           : tensor<1x8x8x4xf32> -> tensor<16x4xf32>
    ```
  }];
  let arguments = (ins TPU_ReduceKind:$kind, 4DTensorOf<[F32]>:$input,
                       Optional<TPU_Matrix>:$fill, Optional<TPU_Matrix>:$weights,
                       Optional<TPU_Matrix>:$bias, Optional<TPU_Matrix>:$scale,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$stride,
                       DenseI64ArrayAttr:$dilation, DenseI64ArrayAttr:$pad);
  let results = (outs TPU_Matrix:$result);
  let assemblyFormat = [{
    $kind $input (`fill` $fill^ `:` type($fill))? (`weights` $weights^ `:` type($weights))?
    (`bias` $bias^ `:` type($bias))? (`scale` $scale^ `:` type($scale))? attr-dict
    `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    // Output rows and columns of the window (0 when it does not fit the
    // padded input).
    int64_t getOutputHeight();
    int64_t getOutputWidth();
  }];
}

def TPU_SliceOp : TPU_Op<"slice", [Pure]> {
  let summary = "Copy a box of a tensor with strided DMA transfers";
  let description = [{
    `result[i] = input[start + i]` for every index `i` of the result's shape.

    ```mlir
    %t = tpu.slice %x {start = array<i64: 0, 8>} : tensor<64x36xf32> -> tensor<64x4xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$input, DenseI64ArrayAttr:$start);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def TPU_ConcatOp : TPU_Op<"concat", [Pure]> {
  let summary = "Join tensors along an axis with strided DMA copies";
  let description = [{
    ```mlir
    %c = tpu.concat %a, %b {axis = 3 : i64} : tensor<1x4x4x8xf32>, tensor<1x4x4x2xf32> -> tensor<1x4x4x10xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyStaticShapeTensor>:$inputs, I64Attr:$axis);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs) `->` type($result)";
  let hasVerifier = 1;
}

def TPU_PadOp : TPU_Op<"pad", [Pure]> {
  let summary = "Surround a tensor with a constant value";
  let description = [{
    `result` has `low[d] + input[d] + high[d]` elements on axis `d`: the
    padding value everywhere except the box at `low`, which holds the input.
    `fill` is a row of the padding value (as long as a DMA row, up to the
    last axis): the lowering stores it from the scratchpad (`sram_stride=0`),
    then copies the input into the box.

    ```mlir
    %zeros = arith.constant dense<0.0> : tensor<1x2xf32>
    %p = tpu.pad %x, %zeros {low = array<i64: 0, 1, 1, 0>, high = array<i64: 0, 1, 1, 0>}
        : tensor<1x4x4x2xf32>, tensor<1x2xf32> -> tensor<1x6x6x2xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$input, TPU_Matrix:$fill, DenseI64ArrayAttr:$low,
                       DenseI64ArrayAttr:$high);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $input `,` $fill attr-dict `:` type($input) `,` type($fill) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TPU_GatherOp : TPU_Op<"gather", [Pure]> {
  let summary = "Rows of tables picked by run-time indices, with dma.gather";
  let description = [{
    `result[n, w, c] = values[n, k, c]` with `k = indices[i, w]` (`i = n`,
    or 0 when `indices` has one row for every table), counted from the end
    when negative as numpy does: `k + K` for `k < 0`. An index outside
    `[-K, K)` stops the program. `dma.gather` reads the indices from the
    scratchpad, one DRAM request per row. An embedding lookup is one table
    (`N = 1`).

    ```mlir
    %e = tpu.gather %table, %ids : tensor<1x1000x64xf32>, tensor<1x6xi32> -> tensor<1x6x64xf32>
    ```
  }];
  let arguments = (ins 3DTensorOf<[F32]>:$values, 2DTensorOf<[I32]>:$indices);
  let results = (outs 3DTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $values `,` $indices attr-dict `:` type($values) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TPU_ViewOp : TPU_Op<"view", [Pure]> {
  let summary = "Reinterpret a row-major tensor with another shape";
  let description = [{
    Same elements in the same row-major order, so no data moves: the lowering
    gives the result the buffer of the input. Views of views and of
    constants fold away.

    ```mlir
    %m = tpu.view %x : tensor<1x8x64xf32> -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$input);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// The ISA level: instructions and the order between the queues
//===----------------------------------------------------------------------===//

def TPU_Queue : I32EnumAttr<"Queue", "an instruction queue of the accelerator", [
  I32EnumAttrCase<"load", 1>, I32EnumAttrCase<"compute", 2>, I32EnumAttrCase<"store", 3>]> {
  let cppNamespace = "::mlir::tpu";
}

def TPU_Token : TypeDef<TPU_Dialect, "Token"> {
  let mnemonic = "token";
  let summary = "That everything one queue issued up to a point has completed";
}

def TPU_InstOp : TPU_Op<"inst"> {
  let summary = "One instruction of the accelerator's ISA";
  let description = [{
    Written as the ISA's assembly (docs/isa.md), checked against the opcode
    table: the program is these operations in block order, each on its
    opcode's queue. The lowering of the hardware dialect writes them; the
    encoder turns them into the bundle one to one. The location names the
    graph operation the instruction came from.

    ```mlir
    tpu.inst dma.ld dram_addr=0x1000 dram_stride=64 space=sp sram_addr=0 sram_stride=64 rows=8 cols=64 dtype=f32
    tpu.inst mxu.mm src_addr=0 src_stride=64 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
    ```
  }];
  let arguments = (ins StrAttr:$mnemonic, DenseI64ArrayAttr:$fields);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def TPU_SignalOp : TPU_Op<"signal"> {
  let summary = "A token: everything `from` has issued so far has completed";
  let description = [{
    Before token scheduling (`tpu-schedule-tokens`) becomes a
    `sync.push from to` on `from`'s queue. `tpu.await` of the token makes
    the `to` queue wait for it. With `weights` (from the compute queue
    only), the token says only that the weight loads (`mxu.ldw`) issued so
    far have completed: a weight panel's buffer is free once its tiles are
    in the array, while the array still multiplies (`sync.push weights=1`
    does not drain it).

    ```mlir
    %filled = tpu.signal load -> compute
    tpu.await %filled
    %panelFree = tpu.signal compute -> load weights
    ```
  }];
  let arguments = (ins TPU_Queue:$from, TPU_Queue:$to, UnitAttr:$weights);
  let results = (outs TPU_Token:$token);
  let assemblyFormat = "$from `->` $to (`weights` $weights^)? attr-dict";
  let hasVerifier = 1;
}

def TPU_AwaitOp : TPU_Op<"await"> {
  let summary = "What the token's `to` queue issues from here waits for the token";
  let arguments = (ins TPU_Token:$token);
  let assemblyFormat = "$token attr-dict";
}

def TPU_DependOp : TPU_Op<"depend"> {
  let summary = "What `to` issues from here waits for everything `from` issued so far";
  let description = [{
    A `tpu.signal` and its `tpu.await` at once, which token scheduling
    leaves out when `from` has issued nothing since its last token to `to`.

    ```mlir
    tpu.depend store -> load
    ```
  }];
  let arguments = (ins TPU_Queue:$from, TPU_Queue:$to);
  let assemblyFormat = "$from `->` $to attr-dict";
  let hasVerifier = 1;
}

def TPU_DramConstantOp : TPU_Op<"dram_constant", [MemoryEffects<[MemWrite]>]> {
  let summary = "A constant the bundle puts in DRAM before the program runs";
  let description = [{
    What a constant becomes at the ISA level: part of the bundle's constant
    segment, at byte `address`. The program reads it by address, so it is
    kept whether or not anything uses its value.

    ```mlir
    %w = tpu.dram_constant 0x1000 dense<1.0> : tensor<1x4xf32>
    ```
  }];
  let arguments = (ins I64Attr:$address, ElementsAttr:$value);
  let results = (outs AnyStaticShapeTensor:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def TPU_StoredOp : TPU_Op<"stored", [Pure]> {
  let summary = "A tensor the program has stored in DRAM";
  let description = [{
    What a lowered operation's result becomes: the tensor at byte `address`
    in DRAM, written by the instructions before it from `inputs`, the
    tensors those instructions read. The instructions address memory, so
    the inputs keep the dataflow in the IR: a tensor some instructions read
    stays until the operation that computes it is lowered too.

    ```mlir
    %y = tpu.stored 0x7dc0 from %x, %bounds : tensor<8x100xf32>, tensor<1x2xf32> -> tensor<8x100xf32>
    ```
  }];
  let arguments = (ins I64Attr:$address, Variadic<AnyType>:$inputs);
  let results = (outs AnyStaticShapeTensor:$result);
  let hasCustomAssemblyFormat = 1;
}

#endif // TPU_OPS
