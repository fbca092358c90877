// Token channels: ordering across queues, and deadlock detection.
#include "SimTestUtil.h"

#include "tpu/isa/Error.h"

#include <gtest/gtest.h>

namespace tpu::sim::test {
namespace {

// Loads 4 floats, negates them with v.sub (0 - x) and stores them, with or
// without the tokens that order the three queues.
std::vector<float> negate(const std::vector<float> &input, bool synchronized) {
  std::vector<uint8_t> dram(256);
  putFloats(dram, 0, input);
  std::vector<Instruction> program = {dmaLoad(0, 4, Space::Scratchpad, 0, 4, 1, 4, DType::F32)};
  if (synchronized) {
    program.push_back(push(Queue::Load, Queue::Compute));
    program.push_back(pop(Queue::Load, Queue::Compute));
  }
  // 0 - x, with the zero taken from scratchpad word 100.
  program.push_back(vectorBinary(Opcode::VSub, {Space::Scratchpad, 8}, {Space::Scratchpad, 100},
                                 {Space::Scratchpad, 0}, isa::Broadcast::None, 1, 4));
  if (synchronized) {
    program.push_back(push(Queue::Compute, Queue::Store));
    program.push_back(pop(Queue::Compute, Queue::Store));
  }
  program.push_back(dmaStore(128, 4, Space::Scratchpad, 8, 4, 1, 4, DType::F32));
  program.push_back(halt());
  simulate(makeBundle(program, dram.size()), dram);
  return getFloats(dram, 128, 4);
}

TEST(Sync, TokensOrderLoadComputeAndStore) {
  std::vector<float> input = {1.0f, -2.0f, 3.5f, 0.25f};
  EXPECT_EQ(negate(input, true), (std::vector<float>{-1.0f, 2.0f, -3.5f, -0.25f}));
}

TEST(Sync, WithoutTokensTheQueuesRace) {
  // The v.sub reads its operands before the load has written them, and the
  // store reads the scratchpad before the v.sub has written it: the result is
  // the scratchpad's initial zeros, as on the hardware.
  EXPECT_EQ(negate({1.0f, -2.0f, 3.5f, 0.25f}, false), (std::vector<float>(4, 0.0f)));
}

TEST(Sync, TokensAccumulate) {
  // Two pushes before either pop: both pops go through.
  std::vector<uint8_t> dram(64);
  Bundle bundle =
      makeBundle({push(Queue::Load, Queue::Store), push(Queue::Load, Queue::Store),
                  pop(Queue::Load, Queue::Store), pop(Queue::Load, Queue::Store), halt()},
                 dram.size());
  SimStats stats = simulate(bundle, dram);
  EXPECT_EQ(stats.component(Component::DmaLoad).instructions, 2u);
  EXPECT_EQ(stats.component(Component::DmaStore).instructions, 2u);
}

// A weight tile loaded, then multiplied with 32 rows, while the load queue
// waits for a compute token before overwriting the tile's scratchpad
// words with other weights: the product is X * W either way, as mxu.ldw
// has copied W into the array. A full token comes once the product is done
// (the array drained), a weights=1 token once the mxu.ldw is.
struct OverwrittenPanel {
  std::vector<float> product;
  uint64_t loadTokenStall, cycles;
};

OverwrittenPanel overwritePanelAfter(bool weightLoadsOnly) {
  HardwareConfig config = smallConfig();
  config.scratchpad.banks = 2; // X in bank 0 (words 0-127), W in bank 1
  constexpr uint64_t rows = 32, weightsWord = 128;
  constexpr uint64_t xAt = 0, wAt = 512, otherWAt = 576, yAt = 640;
  std::vector<uint8_t> dram(yAt + rows * 16);
  std::vector<float> x(rows * 4), w(16), otherW(16, 100.0f);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i % 7) - 3.0f;
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = float(i % 5) - 2.0f;
  putFloats(dram, xAt, x);
  putFloats(dram, wAt, w);
  putFloats(dram, otherWAt, otherW);
  MatMulFields product;
  product.srcStride = product.dstStride = product.cols = 4;
  product.rows = rows;
  product.flip = true;
  Instruction released = push(Queue::Compute, Queue::Load);
  if (weightLoadsOnly)
    released.set(Field::Weights, 1);
  std::vector<Instruction> program = {
      dmaLoad(wAt, 4, Space::Scratchpad, weightsWord, 4, 4, 4, DType::F32),
      dmaLoad(xAt, 4, Space::Scratchpad, 0, 4, rows, 4, DType::F32),
      push(Queue::Load, Queue::Compute),
      pop(Queue::Load, Queue::Compute),
      loadWeights(weightsWord, 4, 4, 4),
      matMul(product),
      released,
      pop(Queue::Compute, Queue::Load),
      dmaLoad(otherWAt, 4, Space::Scratchpad, weightsWord, 4, 4, 4, DType::F32),
      push(Queue::Compute, Queue::Store),
      pop(Queue::Compute, Queue::Store),
      dmaStore(yAt, 4, Space::Accumulator, 0, 4, rows, 4, DType::F32),
      halt()};
  SimStats stats = simulate(makeBundle(program, dram.size(), config), dram);
  return {getFloats(dram, yAt, rows * 4),
          stats.component(Component::DmaLoad).stalled[unsigned(StallReason::Token)],
          stats.total_cycles};
}

// X * W in plain C++: small integers, exact in bf16 and fp32.
std::vector<float> referenceProduct() {
  std::vector<float> y(32 * 4, 0.0f);
  for (size_t r = 0; r < 32; ++r)
    for (size_t c = 0; c < 4; ++c)
      for (size_t k = 0; k < 4; ++k)
        y[r * 4 + c] += (float((r * 4 + k) % 7) - 3.0f) * (float((k * 4 + c) % 5) - 2.0f);
  return y;
}

TEST(Sync, WeightsTokenFreesTheTileOnceLoadedNotOnceMultiplied) {
  OverwrittenPanel full = overwritePanelAfter(false), early = overwritePanelAfter(true);
  EXPECT_EQ(full.product, referenceProduct());
  EXPECT_EQ(early.product, referenceProduct());
  // The mm starts as its mxu.ldw ends and completes m + R + n - 1 cycles
  // later (docs/simulator.md): the full token's wait, and with it the
  // overwrite and the run, end that much later.
  const uint64_t productAfterLoad = 32 + 4 + 4 - 1;
  EXPECT_EQ(full.loadTokenStall - early.loadTokenStall, productAfterLoad);
  EXPECT_EQ(full.cycles - early.cycles, productAfterLoad);
}

TEST(Sync, PopThatCanNeverBeSatisfiedIsADeadlock) {
  std::vector<uint8_t> dram(64);
  Bundle bundle = makeBundle({pop(Queue::Load, Queue::Compute), halt()}, dram.size());
  try {
    simulate(bundle, dram);
    FAIL() << "expected a deadlock";
  } catch (const Error &error) {
    EXPECT_STREQ(error.what(), "deadlock: compute waits at pc 0 (sync.pop from=load to=compute)");
  }
}

TEST(Sync, QueuesWaitingOnEachOtherAreADeadlock) {
  std::vector<uint8_t> dram(64);
  Bundle bundle =
      makeBundle({pop(Queue::Store, Queue::Load), push(Queue::Load, Queue::Store),
                  pop(Queue::Load, Queue::Store), push(Queue::Store, Queue::Load), halt()},
                 dram.size());
  try {
    simulate(bundle, dram);
    FAIL() << "expected a deadlock";
  } catch (const Error &error) {
    EXPECT_STREQ(error.what(), "deadlock: load waits at pc 0 (sync.pop from=store to=load); "
                               "store waits at pc 2 (sync.pop from=load to=store)");
  }
}

TEST(Sync, FullQueueStallingTheControllerIsADeadlock) {
  // The compute queue waits for a token the load queue would push, but the
  // push comes after more compute instructions than the compute queue holds.
  std::vector<Instruction> program = {pop(Queue::Load, Queue::Compute)};
  for (unsigned i = 0; i < kQueueDepth + 1; ++i)
    program.push_back(
        vectorUnary(Opcode::VCopy, {Space::Scratchpad, 1}, {Space::Scratchpad, 0}, 1, 1));
  program.push_back(push(Queue::Load, Queue::Compute));
  program.push_back(halt());
  std::vector<uint8_t> dram(64);
  try {
    simulate(makeBundle(program, dram.size()), dram);
    FAIL() << "expected a deadlock";
  } catch (const Error &error) {
    std::string message = error.what();
    EXPECT_EQ(message.rfind("deadlock: compute waits at pc 0 (sync.pop from=load to=compute); "
                            "controller stalls at pc ",
                            0),
              0u)
        << message;
    EXPECT_NE(message.find("the compute queue is full"), std::string::npos) << message;
  }
}

} // namespace
} // namespace tpu::sim::test
