// Passes of the TPU compiler and the pipeline tpuc runs.
#pragma once

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "tpu/Dialect/TPUDialect.h"

namespace mlir::tpu {

#define GEN_PASS_DECL
#include "tpu/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tpu/Transforms/Passes.h.inc"

// Graph-level clean-up: shape verification, canonicalization (upstream
// folders), constant folding of TOSA layer ops on constants, batchnorm folded
// into weights, CSE. Target-neutral.
void buildGraphOptimizationPipeline(OpPassManager &pm);

// What the target pipeline is asked for: the hardware (tpu-assign-target)
// and the fusion mode (tpu-fuse).
struct TargetPipelineOptions : public PassPipelineOptions<TargetPipelineOptions> {
  Option<std::string> config{*this, "config",
                             llvm::cl::desc("A preset's name or a config JSON file (default: "
                                            "the module's target, else tpu-32x32)")};
  Option<std::string> fusion{*this, "fusion", llvm::cl::desc("none, epilogue or full"),
                             llvm::cl::init("full")};
  Option<std::string> dramDType{
      *this, "dram-dtype",
      llvm::cl::desc("array (what only the array reads is stored in its dtype) or f32"),
      llvm::cl::init("array")};
};

// The target set on the module (tpu-assign-target) and the fusion groups it
// allows formed on the graph (tpu-fuse).
void buildFusionPipeline(OpPassManager &pm, const TargetPipelineOptions &options);
// Registers the named pipeline "tpu-graph-opt" for tpu-opt.
void registerTPUPipelines();

} // namespace mlir::tpu
