// One in-order instruction queue (load, compute or store): takes the next
// instruction from its FIFO, runs sync.push / sync.pop itself and hands
// everything else to its units. An instruction waits until the queue's
// earlier instructions have completed, except that matrix-unit instructions
// follow each other at once: the matrix unit pipelines them itself.
#pragma once

#include "ExecutionUnit.h"
#include "Machine.h"

#include <systemc>

#include <vector>

namespace tpu::sim {

class InstructionQueue : public sc_core::sc_module {
public:
  sc_core::sc_fifo_in<IssuedInstruction> input;
  sc_core::sc_port<TokenInterface> tokens;

  // `components` are charged with the queue's token and fence stalls.
  InstructionQueue(const sc_core::sc_module_name &name, isa::Queue queue, Machine &machine,
                   std::vector<ExecutionUnit *> units, std::vector<Component> components);

private:
  void serve();
  void synchronize(const IssuedInstruction &issued);
  // Waits for every unit but `except` to complete what it has started (or,
  // with `weightLoadsOnly`, its weight loads).
  void fence(const IssuedInstruction &issued, const ExecutionUnit *except,
             bool weightLoadsOnly = false);
  void stall(const IssuedInstruction &issued, StallReason reason, uint64_t start);
  ExecutionUnit &unitFor(isa::Opcode opcode) const;

  isa::Queue queue_;
  Machine &machine_;
  std::vector<ExecutionUnit *> units_;
  std::vector<Component> components_;
};

} // namespace tpu::sim
