// The pass pipelines tpuc runs, also registered by name for tpu-opt.
#include "tpu/Transforms/Passes.h"

#include "mlir/Dialect/Tosa/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::tpu {

void buildGraphOptimizationPipeline(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(createVerifyShapes());
  pm.addPass(createCanonicalizerPass());
  // Weight transposes become constants here, which the batchnorm fold needs.
  pm.addNestedPass<func::FuncOp>(tosa::createTosaLayerwiseConstantFoldPass());
  pm.addNestedPass<func::FuncOp>(createFoldConstants());
  // After the folds that make a Gemm's transposed weights a constant.
  pm.addNestedPass<func::FuncOp>(createFoldFlattenTranspose());
  pm.addNestedPass<func::FuncOp>(createFoldBatchNorm());
  // After the fold, which matches the per-channel rows this may rewrite.
  pm.addNestedPass<func::FuncOp>(createMatrixBroadcast());
  pm.addPass(createCSEPass());
}

void buildFusionPipeline(OpPassManager &pm, const TargetPipelineOptions &options) {
  pm.addPass(createAssignTarget(AssignTargetOptions{options.config}));
  pm.addNestedPass<func::FuncOp>(createFuseOps(FuseOpsOptions{options.fusion}));
}

void registerTPUPipelines() {
  PassPipelineRegistration<>(
      "tpu-graph-opt",
      "Target-neutral graph clean-up: verify shapes, canonicalize, "
      "fold TOSA layer ops and elementwise ops on constants, fold a transpose before a "
      "flatten into the weights reading it, fold batchnorm into weights, "
      "broadcasts as 2-D rows or columns, CSE",
      buildGraphOptimizationPipeline);
}

} // namespace mlir::tpu
