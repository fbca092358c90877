//===- TPUAttrs.td - the target and the plans as attributes ---*- tablegen -*-===//
//
// The hardware a module is compiled for (`tpu.target` on the module) and the
// decisions the planning passes record on operations, as typed attributes:
// a lit test writes its target inline, and every plan reads back from text.
//
//===----------------------------------------------------------------------===//

#ifndef TPU_ATTRS
#define TPU_ATTRS

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "tpu/Dialect/TPUDialect.td"
include "tpu/Dialect/TPUInterfaces.td"

class TPU_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<TPU_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
  let assemblyFormat = "`<` struct(params) `>`";
}

// A real number (a double) printed in its shortest form that reads back
// exactly.
def TPU_RealParameter : AttrOrTypeParameter<"::llvm::APFloat", "a real number"> {
  let comparator = "$_lhs.bitwiseIsEqual($_rhs)";
  let parser = [{ ::mlir::tpu::parseReal($_parser) }];
  let printer = [{ ::mlir::tpu::printReal($_printer, $_self) }];
}

// A real number that may be left out of the text, as its config key may be;
// the config's default then applies (hardwareConfig() in TPUDialect.cpp).
def TPU_OptionalRealParameter
    : OptionalParameter<"std::optional<::llvm::APFloat>", "a real number"> {
  let comparator = [{ $_lhs.has_value() == $_rhs.has_value() &&
                      (!$_lhs || $_lhs->bitwiseIsEqual(*$_rhs)) }];
  let parser = [{ ::mlir::tpu::parseOptionalReal($_parser) }];
  let printer = [{ ::mlir::tpu::printReal($_printer, *$_self) }];
}

// The same for a 32-bit count.
def TPU_OptionalCountParameter
    : OptionalParameter<"std::optional<uint32_t>", "a non-negative integer"> {
  let parser = [{ ::mlir::tpu::parseOptionalCount($_parser) }];
  let printer = [{ $_printer << *$_self }];
}

// Word addresses in an on-chip memory, one per buffer of a double-buffered
// role, written `[a, b]`.
def TPU_AddressesParameter : ArrayRefParameter<"int64_t", "word addresses"> {
  let parser = [{ ::mlir::tpu::parseAddresses($_parser) }];
  let printer = [{ ::mlir::tpu::printAddresses($_printer, $_self) }];
}

def TPU_ArrayDType : I32EnumAttr<"ArrayDType", "multiply type of the systolic array", [
  I32EnumAttrCase<"bf16", 1>, I32EnumAttrCase<"i8", 2>]> {
  let cppNamespace = "::mlir::tpu";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// The target
//===----------------------------------------------------------------------===//

def TPU_SystolicArrayAttr : TPU_Attr<"SystolicArray", "array"> {
  let summary = "The R x C weight-stationary array and its multiply type";
  let parameters = (ins "uint32_t":$rows, "uint32_t":$cols,
                        EnumParameter<TPU_ArrayDType>:$dtype);
}

def TPU_MemoryAttr : TPU_Attr<"Memory", "memory"> {
  let summary = "An on-chip memory: capacity in KiB and single-ported banks";
  let parameters = (ins "uint64_t":$kib, "uint32_t":$banks);
}

def TPU_VectorUnitAttr : TPU_Attr<"VectorUnit", "vector"> {
  let summary = "The vector unit: elements per cycle, pipeline latency and the "
                "cycles per group of lanes of a transcendental (1 when left out)";
  let parameters = (ins "uint32_t":$lanes, "uint32_t":$pipeline_latency,
                        TPU_OptionalCountParameter:$transcendental_cycles_per_group);
}

def TPU_DramAttr : TPU_Attr<"Dram", "dram"> {
  let summary = "The DRAM channel: bandwidth, latency and requests in flight";
  let parameters = (ins TPU_RealParameter:$bytes_per_cycle, "uint32_t":$latency_cycles,
                        "uint32_t":$max_outstanding);
}

def TPU_EnergyAttr : TPU_Attr<"Energy", "energy"> {
  let summary = "Per-access energies for the simulator's estimate (a transcendental "
                "element costs vector_element_pj when vector_transcendental_pj is left out)";
  let parameters = (ins TPU_RealParameter:$mac_pj, TPU_RealParameter:$scratchpad_word_pj,
                        TPU_RealParameter:$accumulator_word_pj,
                        TPU_RealParameter:$vector_element_pj,
                        TPU_OptionalRealParameter:$vector_transcendental_pj,
                        TPU_RealParameter:$dram_byte_pj, TPU_RealParameter:$static_mw);
}

def TPU_TargetAttr : TPU_Attr<"Target", "target",
    [DeclareAttrInterfaceMethods<TPU_FusionTargetInterface>]> {
  let summary = "The systolic-array accelerator a module is compiled for";
  let description = [{
    Every field of a hardware config (docs/config.md), set once on the module
    as `tpu.target` by tpuc from `--config`; the target's passes read the
    hardware from here, and the bundle records it. Checked as a config file
    is: an out-of-range field is an error on the attribute. The keys a config
    may leave out (`vector.transcendental_cycles_per_group`,
    `energy.vector_transcendental_pj`) may be left out here too, with the same
    defaults; tpuc always writes them. It answers the
    fusion pass's questions for the systolic array (FusionTargetInterface,
    in compiler/lib/Target/TPU/FusionLegality.cpp).

    ```mlir
    module attributes {tpu.target = #tpu.target<name = "tpu-8x8", clock_ghz = 1.0,
        array = <rows = 8, cols = 8, dtype = bf16>,
        scratchpad = <kib = 64, banks = 4>, accumulator = <kib = 16, banks = 2>,
        vector = <lanes = 8, pipeline_latency = 4>,
        dram = <bytes_per_cycle = 8.0, latency_cycles = 100, max_outstanding = 16>,
        energy = <mac_pj = 2.0, scratchpad_word_pj = 5.0, accumulator_word_pj = 5.0,
                  vector_element_pj = 1.0, dram_byte_pj = 100.0, static_mw = 50.0>>} {}
    ```
  }];
  let parameters = (ins StringRefParameter<"the config's name">:$name,
                        TPU_RealParameter:$clock_ghz,
                        "SystolicArrayAttr":$array,
                        "MemoryAttr":$scratchpad, "MemoryAttr":$accumulator,
                        "VectorUnitAttr":$vector, "DramAttr":$dram, "EnergyAttr":$energy);
  // tpu/Dialect/TargetConfig.h converts to and from the HardwareConfig.
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Plans
//===----------------------------------------------------------------------===//

def TPU_MatMulTilingAttr : TPU_Attr<"MatMulTiling", "matmul_tiling"> {
  let summary = "How a matmul runs on the array and the on-chip memories";
  let description = [{
    `Y[M,N] = A[M,K] * W[K,N]`: output tiles of `tile_m` rows x `tile_n`
    columns, accumulated over K in steps of `tile_k`; activation blocks of
    `tile_m x k_block` and weight panels of `panel_rows x tile_n` (absent:
    `k_block`), each block's K in panels one after another. Each role is
    double-buffered: the word addresses of its two buffers in the scratchpad
    (`activations`, `weights`) and in the accumulators (`accumulators`);
    two equal addresses are one buffer. For a row band in pieces (`k_block`
    of all of K, in whole banks a piece: docs/compiler.md), `activations`
    are the pieces' buffers, used in turn, two or more. `operands`: the
    scratchpad address of each operand a fused epilogue loads, in its
    order (none without one); all different, each loads ahead of the
    epilogue while the array works; all equal, they share one buffer and
    each loads just before its op. `packed` (a batched matmul): that many
    batches side by side, a tile of the packed product (their K and N
    each `packed` times) taking their activation rows next to each other
    and their weights as the blocks of a block-diagonal panel, so that
    one pass through the array computes all of them. Set by
    `tpu-plan-tiles`.
  }];
  let parameters = (ins "int64_t":$tile_m, "int64_t":$tile_n, "int64_t":$tile_k,
                        "int64_t":$k_block,
                        OptionalParameter<"std::optional<int64_t>">:$panel_rows,
                        OptionalParameter<"std::optional<int64_t>">:$packed,
                        TPU_AddressesParameter:$activations,
                        TPU_AddressesParameter:$weights, TPU_AddressesParameter:$operands,
                        TPU_AddressesParameter:$accumulators);
}

def TPU_ConvTilingAttr : TPU_Attr<"ConvTiling", "conv_tiling"> {
  let summary = "How a convolution's matmul runs on its NHWC input held on chip";
  let description = [{
    On a `tpu.matmul` whose activations are a `tpu.im2col`, which then
    writes nothing (an implicit GEMM): the input rows of `band` output rows
    (with their halo and zero padding) are loaded into the scratchpad once,
    and per run of window taps contiguous there, K step of `tile_k` rows and
    C-wide chunk, one weight tile streams each output row straight from
    them. Output tiles are `band` output rows x `tile_n` columns, weight
    panels `k_block x tile_n`; the word addresses of the two buffers of each
    role as in `#tpu.matmul_tiling` (`inputs` for the input bands), and
    `operands` as there. With `pieces` (absent: 1), the band's channels are
    split into that many bands of their own, loaded one after another, and
    the K steps go piece by piece (every tap's first channels first), so
    that the array starts once the first has arrived; `inputs` are then the
    pieces' buffers, used in turn. With `stacked_rows` L (one input
    channel), each band row is the L input rows of a group of output rows
    side by side, a pixel's L words its column of them (L = KH: one output
    row; else (L - KH) / sh + 1 of them, each sh words after the one
    before): a window is then one run of (KW - 1) x L + KH words, and the
    weights' rows go kernel column by kernel column, L rows apart in the
    weight tile with zeros between (from the im2col's fill row). Set by
    `tpu-plan-tiles`.
  }];
  let parameters = (ins "int64_t":$band, "int64_t":$tile_n, "int64_t":$tile_k,
                        "int64_t":$k_block,
                        OptionalParameter<"std::optional<int64_t>">:$pieces,
                        OptionalParameter<"std::optional<int64_t>">:$stacked_rows,
                        TPU_AddressesParameter:$inputs,
                        TPU_AddressesParameter:$weights, TPU_AddressesParameter:$operands,
                        TPU_AddressesParameter:$accumulators);
}

def TPU_WindowTilingAttr : TPU_Attr<"WindowTiling", "window_tiling"> {
  let summary = "How a window reduction runs on its NHWC input held on chip";
  let description = [{
    On a `tpu.window_reduce`: per band of `band` output rows of an image,
    the input rows they read (halo and padding included, each row split
    into its column phases for a strided window) are loaded into one of the
    `inputs` buffers (with the band's part of a per-position scale), every
    tap runs on the vector unit into one of the `outputs` buffers, which is
    stored. `operands` is the word address of what is loaded once (the
    weights, the bias, a scalar scale) and of a depthwise convolution's
    product row. Two equal addresses of a role make one buffer. Set by
    `tpu-plan-tiles`.
  }];
  let parameters = (ins "int64_t":$band, TPU_AddressesParameter:$inputs,
                        TPU_AddressesParameter:$outputs, "int64_t":$operands);
}

def TPU_VectorTilingAttr : TPU_Attr<"VectorTiling", "vector_tiling"> {
  let summary = "How one vector-unit operation runs on tiles in the scratchpad";
  let description = [{
    Tiles of up to `rows` x `cols`; the word addresses in the scratchpad of
    the input tile, of the second operand's part (an elementwise op with
    one), and of the output (the input's, for an op in place). Set by
    `tpu-plan-tiles`.
  }];
  let parameters = (ins "int64_t":$rows, "int64_t":$cols, "int64_t":$input,
                        OptionalParameter<"std::optional<int64_t>">:$operand,
                        "int64_t":$output);
}

def TPU_RowGroupTilingAttr : TPU_Attr<"RowGroupTiling", "row_group_tiling"> {
  let summary = "How a row-local fusion group runs on tiles of whole rows";
  let description = [{
    Tiles of up to `rows` whole rows; the word addresses in the scratchpad of
    each value the group reads from outside (`inputs`, in order of first
    use) and of each member's result (`results`, in order). A buffer is
    reused once its value is dead. The values with the group's rows have a
    second set of buffers `second_set` words after the first where it is
    given: the tiles alternate between the sets, so that the next tile
    loads and the last one stores while the vector unit works on this one;
    without it the tiles follow one another. What the group loads whole (a
    row, a scalar) is loaded once. Set by `tpu-plan-tiles`.
  }];
  let parameters = (ins "int64_t":$rows, TPU_AddressesParameter:$inputs,
                        TPU_AddressesParameter:$results,
                        OptionalParameter<"std::optional<int64_t>">:$second_set);
}

def TPU_CopyTilingAttr : TPU_Attr<"CopyTiling", "copy_tiling"> {
  let summary = "How a data-moving operation stages its copies in the scratchpad";
  let description = [{
    Copies go through the scratchpad's first `staging` words in batches; a
    padding fill row waits at word `fill`. Set by `tpu-plan-tiles`.
  }];
  let parameters = (ins "int64_t":$staging, OptionalParameter<"std::optional<int64_t>">:$fill);
}

#endif // TPU_ATTRS
