// Passes of the TPU compiler and the pipeline tpuc runs.
#pragma once

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "tpu/Dialect/TPUDialect.h"

namespace mlir::tpu {

#define GEN_PASS_DECL
#include "tpu/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tpu/Transforms/Passes.h.inc"

// Graph-level clean-up: shape verification, canonicalization (upstream
// folders), constant folding of TOSA layer ops on constants, batchnorm folded
// into weights, CSE.
// Target-neutral.
void buildGraphOptimizationPipeline(OpPassManager &pm);
// Graph level to the TPU dialect, clean-up of the result, fusion (`fusion`:
// none, epilogue or full; see tpu-fuse), then the plans for the hardware
// config at `config` (empty: the default preset): matmul tiling
// (tpu-plan-tiles) and DRAM placement (tpu-plan-memory).
void buildTPULoweringPipeline(OpPassManager &pm, const std::string &fusion = "full",
                              const std::string &config = "");
// Registers the named pipelines "tpu-graph-opt" and "tpu-lower" for tpu-opt.
void registerTPUPipelines();

} // namespace mlir::tpu
