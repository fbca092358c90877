// The TPU hardware-level dialect (see TPUOps.td).
#pragma once

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tpu/Dialect/TPUOpsDialect.h.inc"
#include "tpu/Dialect/TPUOpsEnums.h.inc"

#define GET_OP_CLASSES
#include "tpu/Dialect/TPUOps.h.inc"

namespace mlir::tpu {

// The 2-D row-major view the hardware works on: leading dimensions collapse
// into rows, the last dimension is the row length (a scalar is 1x1).
RankedTensorType matrixType(RankedTensorType type);

// Attributes the planning passes set for the program emitter.
constexpr llvm::StringLiteral kFusionGroupAttr = "tpu.fusion_group"; // tpu-fuse
constexpr llvm::StringLiteral kTilingAttr = "tpu.tiling";            // tpu-plan-tiles
constexpr llvm::StringLiteral kDramOffsetAttr = "tpu.dram_offset";   // tpu-plan-memory
constexpr llvm::StringLiteral kDramResultBytesAttr = "tpu.dram_result_bytes";

// The members of the fusion group `first` starts, in block order, `first`
// included; just `first` when it is in no group.
SmallVector<Operation *> fusionGroupFrom(Operation *first);

} // namespace mlir::tpu
