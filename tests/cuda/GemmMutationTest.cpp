// Proof that the emulated GEMM tests can fail: this file is compiled once per
// TPU_CUDA_MUTATION (tests/cuda/CMakeLists.txt), each build breaking one rule of the kernel
// (tpu_cuda.cuh). With a real bug (a swizzle the loads do not share with the stores, a wrong
// fragment index, a missing barrier or cp.async wait) every case must produce wrong numbers; with
// no mutation every case must be right and free of bank conflicts; without the swizzle the results
// stay right but the ldmatrix phases conflict.
#include "GemmTestUtil.h"

#include <gtest/gtest.h>

using namespace gemm_test;
using tpu_cuda::bf16;
using tpu_cuda::TileConfig;

namespace {

constexpr bool kMutationBreaksResults = TPU_CUDA_MUTATION != TPU_CUDA_MUTATION_NONE &&
                                        TPU_CUDA_MUTATION != TPU_CUDA_MUTATION_NO_SWIZZLE;

// Runs one GEMM under several schedules (reverse order and three shuffled warp orders): a
// mutation must be caught under every one of them, not by a lucky order.
template <class Run> void expectOutcomeForEverySchedule(Run run) {
  for (uint64_t seed : {0, 1, 2, 3}) {
    tpu_emu::set_schedule_seed(seed);
    long mismatch = run();
    if (kMutationBreaksResults)
      EXPECT_NE(mismatch, -1) << "mutation " << TPU_CUDA_MUTATION << " went unnoticed, seed "
                              << seed;
    else
      EXPECT_EQ(mismatch, -1) << "first wrong element " << mismatch << ", seed " << seed;
  }
  tpu_emu::set_schedule_seed(0);
}

TEST(GemmMutation, PipelinedWeights) {
  using Tile = TileConfig<64, 64, 32, 1, 2, 3>;
  expectOutcomeForEverySchedule([] {
    return denseGemmMismatch<Tile, bf16, bf16, BLayout::WeightsNK>({1, 64, 64, 256});
  });
}

TEST(GemmMutation, FloatActivationsTimesActivations) {
  using Tile = TileConfig<32, 64, 32, 1, 2, 2>;
  expectOutcomeForEverySchedule([] {
    return denseGemmMismatch<Tile, float, bf16, BLayout::ActivationsKN>({2, 40, 64, 96});
  });
}

// Two warps: within one warp every lane has waited for its own copies before the ldmatrix that
// reads them, so a missing barrier only shows between warps.
TEST(GemmMutation, SynchronousSingleStage) {
  using Tile = TileConfig<64, 32, 32, 2, 1, 1>;
  expectOutcomeForEverySchedule([] {
    return denseGemmMismatch<Tile, bf16, bf16, BLayout::WeightsNK>({1, 64, 32, 64});
  });
}

TEST(GemmMutation, FourWarps) {
  using Tile = TileConfig<64, 64, 32, 2, 2, 2>;
  expectOutcomeForEverySchedule([] {
    return denseGemmMismatch<Tile, bf16, bf16, BLayout::ActivationsKN>({1, 64, 64, 128});
  });
}

TEST(GemmMutation, BankConflictsOnlyWithoutSwizzle) {
  using Tile = TileConfig<128, 128, 32, 2, 4, 2>;
  tpu_emu::reset_stats();
  denseGemmMismatch<Tile, bf16, bf16, BLayout::WeightsNK>({1, 128, 128, 64});
  denseGemmMismatch<Tile, bf16, bf16, BLayout::ActivationsKN>({1, 128, 128, 64});
  uint64_t conflicts = tpu_emu::stats().ldmatrix_bank_conflicts;
  if (TPU_CUDA_MUTATION == TPU_CUDA_MUTATION_NO_SWIZZLE) {
    EXPECT_GT(conflicts, 0u);
  } else if (TPU_CUDA_MUTATION == TPU_CUDA_MUTATION_NONE) {
    EXPECT_EQ(conflicts, 0u);
  }
}

} // namespace
