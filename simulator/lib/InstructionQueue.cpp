#include "InstructionQueue.h"

#include "tpu/isa/Error.h"
#include "tpu/isa/Legality.h"

#include <fmt/format.h>

namespace tpu::sim {

// sync.push and sync.pop (once its token is there) occupy their queue one cycle.
constexpr uint64_t kSyncCycles = 1;

InstructionQueue::InstructionQueue(const sc_core::sc_module_name &name, isa::Queue queue,
                                   Machine &machine, std::vector<ExecutionUnit *> units,
                                   std::vector<Component> components)
    : sc_module(name), input("input"), tokens("tokens"), queue_(queue), machine_(machine),
      units_(std::move(units)), components_(std::move(components)) {
  SC_HAS_PROCESS(InstructionQueue);
  SC_THREAD(serve);
}

void InstructionQueue::serve() {
  QueueState &state = machine_.queue(queue_);
  for (;;) {
    state.activity = Activity::Idle;
    state.current = input.read();
    state.activity = Activity::Executing;
    try {
      isa::Opcode opcode = state.current.instruction.opcode;
      if (opcode == isa::Opcode::SyncPush || opcode == isa::Opcode::SyncPop) {
        synchronize(state.current);
      } else {
        ExecutionUnit &unit = unitFor(opcode);
        fence(state.current, &unit);
        checkFitsMachine(state.current.instruction, machine_.config, machine_.dramBytes);
        unit.execute(state.current);
      }
    } catch (const std::exception &error) {
      machine_.fail(state.current, error.what());
      return;
    }
  }
}

void InstructionQueue::synchronize(const IssuedInstruction &issued) {
  const isa::Instruction &instruction = issued.instruction;
  auto from = static_cast<isa::Queue>(instruction.get(isa::Field::From));
  auto to = static_cast<isa::Queue>(instruction.get(isa::Field::To));
  const Clock &clock = machine_.clock;
  if (instruction.opcode == isa::Opcode::SyncPush) {
    // The token tells the other queue that everything before it is done
    // (with weights=1, every weight load before it). A DMA engine delivers
    // it itself once its transfers are done, and the queue goes on.
    auto deliver = [this, from, to] { tokens->push(from, to); };
    if (units_.size() != 1 || !units_.front()->whenCompleted(issued, deliver)) {
      fence(issued, nullptr, instruction.get(isa::Field::Weights) != 0);
      deliver();
    }
  } else {
    uint64_t start = clock.now();
    QueueState &state = machine_.queue(queue_);
    state.activity = Activity::WaitingForToken;
    tokens->pop(from, to);
    state.activity = Activity::Executing;
    stall(issued, StallReason::Token, start);
  }
  uint64_t start = clock.now();
  sc_core::wait(clock.cycles(kSyncCycles));
  machine_.profiler.instruction(components_.front(), issued.pc, start, start + kSyncCycles, false);
  machine_.finished(start + kSyncCycles);
}

void InstructionQueue::fence(const IssuedInstruction &issued, const ExecutionUnit *except,
                             bool weightLoadsOnly) {
  uint64_t start = machine_.clock.now();
  for (ExecutionUnit *unit : units_)
    if (unit != except)
      unit->drain(weightLoadsOnly);
  stall(issued, StallReason::Fence, start);
}

void InstructionQueue::stall(const IssuedInstruction &issued, StallReason reason, uint64_t start) {
  for (Component component : components_)
    machine_.profiler.stall(component, issued.pc, reason, start, machine_.clock.now());
}

ExecutionUnit &InstructionQueue::unitFor(isa::Opcode opcode) const {
  for (ExecutionUnit *unit : units_)
    if (unit->unit() == isa::opcodeInfo(opcode).unit)
      return *unit;
  throw Error(fmt::format("the {} queue has no unit for this instruction", isa::queueName(queue_)));
}

} // namespace tpu::sim
