// The ISA level of the TPU dialect (after tpu-schedule-tokens) -> a program
// bundle: one instruction per tpu.inst, the constants where their
// tpu.dram_address says, the tensor map from @main's arguments and results,
// and the config from the module's target.
#pragma once

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "tpu/isa/Bundle.h"

namespace tpu::codegen {

// Fails with an error on the operation that is not at the ISA level.
mlir::FailureOr<Bundle> encodeBundle(mlir::func::FuncOp main);

} // namespace tpu::codegen
