#include "MatrixCore.h"

#include "tpu/isa/Error.h"
#include "tpu/isa/Numerics.h"

#include <fmt/format.h>

namespace tpu::sim {

using isa::Field;

uint32_t multiplyAccumulate(isa::DType dtype, uint32_t partial, uint32_t activation,
                            uint32_t weight) {
  if (dtype == isa::DType::I8) {
    int32_t product =
        saturateInt8(static_cast<int32_t>(activation)) * saturateInt8(static_cast<int32_t>(weight));
    return partial + static_cast<uint32_t>(product);
  }
  // A product of two bf16 values is exact in fp32; only the add rounds.
  float product = roundToBF16(bitsFloat(activation)) * roundToBF16(bitsFloat(weight));
  return floatBits(bitsFloat(partial) + product);
}

uint32_t addToAccumulator(isa::DType dtype, uint32_t accumulator, uint32_t sum) {
  if (dtype == isa::DType::I8)
    return accumulator + sum;
  return floatBits(bitsFloat(accumulator) + bitsFloat(sum));
}

void MatrixCore::loadWeights(const isa::Instruction &instruction, const WordMemory &scratchpad) {
  Region source{instruction.get(Field::SrcAddr), instruction.get(Field::Rows),
                instruction.get(Field::Cols), instruction.get(Field::SrcStride)};
  if (source.rows > arrayRows_ || source.cols > arrayCols_)
    throw Error(fmt::format("weight tile {} x {} exceeds the {} x {} array", source.rows,
                            source.cols, arrayRows_, arrayCols_));
  scratchpad.check(source, "src");
  shadow_ = WeightTile{static_cast<uint32_t>(source.rows), static_cast<uint32_t>(source.cols),
                       scratchpad.read(source)};
}

MatMulResult MatrixCore::multiply(const isa::Instruction &instruction, const WordMemory &scratchpad,
                                  const WordMemory &accumulator) {
  auto dtype = static_cast<isa::DType>(instruction.get(Field::DType));
  if (dtype != dtype_)
    throw Error(fmt::format("dtype {} differs from the array's {}", isa::dtypeName(dtype),
                            isa::dtypeName(dtype_)));
  bool flip = instruction.get(Field::Flip) != 0;
  if (flip && !shadow_)
    throw Error("flip with no weights in the shadow buffer");
  const std::optional<WeightTile> &tile = flip ? shadow_ : active_;
  if (!tile)
    throw Error("no active weights (mxu.ldw, then flip=1)");
  Region source{instruction.get(Field::SrcAddr), instruction.get(Field::Rows),
                instruction.get(Field::Cols), instruction.get(Field::SrcStride)};
  if (source.cols != tile->rows)
    throw Error(fmt::format("cols {} differs from the active weight tile's {} rows", source.cols,
                            tile->rows));
  MatMulResult result;
  result.destination = {instruction.get(Field::DstAddr), source.rows, tile->cols,
                        instruction.get(Field::DstStride)};
  scratchpad.check(source, "src");
  accumulator.check(result.destination, "dst");

  if (flip) {
    active_ = std::move(shadow_);
    shadow_.reset();
  }
  const WeightTile &weights = *active_;
  result.accumulate = instruction.get(Field::Accumulate) != 0;
  result.macs = source.rows * weights.rows * weights.cols;
  for (uint64_t i = 0; i < source.rows; ++i) {
    for (uint32_t j = 0; j < weights.cols; ++j) {
      uint32_t sum = 0; // +0.0f and int32 0 alike
      for (uint32_t r = 0; r < weights.rows; ++r)
        sum = multiplyAccumulate(dtype_, sum, scratchpad.read(source.at(i, r)), weights.at(r, j));
      result.sums.push_back(sum);
    }
  }
  return result;
}

void MatrixCore::writeBack(const MatMulResult &result, WordMemory &accumulator) const {
  std::vector<uint32_t> words = result.sums;
  if (result.accumulate) {
    std::vector<uint32_t> previous = accumulator.read(result.destination);
    for (size_t i = 0; i < words.size(); ++i)
      words[i] = addToAccumulator(dtype_, previous[i], words[i]);
  }
  accumulator.write(result.destination, words);
}

} // namespace tpu::sim
