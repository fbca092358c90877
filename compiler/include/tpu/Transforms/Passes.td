//===- Passes.td - TPU compiler passes ------------------------*- tablegen -*-===//

#ifndef TPU_PASSES
#define TPU_PASSES

include "mlir/Pass/PassBase.td"

def VerifyShapes : Pass<"tpu-verify-shapes", "mlir::func::FuncOp"> {
  let summary = "Check that every tensor has a static shape its producer agrees with";
  let description = [{
    The compiler plans memory from shapes, so it requires every tensor in the
    function to be ranked with static dimensions, and every operation that
    can infer its result shapes (the TOSA operations do) to declare exactly
    the shapes its operands give. The ONNX importer computes shapes from the
    operator semantics, so its output always passes; the pass guards
    hand-written or exported TOSA (`tpuc model.mlir`), where an op verifier
    accepts merely compatible shapes. It changes nothing; a violation is an
    error on the operation.

    Rejected:
    ```mlir
    // error: 'tosa.matmul' op result 0 is declared tensor<1x4x5xf32> but its operands give 1x4x6
    %m = tosa.matmul %a, %b : (tensor<1x4x8xf32>, tensor<1x8x6xf32>) -> tensor<1x4x5xf32>
    ```
  }];
}

def FoldBatchNorm : Pass<"tpu-fold-batchnorm", "mlir::func::FuncOp"> {
  let summary = "Fold per-channel scale and shift into the preceding layer's weights";
  let description = [{
    The ONNX importer writes BatchNormalization as `tosa.mul` by a constant
    per-channel scale, then `tosa.add` of a constant per-channel shift
    (broadcast over the last axis, NHWC's channels). When the multiplied
    value comes from a `tosa.conv2d`, `tosa.depthwise_conv2d`,
    `tosa.fully_connected` or `tosa.matmul` with constant weights (and
    bias) that nothing else reads, the scale goes into the weights of each
    output channel and into the bias, and the shift into the bias; the mul
    and add disappear. `tosa.matmul` has no bias, so only its scale folds.
    Not folded: non-constant weights or bias, a layer result with other
    users, a constant that is not one value per output channel (or one
    value for all). Target-neutral: TOSA in, TOSA out. It runs after
    `tosa-layerwise-constant-fold`, which computes the importer's weight
    transposes into constants.

    Before:
    ```mlir
    %c = tosa.conv2d %x, %w, %b {...} : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x8x8x4xf32>
    %m = tosa.mul %c, %scale {shift = 0 : i8} : (tensor<1x8x8x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x8x8x4xf32>
    %y = tosa.add %m, %shift : (tensor<1x8x8x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x8x8x4xf32>
    ```

    After (`%w2[o] = %w[o] * scale[o]`, `%b2[o] = %b[o] * scale[o] + shift[o]`):
    ```mlir
    %y = tosa.conv2d %x, %w2, %b2 {...} : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x8x8x4xf32>
    ```
  }];
}

def FoldConstants : Pass<"tpu-fold-constants", "mlir::func::FuncOp"> {
  let summary = "Evaluate elementwise ops on constants at compile time";
  let description = [{
    An elementwise TOSA op (add, sub, mul, maximum, minimum, pow, negate,
    abs, exp, log, reciprocal, rsqrt, tanh, sigmoid, floor, ceil, clamp)
    whose operands are all f32 constants becomes one constant, computed in
    fp32 on the host with TOSA's broadcasting; maximum, minimum and clamp
    propagate NaN as the vector unit does. Exporters write such subgraphs
    (ONNX Gemm's `beta * C`); left in, each would be a vector op and a DRAM
    round trip, and its result, not being a constant, would stop the
    epilogue fusion that takes a constant bias. A broadcast that makes the
    result larger than its operands together (a row plus a column) is left
    to run, so that the program's constants never grow. Target-neutral:
    TOSA in, TOSA out; it runs after `tosa-layerwise-constant-fold` and,
    with `--train`, after `tpu-autodiff`, so a trained parameter is an
    argument by then, never folded.

    Before:
    ```mlir
    %c = "tosa.const"() <{value = dense<[1.0, -2.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
    %beta = "tosa.const"() <{value = dense<2.0> : tensor<1xf32>}> : () -> tensor<1xf32>
    %bias = tosa.mul %c, %beta {shift = 0 : i8} : (tensor<2xf32>, tensor<1xf32>) -> tensor<2xf32>
    ```

    After:
    ```mlir
    %bias = "tosa.const"() <{value = dense<[2.0, -4.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
    ```
  }];
}

def FoldFlattenTranspose : Pass<"tpu-fold-flatten-transpose", "mlir::func::FuncOp"> {
  let summary = "Fold a layout transpose before a flatten into the constant weights reading it";
  let description = [{
    A model exported from an NCHW framework flattens its last feature map
    in NCHW order before a Gemm (LeNet's `Flatten` -> `fc1`). The compiler
    holds that map NHWC, so the import leaves a transpose to NCHW before the
    flatten, which on the TPU is a copy through DRAM. Where the flattened
    rows feed a batch-1 `tosa.matmul` as its activations and its weights
    are a constant, the transpose only reorders the sum over K: this pass
    reads the rows in the map's own order and permutes the weight rows to
    match (row `j` of the new weights is the row the transposed layout puts
    element `j` of the map at), so the transpose and its copy go. The
    transpose must keep axis 0 (the rows' own axis) in place. A weight
    that is an argument (a trained parameter) is left alone.
    Target-neutral: TOSA in, TOSA out.

    Before (a [1, 2, 2, 3] NHWC map flattened as NCHW):
    ```mlir
    %t = tosa.transpose %x, %perms : (tensor<1x2x2x3xf32>, tensor<4xi32>) -> tensor<1x3x2x2xf32>
    %r = tosa.reshape %t {new_shape = array<i64: 1, 1, 12>} : (tensor<1x3x2x2xf32>) -> tensor<1x1x12xf32>
    %y = tosa.matmul %r, %w : (tensor<1x1x12xf32>, tensor<1x12x4xf32>) -> tensor<1x1x4xf32>
    ```

    After (`%w2` has `%w`'s rows 0, 4, 8, 1, 5, 9, ...: element (h, w, c)
    of the map was element (c, h, w) of the transposed one):
    ```mlir
    %r = tosa.reshape %x {new_shape = array<i64: 1, 1, 12>} : (tensor<1x2x2x3xf32>) -> tensor<1x1x12xf32>
    %y = tosa.matmul %r, %w2 : (tensor<1x1x12xf32>, tensor<1x12x4xf32>) -> tensor<1x1x4xf32>
    ```
  }];
  let statistics = [
    Statistic<"foldedTransposes", "folded-transposes",
              "Transposes folded into constant weights">
  ];
}

def FoldTransposes : Pass<"tpu-fold-transposes", "mlir::func::FuncOp"> {
  let summary = "Cancel the transposes a training step's gradients stack up";
  let description = [{
    Gradients of a Gemm transpose what the forward pass transposed: the
    weight gradient of `y = x W^T` comes out as `(x^T dy)^T` (three
    transposes, each a copy through DRAM on the TPU) and the input gradient
    reads `(W^T)^T`. With matmuls of batch 1 and the reshapes that take
    them between 2-D and 3-D, this pass
      * moves a transpose of a `[1, a, b]` reshape of a 2-D tensor, or of a
        2-D reshape of a `[1, a, b]` tensor, to the other side of the
        reshape, so that transposes meet;
      * rewrites a transposed matmul `(A B)^T` as `B^T A^T` when A or B is
        a transpose itself, so that transposes cancel (fewer of them, never
        more);
      * folds transposes of transposes (upstream's canonicalization).
    tpuc runs it on training steps only. Target-neutral: TOSA in, TOSA out.

    Before (the weight gradient of a Gemm, `h` [8, 100], `dy` [8, 10]):
    ```mlir
    %ht = tosa.transpose %h3, %p021 : (tensor<1x8x100xf32>, tensor<3xi32>) -> tensor<1x100x8xf32>
    %g = tosa.matmul %ht, %dy3 : (tensor<1x100x8xf32>, tensor<1x8x10xf32>) -> tensor<1x100x10xf32>
    %g2 = tosa.reshape %g {new_shape = array<i64: 100, 10>} : (tensor<1x100x10xf32>) -> tensor<100x10xf32>
    %dw = tosa.transpose %g2, %p10 : (tensor<100x10xf32>, tensor<2xi32>) -> tensor<10x100xf32>
    ```

    After:
    ```mlir
    %dyt = tosa.transpose %dy3, %p021 : (tensor<1x8x10xf32>, tensor<3xi32>) -> tensor<1x10x8xf32>
    %g = tosa.matmul %dyt, %h3 : (tensor<1x10x8xf32>, tensor<1x8x100xf32>) -> tensor<1x10x100xf32>
    %dw = tosa.reshape %g {new_shape = array<i64: 10, 100>} : (tensor<1x10x100xf32>) -> tensor<10x100xf32>
    ```
  }];
}

def MatrixBroadcast : Pass<"tpu-matrix-broadcast", "mlir::func::FuncOp"> {
  let summary = "Rewrite elementwise broadcasts as a row, a column or a scalar of a 2-D view";
  let description = [{
    numpy broadcasting lets an operand of an elementwise op repeat over any
    axes: a `[C, 1, 1]` bias over NCHW, `[N, 1, L]` over `[N, C, L]`. Seen as
    2-D, such an operand is neither a row, a column nor one element, which
    is what a vector unit broadcasts. This pass rewrites each elementwise
    binary op whose smaller operand is not already one of those (in the
    `[elements / last, last]` view of the result) as the op on a 2-D view
    where it is: the result's axes are split in two, the operand repeated
    (`tosa.tile`, computed at compile time for a constant) over the axes of
    its side that it does not span, the smaller such copy chosen. When both
    operands broadcast, the first is tiled to the result's shape. Ops
    already in a row, column or scalar form are left alone.
    Target-neutral: TOSA in, TOSA out.

    Before (a per-channel scale of an NCL tensor):
    ```mlir
    %y = tosa.mul %x, %s {shift = 0 : i8} : (tensor<2x3x5xf32>, tensor<1x3x1xf32>) -> tensor<2x3x5xf32>
    ```

    After (the scale tiled over the batch to `[2, 3, 1]`, a column of the
    `[6, 5]` view):
    ```mlir
    %x2 = tosa.reshape %x {new_shape = array<i64: 6, 5>} : (tensor<2x3x5xf32>) -> tensor<6x5xf32>
    %s2 = "tosa.const"() <{value = dense<...> : tensor<6x1xf32>}> : () -> tensor<6x1xf32>
    %m = tosa.mul %x2, %s2 {shift = 0 : i8} : (tensor<6x5xf32>, tensor<6x1xf32>) -> tensor<6x5xf32>
    %y = tosa.reshape %m {new_shape = array<i64: 2, 3, 5>} : (tensor<6x5xf32>) -> tensor<2x3x5xf32>
    ```
  }];
}

def AssignTarget : Pass<"tpu-assign-target", "mlir::ModuleOp"> {
  let summary = "Set the module's target hardware from a preset or a config file";
  let description = [{
    The one place a hardware config is read: sets `tpu.target` on the module
    to the config `config` names, a preset (`tpu-8x8`, `tpu-32x32`,
    `tpu-128x128`) or a JSON file (docs/config.md). Every later pass reads
    the hardware from that attribute. Without `config`, a module that already
    has a target keeps it and any other gets the default preset, `tpu-32x32`.
    A module compiled for one target cannot be given another: that is an
    error.

    After (`config=tpu-8x8`):
    ```mlir
    module attributes {tpu.target = #tpu.target<name = "tpu-8x8", clock_ghz = 1.0,
        array = <rows = 8, cols = 8, dtype = bf16>, ...>} {
    ```
  }];
  let options = [
    Option<"config", "config", "std::string", /*default=*/"\"\"",
           "A preset's name or a config JSON file (default: keep the module's, else tpu-32x32)">,
  ];
  let dependentDialects = ["mlir::tpu::TPUDialect"];
}

def FuseOps : Pass<"tpu-fuse", "mlir::func::FuncOp"> {
  let dependentDialects = ["mlir::tpu::TPUDialect"];
  let summary = "Form fusion groups on the graph as tpu.fused regions, as the target allows";
  let description = [{
    Moves the operations that run together without a round trip through
    memory into one `tpu.fused` region each, on the graph level (TOSA),
    before any target-specific decomposition. The module's target
    (`tpu.target`, FusionTargetInterface) decides what its hardware can run
    together; this pass decides the shape of a group:

    * `mode=epilogue`: an operation the target produces tile by tile (the
      systolic array: a matmul of batch 1, a convolution, a pool or
      depthwise convolution over its input held on chip) and the chain of
      elementwise ops after it (bias, residual, activation, clamp, scaling)
      that the target can apply to each tile (or output band) in place.
    * `mode=full` (the default): also groups of row-local ops over the same
      rows (elementwise ops, row reductions, and for the systolic array erf
      and windowed ops such as pools), such as a whole softmax, layer
      normalization or GELU, run on tiles of whole rows.
    * `mode=none`: no groups.

    An epilogue continues while the value has exactly one user that the
    target can apply in place, reading the value as its first operand (or
    either operand of a commutative op), with its other operand a constant
    or defined before the head. A row-local group grows from its first op by
    every later op over the same rows whose operands are in the group,
    constants or defined before it, and that the target can run there; it
    is kept only when the last member's value is the only one used outside.
    A group needs two operations that compute, or one that the target
    lowers to several (a convolution with its bias, erf, a pool).
    Reshapes that keep the row-major matrix view ride along.

    Before (`mode=epilogue`):
    ```mlir
    %m = tosa.matmul %x, %w : (tensor<1x8x64xf32>, tensor<1x64x100xf32>) -> tensor<1x8x100xf32>
    %b = tosa.add %m, %bias : (tensor<1x8x100xf32>, tensor<1x1x100xf32>) -> tensor<1x8x100xf32>
    %r = tosa.clamp %b {...} : (tensor<1x8x100xf32>) -> tensor<1x8x100xf32>
    ```

    After:
    ```mlir
    %r = tpu.fused -> tensor<1x8x100xf32> {
      %m = tosa.matmul %x, %w : ...
      %b = tosa.add %m, %bias : ...
      %c = tosa.clamp %b {...} : ...
      tpu.yield %c : tensor<1x8x100xf32>
    }
    ```
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"full\"",
           "What to fuse: none, epilogue (matmul epilogues) or full (also row-local groups)">,
  ];
  let statistics = [
    Statistic<"numGroups", "groups", "Fusion groups formed">,
    Statistic<"numFused", "fused-ops", "Operations that joined a group after its head">,
  ];
}

def PrintFusionGroups : Pass<"tpu-print-fusion-groups", "mlir::func::FuncOp"> {
  let summary = "Print the fusion groups (tpu.fused regions) on stdout, one line each";
  let description = [{
    For people and scripts (`tpuc --print-fusion-groups`, the fusion study):
    a line `fusion MODE: N groups`, then per group its number, its kind (a
    matmul epilogue in the accumulators, or row-local ops in the scratchpad)
    and its members in order, each as its source op and operation name.
    Changes nothing.

    ```
    fusion full: 1 group
      group 0 (matmul epilogue in the accumulators): fc1 (Gemm) [tpu.matmul] -> fc1 (Gemm) [tpu.binary]
    ```
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"full\"",
           "The fusion mode the groups were formed with, for the first line">,
  ];
}

def Autodiff : Pass<"tpu-autodiff", "mlir::ModuleOp"> {
  let summary = "Build a training-step function from the forward function by reverse-mode differentiation";
  let description = [{
    Turns the module's forward function `@main` (one result, the model's
    output) into a training step, also named `@main`, which computes the
    loss, its gradient with respect to every trainable parameter by the
    chain rule (one vector-Jacobian rule per TOSA op, applied in reverse
    order), and the optimizer's update. Target-neutral: TOSA in, TOSA out,
    so the step runs wherever the forward graph does.

    Trainable parameters are the float `tosa.const` ops that carry a
    `tpu.name` (the importer names each float initializer so), in order of
    appearance; `trainable=a,b` restricts them to those names (an unknown
    name is an error). Every other constant stays a constant.

    The step function's signature, in this order:
    * inputs: the forward inputs; the labels (`cross-entropy`: the class of
      each row, `tensor<Bxi64>` for a `[B, C]` output; `mse`: a target of
      the output's type); the trainable parameters; with `optimizer=momentum`,
      one momentum buffer per parameter (same type, zeros at the start).
    * results: the loss (`tensor<1xf32>`); with `cross-entropy`, the number
      of rows whose largest output is at the label's class (`tensor<1xi32>`);
      the updated parameters; the updated momentum buffers.
    Parameters and buffers are named `tpu.name = NAME` and `NAME.momentum`
    on both sides, so a caller feeds results back as the next step's inputs.

    Losses: `cross-entropy` is the mean over the batch of softmax cross
    entropy of the output rows (logits) against the labels, its gradient
    the fused `(softmax - onehot) / B`; a label outside `[0, C)` matches no
    class. `mse` is the mean over all elements of `(output - target)^2`.
    Optimizers (g: gradient, wd: `weight-decay`): `sgd` is
    `w -= lr * (g + wd w)`; `momentum` is `v = momentum * v + g + wd w`,
    `w -= lr * v` (PyTorch's convention).

    Rules: add, sub and mul with broadcasting (the gradient summed over the
    broadcast axes), negate, matmul (batched), reshape, transpose, reverse,
    clamp (ReLU; gradient 1 strictly inside the bounds, 0 at and outside
    them), maximum and minimum (the first operand wins ties), select, abs,
    exp, log, reciprocal (so the importer's Div), rsqrt, pow, tanh, sigmoid, erf
    (GELU), cast between float types, reduce_sum, reduce_max and reduce_min
    over any axis (the gradient shared equally among tied extrema), tile,
    slice, pad (constant padding), concat, gather (the scatter-add as a
    one-hot matmul), conv2d (input: the transposed convolution, dy spread
    by the stride and convolved with the flipped kernel; weights: the
    correlation of input and dy; bias: dy summed), depthwise_conv2d,
    max_pool2d (each window's gradient to its first maximum in row-major
    window order) and avg_pool2d (dy over each window's count of input
    elements, padding excluded as in TOSA). Softmax, LogSoftmax and
    LayerNormalization as the importer writes them are compositions of
    these. An op on the path from a parameter to the loss without a rule is
    an error on that op, whose location names the ONNX node.

    Before (`loss=mse optimizer=sgd lr=0.5`):
    ```mlir
    func.func @main(%x: tensor<2x3xf32> {tpu.name = "x"}) -> tensor<2x3xf32> {
      %w = "tosa.const"() <{value = dense<...> : tensor<1x3xf32>}> {tpu.name = "w"} : () -> tensor<1x3xf32>
      %y = tosa.mul %x, %w {shift = 0 : i8} : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
      return %y : tensor<2x3xf32>
    }
    ```

    After (the loss's own ops shortened):
    ```mlir
    func.func @main(%x: tensor<2x3xf32> {tpu.name = "x"}, %t: tensor<2x3xf32> {tpu.name = "labels"},
                    %w: tensor<1x3xf32> {tpu.name = "w"})
        -> (tensor<1xf32> {tpu.name = "loss"}, tensor<1x3xf32> {tpu.name = "w"}) {
      %y = tosa.mul %x, %w {shift = 0 : i8} : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
      %d = tosa.sub %y, %t : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
      %loss = ...
      %dy = tosa.mul %d, %two_over_n {shift = 0 : i8} : (tensor<2x3xf32>, tensor<1x1xf32>) -> tensor<2x3xf32>
      %p = tosa.mul %dy, %x {shift = 0 : i8} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
      %dw = tosa.reduce_sum %p {axis = 0 : i32} : (tensor<2x3xf32>) -> tensor<1x3xf32>
      %s = tosa.mul %dw, %lr {shift = 0 : i8} : (tensor<1x3xf32>, tensor<1x1xf32>) -> tensor<1x3xf32>
      %w2 = tosa.sub %w, %s : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
      return %loss, %w2 : tensor<1xf32>, tensor<1x3xf32>
    }
    ```
  }];
  let options = [
    Option<"loss", "loss", "std::string", /*default=*/"\"cross-entropy\"",
           "cross-entropy (integer labels) or mse (a target per output)">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"sgd\"", "sgd or momentum">,
    Option<"lr", "lr", "double", /*default=*/"0.1", "The learning rate">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9",
           "The momentum coefficient (optimizer=momentum)">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "L2 weight decay added to each gradient (wd * w)">,
    ListOption<"trainable", "trainable", "std::string",
               "The parameters to train, by name (default: every named float constant)">,
  ];
  let statistics = [
    Statistic<"numParameters", "parameters", "Trainable parameters">,
    Statistic<"numGradientOps", "gradient-ops", "Operations built for the gradients">,
  ];
}

#endif // TPU_PASSES
