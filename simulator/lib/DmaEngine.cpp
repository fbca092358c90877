#include "DmaEngine.h"

#include "tpu/isa/Error.h"

#include <fmt/format.h>

#include <algorithm>

namespace tpu::sim {

using isa::Field;

namespace {

// The rows x cols words of `words` (row-major) as cols x rows, row-major.
std::vector<uint32_t> transposed(const std::vector<uint32_t> &words, uint64_t rows, uint64_t cols) {
  std::vector<uint32_t> result(words.size());
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t c = 0; c < cols; ++c)
      result[c * rows + r] = words[r * cols + c];
  return result;
}

// The corner turn of a transposed rows x cols transfer moves one on-chip row
// segment (a DRAM column) of up to bytes_per_cycle / 4 words a cycle.
uint64_t cornerTurnCycles(const HardwareConfig &config, uint64_t rows, uint64_t cols) {
  auto width = std::max<uint64_t>(1, uint64_t(config.dram.bytes_per_cycle) / 4);
  return cols * ((rows + width - 1) / width);
}

} // namespace

DmaEngine::DmaEngine(const sc_core::sc_module_name &name, Component component, Machine &machine)
    : sc_module(name), dram("dram"), banks("banks"), component_(component), machine_(machine) {
  SC_HAS_PROCESS(DmaEngine);
  SC_THREAD(completeInOrder);
}

void DmaEngine::execute(const IssuedInstruction &issued) {
  if (issued.instruction.opcode == isa::Opcode::DmaGather)
    return gather(issued);
  const isa::Instruction &instruction = issued.instruction;
  auto dtype = static_cast<isa::DType>(instruction.get(Field::DType));
  unsigned elementBytes = isa::dtypeBytes(dtype);
  auto space = static_cast<isa::Space>(instruction.get(Field::Space));
  WordMemory &memory = machine_.memory(space);
  uint64_t rows = instruction.get(Field::Rows);
  uint64_t cols = instruction.get(Field::Cols);
  bool transpose = instruction.get(Field::Transpose) != 0;
  Region dramRegion{instruction.get(Field::DramAddr), rows, cols,
                    instruction.get(Field::DramStride)};
  // Transposed, DRAM column c is on-chip row c.
  Region sramRegion{instruction.get(Field::SramAddr), transpose ? cols : rows,
                    transpose ? rows : cols, instruction.get(Field::SramStride)};

  BankSet touched = banks->banksOf(space, sramRegion);
  bool onScratchpad = space == isa::Space::Scratchpad;
  BankSet scratchpadBanks = onScratchpad ? touched : 0,
          accumulatorBanks = onScratchpad ? 0 : touched;
  banks->acquire(component_, issued.pc, scratchpadBanks, accumulatorBanks);
  const Clock &clock = machine_.clock;
  uint64_t start = clock.now();
  DramSchedule schedule = dram->transfer(start, rows, cols * elementBytes);
  // The engine takes the next transfer once this one's last request is
  // issued, at the earliest a cycle after it took this one.
  uint64_t accepted = std::max(start + 1, schedule.lastIssue);
  if (transpose) {
    // The corner turn streams behind the first DRAM data, once the turn of
    // the engine's previous transposed transfer is done; the engine is busy
    // while it runs and the transfer cannot end before it does.
    uint64_t turnStart = std::max(start + machine_.config.dram.latency_cycles, turnFree_);
    turnFree_ = turnStart + cornerTurnCycles(machine_.config, rows, cols);
    machine_.profiler.busy(component_, turnStart, turnFree_);
    schedule.completion = std::max(schedule.completion, turnFree_);
  }
  // Transfers land in order (a turn may outlast the next transfer's bus).
  if (!pending_.empty())
    schedule.completion = std::max(schedule.completion, pending_.back().completion);
  bool load = instruction.opcode == isa::Opcode::DmaLoad;
  machine_.profiler.dramBytes(issued.pc, rows * cols * elementBytes, load);
  machine_.profiler.memoryAccess(space, load ? 0 : rows * cols, load ? rows * cols : 0);

  // Operands are read at the start and results written at completion, so a
  // program that touches the data in between without a sync sees stale values.
  std::function<void()> land;
  if (load) {
    land = [&memory, sramRegion, rows, cols, transpose,
            words = machine_.dram.load(dramRegion, dtype)] {
      memory.write(sramRegion, transpose ? transposed(words, rows, cols) : words);
    };
  } else {
    land = [this, dramRegion, dtype, rows, cols, transpose, words = memory.read(sramRegion)] {
      machine_.dram.store(dramRegion, dtype, transpose ? transposed(words, cols, rows) : words);
    };
  }
  pending_.push_back(
      {issued, schedule.completion,
       [this, land = std::move(land), issued, start, schedule, scratchpadBanks, accumulatorBanks] {
         land();
         banks->release(scratchpadBanks, accumulatorBanks);
         finish(issued, start, schedule);
       }});
  queued_.notify(sc_core::SC_ZERO_TIME);
  clock.waitUntil(accepted);
}

bool DmaEngine::whenCompleted(const IssuedInstruction &issued, std::function<void()> action) {
  if (pending_.empty()) {
    action();
    return true;
  }
  pending_.push_back({issued, pending_.back().completion, std::move(action)});
  return true;
}

void DmaEngine::completeInOrder() {
  for (;;) {
    while (pending_.empty())
      sc_core::wait(queued_);
    Pending &next = pending_.front();
    machine_.clock.waitUntil(next.completion);
    try {
      next.complete();
    } catch (const std::exception &error) {
      machine_.fail(next.issued, error.what());
      return;
    }
    pending_.pop_front();
    completed_.notify(sc_core::SC_ZERO_TIME);
  }
}

void DmaEngine::drain(bool) {
  while (!pending_.empty())
    sc_core::wait(completed_);
}

std::optional<uint32_t> DmaEngine::inFlight() const {
  if (pending_.empty())
    return std::nullopt;
  return pending_.front().issued.pc;
}

// One DRAM request per gathered row, as a dma.ld of rows x cols: the index
// words come from the scratchpad with the rows' own bank access. It waits for
// the engine's earlier loads, which may write its indices, and runs alone.
void DmaEngine::gather(const IssuedInstruction &issued) {
  drain();
  const isa::Instruction &instruction = issued.instruction;
  auto dtype = static_cast<isa::DType>(instruction.get(Field::DType));
  uint64_t elementBytes = isa::dtypeBytes(dtype);
  uint64_t rows = instruction.get(Field::Rows);
  uint64_t cols = instruction.get(Field::Cols);
  auto bound = static_cast<int64_t>(instruction.get(Field::Bound));
  Region indexRegion{instruction.get(Field::SrcAddr), 1, rows, rows};
  Region destination{instruction.get(Field::SramAddr), rows, cols, cols};
  WordMemory &scratchpad = machine_.memory(isa::Space::Scratchpad);

  BankSet touched = banks->banksOf(isa::Space::Scratchpad, destination) |
                    banks->banksOf(isa::Space::Scratchpad, indexRegion);
  banks->acquire(component_, issued.pc, touched, 0);
  std::vector<uint32_t> indices = scratchpad.read(indexRegion);
  std::vector<uint32_t> words;
  words.reserve(rows * cols);
  for (uint64_t r = 0; r < rows; ++r) {
    auto index = static_cast<int64_t>(static_cast<int32_t>(indices[r]));
    if (index < -bound || index >= bound) {
      banks->release(touched, 0);
      throw Error(fmt::format("index {} (row {}, scratchpad word {}) is outside [-{}, {})", index,
                              r, indexRegion.at(0, r), bound, bound));
    }
    uint64_t row = static_cast<uint64_t>(index < 0 ? index + bound : index);
    std::vector<uint32_t> gathered = machine_.dram.load(
        Region{instruction.get(Field::DramAddr) + row * cols * elementBytes, 1, cols, cols}, dtype);
    words.insert(words.end(), gathered.begin(), gathered.end());
  }
  const Clock &clock = machine_.clock;
  uint64_t start = clock.now();
  DramSchedule schedule = dram->transfer(start, rows, cols * elementBytes);
  machine_.profiler.dramBytes(issued.pc, rows * cols * elementBytes, true);
  machine_.profiler.memoryAccess(isa::Space::Scratchpad, rows, rows * cols);
  clock.waitUntil(schedule.completion);
  scratchpad.write(destination, words);
  banks->release(touched, 0);
  finish(issued, start, schedule);
}

void DmaEngine::finish(const IssuedInstruction &issued, uint64_t start,
                       const DramSchedule &schedule) {
  // Busy while its data is on the bus; the rest of the transfer waits on DRAM.
  machine_.profiler.instruction(component_, issued.pc, start, schedule.completion, false);
  for (const auto &[busStart, busEnd] : schedule.busRuns)
    machine_.profiler.busy(component_, busStart, busEnd);
  machine_.profiler.stall(component_, issued.pc, StallReason::Dram, start, schedule.completion);
  machine_.finished(schedule.completion);
}

} // namespace tpu::sim
