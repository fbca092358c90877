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
void printReal(AsmPrinter &printer, const APFloat &value);
FailureOr<SmallVector<int64_t>> parseAddresses(AsmParser &parser);
void printAddresses(AsmPrinter &printer, ArrayRef<int64_t> addresses);
} // namespace mlir::tpu

#include "tpu/Dialect/TPUOpsDialect.h.inc"
#include "tpu/Dialect/TPUOpsEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tpu/Dialect/TPUAttrs.h.inc"

#define GET_OP_CLASSES
#include "tpu/Dialect/TPUOps.h.inc"

namespace mlir::tpu {

// The 2-D row-major view the hardware works on: leading dimensions collapse
// into rows, the last dimension is the row length (a scalar is 1x1).
RankedTensorType matrixType(RankedTensorType type);

// Names a function argument or result as the model's tensor (the bundle's
// tensor map).
constexpr llvm::StringLiteral kTensorNameAttr = "tpu.name";

// The module's target (a TargetAttr), set by tpuc from --config.
constexpr llvm::StringLiteral kTargetAttr = "tpu.target";
// The target of the module holding `op`; an error on `op` when it has none.
FailureOr<TargetAttr> getTarget(Operation *op);

// Attributes the planning passes set for the program emitter.
constexpr llvm::StringLiteral kFusionGroupAttr = "tpu.fusion_group"; // tpu-fuse
constexpr llvm::StringLiteral kTilingAttr = "tpu.tiling";            // tpu-plan-tiles
constexpr llvm::StringLiteral kDramOffsetAttr = "tpu.dram_offset";   // tpu-plan-memory
constexpr llvm::StringLiteral kDramResultBytesAttr = "tpu.dram_result_bytes";

// The members of the fusion group `first` starts, in block order, `first`
// included; just `first` when it is in no group.
SmallVector<Operation *> fusionGroupFrom(Operation *first);

} // namespace mlir::tpu
