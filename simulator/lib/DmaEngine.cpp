#include "DmaEngine.h"

#include "Timing.h"

namespace tpu::sim {

using isa::Field;

void DmaEngine::execute(const isa::Instruction &instruction) {
  auto dtype = static_cast<isa::DType>(instruction.get(Field::DType));
  unsigned elementBytes = isa::dtypeBytes(dtype);
  WordMemory &memory = machine_.memory(static_cast<isa::Space>(instruction.get(Field::Space)));
  uint64_t rows = instruction.get(Field::Rows);
  uint64_t cols = instruction.get(Field::Cols);
  Region dramRegion{instruction.get(Field::DramAddr), rows, cols,
                    instruction.get(Field::DramStride)};
  Region sramRegion{instruction.get(Field::SramAddr), rows, cols,
                    instruction.get(Field::SramStride)};
  machine_.dram.check(dramRegion, elementBytes);
  memory.check(sramRegion, "sram");
  auto dramAddress = [&](uint64_t r, uint64_t c) {
    return dramRegion.address + dramRegion.offset(r, c) * elementBytes;
  };
  uint64_t bytes = rows * cols * elementBytes;
  sc_core::sc_time duration = machine_.clock.cycles(dmaCycles(machine_.config, bytes));

  if (instruction.opcode == isa::Opcode::DmaLoad) {
    std::vector<uint32_t> words;
    words.reserve(sramRegion.elements());
    for (uint64_t r = 0; r < rows; ++r)
      for (uint64_t c = 0; c < cols; ++c)
        words.push_back(machine_.dram.load(dramAddress(r, c), dtype));
    machine_.stats.dram_bytes_read += bytes;
    sc_core::wait(duration);
    memory.write(sramRegion, words);
  } else {
    std::vector<uint32_t> words = memory.read(sramRegion);
    machine_.stats.dram_bytes_written += bytes;
    sc_core::wait(duration);
    for (uint64_t r = 0; r < rows; ++r)
      for (uint64_t c = 0; c < cols; ++c)
        machine_.dram.store(dramAddress(r, c), dtype, words[r * cols + c]);
  }
}

} // namespace tpu::sim
