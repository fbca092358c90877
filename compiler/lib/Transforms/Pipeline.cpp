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
  pm.addNestedPass<func::FuncOp>(createFoldBatchNorm());
  pm.addPass(createCSEPass());
}

void buildTPULoweringPipeline(OpPassManager &pm, const std::string &fusion,
                              const std::string &config) {
  pm.addNestedPass<func::FuncOp>(createLowerTosaToTPU());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (fusion != "none")
    pm.addNestedPass<func::FuncOp>(createFuseOps(FuseOpsOptions{fusion}));
  pm.addNestedPass<func::FuncOp>(createPlanTiles(PlanTilesOptions{config}));
  pm.addNestedPass<func::FuncOp>(createPlanMemory());
}

void registerTPUPipelines() {
  PassPipelineRegistration<>("tpu-graph-opt",
                             "Target-neutral graph clean-up: verify shapes, canonicalize, "
                             "fold TOSA layer ops on constants, fold batchnorm into weights, "
                             "CSE",
                             buildGraphOptimizationPipeline);
  PassPipelineRegistration<>("tpu-lower",
                             "Graph optimization, then lowering to the TPU dialect and fusion",
                             [](OpPassManager &pm) {
                               buildGraphOptimizationPipeline(pm);
                               buildTPULoweringPipeline(pm);
                             });
}

} // namespace mlir::tpu
