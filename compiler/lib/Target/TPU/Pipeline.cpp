// The systolic target's pipelines, also registered by name for tpu-opt.
#include "tpu/Target/TPU/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::tpu {

void buildTPULoweringPipeline(OpPassManager &pm, llvm::StringRef dramDType) {
  pm.addNestedPass<func::FuncOp>(createLowerTosaToTPU());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createPlanTiles(PlanTilesOptions{dramDType.str()}));
  pm.addNestedPass<func::FuncOp>(createPlanMemory(PlanMemoryOptions{dramDType.str()}));
}

void buildInstructionLoweringPipeline(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(createRecordWork());
  pm.addNestedPass<func::FuncOp>(createLowerMatMuls());
  pm.addNestedPass<func::FuncOp>(createLowerWindowReductions());
  pm.addNestedPass<func::FuncOp>(createLowerVectorOps());
  pm.addNestedPass<func::FuncOp>(createLowerDataMovement());
}

void buildISAPipeline(OpPassManager &pm, bool keepEveryStore) {
  buildInstructionLoweringPipeline(pm);
  pm.addNestedPass<func::FuncOp>(createPrefetchConstants());
  pm.addNestedPass<func::FuncOp>(createForwardStores());
  if (!keepEveryStore)
    pm.addNestedPass<func::FuncOp>(createDropDeadStores());
  pm.addNestedPass<func::FuncOp>(createFoldIntoCopies());
  pm.addNestedPass<func::FuncOp>(createPreloadWeights());
  pm.addNestedPass<func::FuncOp>(createScheduleTokens());
}

void registerTPUTargetPipelines() {
  PassPipelineRegistration<>(
      "tpu-lower-to-isa",
      "The planned TPU dialect to instructions: tpu-record-work, tpu-lower-matmuls, "
      "tpu-lower-window-reductions, tpu-lower-vector-ops and tpu-lower-data-movement",
      buildInstructionLoweringPipeline);
  PassPipelineRegistration<TargetPipelineOptions>(
      "tpu-lower",
      "Graph optimization, then the target: fusion, lowering to the TPU dialect and the plans",
      [](OpPassManager &pm, const TargetPipelineOptions &options) {
        buildGraphOptimizationPipeline(pm);
        buildFusionPipeline(pm, options);
        buildTPULoweringPipeline(pm, options.dramDType);
      });
}

} // namespace mlir::tpu
