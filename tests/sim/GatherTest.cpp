// dma.gather: rows of a DRAM table picked by int32 indices in the
// scratchpad, negative ones from the end; timed as a dma.ld of the rows.
#include "SimTestUtil.h"

#include <gtest/gtest.h>

namespace tpu::sim::test {
namespace {

constexpr uint64_t kTableRows = 10, kCols = 6, kIndexAddr = 512, kOut = 1024;

// Loads `indices` (int32 at kIndexAddr) into scratchpad word 0, gathers
// their rows of the table at DRAM 0 into word 16 and stores them at kOut.
std::vector<Instruction> gatherProgram(uint64_t count, DType tableType) {
  return {dmaLoad(kIndexAddr, count, Space::Scratchpad, 0, count, 1, count, DType::I32),
          gather(0, 16, 0, count, kCols, tableType, kTableRows),
          push(Queue::Load, Queue::Store),
          pop(Queue::Load, Queue::Store),
          dmaStore(kOut, kCols, Space::Scratchpad, 16, kCols, count, kCols, DType::F32),
          halt()};
}

void putIndices(std::vector<uint8_t> &dram, const std::vector<int32_t> &indices) {
  for (size_t i = 0; i < indices.size(); ++i)
    putWord(dram, kIndexAddr + 4 * i, static_cast<uint32_t>(indices[i]));
}

TEST(Gather, CopiesTheIndexedRowsCountingNegativeIndicesFromTheEnd) {
  const std::vector<int32_t> indices = {3, -1, 0, -10, 9, 3, -4};
  std::vector<uint8_t> dram(2048);
  std::vector<float> table = testValues(kTableRows * kCols, 5);
  putFloats(dram, 0, table);
  putIndices(dram, indices);
  simulate(makeBundle(gatherProgram(indices.size(), DType::F32), dram.size()), dram);
  std::vector<float> got = getFloats(dram, kOut, indices.size() * kCols);
  for (size_t r = 0; r < indices.size(); ++r) {
    size_t row = indices[r] < 0 ? indices[r] + kTableRows : indices[r];
    for (size_t c = 0; c < kCols; ++c)
      EXPECT_EQ(got[r * kCols + c], table[row * kCols + c]) << "index " << indices[r];
  }
}

TEST(Gather, WidensABf16Table) {
  const std::vector<int32_t> indices = {7, -2};
  std::vector<uint8_t> dram(2048);
  std::vector<float> table = testValues(kTableRows * kCols, 6);
  for (size_t i = 0; i < table.size(); ++i) {
    uint16_t half = static_cast<uint16_t>(floatBits(referenceBF16(table[i])) >> 16);
    dram[2 * i] = static_cast<uint8_t>(half), dram[2 * i + 1] = static_cast<uint8_t>(half >> 8);
  }
  putIndices(dram, indices);
  simulate(makeBundle(gatherProgram(indices.size(), DType::BF16), dram.size()), dram);
  std::vector<float> got = getFloats(dram, kOut, indices.size() * kCols);
  for (size_t c = 0; c < kCols; ++c) {
    EXPECT_EQ(got[c], referenceBF16(table[7 * kCols + c]));
    EXPECT_EQ(got[kCols + c], referenceBF16(table[8 * kCols + c]));
  }
}

// docs/simulator.md: a gather of n rows is n DRAM requests of one row, as a
// dma.ld of n x cols; it reads n index words and writes n x cols words.
TEST(Gather, TimesAsALoadOfItsRows) {
  HardwareConfig config = smallConfig();
  config.dram.max_outstanding = 2;
  const std::vector<int32_t> indices = {9, 0, 4, 4, 1};
  std::vector<uint8_t> dram(2048);
  putIndices(dram, indices);
  SimStats gathered =
      simulate(makeBundle({gather(0, 16, 0, indices.size(), kCols, DType::F32, kTableRows), halt()},
                          dram.size(), config),
               dram);
  SimStats loaded = simulate(makeBundle({dmaLoad(0, kCols, Space::Scratchpad, 16, kCols,
                                                 indices.size(), kCols, DType::F32),
                                         halt()},
                                        dram.size(), config),
                             dram);
  EXPECT_EQ(gathered.total_cycles, loaded.total_cycles);
  EXPECT_EQ(gathered.component(Component::DmaLoad).busy, loaded.component(Component::DmaLoad).busy);
  EXPECT_EQ(gathered.dram_bytes_read, indices.size() * kCols * 4);
  EXPECT_EQ(gathered.scratchpad.reads, indices.size());
  EXPECT_EQ(gathered.scratchpad.writes, indices.size() * kCols);
}

TEST(Gather, IndexOutsideTheTableStopsTheProgram) {
  for (int32_t bad : {10, -11, INT32_MIN}) {
    std::vector<uint8_t> dram(2048);
    putIndices(dram, {2, bad});
    std::vector<Instruction> program = gatherProgram(2, DType::F32);
    try {
      simulate(makeBundle(program, dram.size()), dram);
      ADD_FAILURE() << "index " << bad << " was gathered";
    } catch (const Error &error) {
      EXPECT_EQ(std::string(error.what()), "pc 1 (" + isa::disassemble(program[1]) + "): index " +
                                               std::to_string(bad) +
                                               " (row 1, scratchpad word 1) is outside [-10, 10)");
    }
  }
}

} // namespace
} // namespace tpu::sim::test
