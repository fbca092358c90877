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
