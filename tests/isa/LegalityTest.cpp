// The legality rules the bundle loader and the simulator share, at their
// edges: ranges that end on a memory's last word pass and one word more
// fails, with the word counts worked out by hand from docs/bundle.md.
#include "tpu/isa/Legality.h"
#include "tpu/isa/Error.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

using namespace tpu;
using isa::Field;
using isa::Instruction;

namespace {

// The 8x8 preset: 8 x 8 bf16 array, 16384 scratchpad and 4096 accumulator words.
HardwareConfig preset8x8() { return HardwareConfig::load("tpu-8x8"); }

constexpr uint64_t kDramBytes = 0x280;

Instruction assembled(const std::string &line) { return isa::assemble(line).at(0); }

std::string errorOf(const std::function<void()> &check) {
  try {
    check();
  } catch (const Error &error) {
    return error.what();
  }
  return "";
}

std::string fitError(const Instruction &instruction) {
  HardwareConfig config = preset8x8();
  return errorOf([&] { checkFitsMachine(instruction, config, kDramBytes); });
}

TEST(Legality, StridedOnChipRangesEndAtTheirLastRow) {
  // 3 rows of 4 words, 10 apart: words addr .. addr + 2*10 + 4.
  Instruction load = assembled("dma.ld dram_addr=0x0 dram_stride=4 space=sp sram_addr=16360 "
                               "sram_stride=10 rows=3 cols=4 dtype=f32");
  EXPECT_EQ(fitError(load), "");
  load.set(Field::SramAddr, 16361);
  EXPECT_EQ(fitError(load), "scratchpad range [16361, 16385) exceeds 16384 words");
  load.set(Field::Space, 1).set(Field::SramAddr, 4073);
  EXPECT_EQ(fitError(load), "accumulator range [4073, 4097) exceeds 4096 words");
}

TEST(Legality, TransposedDmaChecksTheTransposedOnChipBlock) {
  // 3 DRAM rows of 4 land as 4 on-chip rows of 3, 10 apart: words addr ..
  // addr + 3*10 + 3; untransposed the same fields span addr + 2*10 + 4.
  Instruction load = assembled("dma.ld dram_addr=0x0 dram_stride=4 space=sp sram_addr=16351 "
                               "sram_stride=10 rows=3 cols=4 dtype=f32 transpose=1");
  EXPECT_EQ(fitError(load), "");
  load.set(Field::SramAddr, 16352);
  EXPECT_EQ(fitError(load), "scratchpad range [16352, 16385) exceeds 16384 words");
  load.set(Field::Transpose, 0);
  EXPECT_EQ(fitError(load), "");
  Instruction store = load;
  store.opcode = isa::Opcode::DmaStore;
  store.set(Field::Transpose, 1).set(Field::Space, 1).set(Field::SramAddr, 4064);
  EXPECT_EQ(fitError(store), "accumulator range [4064, 4097) exceeds 4096 words");
}

TEST(Legality, DmaDramRangesCountElementBytes) {
  // 4 rows of 8 f32, 8 apart: 128 bytes; as bf16, 64.
  Instruction store = assembled("dma.st dram_addr=0x200 dram_stride=8 space=sp sram_addr=0 "
                                "sram_stride=8 rows=4 cols=8 dtype=f32");
  EXPECT_EQ(fitError(store), "");
  store.set(Field::DramAddr, 0x204);
  EXPECT_EQ(fitError(store), "DRAM range [0x204, 0x284) exceeds dram_bytes 0x280");
  store.set(Field::DType, static_cast<uint64_t>(isa::DType::BF16)).set(Field::DramAddr, 0x240);
  EXPECT_EQ(fitError(store), "");
  store.set(Field::Cols, 0);
  EXPECT_EQ(fitError(store), "rows and cols must be at least 1");
}

TEST(Legality, VectorOperandShapes) {
  Instruction rowSum = assembled("v.rowsum dst_space=acc dst_addr=4092 src_space=sp src_addr=0 "
                                 "rows=4 cols=8");
  EXPECT_EQ(vectorDestinationShape(rowSum).rows, 4u);
  EXPECT_EQ(vectorDestinationShape(rowSum).cols, 1u);
  EXPECT_EQ(fitError(rowSum), "");
  rowSum.set(Field::DstAddr, 4093);
  EXPECT_EQ(fitError(rowSum), "dst accumulator range [4093, 4097) exceeds 4096 words");
  Instruction relu = rowSum;
  relu.opcode = isa::Opcode::VRelu;
  relu.set(Field::DstAddr, 4064);
  EXPECT_EQ(vectorDestinationShape(relu).cols, 8u);
  EXPECT_EQ(fitError(relu), "");
  relu.set(Field::DstAddr, 4065);
  EXPECT_EQ(fitError(relu), "dst accumulator range [4065, 4097) exceeds 4096 words");

  // src2 of 4 x 8 operands: 32 words, one row of 8, one word, one column
  // of 4, or lo and hi.
  Instruction add = assembled("v.add dst_space=sp dst_addr=0 src_space=sp src_addr=0 "
                              "src2_space=acc src2_addr=4064 rows=4 cols=8 broadcast=none");
  struct Expected {
    isa::Broadcast broadcast;
    uint64_t rows, cols;
  };
  for (Expected expected :
       {Expected{isa::Broadcast::None, 4, 8}, Expected{isa::Broadcast::Row, 1, 8},
        Expected{isa::Broadcast::Scalar, 1, 1}, Expected{isa::Broadcast::Column, 4, 1}}) {
    add.set(Field::Broadcast, static_cast<uint64_t>(expected.broadcast));
    OperandShape shape = vectorSecondSourceShape(add);
    EXPECT_EQ(shape.rows, expected.rows);
    EXPECT_EQ(shape.cols, expected.cols);
    uint64_t words = expected.rows * expected.cols;
    add.set(Field::Src2Addr, 4096 - words);
    EXPECT_EQ(fitError(add), "");
    add.set(Field::Src2Addr, 4097 - words);
    EXPECT_EQ(fitError(add), "src2 accumulator range [" + std::to_string(4097 - words) +
                                 ", 4097) exceeds 4096 words");
  }
  Instruction clamp = assembled("v.clamp dst_space=sp dst_addr=0 src_space=sp src_addr=0 "
                                "src2_space=acc src2_addr=4094 rows=4 cols=8 broadcast=scalar");
  EXPECT_EQ(fitError(clamp), "");
  clamp.set(Field::Src2Addr, 4095);
  EXPECT_EQ(fitError(clamp), "src2 accumulator range [4095, 4097) exceeds 4096 words");
  clamp.set(Field::Broadcast, static_cast<uint64_t>(isa::Broadcast::Row));
  EXPECT_EQ(fitError(clamp), "v.clamp needs broadcast=scalar (src2 holds lo, hi)");
}

TEST(Legality, MatrixInstructionsAgainstTheArray) {
  Instruction load = assembled("mxu.ldw src_addr=0 src_stride=8 rows=8 cols=8");
  EXPECT_EQ(fitError(load), "");
  load.set(Field::Cols, 9);
  EXPECT_EQ(fitError(load), "weight tile 8 x 9 exceeds the 8 x 8 array");
  Instruction mm = assembled("mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=4 "
                             "cols=8 dtype=bf16 accumulate=0 flip=1");
  EXPECT_EQ(fitError(mm), "");
  mm.set(Field::Cols, 9);
  EXPECT_EQ(fitError(mm), "cols 9 exceeds the array's 8 rows");
  mm.set(Field::Cols, 8).set(Field::DType, static_cast<uint64_t>(isa::DType::I8));
  EXPECT_EQ(fitError(mm), "dtype i8 differs from the array's bf16");
}

TEST(Legality, WeightTilesFollowLoadsAndFlips) {
  HardwareConfig config = preset8x8();
  WeightTiles tiles(config);
  Instruction mm = assembled("mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=4 "
                             "cols=8 dtype=bf16 accumulate=0 flip=0");
  EXPECT_EQ(errorOf([&] { tiles.multiply(mm); }), "no active weights (mxu.ldw, then flip=1)");
  mm.set(Field::Flip, 1);
  EXPECT_EQ(errorOf([&] { tiles.multiply(mm); }), "flip with no weights in the shadow buffer");

  tiles.loadWeights(assembled("mxu.ldw src_addr=0 src_stride=8 rows=8 cols=5"));
  WeightTiles::Tile tile = tiles.multiply(mm);
  EXPECT_EQ(tile.rows, 8u);
  EXPECT_EQ(tile.cols, 5u);
  // The flip emptied the shadow buffer; the active tile stays for flip=0.
  EXPECT_EQ(errorOf([&] { tiles.multiply(mm); }), "flip with no weights in the shadow buffer");
  mm.set(Field::Flip, 0);
  EXPECT_EQ(tiles.multiply(mm).cols, 5u);

  // A load goes to the shadow buffer: mms without a flip keep the old tile.
  tiles.loadWeights(assembled("mxu.ldw src_addr=0 src_stride=8 rows=3 cols=8"));
  EXPECT_EQ(tiles.multiply(mm).cols, 5u);
  mm.set(Field::Flip, 1);
  EXPECT_EQ(errorOf([&] { tiles.multiply(mm); }), "cols 8 exceeds the active weight tile's 3 rows");
  mm.set(Field::Flip, 0).set(Field::Cols, 3);
  EXPECT_EQ(tiles.multiply(mm).cols, 8u);
  // Fewer columns than the tile has rows: its first rows (the rest see zeros).
  mm.set(Field::Cols, 2);
  EXPECT_EQ(tiles.multiply(mm).cols, 8u);
  mm.set(Field::Cols, 3);

  // The destination is as wide as the tile: 4 rows of 8, 8 apart, end at
  // dst_addr + 32; checkFitsMachine alone sees only the first column.
  mm.set(Field::DstAddr, 4064);
  EXPECT_EQ(tiles.multiply(mm).rows, 3u);
  mm.set(Field::DstAddr, 4065);
  EXPECT_EQ(fitError(mm), "");
  EXPECT_EQ(errorOf([&] { tiles.multiply(mm); }),
            "dst accumulator range [4065, 4097) exceeds 4096 words");
}

TEST(Legality, HaltEndsTheProgramAndOnlyThere) {
  Instruction halt = assembled("halt");
  Instruction nop = assembled("nop");
  EXPECT_EQ(errorOf([&] { checkProgramNotEmpty({}); }),
            "the program is empty (it must end with halt)");
  EXPECT_EQ(errorOf([&] { checkProgramNotEmpty({halt}); }), "");
  EXPECT_EQ(errorOf([&] { checkHaltPlacement(halt, 2, 3); }), "");
  EXPECT_EQ(errorOf([&] { checkHaltPlacement(nop, 1, 3); }), "");
  EXPECT_EQ(errorOf([&] { checkHaltPlacement(halt, 1, 3); }), "halt before the end");
  EXPECT_EQ(errorOf([&] { checkHaltPlacement(nop, 2, 3); }), "the program must end with halt");
}

} // namespace
