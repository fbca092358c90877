//===- Passes.td - passes of the systolic-array target --------*- tablegen -*-===//
//
// The graph (with its fusion groups) on the systolic array: lowering to the
// hardware dialect, the plans, the instructions, their tokens.
//
//===----------------------------------------------------------------------===//

#ifndef TPU_TARGET_TPU_PASSES
#define TPU_TARGET_TPU_PASSES

include "mlir/Pass/PassBase.td"

def LowerTosaToTPU : Pass<"tpu-lower-tosa", "mlir::func::FuncOp"> {
  let summary = "Lower TOSA graph operations to TPU hardware operations";
  let description = [{
    Rewrites the TOSA operations the accelerator supports into the `tpu`
    dialect on 2-D row-major tensors: `tosa.matmul` (batch 1) becomes
    `tpu.matmul`, elementwise arithmetic becomes `tpu.binary` (same shape,
    one row, one element, or one column, which the lowering runs row by row),
    `tosa.clamp` becomes `tpu.unary relu` or `tpu.clamp`, `tosa.exp`,
    `tosa.reciprocal` and `tosa.rsqrt` become `tpu.unary`, `tosa.reduce_sum`
    and `tosa.reduce_max` over the last axis become `tpu.row_reduce`,
    `tosa.reshape` becomes `tpu.view`, `tosa.const` becomes
    `arith.constant`, and `tosa.gather` whose indices are a graph input
    becomes `tpu.gather` of that input retyped to i32 (the importer's cast
    and wrap of negative indices fold away: `dma.gather` wraps them).
    `tosa.argmax` feeding an int64 graph output (ONNX's ArgMax and ArgMin)
    becomes row maxima, a mask and `tpu.to_int`; the function then returns
    int32 words, its result marked `tpu.host_type = i64`. Integer values
    inside the graph (a training step's labels, class ids, argmax and
    correct count) are computed in fp32, exact below 2^24: an int64 graph
    input becomes f32 marked `tpu.host_type = i64` (the runtime converts),
    an argmax elsewhere its fp32 index, and an integer graph output int32
    words (`tpu.to_int`). `tosa.conv2d` becomes `tpu.im2col` and a
    `tpu.matmul` with the `[KH*KW*C, O]` weights: laid out at compile time
    when constant, else transposed in the program (`tpu.transpose`);
    `tosa.reverse` (outside ArgMax) slices per index and a concat. A
    compare becomes a 1.0/0.0 mask for the select or f32 cast that uses it,
    and logical not/and/or of compares arithmetic on those masks. Any other
    TOSA operation, or an unsupported form of one of these, is an error
    naming it.

    Before:
    ```mlir
    %a = tosa.reshape %x {new_shape = array<i64: 1, 8, 64>} : (tensor<8x64xf32>) -> tensor<1x8x64xf32>
    %m = tosa.matmul %a, %w : (tensor<1x8x64xf32>, tensor<1x64x100xf32>) -> tensor<1x8x100xf32>
    %y = tosa.reshape %m {new_shape = array<i64: 8, 100>} : (tensor<1x8x100xf32>) -> tensor<8x100xf32>
    %r = tosa.clamp %y {max_fp = 3.40282347E+38 : f32, max_int = 9223372036854775807 : i64, min_fp = 0.0 : f32, min_int = 0 : i64} : (tensor<8x100xf32>) -> tensor<8x100xf32>
    ```

    After (and canonicalization, which folds the views):
    ```mlir
    %m = tpu.matmul %x, %w2d : tensor<8x64xf32>, tensor<64x100xf32> -> tensor<8x100xf32>
    %r = tpu.unary relu %m : tensor<8x100xf32>
    ```
  }];
  let dependentDialects = ["mlir::tpu::TPUDialect", "mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numMatmuls", "matmuls", "tosa.matmul lowered to tpu.matmul">,
    Statistic<"numVectorOps", "vector-ops", "Elementwise ops lowered to the vector unit">,
  ];
}

def PlanTiles : Pass<"tpu-plan-tiles", "mlir::func::FuncOp"> {
  let summary = "Tile every operation for the array and the on-chip memories of the target";
  let description = [{
    Decides how each operation runs on the module's target and records it as
    the operation's `tpu.tiling`, which the lowering to instructions follows;
    tile sizes are chosen by what fits, so this is also where the on-chip
    buffers are placed (word addresses in the scratchpad and the
    accumulators):

    * a matmul (`#tpu.matmul_tiling`): output tiles of `tile_m` rows x
      `tile_n` (<= C) columns accumulated over K in steps of `tile_k` (<= R),
      activation blocks of `tile_m x k_block` (all of K when a block fits, so
      that one block serves every column tile) and weight panels of
      `k_block x tile_n`, each role double-buffered, in a bank of its own
      when they all fit that way; the rows per tile are the most that fit
      with all of K, down to R rows, else the most rows with the widest
      block. A fused epilogue needs room for its operand. The cost model
      counts each DRAM row at the bytes tpu-plan-memory will store it in
      (`dram-dtype`, the same option: bf16 weights are half the bytes).
    * a convolution's matmul over a `tpu.im2col` (`#tpu.conv_tiling`): bands
      of output rows whose input rows are held on chip, K steps as tall as
      the array or a kernel row, or of one tap's channels where that spares
      the band its padding columns (the array skips padding taps), where
      it fits and the cost model does not find the im2col rows written to
      DRAM faster; else the im2col gets a copy plan and the matmul its own.
    * a vector op (`#tpu.vector_tiling`): tiles of whole columns up to the
      DMA's limit and as many rows as fit with the operand's part.
    * a row-local group (`#tpu.row_group_tiling`): tiles of whole rows, each
      value in a buffer of its own while it lives, on one set of buffers or
      two (`second_set`: the next tile loads and the last stores while the
      vector unit works), as the row-group cost model finds faster.
    * a window reduction (`#tpu.window_tiling`): bands of output rows, their
      input rows held phase by phase, with room for its fused epilogue's
      operands; a window group whose band does not fit with them is split.
    * a copy (`#tpu.copy_tiling`): the scratchpad words it stages through,
      below the fill row that pads.

    A layout transpose between NCHW and NHWC that only convolutions (a 1x1
    one as a matmul's activations) and whole-tile epilogue operands read, or that only stores a matmul group's
    result, is marked `tpu.layout_folded`: it moves no data, and its readers
    and its writer use transposing DMA transfers instead. So is an
    attention head transpose (perms [0, 2, 1, 3]) that only batched matmuls
    read, batching its heads, or that only stores a batched matmul's
    result: they load or store each head in place with strided transfers;
    and a key transpose (perms [0, 2, 3, 1]) that only batched matmuls read
    as their weights, batching its heads: they load each head's weights
    with transposing transfers.

    What cannot fit (not one weight tile and one row, not one row of a
    group) is an error on the operation.

    Before (on the `tpu-8x8` target):
    ```mlir
    %m = tpu.matmul %x, %w : tensor<8x64xf32>, tensor<64x100xf32> -> tensor<8x100xf32>
    %c = tpu.clamp %y, %bounds : tensor<700x20xf32>, tensor<1x2xf32>
    ```

    After:
    ```mlir
    %m = tpu.matmul %x, %w {tpu.tiling = #tpu.matmul_tiling<tile_m = 8, tile_n = 8,
        tile_k = 8, k_block = 64, activations = [0, 512], weights = [4096, 8192],
        operands = [8704, 8704], accumulators = [0, 2048]>} : ...
    %c = tpu.clamp %y, %bounds {tpu.tiling = #tpu.vector_tiling<rows = 700, cols = 20,
        input = 0, operand = 14000, output = 0>} : ...
    ```
  }];
  let options = [
    Option<"dramDType", "dram-dtype", "std::string", /*default=*/"\"array\"",
           "What tpu-plan-memory will store the tensors only the array reads as "
           "(array or f32), for the cost of their DMA rows">,
  ];
}

def PlanMemory : Pass<"tpu-plan-memory", "mlir::func::FuncOp"> {
  let summary = "Place every tensor the program touches in DRAM";
  let description = [{
    DRAM as the program sees it, each tensor 64-byte aligned: the constants
    from address 0 (the bundle's constant segment; each `arith.constant`
    becomes a `tpu.dram_constant` at its place; the constants a row group
    loads whole, side by side in its scratchpad, get copies of their own
    placed side by side, so that one transfer loads them), then the inputs
    (`tpu.dram_address` on the arguments), then the results' region, laid
    out by liveness: a result's buffer is free once the last operation
    reading it (or a view of it) has run, and a later result takes the
    smallest free buffer that fits (the rest of it stays free), else new
    space. Views share their input's buffer; a fusion group (`tpu.fused`)
    writes only the value it yields and reads what its members read;
    returned values keep their buffers. An output that is an input, a
    constant or another output gets a copy of its own (`tpu.unary copy`), so
    that each output has a place in the bundle's tensor map. The function
    gets the program's DRAM size (`tpu.dram_bytes`) and each result the
    longest chain of reductions feeding it (`tpu.reduction_length`, for the
    output check's tolerance). Planning again changes nothing.

    On a bf16 array (with `dram-dtype=array`, the default) a tensor only
    matrix products read, through views, is stored as bf16 at half the
    bytes (`tpu.dram_dtype = "bf16"`): a constant (the weights, which
    tpuc rounds to nearest even) or the result of a matrix product, a
    vector op or a fusion group of them. The array rounds its operands to
    bf16 itself, so the results are the same bits; what the vector unit,
    the data movement or the host reads stays fp32, as do the inputs.
    `dram-dtype=f32` keeps every tensor fp32 (for studies of the traffic).

    Before:
    ```mlir
    func.func @main(%x: tensor<8x40xf32>) -> tensor<8x40xf32> {
      %max = tpu.row_reduce max %x : tensor<8x40xf32> -> tensor<8x1xf32>
      %d = tpu.binary sub %x, %max : tensor<8x40xf32>, tensor<8x1xf32> -> tensor<8x40xf32>
      %e = tpu.unary exp %d : tensor<8x40xf32>
      %s = tpu.row_reduce sum %e : tensor<8x40xf32> -> tensor<8x1xf32>
    ```

    After (`%s` reuses `%max`'s buffer, free once `sub` has read it):
    ```mlir
    func.func @main(%x: tensor<8x40xf32> {tpu.dram_address = 0 : i64}) -> ...
        attributes {tpu.dram_bytes = 5184 : i64} {
      %max = tpu.row_reduce max %x {tpu.dram_address = 1280 : i64} : ...
      %d = tpu.binary sub %x, %max {tpu.dram_address = 1344 : i64} : ...
      %e = tpu.unary exp %d {tpu.dram_address = 2624 : i64} : ...
      %s = tpu.row_reduce sum %e {tpu.dram_address = 1280 : i64} : ...
    ```
  }];
  let dependentDialects = ["mlir::tpu::TPUDialect"];
  let options = [
    Option<"dramDType", "dram-dtype", "std::string", /*default=*/"\"array\"",
           "What DRAM holds the tensors only the array reads as: array (its dtype, "
           "bf16 on a bf16 array) or f32">,
  ];
  let statistics = [
    Statistic<"numPlaced", "placed", "Results given a DRAM buffer">,
    Statistic<"numNarrowed", "narrowed", "Constants and results stored as bf16">,
    Statistic<"numReused", "reused", "Results placed in a freed buffer">,
  ];
}

def RecordWork : Pass<"tpu-record-work", "mlir::func::FuncOp"> {
  let summary = "Record each source op's compulsory work for the bundle's roofline";
  let description = [{
    Counts, per source op (the name the lowering gives its instructions),
    the work no schedule can avoid: its matrix products (`[batch, m, k, n]`
    of each `tpu.matmul` and `tpu.batch_matmul`), the elements its vector
    operations produce (a row reduction: read), of those the ones through a
    transcendental, and the DRAM bytes its instructions must move: the
    tensors it reads that another op (or the host) wrote, as much of each as
    it needs, and the tensors it writes that another op (or the host) reads.
    A tensor an op writes and reads itself, such as a convolution's im2col
    matrix, is not compulsory; neither is what stays on chip in a fusion
    group. Also the model's compulsory bytes: its inputs and weights, as
    much of each as any op needs, and its outputs. Stored on the function as
    `tpu.work`, which the bundle encoder writes into the bundle
    (docs/bundle.md) and the simulator turns into the roofline
    (docs/simulator.md#roofline). A function already lowered to instructions
    is left as it is.

    ```mlir
    func.func @main(...) attributes {tpu.work = {dram_bytes = 12582912 : i64, source_ops = [
        {dram_bytes = 12582912 : i64, gemms = array<i64: 1, 1024, 1024, 1024>, name = "matmul",
         transcendental_elements = 0 : i64, vector_elements = 0 : i64} ]}, ...}
    ```
  }];
}

def LowerMatMuls : Pass<"tpu-lower-matmuls", "mlir::func::FuncOp"> {
  let summary = "Lower matmuls and matmul groups to the matrix unit's instructions";
  let description = [{
    Writes the instructions (`tpu.inst`) of each `tpu.matmul`,
    `tpu.batch_matmul` and matmul fusion group before it, as its
    `#tpu.matmul_tiling` says, and replaces its result by the tensor the
    program stored where `tpu-plan-memory` put it (`tpu.stored`). Output
    tiles accumulate over K in the accumulators; activation blocks, weight
    panels and accumulator tiles are double-buffered, each fill announced by
    a token (`tpu.signal` / `tpu.await`) and each buffer released by one, so
    that the DMA engine, the array and the stores overlap. A group's
    epilogue runs on each output tile in the accumulators before its store;
    its operands (bias row, residual tile, clamp bounds) come into the
    scratchpad. A convolution planned on chip streams its input band's
    windows through each weight tile, one `mxu.mm` per output row and run
    of windows whose tap reads the image: padding taps are skipped, not
    read as zeros.

    Before:
    ```mlir
    %y = tpu.fused attributes {tpu.dram_address = 1088 : i64} -> tensor<8x8xf32> {
      %m = tpu.matmul %x, %w {tpu.tiling = #tpu.matmul_tiling<tile_m = 8, tile_n = 8,
          tile_k = 8, k_block = 16, activations = [0, 128], weights = [4096, 8192],
          operands = [12288, 12296], accumulators = [0, 2048]>} : ...
      %s = tpu.binary add %m, %b : ...
      tpu.yield %s : tensor<8x8xf32>
    }
    ```

    After:
    ```mlir
    tpu.inst dma.ld dram_addr=0x0 dram_stride=16 space=sp sram_addr=0 ... rows=8 cols=16
    %block = tpu.signal load -> compute
    tpu.inst dma.ld dram_addr=0x200 dram_stride=8 space=sp sram_addr=4096 ... rows=16 cols=8
    %panel = tpu.signal load -> compute
    tpu.await %block
    tpu.await %panel
    tpu.inst mxu.ldw src_addr=4096 src_stride=8 rows=8 cols=8
    tpu.inst mxu.mm src_addr=0 src_stride=16 dst_addr=0 ... accumulate=0 flip=1
    ...
    tpu.inst v.add dst_space=acc dst_addr=0 ... src2_space=sp src2_addr=12288 broadcast=row
    ...
    tpu.inst dma.st dram_addr=0x440 dram_stride=8 space=acc sram_addr=0 ...
    %y = tpu.stored 0x440 : tensor<8x8xf32>
    ```
  }];
}

def LowerWindowReductions : Pass<"tpu-lower-window-reductions", "mlir::func::FuncOp"> {
  let summary = "Lower window reductions (pools, depthwise convolutions) to DMA and vector ops";
  let description = [{
    Writes the instructions of each `tpu.window_reduce` (alone, or heading a
    fusion group whose other members are its epilogue) before it, as its
    `#tpu.window_tiling` plans it, and replaces its result by the tensor the
    program stored. Per band of output rows of an image, the input rows the
    band reads are loaded into the scratchpad once: each row split into its
    column phases for a strided window, held phase by phase (DRAM stride
    `sw*C`: one `dma.ld` per phase for the band's image rows without side
    padding, else one per row and phase), padding written from the fill row
    with a DRAM stride of 0 (left and right columns once per buffer, top and
    bottom rows with the bands that reach them). Per output row and tap, one
    vector op combines the tap's dense `[OW, C]` pixels into the band's
    output (`v.max`; `v.add`; for weights `v.mul` by the tap's row, then
    `v.add`); then the bias or the scale over the whole band, the
    epilogue's ops (their row or scalar operands loaded once), and one
    store. A global pool
    halves its `[H*W, C]` pixels in place instead. Input and output buffers
    are double-buffered when the plan gives two, so loads, the vector unit
    and stores overlap.
  }];
}

def LowerVectorOps : Pass<"tpu-lower-vector-ops", "mlir::func::FuncOp"> {
  let summary = "Lower elementwise ops, row reductions and row groups to the vector unit";
  let description = [{
    Writes the instructions of each `tpu.binary`, `tpu.unary`, `tpu.clamp`,
    `tpu.to_int` (`v.cvt.f2i`, stored as `i32`), `tpu.row_reduce` and
    row-local fusion group before it and replaces its
    result by the tensor the program stored. One op runs on tiles of the
    scratchpad, loaded, computed in place and stored, each step waiting for
    the one before (`tpu.depend`); an operand spread as one column takes one
    instruction per row. A row group loads each tile of whole rows once, runs
    every member on scratchpad buffers (reused once a value is dead) and
    stores only the value it yields.

    Before:
    ```mlir
    %y = tpu.unary relu %x {tpu.dram_address = 256 : i64} : tensor<8x8xf32>
    ```

    After:
    ```mlir
    tpu.depend compute -> load
    tpu.depend store -> load
    tpu.inst dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=0 ... rows=8 cols=8
    tpu.depend load -> compute
    tpu.depend store -> compute
    tpu.inst v.relu dst_space=sp dst_addr=0 src_space=sp src_addr=0 rows=8 cols=8
    tpu.depend compute -> store
    tpu.inst dma.st dram_addr=0x100 dram_stride=8 space=sp sram_addr=0 ... rows=8 cols=8
    %y = tpu.stored 0x100 : tensor<8x8xf32>
    ```
  }];
}

def LowerDataMovement : Pass<"tpu-lower-data-movement", "mlir::func::FuncOp"> {
  let summary = "Lower transposes, im2col, slices, concatenations, pads and gathers to DMA "
                "transfers";
  let description = [{
    Rewrite patterns, one per data-moving op: each becomes strided copies
    through the scratchpad (the DMA engine moves rows of contiguous elements
    with a stride on each side, so a transpose moves runs along the axis
    contiguous on one side) and stores of a padding value from its fill row
    (`sram_stride=0`), batched so that a batch's loads fill the scratchpad,
    then one token, then its stores. `tpu.im2col` copies, per window tap,
    the output rows whose input is inside the image and fills the rest.
    `tpu.gather` loads a batch of int32 indices into the scratchpad, then
    `dma.gather` fetches their rows and stores write them out. A folded
    layout transpose moves nothing; it is lowered after the ops that read
    through it (an im2col of an NCHW input reads it with transposing loads).

    Before:
    ```mlir
    %t = tpu.transpose %x {perms = array<i64: 1, 0>, tpu.dram_address = 64 : i64}
        : tensor<4x2xf32> -> tensor<2x4xf32>
    ```

    After (a column of the input is a row of the result):
    ```mlir
    tpu.depend compute -> load
    tpu.depend store -> load
    tpu.inst dma.ld dram_addr=0x0 dram_stride=2 space=sp sram_addr=0 sram_stride=1 rows=4 cols=1
    tpu.inst dma.ld dram_addr=0x4 dram_stride=2 space=sp sram_addr=4 sram_stride=1 rows=4 cols=1
    tpu.depend load -> store
    tpu.inst dma.st dram_addr=0x40 dram_stride=4 space=sp sram_addr=0 sram_stride=4 rows=1 cols=4
    tpu.inst dma.st dram_addr=0x50 dram_stride=4 space=sp sram_addr=4 sram_stride=4 rows=1 cols=4
    %t = tpu.stored 0x40 : tensor<2x4xf32>
    ```
  }];
}

def PrefetchConstants : Pass<"tpu-prefetch-constants", "mlir::func::FuncOp"> {
  let summary = "Issue a group's first loads of settled data before its wait on the "
                "groups before it";
  let description = [{
    Every fusion group's load queue starts by waiting for the compute and
    store queues (`tpu.depend compute -> load` and `store -> load`): its
    loads overwrite buffers the previous group reads, and read what it
    stores. A load of settled DRAM needs the wait only for its buffer:
    DRAM no `dma.st` of the program writes (weights, biases, constants,
    inputs), or that only stores before the previous group's wait write
    (that wait saw them complete; a value an earlier group produced). This
    pass moves the loads of that kind a group starts with (up to its first other
    op of the load queue, except the load queue's tokens after them, which
    move with them) to right after the load queue's op before the wait, so
    they run while the previous group computes. The load queue's order stays
    as it was; those loads just stop waiting.

    Their buffers must be free: compared by the banks each region spans, a
    load whose banks no compute or store instruction since the load queue's
    previous such wait touches moves freely (disjoint banks are disjoint
    data, and the transfer holds no bank another unit waits for); one whose
    banks the previous groups' compute or stores touch waits, per queue, for
    their release token of them (the first `tpu.signal compute -> load` or
    `store -> load` after the last such instruction; a compute one only
    where no matrix instruction follows it in the compute queue) and goes
    after it; any other stays. Where more of a group's leading loads would
    move free with its buffers a whole number of banks higher, and the
    group fits there, every scratchpad address of its instructions (up to
    the next group's wait) moves up first, by the shift that frees the
    most (on a tie, half the scratchpad, else the largest): groups pass
    their values through DRAM, so a group's buffers may lie anywhere. A
    module without a `tpu.target` is left as it is.

    Before:
    ```mlir
    tpu.inst dma.st ... sram_addr=0 ...          // the previous group
    tpu.depend store -> load
    tpu.depend compute -> load
    tpu.inst dma.ld dram_addr=0x0 ... sram_addr=16384 ...   // a weight panel
    ```

    After:
    ```mlir
    tpu.inst dma.ld dram_addr=0x0 ... sram_addr=16384 ...
    tpu.inst dma.st ... sram_addr=0 ...
    tpu.depend store -> load
    tpu.depend compute -> load
    ```
  }];
  let statistics = [
    Statistic<"numHoisted", "hoisted", "Loads issued before their group's wait">,
    Statistic<"numRelocated", "relocated", "Groups moved up the scratchpad's banks">,
  ];
}

def ForwardStores : Pass<"tpu-forward-stores", "mlir::func::FuncOp"> {
  let summary = "Copy on chip what a load would read back from a store";
  let description = [{
    Fusion groups pass their values through DRAM: a group stores its result
    and the next one loads it, and that round trip (a store's latency and
    bus time, then a load's) lies on the program's critical path. Where the
    words a store read are still on chip when a later `dma.ld` reads what it
    stored, this pass turns the load into `v.copy` of those words on the
    compute queue. The store stays (the value may be an output, or read
    again later; `tpu-drop-dead-stores` drops it where neither holds). The
    load's bytes leave its source op's `dram_bytes` in
    `tpu.work`: they count what the op's instructions move.

    A load is forwarded where:
    * every byte it reads was written by one of the last 64 stores (the
      latest to write it counts);
    * those stores and the load are plain (`transpose=0`) of one dtype,
      f32, i32 or bf16 (bit copies: a bf16 store rounds, so a bf16 load
      must be read by the matrix unit alone, which rounds its operands to
      bf16 as well);
    * no instruction between a store and the load writes the words the
      store read;
    * only compute instructions read each loaded word until something
      writes it again (a store or a gather would wait for the load queue,
      not the copy);
    * the copies, one per run of words contiguous on both sides (at most
      64, none onto words another reads), take the vector unit fewer
      cycles than the load's bus time and half its DRAM latency (they hold
      the compute queue, which the load did not);
    * no compute instruction lies between the last of the stores and the
      load, and no other load of that store's words was forwarded: a later
      load has compute to hide its transfer behind.

    Words stored from where the load puts them need no copy. The copies
    wait for the loads before them (a token and its await: one of those
    may write what they read or write); where a later load of the group
    writes words they touch, it waits for the copies the same way.

    A store holds the banks it reads until it completes, so copies after
    it would wait for its DRAM latency and bus time. The copies from the
    load's latest store go ahead of it, before its `compute -> store`
    token, unless something between that store and the load touches the
    words they write, or the last store before them that reads those words
    may still be running (less compute since than its latency and bus
    time). Copies from earlier stores stay where the load was.

    Before:
    ```mlir
    tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=8 cols=64
    %done = tpu.signal compute -> store
    tpu.await %done
    tpu.inst dma.st dram_addr=0x4400 dram_stride=64 space=acc sram_addr=0 sram_stride=64 rows=8 cols=64 dtype=f32
    tpu.inst dma.ld dram_addr=0x4400 dram_stride=512 space=sp sram_addr=65536 sram_stride=512 rows=1 cols=512 dtype=f32
    ```

    After:
    ```mlir
    tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=8 cols=64
    tpu.inst v.copy dst_space=sp dst_addr=65536 src_space=acc src_addr=0 rows=1 cols=512
    %done = tpu.signal compute -> store
    tpu.await %done
    tpu.inst dma.st dram_addr=0x4400 dram_stride=64 space=acc sram_addr=0 sram_stride=64 rows=8 cols=64 dtype=f32
    ```
  }];
  let statistics = [
    Statistic<"numForwarded", "forwarded", "Loads that became on-chip copies">,
  ];
}

def DropDeadStores : Pass<"tpu-drop-dead-stores", "mlir::func::FuncOp"> {
  let summary = "Drop the stores whose bytes nothing reads again";
  let description = [{
    A fusion group stores its result for the next group to load. Where
    `tpu-forward-stores` turned every load of it into on-chip copies, and
    the result is not one of the program's, nothing reads the stored bytes:
    the store only costs DRAM traffic and energy, and holds the banks it
    reads until its DRAM latency has passed. This pass drops a `dma.st`
    where:
    * no `dma.ld` after it reads a byte it writes (`DramBlock::overlaps`:
      a strided block that may share a byte counts as read), and no
      `dma.gather` follows it at all (its indices pick the rows);
    * none of its bytes lie in the DRAM of a value the function returns
      (a model output, or a training step's updated state).
    The store queue's wait right before it goes too, where the next thing
    the store queue does after the store is another wait, or nothing: no
    instruction of its own relies on that wait, and the compute queue's
    `sync.push` for it would wait for the array to drain. Its signal goes
    with its last await. The store's bytes leave its source op's
    `dram_bytes` in `tpu.work`.

    `tpuc` runs it after `tpu-forward-stores` with `--fusion=epilogue` and
    `full`; with `--fusion=none` every operation's result still goes to
    DRAM.

    Before:
    ```mlir
    tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=8 cols=64
    tpu.inst v.copy dst_space=sp dst_addr=4096 src_space=acc src_addr=0 rows=1 cols=512
    %done = tpu.signal compute -> store
    tpu.await %done
    tpu.inst dma.st dram_addr=0x4400 dram_stride=64 space=acc sram_addr=0 sram_stride=64 rows=8 cols=64 dtype=f32
    ```

    After (nothing loads 0x4400, and the function returns another value):
    ```mlir
    tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=8 cols=64
    tpu.inst v.copy dst_space=sp dst_addr=4096 src_space=acc src_addr=0 rows=1 cols=512
    ```
  }];
  let statistics = [
    Statistic<"numDropped", "dropped", "Stores nothing reads again">,
  ];
}

def FoldIntoCopies : Pass<"tpu-fold-into-copies", "mlir::func::FuncOp"> {
  let summary = "Apply an in-place elementwise op in the copies that alone read its results";
  let description = [{
    A fusion group's last epilogue op (a ReLU, say) runs in place on the
    output tile in the accumulators; where the next group copies the tile
    into its own buffer (`tpu-forward-stores`) and nothing else reads it
    (`tpu-drop-dead-stores` dropped its store), the vector unit passes over
    the tile twice: once for the op, once for the copies. This pass makes
    each copy apply the op instead (`v.copy` becomes the op, from the copy's
    source to its destination) and drops the op: the copies cost the same,
    and the op's pass is saved.

    It folds a vector op `dst = f(src)` with `v.copy`'s fields (no second
    source, no row reduction) whose destination is its source, where
    following the program from it (at most 4096 instructions), until every
    word it wrote has been written again or the program ends:
    * every `v.copy` that reads any of those words reads only words still
      holding its results (none written since);
    * no other instruction reads one of them (a store, a product, a vector
      op; an `mxu.mm` that accumulates reads the words it writes).
    The op's words then keep the values from before it, which only the
    copies read. A copy keeps its place (and so its tokens) and takes the
    op's source location: it now computes that op.

    Before:
    ```mlir
    tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=8 cols=64
    tpu.inst v.copy dst_space=sp dst_addr=4096 src_space=acc src_addr=0 rows=1 cols=256
    tpu.inst v.copy dst_space=sp dst_addr=4608 src_space=acc src_addr=256 rows=1 cols=256
    ```

    After:
    ```mlir
    tpu.inst v.relu dst_space=sp dst_addr=4096 src_space=acc src_addr=0 rows=1 cols=256
    tpu.inst v.relu dst_space=sp dst_addr=4608 src_space=acc src_addr=256 rows=1 cols=256
    ```
  }];
  let statistics = [
    Statistic<"numFolded", "folded", "Elementwise ops applied by the copies of their results">,
  ];
}

def PreloadWeights : Pass<"tpu-preload-weights", "mlir::func::FuncOp"> {
  let summary = "Load the next weight tile while the vector unit works or the array streams";
  let description = [{
    The matrix and vector units share the compute queue, which runs in
    order: a vector instruction waits for every product before it, and an
    instruction after it for it. A matmul group's epilogue (or a forwarded
    value's copies) so keeps the next group's (or tile's) first `mxu.ldw`
    waiting, although the array could load that weight tile while it
    drains the last products and the vector unit works: `R` cycles on the
    critical path at each such boundary.

    This pass moves such an `mxu.ldw`, with the `tpu.await`s right before
    it (its tile's tokens), up to just after the last `mxu.mm` before it
    (and the signals that follow that), where:
    * only vector instructions and other queues' instructions lie in
      between (no other matrix instruction), at least one of them vector;
    * none of them writes the scratchpad words the tile is read from;
    * no `tpu.depend load -> compute` lies in between (the tile might be
      ordered by it alone);
    * each moved await's token is signalled before that `mxu.mm`, so that
      the compute queue, waiting earlier, waits for nothing issued later;
    * the tile likely arrives before the products are done: after the
      latest load the compute queue waited for before the `mxu.mm`, the
      DRAM latency plus the bus time of the transfers issued since, up to
      the tile's, is at most the rows the array streams after that wait
      plus its drain (the vector work would otherwise wait for the tile).

    The vector instructions then wait for the weight load as well as the
    products, which it overlaps.

    Then, among products: the array holds two weight planes, and an
    `mxu.ldw` writes the one the products before the last flip used, once
    they have left the array (`m + R + n - 1` cycles after the last one
    starts). Placed after the last product of the tile before it, it waits
    for that tile's products to issue first. The pass moves each `mxu.ldw`
    up among them (with the compute queue's awaits of loads and its
    weight-only releases in between; not above anything else) to right
    after the first product by which `R + n - 1` rows have streamed since
    the tile's first product (its flip; `n` the other plane's tile width),
    the products issuing back to back: the plane is free by the next
    product's start, so the load waits for nothing and overlaps the rest
    of the tile. A moved await's token is signalled before that product and
    likely there by then, as above (without the drain). A convolution's K
    steps of 256 rows on 128x128 then lose nothing to their weight loads
    of 64 rows, where they lost 48 cycles each.

    Before:
    ```mlir
    tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
    tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=8 cols=8
    tpu.await %panel
    tpu.inst mxu.ldw src_addr=4096 src_stride=8 rows=8 cols=8
    ```

    After:
    ```mlir
    tpu.inst mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=8 cols=8 dtype=bf16 accumulate=0 flip=1
    tpu.await %panel
    tpu.inst mxu.ldw src_addr=4096 src_stride=8 rows=8 cols=8
    tpu.inst v.relu dst_space=acc dst_addr=0 src_space=acc src_addr=0 rows=8 cols=8
    ```
  }];
  let statistics = [
    Statistic<"numPreloaded", "preloaded", "Weight tile loads moved ahead of vector work">,
    Statistic<"numOverlapped", "overlapped",
              "Weight tile loads moved up among the products of the tile before">,
  ];
}

def ScheduleTokens : Pass<"tpu-schedule-tokens", "mlir::func::FuncOp"> {
  let summary = "Turn the order between the queues into sync.push and sync.pop tokens";
  let description = [{
    The load, compute and store queues run decoupled; one waits for another
    by popping a token the other pushed. In program order this pass numbers
    the tokens of each channel (from -> to) and writes them as instructions:
    `tpu.signal` becomes a `sync.push` on its `from` queue (it completes once
    everything that queue issued before it has); `tpu.await` becomes the
    `sync.pop`s on the `to` queue up to that token (tokens are taken in
    order, so waiting for one waits for all before it); `tpu.depend` is both,
    except that where `from` has issued nothing since its last token to
    `to`, it only pops that token, or is nothing where `to` has popped it
    already. A signal nobody awaits is no instruction: a push would hold
    its queue until everything before it completes, for no one.

    Before:
    ```mlir
    tpu.inst dma.ld ...
    %filled = tpu.signal load -> compute
    tpu.await %filled
    tpu.inst mxu.ldw ...
    tpu.depend load -> compute
    ```

    After (the depend is already satisfied):
    ```mlir
    tpu.inst dma.ld ...
    tpu.inst sync.push from=load to=compute
    tpu.inst sync.pop from=load to=compute
    tpu.inst mxu.ldw ...
    ```
  }];
}

#endif // TPU_TARGET_TPU_PASSES
