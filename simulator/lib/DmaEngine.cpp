#include "DmaEngine.h"

namespace tpu::sim {

using isa::Field;

void DmaEngine::execute(const IssuedInstruction &issued) {
  const isa::Instruction &instruction = issued.instruction;
  auto dtype = static_cast<isa::DType>(instruction.get(Field::DType));
  unsigned elementBytes = isa::dtypeBytes(dtype);
  auto space = static_cast<isa::Space>(instruction.get(Field::Space));
  WordMemory &memory = machine_.memory(space);
  uint64_t rows = instruction.get(Field::Rows);
  uint64_t cols = instruction.get(Field::Cols);
  Region dramRegion{instruction.get(Field::DramAddr), rows, cols,
                    instruction.get(Field::DramStride)};
  Region sramRegion{instruction.get(Field::SramAddr), rows, cols,
                    instruction.get(Field::SramStride)};

  BankSet touched = banks->banksOf(space, sramRegion);
  bool onScratchpad = space == isa::Space::Scratchpad;
  BankSet scratchpadBanks = onScratchpad ? touched : 0,
          accumulatorBanks = onScratchpad ? 0 : touched;
  banks->acquire(component_, issued.pc, scratchpadBanks, accumulatorBanks);
  const Clock &clock = machine_.clock;
  uint64_t start = clock.now();
  DramSchedule schedule = dram->transfer(start, rows, cols * elementBytes);
  bool load = instruction.opcode == isa::Opcode::DmaLoad;
  uint64_t bytes = rows * cols * elementBytes;
  machine_.profiler.dramBytes(issued.pc, bytes, load);
  machine_.profiler.memoryAccess(space, load ? 0 : rows * cols, load ? rows * cols : 0);

  // Operands are read at the start and results written at completion, so a
  // program that touches the data in between without a sync sees stale values.
  if (load) {
    std::vector<uint32_t> words = machine_.dram.load(dramRegion, dtype);
    clock.waitUntil(schedule.completion);
    memory.write(sramRegion, words);
  } else {
    std::vector<uint32_t> words = memory.read(sramRegion);
    clock.waitUntil(schedule.completion);
    machine_.dram.store(dramRegion, dtype, words);
  }
  banks->release(scratchpadBanks, accumulatorBanks);

  // Busy while its data is on the bus; the rest of the transfer waits on DRAM.
  machine_.profiler.instruction(component_, issued.pc, start, schedule.completion, false);
  for (const auto &[busStart, busEnd] : schedule.busRuns)
    machine_.profiler.busy(component_, busStart, busEnd);
  machine_.profiler.stall(component_, issued.pc, StallReason::Dram, start, schedule.completion);
  machine_.finished(schedule.completion);
}

} // namespace tpu::sim
