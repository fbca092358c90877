// Fetches the program in order and dispatches each instruction into the FIFO
// of its queue, one per cycle, stalling while that FIFO is full. nop and halt
// stay in the controller.
#pragma once

#include "Machine.h"

#include <systemc>

#include <vector>

namespace tpu::sim {

class Controller : public sc_core::sc_module {
public:
  sc_core::sc_fifo_out<IssuedInstruction> load;
  sc_core::sc_fifo_out<IssuedInstruction> compute;
  sc_core::sc_fifo_out<IssuedInstruction> store;

  Controller(const sc_core::sc_module_name &name, const std::vector<isa::Instruction> &program,
             Machine &machine);
  // Whether halt has been dispatched.
  bool halted() const { return halted_; }
  // Instructions dispatched so far.
  uint32_t dispatched() const { return dispatched_; }

private:
  void dispatch();
  // Throws tpu::Error when the instruction is ill-formed or misplaced.
  void check(const IssuedInstruction &issued) const;
  sc_core::sc_fifo_out<IssuedInstruction> &portFor(isa::Queue queue);

  const std::vector<isa::Instruction> &program_;
  Machine &machine_;
  bool halted_ = false;
  uint32_t dispatched_ = 0;
};

} // namespace tpu::sim
