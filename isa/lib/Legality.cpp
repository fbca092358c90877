#include "tpu/isa/Legality.h"

#include "tpu/isa/Error.h"

#include <fmt/format.h>

#include <string_view>

namespace tpu {
namespace {

using isa::Field;
using isa::Instruction;
using isa::Opcode;

// Words spanned by `rows` rows of `cols` elements, row starts `stride` apart.
uint64_t stridedExtent(uint64_t rows, uint64_t cols, uint64_t stride) {
  return rows == 0 || cols == 0 ? 0 : (rows - 1) * stride + cols;
}

void checkOnChipRange(std::string_view role, const HardwareConfig &config, isa::Space space,
                      uint64_t begin, uint64_t extent) {
  bool scratchpad = space == isa::Space::Scratchpad;
  uint64_t words = scratchpad ? config.scratchpad.words() : config.accumulator.words();
  if (extent != 0 && begin + extent > words)
    throw Error(fmt::format("{}{} range [{}, {}) exceeds {} words", role,
                            scratchpad ? "scratchpad" : "accumulator", begin, begin + extent,
                            words));
}

isa::Space spaceOf(const Instruction &instruction, Field field) {
  return static_cast<isa::Space>(instruction.get(field));
}

void checkDma(const Instruction &instruction, const HardwareConfig &config, uint64_t dramBytes) {
  uint64_t rows = instruction.get(Field::Rows);
  uint64_t cols = instruction.get(Field::Cols);
  if (rows == 0 || cols == 0)
    throw Error("rows and cols must be at least 1");
  // Transposed, the on-chip block has `cols` rows of `rows` words.
  bool transpose = instruction.get(Field::Transpose) != 0;
  checkOnChipRange("", config, spaceOf(instruction, Field::Space), instruction.get(Field::SramAddr),
                   transpose ? stridedExtent(cols, rows, instruction.get(Field::SramStride))
                             : stridedExtent(rows, cols, instruction.get(Field::SramStride)));
  uint64_t begin = instruction.get(Field::DramAddr);
  uint64_t end =
      begin + stridedExtent(rows, cols, instruction.get(Field::DramStride)) *
                  isa::dtypeBytes(static_cast<isa::DType>(instruction.get(Field::DType)));
  if (end > dramBytes)
    throw Error(
        fmt::format("DRAM range [{:#x}, {:#x}) exceeds dram_bytes {:#x}", begin, end, dramBytes));
}

// Every row a gather can read, whatever its indices: the table's bound rows.
void checkGather(const Instruction &instruction, const HardwareConfig &config, uint64_t dramBytes) {
  uint64_t rows = instruction.get(Field::Rows);
  uint64_t cols = instruction.get(Field::Cols);
  uint64_t bound = instruction.get(Field::Bound);
  if (rows == 0 || cols == 0 || bound == 0)
    throw Error("rows, cols and bound must be at least 1");
  checkOnChipRange("", config, isa::Space::Scratchpad, instruction.get(Field::SramAddr),
                   rows * cols);
  checkOnChipRange("index ", config, isa::Space::Scratchpad, instruction.get(Field::SrcAddr), rows);
  uint64_t begin = instruction.get(Field::DramAddr);
  uint64_t end =
      begin +
      bound * cols * isa::dtypeBytes(static_cast<isa::DType>(instruction.get(Field::DType)));
  if (end > dramBytes)
    throw Error(
        fmt::format("table [{:#x}, {:#x}) exceeds dram_bytes {:#x}", begin, end, dramBytes));
}

void checkLoadWeights(const Instruction &instruction, const HardwareConfig &config) {
  uint64_t rows = instruction.get(Field::Rows);
  uint64_t cols = instruction.get(Field::Cols);
  if (rows > config.array.rows || cols > config.array.cols)
    throw Error(fmt::format("weight tile {} x {} exceeds the {} x {} array", rows, cols,
                            config.array.rows, config.array.cols));
  checkOnChipRange("src ", config, isa::Space::Scratchpad, instruction.get(Field::SrcAddr),
                   stridedExtent(rows, cols, instruction.get(Field::SrcStride)));
}

void checkMatMulDestination(const Instruction &instruction, const HardwareConfig &config,
                            uint64_t cols) {
  checkOnChipRange(
      "dst ", config, isa::Space::Accumulator, instruction.get(Field::DstAddr),
      stridedExtent(instruction.get(Field::Rows), cols, instruction.get(Field::DstStride)));
}

void checkMatMul(const Instruction &instruction, const HardwareConfig &config) {
  uint64_t rows = instruction.get(Field::Rows);
  uint64_t cols = instruction.get(Field::Cols);
  if (cols > config.array.rows)
    throw Error(fmt::format("cols {} exceeds the array's {} rows", cols, config.array.rows));
  auto dtype = static_cast<isa::DType>(instruction.get(Field::DType));
  if (dtype != config.array.dtype)
    throw Error(fmt::format("dtype {} differs from the array's {}", isa::dtypeName(dtype),
                            isa::dtypeName(config.array.dtype)));
  checkOnChipRange("src ", config, isa::Space::Scratchpad, instruction.get(Field::SrcAddr),
                   stridedExtent(rows, cols, instruction.get(Field::SrcStride)));
  checkMatMulDestination(instruction, config, 1);
}

bool hasSecondSource(const Instruction &instruction) {
  return isa::usesField(isa::opcodeInfo(instruction.opcode), Field::Src2Addr);
}

uint64_t words(const OperandShape &shape) { return shape.rows * shape.cols; }

void checkVector(const Instruction &instruction, const HardwareConfig &config) {
  uint64_t rows = instruction.get(Field::Rows);
  uint64_t cols = instruction.get(Field::Cols);
  checkOnChipRange("dst ", config, spaceOf(instruction, Field::DstSpace),
                   instruction.get(Field::DstAddr), words(vectorDestinationShape(instruction)));
  checkOnChipRange("src ", config, spaceOf(instruction, Field::SrcSpace),
                   instruction.get(Field::SrcAddr), rows * cols);
  if (hasSecondSource(instruction))
    checkOnChipRange("src2 ", config, spaceOf(instruction, Field::Src2Space),
                     instruction.get(Field::Src2Addr), words(vectorSecondSourceShape(instruction)));
}

} // namespace

void checkProgramNotEmpty(const std::vector<Instruction> &program) {
  if (program.empty())
    throw Error("the program is empty (it must end with halt)");
}

void checkHaltPlacement(const Instruction &instruction, size_t index, size_t programSize) {
  bool last = index + 1 == programSize;
  if (last != (instruction.opcode == Opcode::Halt))
    throw Error(last ? "the program must end with halt" : "halt before the end");
}

void checkFitsMachine(const Instruction &instruction, const HardwareConfig &config,
                      uint64_t dramBytes) {
  switch (isa::opcodeInfo(instruction.opcode).unit) {
  case isa::Unit::Controller:
    return;
  case isa::Unit::Dma:
    return instruction.opcode == Opcode::DmaGather ? checkGather(instruction, config, dramBytes)
                                                   : checkDma(instruction, config, dramBytes);
  case isa::Unit::Matrix:
    return instruction.opcode == Opcode::LoadWeights ? checkLoadWeights(instruction, config)
                                                     : checkMatMul(instruction, config);
  case isa::Unit::Vector:
    return checkVector(instruction, config);
  }
}

OperandShape vectorDestinationShape(const Instruction &instruction) {
  bool reducesRows = instruction.opcode == Opcode::VRowSum || instruction.opcode == Opcode::VRowMax;
  uint64_t rows = instruction.get(Field::Rows);
  return {rows, reducesRows ? 1 : instruction.get(Field::Cols)};
}

OperandShape vectorSecondSourceShape(const Instruction &instruction) {
  auto broadcast = static_cast<isa::Broadcast>(instruction.get(Field::Broadcast));
  if (instruction.opcode == Opcode::VClamp) {
    if (broadcast != isa::Broadcast::Scalar)
      throw Error("v.clamp needs broadcast=scalar (src2 holds lo, hi)");
    return {1, 2};
  }
  switch (broadcast) {
  case isa::Broadcast::None:
    return {instruction.get(Field::Rows), instruction.get(Field::Cols)};
  case isa::Broadcast::Row:
    return {1, instruction.get(Field::Cols)};
  case isa::Broadcast::Scalar:
    return {1, 1};
  case isa::Broadcast::Column:
    return {instruction.get(Field::Rows), 1};
  }
  throw Error(fmt::format("invalid broadcast {}", instruction.get(Field::Broadcast)));
}

void WeightTiles::loadWeights(const Instruction &instruction) {
  shadow_ = Tile{instruction.get(Field::Rows), instruction.get(Field::Cols)};
}

WeightTiles::Tile WeightTiles::multiply(const Instruction &instruction) {
  if (instruction.get(Field::Flip) != 0) {
    if (!shadow_)
      throw Error("flip with no weights in the shadow buffer");
    active_ = shadow_;
    shadow_.reset();
  }
  if (!active_)
    throw Error("no active weights (mxu.ldw, then flip=1)");
  // Fewer: the array's other rows see zeros (the tile's first rows only).
  if (instruction.get(Field::Cols) > active_->rows)
    throw Error(fmt::format("cols {} exceeds the active weight tile's {} rows",
                            instruction.get(Field::Cols), active_->rows));
  checkMatMulDestination(instruction, config_, active_->cols);
  return *active_;
}

} // namespace tpu
