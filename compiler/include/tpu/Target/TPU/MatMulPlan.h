// How a matmul is tiled for a hardware config: the decision tpu-plan-tiles
// records on each matmul (`tpu.tiling`) and tpu-lower-matmuls follows.
#pragma once

#include "tpu/Target/TPU/IsaLimits.h"
#include "tpu/isa/HardwareConfig.h"

#include <array>
#include <cstdint>
#include <optional>

namespace tpu::codegen {

// Y[M,N] = A[M,K] * W[K,N]: output tiles of tileM rows x tileN columns (one
// or more C-wide chunks), accumulated over K in steps of tileK, with
// activation blocks of tileM x kBlock and weight panels of kBlock x tileN
// (docs/compiler.md). A role whose two addresses are equal has one buffer.
// tpu-plan-tiles records it as a #tpu.matmul_tiling.
struct MatMulPlan {
  int64_t tileM = 0, tileN = 0, tileK = 0, kBlock = 0;
  // Word addresses of the two buffers of each role: in the scratchpad,
  // activation blocks, weight panels and what a fused epilogue loads; in the
  // accumulators, output tiles.
  std::array<int64_t, 2> activations{}, weights{}, operands{}, accumulators{};
  double estimatedCycles = 0; // the cost model's, for comparing plans
};

// What the fused epilogue does per output tile: its vector ops, and what
// they load: a whole tile, one row, or one or two scalars.
struct EpilogueOperands {
  int64_t ops = 0;
  bool tile = false;
  bool row = false;
  bool scalar = false;
};

// The plan the cost model estimates fastest among those that fit the
// config's memories, or nullopt when not even one weight tile and one row
// fit.
std::optional<MatMulPlan> planMatMul(int64_t M, int64_t K, int64_t N,
                                     const EpilogueOperands &epilogue,
                                     const HardwareConfig &config);

// Words of scratchpad and accumulator the smallest plan needs.
struct MatMulMemoryNeeds {
  uint64_t scratchpadWords, accumulatorWords;
};
MatMulMemoryNeeds minimumMatMulMemory(int64_t K, int64_t N, const EpilogueOperands &epilogue,
                                      const HardwareConfig &config);

} // namespace tpu::codegen
