// The TPU hardware-level dialect (see TPUOps.td).
#pragma once

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tpu {
// Parameter parsers and printers of the attributes (TPUAttrs.td).
FailureOr<APFloat> parseReal(AsmParser &parser);
FailureOr<std::optional<APFloat>> parseOptionalReal(AsmParser &parser);
FailureOr<std::optional<uint32_t>> parseOptionalCount(AsmParser &parser);
void printReal(AsmPrinter &printer, const APFloat &value);
FailureOr<SmallVector<int64_t>> parseAddresses(AsmParser &parser);
void printAddresses(AsmPrinter &printer, ArrayRef<int64_t> addresses);
} // namespace mlir::tpu

#include "tpu/Dialect/TPUOpsDialect.h.inc"
#include "tpu/Dialect/TPUOpsEnums.h.inc"

#include "tpu/Dialect/TPUInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tpu/Dialect/TPUAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "tpu/Dialect/TPUTypes.h.inc"

#define GET_OP_CLASSES
#include "tpu/Dialect/TPUOps.h.inc"

namespace mlir::tpu {

// The 2-D row-major view the hardware works on: leading dimensions collapse
// into rows, the last dimension is the row length (a scalar is 1x1).
RankedTensorType matrixType(RankedTensorType type);

// How the second operand of an elementwise op spreads over the first, both
// seen as matrices: the same shape, one row reused for every row, one
// element, or one column (element r for row r), tried in that order; none
// for any other shape. For operands that broadcast as numpy (and TOSA) do,
// this is the N-D broadcast too. The vector unit broadcasts each of them
// (`broadcast=none|row|scalar|column`).
enum class Spread { Same, Row, Scalar, Column };
std::optional<Spread> spreadOf(ArrayRef<int64_t> matrix, ArrayRef<int64_t> operand);
std::optional<Spread> spreadOf(Value full, Value operand);

// The graph operation a location names, as the tools show it: "fc1 (Gemm)"
// for an imported node, "file.mlir:3:5" for text; empty when unknown.
std::string sourceName(Location loc);

// Names a function argument or result as the model's tensor (the bundle's
// tensor map).
constexpr llvm::StringLiteral kTensorNameAttr = "tpu.name";

// The module's target (a TargetAttr), set by tpuc from --config.
constexpr llvm::StringLiteral kTargetAttr = "tpu.target";
// The target of the module holding `op`; an error on `op` when it has none.
FailureOr<TargetAttr> getTarget(Operation *op);

// The plans the target's passes record. tpu-plan-tiles: how a matmul is
// tiled. tpu-plan-memory: the DRAM byte address of each argument and
// materialized result, the program's DRAM size, and per result the longest
// chain of reductions feeding it (the output check's tolerance).
constexpr llvm::StringLiteral kTilingAttr = "tpu.tiling";
constexpr llvm::StringLiteral kDramAddressAttr = "tpu.dram_address";
constexpr llvm::StringLiteral kDramBytesAttr = "tpu.dram_bytes";
// On a function: its compulsory work per source op, from tpu-record-work.
constexpr llvm::StringLiteral kWorkAttr = "tpu.work";
constexpr llvm::StringLiteral kReductionLengthAttr = "tpu.reduction_length";
// tpu-plan-memory: on a tpu.dram_constant or a materialized result (and the
// tpu.stored it is lowered to), the element type DRAM holds it as when that
// is not its own: "bf16" for what only a bf16 array reads (its operands are
// rounded to bf16 anyway). Absent: f32, or i32 for an integer tensor.
constexpr llvm::StringLiteral kDramDTypeAttr = "tpu.dram_dtype";
// On a function result the program stores as int32 words where the model
// declares another integer type (ArgMax's int64 indices): that type, which
// the bundle records for the host (tpu-lower-tosa).
constexpr llvm::StringLiteral kHostTypeAttr = "tpu.host_type";

// tpu-plan-tiles: on a tpu.transpose between NCHW and NHWC that moves no
// data of its own: its consumers read its NCHW input into their NHWC tiles
// (perms [0, 2, 3, 1]), or its producer stores its NHWC tiles into its NCHW
// result ([0, 3, 1, 2]), with transposing DMA transfers (docs/compiler.md,
// "Layout transposes"). It has no buffer and no instructions.
constexpr llvm::StringLiteral kLayoutFoldedAttr = "tpu.layout_folded";

// Whether `op` is a folded layout transpose: it moves no data and has no
// buffer of its own (its readers read its input, its producer writes its
// result).
bool isFoldedLayout(Operation *op);

// The tensor whose DRAM place `value` has: through views and folded layout
// transposes, which move no data.
Value dramTensor(Value value);

// Where tpu-plan-memory put a tensor in DRAM (a view, or a folded layout
// transpose, is its input's place); none when it has not.
std::optional<uint64_t> dramAddress(Value value);

// Whether the window rows `im2col` stands for are never written: every
// user is a matmul that tpu-plan-tiles planned as a convolution on the
// input held on chip (#tpu.conv_tiling), which reads the input in place.
bool readInPlace(Im2ColOp im2col);

} // namespace mlir::tpu
