// Passes of the systolic-array target and its pipelines.
#pragma once

#include "tpu/Transforms/Passes.h"

namespace mlir::tpu {

#define GEN_PASS_DECL
#include "tpu/Target/TPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tpu/Target/TPU/Passes.h.inc"

// The graph on the systolic target: lowering to the TPU dialect and its
// clean-up, then the plans: tiling and on-chip buffers (tpu-plan-tiles) and
// DRAM placement (tpu-plan-memory).
void buildTPULoweringPipeline(OpPassManager &pm, llvm::StringRef dramDType);

// The planned TPU dialect to instructions: each unit's lowering
// (tpu-lower-matmuls, tpu-lower-vector-ops, tpu-lower-data-movement).
void buildInstructionLoweringPipeline(OpPassManager &pm);
// Those, then the tokens (tpu-schedule-tokens): the ISA level, ready for
// the encoder. With fusion groups (`keepEveryStore` false), stores nothing
// reads again are dropped (tpu-drop-dead-stores); without, every
// operation's result goes to DRAM.
void buildISAPipeline(OpPassManager &pm, bool keepEveryStore);

// Registers the named pipelines "tpu-lower" (the graph, fusion and the
// target) and "tpu-lower-to-isa" for tpu-opt.
void registerTPUTargetPipelines();

} // namespace mlir::tpu
