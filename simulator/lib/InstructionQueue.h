// One in-order instruction queue (load, compute or store): takes the next
// instruction from its FIFO once the previous one has completed, runs
// sync.push / sync.pop itself and hands everything else to its units.
#pragma once

#include "ExecutionUnit.h"
#include "Machine.h"

#include <systemc>

#include <vector>

namespace tpu::sim {

class InstructionQueue : public sc_core::sc_module {
public:
  sc_core::sc_fifo_in<IssuedInstruction> input;

  InstructionQueue(const sc_core::sc_module_name &name, isa::Queue queue, Machine &machine,
                   std::vector<ExecutionUnit *> units);

private:
  void serve();
  // Returns the cycles spent waiting for a token.
  uint64_t synchronize(const isa::Instruction &instruction);
  ExecutionUnit &unitFor(isa::Opcode opcode) const;

  isa::Queue queue_;
  Machine &machine_;
  std::vector<ExecutionUnit *> units_;
};

} // namespace tpu::sim
