// Illegal programs stop with "pc N (disassembly): reason", in the words the
// bundle loader uses for the same program; the kernel runs again afterwards.
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

// The bundle loader's error for the same program, or "" when it accepts it.
std::string loaderErrorOf(const std::vector<Instruction> &program, const HardwareConfig &config,
                          size_t dramBytes) {
  Bundle bundle = makeBundle(program, dramBytes, config);
  bundle.source_ops = {"test"};
  bundle.source_of.assign(program.size(), 0);
  try {
    bundle.validate();
  } catch (const Error &error) {
    return error.what();
  }
  return "";
}

// The simulator stops the program at `pc` for `reason`, and the bundle
// loader rejects it in the same words: both apply the rules of Legality.h.
void expectRejected(const std::vector<Instruction> &program, size_t pc, const std::string &reason,
                    const HardwareConfig &config = smallConfig(), size_t dramBytes = 64) {
  std::string instruction = " (" + isa::disassemble(program.at(pc)) + "): " + reason;
  EXPECT_EQ(errorOf(program, config, dramBytes), "pc " + std::to_string(pc) + instruction);
  EXPECT_EQ(loaderErrorOf(program, config, dramBytes),
            "instruction " + std::to_string(pc) + instruction);
}

TEST(Errors, ScratchpadAddressOutOfRange) {
  Instruction load = dmaLoad(0, 4, Space::Scratchpad, 250, 4, 2, 4, DType::F32);
  expectRejected({load, halt()}, 0, "scratchpad range [250, 258) exceeds 256 words");
}

TEST(Errors, TransposedOnChipBlockOutOfRange) {
  // 2 DRAM rows of 4 land as 4 rows of 2, 4 apart: 14 words (untransposed, 8).
  Instruction load = transposed(dmaLoad(0, 4, Space::Scratchpad, 243, 4, 2, 4, DType::F32));
  expectRejected({load, halt()}, 0, "scratchpad range [243, 257) exceeds 256 words");
  Instruction store = transposed(dmaStore(0, 4, Space::Accumulator, 243, 4, 2, 4, DType::BF16));
  expectRejected({store, halt()}, 0, "accumulator range [243, 257) exceeds 256 words");
}

TEST(Errors, GatherRangesOutOfRange) {
  // Every row the bound allows must be in DRAM, whatever the indices.
  expectRejected({gather(0, 0, 100, 2, 4, DType::F32, 5), halt()}, 0,
                 "table [0x0, 0x50) exceeds dram_bytes 0x40");
  EXPECT_EQ(errorOf({gather(0, 0, 100, 2, 4, DType::F32, 4), halt()}), "");
  expectRejected({gather(0, 250, 0, 2, 4, DType::F32, 4), halt()}, 0,
                 "scratchpad range [250, 258) exceeds 256 words");
  expectRejected({gather(0, 0, 255, 2, 4, DType::F32, 4), halt()}, 0,
                 "index scratchpad range [255, 257) exceeds 256 words");
  expectRejected({gather(0, 0, 100, 2, 4, DType::F32, 0), halt()}, 0,
                 "rows, cols and bound must be at least 1");
}

TEST(Errors, DramAddressOutOfRange) {
  Instruction store = dmaStore(50, 4, Space::Accumulator, 0, 4, 2, 4, DType::BF16);
  expectRejected({store, halt()}, 0, "DRAM range [0x32, 0x42) exceeds dram_bytes 0x40");
  Instruction fits = dmaStore(48, 4, Space::Accumulator, 0, 4, 2, 4, DType::BF16);
  EXPECT_EQ(errorOf({fits, halt()}), "");
  Instruction wide = dmaStore(48, 4, Space::Accumulator, 0, 4, 2, 4, DType::F32);
  expectRejected({wide, halt()}, 0, "DRAM range [0x30, 0x50) exceeds dram_bytes 0x40");
}

TEST(Errors, VectorOperandsOutOfRange) {
  Instruction add = vectorBinary(Opcode::VAdd, {Space::Accumulator, 250}, {Space::Scratchpad, 0},
                                 {Space::Scratchpad, 0}, isa::Broadcast::Row, 2, 4);
  expectRejected({add, halt()}, 0, "dst accumulator range [250, 258) exceeds 256 words");
  Instruction row = vectorBinary(Opcode::VMul, {Space::Scratchpad, 0}, {Space::Scratchpad, 0},
                                 {Space::Accumulator, 253}, isa::Broadcast::Row, 2, 4);
  expectRejected({row, halt()}, 0, "src2 accumulator range [253, 257) exceeds 256 words");
}

TEST(Errors, FlipWithoutShadowWeights) {
  MatMulFields fields;
  fields.rows = 1;
  fields.cols = 2;
  fields.flip = true;
  Instruction mm = matMul(fields);
  expectRejected({mm, halt()}, 0, "flip with no weights in the shadow buffer");
  // The first flip empties the shadow buffer.
  expectRejected({loadWeights(0, 2, 2, 2), mm, mm, halt()}, 2,
                 "flip with no weights in the shadow buffer");
}

TEST(Errors, MatMulNeedsActiveWeightsOfMatchingRows) {
  MatMulFields fields;
  fields.rows = 1;
  fields.cols = 2;
  Instruction noFlip = matMul(fields);
  expectRejected({loadWeights(0, 2, 2, 2), noFlip, halt()}, 1,
                 "no active weights (mxu.ldw, then flip=1)");
  fields.flip = true;
  fields.cols = 3;
  Instruction mismatch = matMul(fields);
  expectRejected({loadWeights(0, 2, 2, 2), mismatch, halt()}, 1,
                 "cols 3 exceeds the active weight tile's 2 rows");
  fields.cols = 2;
  fields.dtype = DType::I8;
  Instruction wrongType = matMul(fields);
  expectRejected({loadWeights(0, 2, 2, 2), wrongType, halt()}, 1,
                 "dtype i8 differs from the array's bf16");
}

TEST(Errors, WeightTileLargerThanTheArray) {
  Instruction ldw = loadWeights(0, 5, 5, 2);
  expectRejected({ldw, halt()}, 0, "weight tile 5 x 2 exceeds the 4 x 4 array");
}

TEST(Errors, ClampNeedsScalarBroadcast) {
  Instruction clamp = vectorBinary(Opcode::VClamp, {Space::Scratchpad, 0}, {Space::Scratchpad, 0},
                                   {Space::Scratchpad, 8}, isa::Broadcast::Row, 1, 4);
  expectRejected({clamp, halt()}, 0, "v.clamp needs broadcast=scalar (src2 holds lo, hi)");
}

TEST(Errors, IllFormedInstructions) {
  // Field checks come from isa::validateFields.
  expectRejected({pop(Queue::Load, Queue::Load), halt()}, 0, "sync.pop: from and to are both load");
  Instruction badSpace = dmaLoad(0, 1, Space::Scratchpad, 0, 1, 1, 1, DType::F32);
  badSpace.set(Field::Space, 2);
  expectRejected({badSpace, halt()}, 0, "dma.ld: field space = 2 does not fit in 1 bits (max 1)");
}

TEST(Errors, EmptyDmaTransfers) {
  expectRejected({dmaLoad(0, 4, Space::Scratchpad, 0, 4, 0, 4, DType::F32), halt()}, 0,
                 "rows and cols must be at least 1");
  expectRejected({dmaStore(0, 4, Space::Scratchpad, 0, 4, 2, 0, DType::F32), halt()}, 0,
                 "rows and cols must be at least 1");
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
    // The run stops at the limit itself.
    EXPECT_STREQ(error.what(), "watchdog: still running after 1000 cycles (limit 1000): load "
                               "runs at pc 0 (dma.ld dram_addr=0x0 dram_stride=1 "
                               "space=sp sram_addr=0 sram_stride=1 rows=16 cols=1 "
                               "dtype=f32)");
  }
  // A run that completes at the limit is unaffected, in both modes; one cycle
  // less is too few.
  for (tpu::sim::Mode mode : {tpu::sim::Mode::Fast, tpu::sim::Mode::Cycle}) {
    options.mode = mode;
    options.max_cycles = 16 * 100001;
    EXPECT_EQ(tpu::sim::simulate(bundle, dram, options).total_cycles, 16u * 100001);
    options.max_cycles -= 1;
    EXPECT_THROW(tpu::sim::simulate(bundle, dram, options), Error);
  }
}

TEST(Errors, HaltMustComeLast) {
  Instruction nop = isa::makeInstruction(Opcode::Nop, {});
  expectRejected({nop}, 0, "the program must end with halt");
  expectRejected({halt(), halt()}, 0, "halt before the end");
  EXPECT_EQ(errorOf({}), "the program is empty (it must end with halt)");
  EXPECT_EQ(loaderErrorOf({}, smallConfig(), 64), errorOf({}));
}

TEST(Errors, DramImageMustMatchTheBundle) {
  std::vector<uint8_t> dram(32);
  EXPECT_THROW(simulate(makeBundle({halt()}, 64), dram), Error);
}

TEST(Errors, FaultAfterEarlierInstructionsRan) {
  // The first dma.ld completes; the second faults when it starts.
  Instruction bad = dmaLoad(0, 4, Space::Scratchpad, 256, 4, 1, 1, DType::F32);
  expectRejected({dmaLoad(0, 4, Space::Scratchpad, 0, 4, 1, 4, DType::F32), bad, halt()}, 1,
                 "scratchpad range [256, 257) exceeds 256 words");
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
