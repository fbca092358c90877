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
