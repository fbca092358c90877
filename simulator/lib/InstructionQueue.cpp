#include "InstructionQueue.h"

#include "Timing.h"

#include "tpu/isa/Error.h"

#include <fmt/format.h>

namespace tpu::sim {

InstructionQueue::InstructionQueue(const sc_core::sc_module_name &name, isa::Queue queue,
                                   Machine &machine, std::vector<ExecutionUnit *> units)
    : sc_module(name), input("input"), queue_(queue), machine_(machine), units_(std::move(units)) {
  SC_HAS_PROCESS(InstructionQueue);
  SC_THREAD(serve);
}

void InstructionQueue::serve() {
  QueueState &state = machine_.queue(queue_);
  QueueStats &stats = machine_.queueStats(queue_);
  for (;;) {
    state.activity = Activity::Idle;
    state.current = input.read();
    state.activity = Activity::Executing;
    const isa::Instruction &instruction = state.current.instruction;
    uint64_t start = machine_.clock.now();
    uint64_t waited = 0;
    try {
      if (instruction.opcode == isa::Opcode::SyncPush || instruction.opcode == isa::Opcode::SyncPop)
        waited = synchronize(instruction);
      else
        unitFor(instruction.opcode).execute(instruction);
    } catch (const std::exception &error) {
      machine_.fail(state.current, error.what());
      return;
    }
    stats.instructions += 1;
    stats.wait_cycles += waited;
    stats.busy_cycles += machine_.clock.now() - start - waited;
  }
}

uint64_t InstructionQueue::synchronize(const isa::Instruction &instruction) {
  auto from = static_cast<isa::Queue>(instruction.get(isa::Field::From));
  auto to = static_cast<isa::Queue>(instruction.get(isa::Field::To));
  uint64_t waited = 0;
  if (instruction.opcode == isa::Opcode::SyncPush) {
    machine_.tokens.push(from, to);
  } else {
    QueueState &state = machine_.queue(queue_);
    uint64_t start = machine_.clock.now();
    state.activity = Activity::WaitingForToken;
    machine_.tokens.pop(from, to);
    state.activity = Activity::Executing;
    waited = machine_.clock.now() - start;
  }
  sc_core::wait(machine_.clock.cycles(kSyncCycles));
  return waited;
}

ExecutionUnit &InstructionQueue::unitFor(isa::Opcode opcode) const {
  for (ExecutionUnit *unit : units_)
    if (unit->unit() == isa::opcodeInfo(opcode).unit)
      return *unit;
  throw Error(fmt::format("the {} queue has no unit for this instruction", isa::queueName(queue_)));
}

} // namespace tpu::sim
