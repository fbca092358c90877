// Illegal programs stop with "pc N (disassembly): reason"; the kernel runs
// again afterwards.
#include "SimTestUtil.h"

#include "tpu/isa/Error.h"

#include <gtest/gtest.h>

namespace tpu::sim::test {
namespace {

// Runs the program and returns the error message, or "" when it succeeds.
std::string errorOf(const std::vector<Instruction> &program,
                    const HardwareConfig &config = smallConfig(), size_t dramBytes = 64) {
  std::vector<uint8_t> dram(dramBytes);
  try {
    simulate(makeBundle(program, dramBytes, config), dram);
  } catch (const Error &error) {
    return error.what();
  }
  return "";
}

std::string expectedError(size_t pc, const Instruction &instruction, const std::string &reason) {
  return "pc " + std::to_string(pc) + " (" + isa::disassemble(instruction) + "): " + reason;
}

TEST(Errors, ScratchpadAddressOutOfRange) {
  Instruction load = dmaLoad(0, 4, Space::Scratchpad, 250, 4, 2, 4, DType::F32);
  EXPECT_EQ(errorOf({load, halt()}),
            expectedError(0, load, "sram words 250..257 exceed the scratchpad (256 words)"));
}

TEST(Errors, DramAddressOutOfRange) {
  Instruction store = dmaStore(50, 4, Space::Accumulator, 0, 4, 2, 4, DType::BF16);
  EXPECT_EQ(errorOf({store, halt()}),
            expectedError(0, store, "DRAM bytes 0x32..0x41 exceed the DRAM (0x40 bytes)"));
  Instruction fits = dmaStore(48, 4, Space::Accumulator, 0, 4, 2, 4, DType::BF16);
  EXPECT_EQ(errorOf({fits, halt()}), "");
  Instruction wide = dmaStore(48, 4, Space::Accumulator, 0, 4, 2, 4, DType::F32);
  EXPECT_EQ(errorOf({wide, halt()}),
            expectedError(0, wide, "DRAM bytes 0x30..0x4f exceed the DRAM (0x40 bytes)"));
}

TEST(Errors, VectorOperandsOutOfRange) {
  Instruction add = vectorBinary(Opcode::VAdd, {Space::Accumulator, 250}, {Space::Scratchpad, 0},
                                 {Space::Scratchpad, 0}, isa::Broadcast::Row, 2, 4);
  EXPECT_EQ(errorOf({add, halt()}),
            expectedError(0, add, "dst words 250..257 exceed the accumulator (256 words)"));
  Instruction row = vectorBinary(Opcode::VMul, {Space::Scratchpad, 0}, {Space::Scratchpad, 0},
                                 {Space::Accumulator, 253}, isa::Broadcast::Row, 2, 4);
  EXPECT_EQ(errorOf({row, halt()}),
            expectedError(0, row, "src2 words 253..256 exceed the accumulator (256 words)"));
}

TEST(Errors, FlipWithoutShadowWeights) {
  MatMulFields fields;
  fields.rows = 1;
  fields.cols = 2;
  fields.flip = true;
  Instruction mm = matMul(fields);
  EXPECT_EQ(errorOf({mm, halt()}),
            expectedError(0, mm, "flip with no weights in the shadow buffer"));
  // The first flip empties the shadow buffer.
  EXPECT_EQ(errorOf({loadWeights(0, 2, 2, 2), mm, mm, halt()}),
            expectedError(2, mm, "flip with no weights in the shadow buffer"));
}

TEST(Errors, MatMulNeedsActiveWeightsOfMatchingRows) {
  MatMulFields fields;
  fields.rows = 1;
  fields.cols = 2;
  Instruction noFlip = matMul(fields);
  EXPECT_EQ(errorOf({loadWeights(0, 2, 2, 2), noFlip, halt()}),
            expectedError(1, noFlip, "no active weights (mxu.ldw, then flip=1)"));
  fields.flip = true;
  fields.cols = 3;
  Instruction mismatch = matMul(fields);
  EXPECT_EQ(errorOf({loadWeights(0, 2, 2, 2), mismatch, halt()}),
            expectedError(1, mismatch, "cols 3 differs from the active weight tile's 2 rows"));
  fields.cols = 2;
  fields.dtype = DType::I8;
  Instruction wrongType = matMul(fields);
  EXPECT_EQ(errorOf({loadWeights(0, 2, 2, 2), wrongType, halt()}),
            expectedError(1, wrongType, "dtype i8 differs from the array's bf16"));
}

TEST(Errors, WeightTileLargerThanTheArray) {
  Instruction ldw = loadWeights(0, 5, 5, 2);
  EXPECT_EQ(errorOf({ldw, halt()}),
            expectedError(0, ldw, "weight tile 5 x 2 exceeds the 4 x 4 array"));
}

TEST(Errors, ClampNeedsScalarBroadcast) {
  Instruction clamp = vectorBinary(Opcode::VClamp, {Space::Scratchpad, 0}, {Space::Scratchpad, 0},
                                   {Space::Scratchpad, 8}, isa::Broadcast::Row, 1, 4);
  EXPECT_EQ(errorOf({clamp, halt()}),
            expectedError(0, clamp, "v.clamp needs broadcast=scalar (src2 holds lo, hi)"));
}

TEST(Errors, IllFormedInstructions) {
  // Field checks come from isa::validateFields; only the prefix is the simulator's.
  Instruction selfSync = pop(Queue::Load, Queue::Load);
  std::string message = errorOf({selfSync, halt()});
  EXPECT_EQ(message.rfind(expectedError(0, selfSync, ""), 0), 0u) << message;
  Instruction badSpace = dmaLoad(0, 1, Space::Scratchpad, 0, 1, 1, 1, DType::F32);
  badSpace.set(Field::Space, 2);
  message = errorOf({badSpace, halt()});
  EXPECT_EQ(message.rfind(expectedError(0, badSpace, ""), 0), 0u) << message;
}

TEST(Errors, WatchdogStopsARunPastItsLimit) {
  // 16 requests of 100000 cycles' latency, one at a time: 1.6 million cycles.
  HardwareConfig config = smallConfig();
  config.dram.latency_cycles = 100000;
  std::vector<uint8_t> dram(256);
  Bundle bundle = makeBundle({dmaLoad(0, 1, Space::Scratchpad, 0, 1, 16, 1, DType::F32), halt()},
                             dram.size(), config);
  SimOptions options;
  options.max_cycles = 1000;
  try {
    tpu::sim::simulate(bundle, dram, options);
    FAIL() << "expected the watchdog";
  } catch (const Error &error) {
    // The watchdog looks between slices of 65536 cycles.
    EXPECT_STREQ(error.what(), "watchdog: still running after 65536 cycles (limit 1000): load "
                               "runs at pc 0 (dma.ld dram_addr=0x0 dram_stride=1 "
                               "space=sp sram_addr=0 sram_stride=1 rows=16 cols=1 "
                               "dtype=f32)");
  }
  options.max_cycles = 2000000;
  EXPECT_EQ(tpu::sim::simulate(bundle, dram, options).total_cycles, 16u * 100001);
}

TEST(Errors, HaltMustComeLast) {
  Instruction nop = isa::makeInstruction(Opcode::Nop, {});
  EXPECT_EQ(errorOf({nop}), expectedError(0, nop, "the program must end with halt"));
  EXPECT_EQ(errorOf({halt(), halt()}),
            expectedError(0, halt(), "halt must be the last instruction"));
  EXPECT_EQ(errorOf({}), "the program is empty; it must end with halt");
}

TEST(Errors, DramImageMustMatchTheBundle) {
  std::vector<uint8_t> dram(32);
  EXPECT_THROW(simulate(makeBundle({halt()}, 64), dram), Error);
}

TEST(Errors, FaultAfterEarlierInstructionsRan) {
  // The first dma.ld completes; the second faults when it starts.
  Instruction bad = dmaLoad(0, 4, Space::Scratchpad, 256, 4, 1, 1, DType::F32);
  EXPECT_EQ(errorOf({dmaLoad(0, 4, Space::Scratchpad, 0, 4, 1, 4, DType::F32), bad, halt()}),
            expectedError(1, bad, "sram words 256..256 exceed the scratchpad (256 words)"));
}

// Runs v.sub (0 - x) on four floats.
std::vector<float> negated(const std::vector<float> &input) {
  std::vector<uint8_t> dram(256);
  putFloats(dram, 0, input);
  simulate(
      makeBundle(loadComputeStore(
                     {dmaLoad(0, 4, Space::Scratchpad, 0, 4, 1, 4, DType::F32)},
                     {vectorBinary(Opcode::VSub, {Space::Scratchpad, 8}, {Space::Scratchpad, 100},
                                   {Space::Scratchpad, 0}, isa::Broadcast::None, 1, 4)},
                     {dmaStore(128, 4, Space::Scratchpad, 8, 4, 1, 4, DType::F32)}),
                 dram.size()),
      dram);
  return getFloats(dram, 128, 4);
}

TEST(Restart, DifferentProgramsOneAfterAnother) {
  EXPECT_EQ(negated({1, 2, 3, 4}), (std::vector<float>{-1, -2, -3, -4}));

  // A different program and config: the old kernel's modules are gone.
  std::vector<uint8_t> dram(256);
  putFloats(dram, 0, {1, 2, 3, 4});
  Bundle copy =
      makeBundle(loadComputeStore({dmaLoad(0, 2, Space::Accumulator, 0, 2, 2, 2, DType::F32)},
                                  {vectorUnary(Opcode::VRowSum, {Space::Scratchpad, 0},
                                               {Space::Accumulator, 0}, 2, 2)},
                                  {dmaStore(64, 1, Space::Scratchpad, 0, 1, 2, 1, DType::F32)}),
                 dram.size(), smallConfig(DType::I8));
  SimStats stats = simulate(copy, dram);
  EXPECT_EQ(getFloats(dram, 64, 2), (std::vector<float>{3, 7}));
  EXPECT_GT(stats.total_cycles, 0u);

  // After a fault and a deadlock, the next simulation still starts cleanly.
  EXPECT_NE(errorOf({loadWeights(0, 9, 9, 9), halt()}), "");
  EXPECT_NE(errorOf({pop(Queue::Store, Queue::Compute), halt()}), "");
  EXPECT_EQ(negated({-5, 0.5f, 8, 1}), (std::vector<float>{5, -0.5f, -8, -1}));
}

} // namespace
} // namespace tpu::sim::test
