// What makes an instruction legal on a machine. The bundle loader
// (Bundle::validate) applies these rules to a whole program before it runs;
// the simulator applies them again as it executes, because programs built in
// memory skip the loader. Both call the functions here, so a rule and its
// message exist once. docs/bundle.md lists the rules.
//
// Every check throws tpu::Error naming the problem only ("weight tile 16 x 8
// exceeds the 8 x 8 array"); callers say which instruction it was.
#pragma once

#include "tpu/isa/HardwareConfig.h"
#include "tpu/isa/Isa.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace tpu {

// A program is not empty.
void checkProgramNotEmpty(const std::vector<isa::Instruction> &program);
// Halt is the program's last instruction, and only that one.
void checkHaltPlacement(const isa::Instruction &instruction, size_t index, size_t programSize);

// Checks an instruction whose fields are valid (isa::validateFields) against
// the machine: every on-chip range inside its memory, a DMA's DRAM range
// inside `dramBytes`, weight tiles and mxu.mm's dtype and width against the
// array, v.clamp's broadcast. mxu.mm's destination is as wide as the active
// weight tile, which only WeightTiles knows; here it is checked for its first
// column.
void checkFitsMachine(const isa::Instruction &instruction, const HardwareConfig &config,
                      uint64_t dramBytes);

// The rows x cols words a vector operand covers, densely, row after row.
struct OperandShape {
  uint64_t rows = 0;
  uint64_t cols = 0;
};
// A vector instruction's destination: rows x 1 for v.rowsum and v.rowmax,
// rows x cols otherwise.
OperandShape vectorDestinationShape(const isa::Instruction &instruction);
// A binary vector instruction's second source: rows x cols (broadcast=none),
// one row (row), one word (scalar), or lo and hi (v.clamp).
OperandShape vectorSecondSourceShape(const isa::Instruction &instruction);

// The matrix unit's weight tiles as mxu.ldw and mxu.mm arrive in program
// order. Every mxu instruction runs on the compute queue, so that is also the
// order they execute in, and the active tile at each mxu.mm is known before
// the program runs.
class WeightTiles {
public:
  struct Tile {
    uint64_t rows = 0;
    uint64_t cols = 0;
  };

  explicit WeightTiles(const HardwareConfig &config) : config_(config) {}

  // mxu.ldw puts its tile in the shadow buffer.
  void loadWeights(const isa::Instruction &instruction);
  // mxu.mm with flip=1 makes the shadow tile active and empties the shadow
  // buffer (the next flip needs a new mxu.ldw). Checks that a tile is active,
  // that cols equals its rows and that the destination, as wide as the tile,
  // lies inside the accumulator; returns the tile.
  Tile multiply(const isa::Instruction &instruction);

private:
  const HardwareConfig &config_;
  std::optional<Tile> shadow_;
  std::optional<Tile> active_;
};

} // namespace tpu
