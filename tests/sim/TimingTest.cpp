// The cycle counts of docs/simulator.md on programs small enough to follow by hand.
#include "SimTestUtil.h"

#include <gtest/gtest.h>

namespace tpu::sim::test {
namespace {

// smallConfig(): DRAM latency 10 cycles at 8 bytes per cycle, vector latency
// 2 with 4 lanes, a 4 x 4 array.
TEST(Timing, LoadComputeStorePipeline) {
  std::vector<uint8_t> dram(256);
  Bundle bundle = makeBundle(
      {dmaLoad(0, 4, Space::Scratchpad, 0, 4, 2, 4, DType::F32), // pc 0
       push(Queue::Load, Queue::Compute), pop(Queue::Load, Queue::Compute),
       vectorUnary(Opcode::VRelu, {Space::Scratchpad, 8}, {Space::Scratchpad, 0}, 2, 4), // pc 3
       push(Queue::Compute, Queue::Store), pop(Queue::Compute, Queue::Store),
       dmaStore(128, 4, Space::Scratchpad, 8, 4, 2, 4, DType::F32), halt()},
      dram.size());
  SimStats stats = simulate(bundle, dram);
  // Instruction pc is dispatched at cycle pc.
  // load:    dma.ld 32 bytes 0..14 (10 + 32/8), push 14..15 (token at 14)
  // compute: pop from 2, token at 14, done 15; v.relu 15..19 (2 + 2 rows * ceil(4/4)); push 19..20
  // store:   pop from 5, token at 19, done 20; dma.st 20..34
  EXPECT_EQ(stats.total_cycles, 34u);
  EXPECT_EQ(stats.queue(Queue::Load).busy_cycles, 15u);
  EXPECT_EQ(stats.queue(Queue::Load).wait_cycles, 0u);
  EXPECT_EQ(stats.queue(Queue::Compute).busy_cycles, 6u);
  EXPECT_EQ(stats.queue(Queue::Compute).wait_cycles, 12u);
  EXPECT_EQ(stats.queue(Queue::Compute).instructions, 3u);
  EXPECT_EQ(stats.queue(Queue::Store).busy_cycles, 15u);
  EXPECT_EQ(stats.queue(Queue::Store).wait_cycles, 14u);
  EXPECT_EQ(stats.queue(Queue::Control).instructions, 8u);
  EXPECT_EQ(stats.dram_bytes_read, 32u);
  EXPECT_EQ(stats.dram_bytes_written, 32u);
  EXPECT_EQ(stats.macs, 0u);
  EXPECT_EQ(stats.mxu_utilization, 0.0);
}

TEST(Timing, MatrixUnitAndUtilization) {
  std::vector<uint8_t> dram(64);
  MatMulFields mm;
  mm.rows = 5;
  mm.cols = 3;
  mm.srcStride = 3;
  mm.dstStride = 2;
  mm.flip = true;
  Bundle bundle = makeBundle({loadWeights(100, 2, 3, 2), matMul(mm), halt()}, dram.size());
  SimStats stats = simulate(bundle, dram);
  // ldw: 3 rows, 0..3; mm: 5 + R + C - 1 = 12 cycles, 3..15.
  EXPECT_EQ(stats.total_cycles, 15u);
  EXPECT_EQ(stats.queue(Queue::Compute).busy_cycles, 15u);
  EXPECT_EQ(stats.macs, 5u * 3 * 2);
  EXPECT_DOUBLE_EQ(stats.mxu_utilization, 30.0 / (4 * 4 * 15));
}

TEST(Timing, VectorLanesAndDispatchBound) {
  std::vector<uint8_t> dram(64);
  // 3 rows of 5 on 4 lanes: 2 + 3 * 2 = 8 cycles.
  Bundle vector = makeBundle(
      {vectorUnary(Opcode::VExp, {Space::Accumulator, 0}, {Space::Scratchpad, 0}, 3, 5), halt()},
      dram.size());
  EXPECT_EQ(simulate(vector, dram).total_cycles, 8u);

  // Nothing but the controller: one cycle per instruction.
  std::vector<Instruction> nops(9, isa::makeInstruction(Opcode::Nop, {}));
  nops.push_back(halt());
  SimStats stats = simulate(makeBundle(nops, dram.size()), dram);
  EXPECT_EQ(stats.total_cycles, 10u);
  EXPECT_EQ(stats.queue(Queue::Control).busy_cycles, 10u);
}

TEST(Timing, CyclesDoNotDependOnTheClock) {
  std::vector<uint8_t> dram(256);
  HardwareConfig fast = smallConfig();
  fast.clock_ghz = 2.7;
  Bundle bundle = makeBundle({dmaLoad(0, 4, Space::Scratchpad, 0, 4, 3, 4, DType::BF16), halt()},
                             dram.size(), fast);
  // 24 bytes: 10 + ceil(24 / 8) = 13.
  EXPECT_EQ(simulate(bundle, dram).total_cycles, 13u);
}

} // namespace
} // namespace tpu::sim::test
