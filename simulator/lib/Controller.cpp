#include "Controller.h"

#include "tpu/isa/Error.h"
#include "tpu/isa/Legality.h"

namespace tpu::sim {

// The controller dispatches one instruction per cycle.
constexpr uint64_t kDispatchCycles = 1;

Controller::Controller(const sc_core::sc_module_name &name,
                       const std::vector<isa::Instruction> &program, Machine &machine)
    : sc_module(name), load("load"), compute("compute"), store("store"), program_(program),
      machine_(machine) {
  SC_HAS_PROCESS(Controller);
  SC_THREAD(dispatch);
}

void Controller::check(const IssuedInstruction &issued) const {
  checkHaltPlacement(issued.instruction, issued.pc, program_.size());
  isa::validateFields(issued.instruction);
}

sc_core::sc_fifo_out<IssuedInstruction> &Controller::portFor(isa::Queue queue) {
  switch (queue) {
  case isa::Queue::Load:
    return load;
  case isa::Queue::Compute:
    return compute;
  case isa::Queue::Store:
    return store;
  case isa::Queue::Control:
    break;
  }
  throw Error("the controller has no FIFO for the control queue");
}

void Controller::dispatch() {
  QueueState &state = machine_.queue(isa::Queue::Control);
  Profiler &profiler = machine_.profiler;
  for (uint32_t pc = 0; pc < program_.size(); ++pc) {
    state.current = {pc, program_[pc]};
    state.activity = Activity::Executing;
    try {
      check(state.current);
      isa::Queue queue = state.current.instruction.queue();
      if (queue != isa::Queue::Control) {
        sc_core::sc_fifo_out<IssuedInstruction> &port = portFor(queue);
        uint64_t start = machine_.clock.now();
        if (port->num_free() == 0)
          state.activity = Activity::Stalled;
        port->write(state.current);
        state.activity = Activity::Executing;
        profiler.stall(Component::Controller, pc, StallReason::QueueFull, start,
                       machine_.clock.now());
      }
    } catch (const std::exception &error) {
      machine_.fail(state.current, error.what());
      return;
    }
    uint64_t start = machine_.clock.now();
    sc_core::wait(machine_.clock.cycles(kDispatchCycles));
    // nop and halt run here; the rest are counted where they execute.
    if (state.current.instruction.queue() == isa::Queue::Control)
      profiler.instruction(Component::Controller, pc, start, start + kDispatchCycles);
    else
      profiler.busy(Component::Controller, start, start + kDispatchCycles);
    machine_.finished(start + kDispatchCycles);
    dispatched_ = pc + 1;
  }
  halted_ = true;
  state.activity = Activity::Idle;
}

} // namespace tpu::sim
