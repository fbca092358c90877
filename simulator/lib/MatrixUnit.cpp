#include "MatrixUnit.h"

#include <algorithm>

namespace tpu::sim {

using isa::Field;

MatrixUnit::MatrixUnit(const sc_core::sc_module_name &name, Machine &machine)
    : sc_module(name), banks("banks"), machine_(machine),
      datapath_(MatrixDatapath::create(machine.config, machine.roundOperands)),
      weightTiles_(machine.config) {
  SC_HAS_PROCESS(MatrixUnit);
  SC_THREAD(completeInOrder);
  if (machine.mode == Mode::Cycle)
    SC_THREAD(stepArray);
}

void MatrixUnit::execute(const IssuedInstruction &issued) {
  if (issued.instruction.opcode == isa::Opcode::LoadWeights)
    loadWeights(issued);
  else
    multiply(issued);
}

void MatrixUnit::loadWeights(const IssuedInstruction &issued) {
  const isa::Instruction &instruction = issued.instruction;
  Region source{instruction.get(Field::SrcAddr), instruction.get(Field::Rows),
                instruction.get(Field::Cols), instruction.get(Field::SrcStride)};
  weightTiles_.loadWeights(instruction);

  // The shadow plane takes new weights once the previous mxu.ldw is done and
  // every mm that multiplied with this plane has left the array.
  // The wait needs no stall of its own: an mm in the array keeps the unit
  // busy, and the previous mxu.ldw counts as a weights stall (complete()).
  const Clock &clock = machine_.clock;
  unsigned shadowPlane = activePlane_ ^ 1;
  while (shadowLoadedAt_ > clock.now() || planeUsers_[shadowPlane] > 0) {
    if (shadowLoadedAt_ > clock.now())
      clock.waitUntil(shadowLoadedAt_);
    else
      sc_core::wait(completed_);
  }
  BankSet scratchpadBanks = banks->banksOf(isa::Space::Scratchpad, source);
  banks->acquire(Component::Matrix, issued.pc, scratchpadBanks, 0);

  uint64_t start = clock.now();
  datapath_->loadPlane(shadowPlane, source, machine_.scratchpad);
  // One weight row per cycle.
  shadowLoadedAt_ = start + source.rows;
  machine_.profiler.memoryAccess(isa::Space::Scratchpad, source.elements(), 0);
  uint64_t id = nextId_++;
  started_[id] = {issued.pc, start, scratchpadBanks, 0, std::nullopt};
  scheduleCompletion(id, shadowLoadedAt_);
}

void MatrixUnit::multiply(const IssuedInstruction &issued) {
  const isa::Instruction &instruction = issued.instruction;
  const HardwareConfig &config = machine_.config;
  WeightTiles::Tile tile = weightTiles_.multiply(instruction);
  bool flip = instruction.get(Field::Flip) != 0;
  Region source{instruction.get(Field::SrcAddr), instruction.get(Field::Rows),
                instruction.get(Field::Cols), instruction.get(Field::SrcStride)};
  Region destination{instruction.get(Field::DstAddr), source.rows, tile.cols,
                     instruction.get(Field::DstStride)};

  // A flip waits for its mxu.ldw, whose span is already a weights stall.
  const Clock &clock = machine_.clock;
  if (flip)
    clock.waitUntil(shadowLoadedAt_);
  clock.waitUntil(feederFreeAt_); // the array is busy with the previous mm
  BankSet scratchpadBanks = banks->banksOf(isa::Space::Scratchpad, source);
  BankSet accumulatorBanks = banks->banksOf(isa::Space::Accumulator, destination);
  banks->acquire(Component::Matrix, issued.pc, scratchpadBanks, accumulatorBanks);

  uint64_t start = clock.now();
  if (flip)
    activePlane_ ^= 1;
  bool accumulate = instruction.get(Field::Accumulate) != 0;
  uint64_t id = nextId_++;
  started_[id] = {issued.pc, start, scratchpadBanks, accumulatorBanks, activePlane_};
  planeUsers_[activePlane_] += 1;
  uint64_t m = source.rows, k = source.cols, n = destination.cols;
  machine_.profiler.macs(issued.pc, m * k * n);
  machine_.profiler.memoryAccess(isa::Space::Scratchpad, m * k, 0);
  machine_.profiler.memoryAccess(isa::Space::Accumulator, accumulate ? m * n : 0, m * n);
  if (m == 0 || n == 0) {
    scheduleCompletion(id, start); // nothing enters the array
    return;
  }
  feederFreeAt_ = start + m; // one activation row per cycle
  MatMulOp op{id, source, destination, accumulate, activePlane_, start};
  if (machine_.mode == Mode::Fast) {
    datapath_->multiply(op, machine_.scratchpad, machine_.accumulator);
    // The last result (row m-1, column n-1) leaves the bottom of the array at
    // start + (m-1) + (R-1) + (n-1) and is written in the cycle after.
    scheduleCompletion(id, start + m + config.array.rows + n - 1);
  } else {
    datapath_->feed(op);
    fed_.notify(sc_core::SC_ZERO_TIME);
  }
}

void MatrixUnit::drain(bool weightLoadsOnly) {
  // A weight load has no plane: it is not in the array yet.
  auto pending = [&] {
    return weightLoadsOnly ? std::any_of(started_.begin(), started_.end(),
                                         [](const auto &entry) { return !entry.second.plane; })
                           : !started_.empty();
  };
  while (pending())
    sc_core::wait(completed_);
}

std::optional<uint32_t> MatrixUnit::inFlight() const {
  if (started_.empty())
    return std::nullopt;
  return started_.begin()->second.pc; // ids, the map's keys, grow with each start
}

void MatrixUnit::scheduleCompletion(uint64_t id, uint64_t cycle) {
  completions_.emplace(cycle, id);
  scheduled_.notify(sc_core::SC_ZERO_TIME);
}

void MatrixUnit::complete(uint64_t id, uint64_t cycle) {
  auto it = started_.find(id);
  const Started &started = it->second;
  banks->release(started.scratchpadBanks, started.accumulatorBanks);
  if (started.plane)
    planeUsers_[*started.plane] -= 1;
  // The unit is busy while the array holds an mm. A weight tile loading
  // (started.plane unset) is work the array waits for: a weights stall
  // wherever no mm is in the array.
  bool inArray = started.plane.has_value();
  machine_.profiler.instruction(Component::Matrix, started.pc, started.start, cycle, inArray);
  if (!inArray)
    machine_.profiler.stall(Component::Matrix, started.pc, StallReason::Weights, started.start,
                            cycle);
  machine_.finished(cycle);
  started_.erase(it);
  completed_.notify(sc_core::SC_ZERO_TIME);
}

void MatrixUnit::completeInOrder() {
  for (;;) {
    if (completions_.empty()) {
      sc_core::wait(scheduled_);
      continue;
    }
    auto next = completions_.begin();
    uint64_t now = machine_.clock.now();
    if (next->first > now) {
      sc_core::wait(machine_.clock.cycles(next->first - now), scheduled_);
      continue;
    }
    complete(next->second, next->first);
    completions_.erase(next);
  }
}

// Steps the PE registers. Cycles before now are safe to step, and so are all
// cycles before feederFreeAt_: no mm can start entering the array earlier.
void MatrixUnit::stepArray() {
  const Clock &clock = machine_.clock;
  for (;;) {
    if (datapath_->empty()) {
      sc_core::wait(fed_);
      nextArrayCycle_ = clock.now();
      continue;
    }
    uint64_t now = clock.now();
    uint64_t limit = std::max(now, feederFreeAt_);
    if (nextArrayCycle_ < limit) {
      for (const Completion &completion :
           datapath_->step(nextArrayCycle_, limit, machine_.scratchpad, machine_.accumulator))
        scheduleCompletion(completion.id, completion.cycle);
      nextArrayCycle_ = limit;
      continue;
    }
    sc_core::wait(clock.cycles(nextArrayCycle_ + 1 - now), fed_);
  }
}

} // namespace tpu::sim
