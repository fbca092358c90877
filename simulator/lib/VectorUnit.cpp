#include "VectorUnit.h"

#include "tpu/isa/Error.h"
#include "tpu/isa/Legality.h"
#include "tpu/isa/Numerics.h"

#include <cmath>
#include <limits>
#include <vector>

namespace tpu::sim {
namespace {

using isa::Field;
using isa::isTranscendental;
using isa::Opcode;

// max and min propagate NaN, as ONNX Max/Min do.
float maximum(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) ? a : b;
  return a < b ? b : a;
}

float minimum(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) ? a : b;
  return b < a ? b : a;
}

// 1 / (1 + exp(-x)) in fp32: 0 for x below about -88 (exp overflows to
// infinity), 1 above about 17.
float sigmoidF32(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// Round to nearest even, saturate to int32; NaN converts to 0.
int32_t convertToInt32(float value) {
  if (std::isnan(value))
    return 0;
  double rounded = std::nearbyint(static_cast<double>(value));
  if (rounded >= 2147483647.0)
    return std::numeric_limits<int32_t>::max();
  if (rounded <= -2147483648.0)
    return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(rounded);
}

// Binary ops are those the opcode table gives a second source.
bool isBinary(Opcode opcode) {
  return isa::usesField(isa::opcodeInfo(opcode), isa::Field::Src2Addr);
}

bool isRowReduction(Opcode opcode) {
  return opcode == Opcode::VRowSum || opcode == Opcode::VRowMax;
}

float applyBinary(Opcode opcode, float a, float b) {
  switch (opcode) {
  case Opcode::VAdd:
    return a + b;
  case Opcode::VSub:
    return a - b;
  case Opcode::VMul:
    return a * b;
  case Opcode::VMax:
    return maximum(a, b);
  case Opcode::VMin:
    return minimum(a, b);
  case Opcode::VGreater:
    return a > b ? 1.0f : 0.0f;
  case Opcode::VGreaterEqual:
    return a >= b ? 1.0f : 0.0f;
  case Opcode::VEqual:
    return a == b ? 1.0f : 0.0f;
  default:
    throw Error("not a binary vector operation");
  }
}

uint32_t applyUnary(Opcode opcode, uint32_t word) {
  float x = bitsFloat(word);
  switch (opcode) {
  case Opcode::VCopy:
    return word;
  case Opcode::VRelu:
    return floatBits(x > 0 ? x : 0.0f);
  case Opcode::VExp:
    return floatBits(std::exp(x));
  case Opcode::VRecip:
    return floatBits(1.0f / x);
  case Opcode::VRsqrt:
    return floatBits(1.0f / std::sqrt(x));
  case Opcode::VSigmoid:
    return floatBits(sigmoidF32(x));
  case Opcode::VTanh:
    return floatBits(std::tanh(x));
  case Opcode::VLog:
    return floatBits(std::log(x));
  case Opcode::VCvtI2F:
    return floatBits(static_cast<float>(static_cast<int32_t>(word)));
  case Opcode::VCvtF2I:
    return static_cast<uint32_t>(convertToInt32(x));
  default:
    throw Error("not a unary vector operation");
  }
}

// Vector operands are dense: row r starts cols words after row r-1.
Region denseRegion(uint64_t address, const OperandShape &shape) {
  return {address, shape.rows, shape.cols, shape.cols};
}

} // namespace

void VectorUnit::execute(const IssuedInstruction &issued) {
  const isa::Instruction &instruction = issued.instruction;
  Opcode opcode = instruction.opcode;
  uint64_t rows = instruction.get(Field::Rows);
  uint64_t cols = instruction.get(Field::Cols);
  const WordMemory &source =
      machine_.memory(static_cast<isa::Space>(instruction.get(Field::SrcSpace)));
  WordMemory &destination =
      machine_.memory(static_cast<isa::Space>(instruction.get(Field::DstSpace)));
  Region sourceRegion = denseRegion(instruction.get(Field::SrcAddr), {rows, cols});
  Region destinationRegion =
      denseRegion(instruction.get(Field::DstAddr), vectorDestinationShape(instruction));
  auto sourceSpace = static_cast<isa::Space>(instruction.get(Field::SrcSpace));
  auto destinationSpace = static_cast<isa::Space>(instruction.get(Field::DstSpace));
  // Per Space: the banks the operands touch and the words read.
  std::array<BankSet, 2> touchedBanks{};
  std::array<uint64_t, 2> reads{};
  auto touch = [&](isa::Space space, const Region &region, bool read) {
    touchedBanks[static_cast<unsigned>(space)] |= banks->banksOf(space, region);
    reads[static_cast<unsigned>(space)] += read ? region.elements() : 0;
  };
  touch(sourceSpace, sourceRegion, true);
  touch(destinationSpace, destinationRegion, false);

  // Operands are read now, results written on completion (ExecutionUnit.h).
  std::vector<uint32_t> results;
  results.reserve(destinationRegion.elements());
  if (isRowReduction(opcode)) {
    // Folding from the identity (-0 for the sum: -0 + x == x for every x)
    // equals folding from src[r][0], and leaves an empty row well defined.
    float identity = opcode == Opcode::VRowSum ? -0.0f : -std::numeric_limits<float>::infinity();
    for (uint64_t r = 0; r < rows; ++r) {
      float folded = identity;
      for (uint64_t c = 0; c < cols; ++c) {
        float x = bitsFloat(source.read(sourceRegion.at(r, c)));
        folded = opcode == Opcode::VRowSum ? folded + x : maximum(folded, x);
      }
      results.push_back(floatBits(folded));
    }
  } else if (isBinary(opcode)) {
    const WordMemory &source2 =
        machine_.memory(static_cast<isa::Space>(instruction.get(Field::Src2Space)));
    Region source2Region =
        denseRegion(instruction.get(Field::Src2Addr), vectorSecondSourceShape(instruction));
    touch(static_cast<isa::Space>(instruction.get(Field::Src2Space)), source2Region, true);
    // Row and scalar broadcasts repeat src2's single row; scalar its one column.
    auto second = [&](uint64_t r, uint64_t c) {
      return bitsFloat(
          source2.read(source2Region.at(r % source2Region.rows, c % source2Region.cols)));
    };
    for (uint64_t r = 0; r < rows; ++r) {
      for (uint64_t c = 0; c < cols; ++c) {
        float a = bitsFloat(source.read(sourceRegion.at(r, c)));
        float result = opcode == Opcode::VClamp ? minimum(maximum(a, second(0, 0)), second(0, 1))
                                                : applyBinary(opcode, a, second(r, c));
        results.push_back(floatBits(result));
      }
    }
  } else {
    for (uint32_t word : source.read(sourceRegion))
      results.push_back(applyUnary(opcode, word));
  }
  BankSet scratchpadBanks = touchedBanks[static_cast<unsigned>(isa::Space::Scratchpad)];
  BankSet accumulatorBanks = touchedBanks[static_cast<unsigned>(isa::Space::Accumulator)];
  banks->acquire(Component::Vector, issued.pc, scratchpadBanks, accumulatorBanks);
  uint64_t start = machine_.clock.now();
  // The pipeline takes a group of `lanes` elements of one row every cycle,
  // or every transcendental_cycles_per_group cycles for a transcendental.
  const auto &vector = machine_.config.vector;
  bool transcendental = isTranscendental(opcode);
  uint64_t cyclesPerGroup = transcendental ? vector.transcendental_cycles_per_group : 1;
  uint64_t groups = rows * ((cols + vector.lanes - 1) / vector.lanes);
  uint64_t end = start + vector.pipeline_latency + groups * cyclesPerGroup;
  machine_.clock.waitUntil(end);
  destination.write(destinationRegion, results);
  banks->release(scratchpadBanks, accumulatorBanks);
  machine_.profiler.instruction(Component::Vector, issued.pc, start, end);
  machine_.profiler.vectorElements(rows * cols, transcendental);
  for (isa::Space space : {isa::Space::Scratchpad, isa::Space::Accumulator})
    machine_.profiler.memoryAccess(space, reads[static_cast<unsigned>(space)], 0);
  machine_.profiler.memoryAccess(destinationSpace, 0, destinationRegion.elements());
  machine_.finished(end);
}

} // namespace tpu::sim
