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
void buildTPULoweringPipeline(OpPassManager &pm);

// The planned TPU dialect to the ISA level: instructions (tpu-lower-to-isa)
// and their tokens (tpu-schedule-tokens), ready for the encoder.
void buildISAPipeline(OpPassManager &pm);

// Registers the named pipeline "tpu-lower" (the graph, fusion and the
// target) for tpu-opt.
void registerTPUTargetPipelines();

} // namespace mlir::tpu
