// TPU dialect -> ISA program bundle: buffer placement in DRAM, tiling for the
// array and on-chip memories of a config, and dependency tokens between the
// load, compute and store queues.
#pragma once

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "tpu/isa/Bundle.h"

namespace tpu::codegen {

// Attribute naming a function argument or result in the bundle's tensor map.
constexpr const char *kTensorNameAttr = "tpu.name";

// `main` must hold only tpu, arith.constant and func.return operations.
// Throws tpu::Error when an operation or a size cannot be mapped to `config`.
Bundle emitProgram(mlir::func::FuncOp main, const HardwareConfig &config);

} // namespace tpu::codegen
