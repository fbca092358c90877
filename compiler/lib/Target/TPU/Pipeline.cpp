// The systolic target's pipelines, also registered by name for tpu-opt.
#include "tpu/Target/TPU/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::tpu {

void buildTPULoweringPipeline(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(createLowerTosaToTPU());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createPlanTiles());
  pm.addNestedPass<func::FuncOp>(createPlanMemory());
}

void buildISAPipeline(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(createLowerToIsa());
  pm.addNestedPass<func::FuncOp>(createScheduleTokens());
}

void registerTPUTargetPipelines() {
  PassPipelineRegistration<TargetPipelineOptions>(
      "tpu-lower",
      "Graph optimization, then the target: fusion, lowering to the TPU dialect and the plans",
      [](OpPassManager &pm, const TargetPipelineOptions &options) {
        buildGraphOptimizationPipeline(pm);
        buildFusionPipeline(pm, options);
        buildTPULoweringPipeline(pm);
      });
}

} // namespace mlir::tpu
