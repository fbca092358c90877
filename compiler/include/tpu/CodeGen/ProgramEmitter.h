// TPU dialect -> ISA program bundle: the instruction streams of the load,
// compute and store queues with the dependency tokens between them,
// following the matmul tiling of tpu-plan-tiles and the DRAM places of
// tpu-plan-memory.
#pragma once

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "tpu/isa/Bundle.h"

namespace tpu::codegen {

// `main` must hold only tpu, arith.constant and func.return operations, and
// carry both plans (buildTPULoweringPipeline runs the passes).
// Throws tpu::Error when an operation or a size cannot be mapped to `config`.
Bundle emitProgram(mlir::func::FuncOp main, const HardwareConfig &config);

} // namespace tpu::codegen
