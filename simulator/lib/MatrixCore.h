// The arithmetic and the weight buffers of the matrix unit, free of timing
// and of SystemC, so that timing models of any detail (MatrixUnit now, a
// PE-accurate one later) compute bit-identical results.
#pragma once

#include "Memory.h"

#include "tpu/isa/Isa.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tpu::sim {

struct WeightTile {
  uint32_t rows = 0;
  uint32_t cols = 0;
  std::vector<uint32_t> words; // row-major, raw scratchpad words

  uint32_t at(uint32_t row, uint32_t col) const { return words[row * cols + col]; }
};

// One processing-element step: partial + activation * weight. bf16: both
// operands rounded to bf16, fp32 multiply and add; i8: operands saturated to
// int8, int32 multiply and wrapping add.
uint32_t multiplyAccumulate(isa::DType dtype, uint32_t partial, uint32_t activation,
                            uint32_t weight);
// accumulator + sum in the array's accumulator type (fp32 or wrapping int32).
uint32_t addToAccumulator(isa::DType dtype, uint32_t accumulator, uint32_t sum);

// What an mxu.mm writes when it completes.
struct MatMulResult {
  Region destination;         // in the accumulator: rows x the tile's cols
  std::vector<uint32_t> sums; // row-major over destination
  bool accumulate = false;
  uint64_t macs = 0;
};

class MatrixCore {
public:
  MatrixCore(uint32_t arrayRows, uint32_t arrayCols, isa::DType dtype)
      : arrayRows_(arrayRows), arrayCols_(arrayCols), dtype_(dtype) {}

  // mxu.ldw: fills the shadow buffer from the scratchpad.
  void loadWeights(const isa::Instruction &instruction, const WordMemory &scratchpad);
  // mxu.mm: flips if asked, then streams the activations through the active
  // tile. Checks the destination but leaves writing it to writeBack().
  MatMulResult multiply(const isa::Instruction &instruction, const WordMemory &scratchpad,
                        const WordMemory &accumulator);
  // Overwrites or adds into the accumulator.
  void writeBack(const MatMulResult &result, WordMemory &accumulator) const;

private:
  uint32_t arrayRows_;
  uint32_t arrayCols_;
  isa::DType dtype_;
  std::optional<WeightTile> active_;
  std::optional<WeightTile> shadow_;
};

} // namespace tpu::sim
