// What an instruction queue hands its instructions to.
#pragma once

#include "tpu/isa/Isa.h"

namespace tpu::sim {

class ExecutionUnit {
public:
  virtual ~ExecutionUnit() = default;
  // The instructions it runs are those the opcode table assigns to this unit.
  virtual isa::Unit unit() const = 0;
  // Performs the instruction and returns, in the calling SystemC thread, once
  // it has completed. Operands are read when it starts and results written
  // when it completes, so a program that reads data before the instruction
  // producing it has completed (a missing sync) sees stale values, as the
  // hardware would. Throws tpu::Error with the reason when the instruction is
  // illegal, before changing any state.
  virtual void execute(const isa::Instruction &instruction) = 0;
};

} // namespace tpu::sim
