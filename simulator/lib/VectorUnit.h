// The fp32 vector unit (v.*): element-wise operations, row reductions and
// conversions on dense rows x cols operands in either on-chip memory.
#pragma once

#include "ExecutionUnit.h"
#include "Machine.h"

#include <systemc>

namespace tpu::sim {

class VectorUnit : public sc_core::sc_module, public ExecutionUnit {
public:
  sc_core::sc_port<BankInterface> banks;

  VectorUnit(const sc_core::sc_module_name &name, Machine &machine)
      : sc_module(name), banks("banks"), machine_(machine) {}

  isa::Unit unit() const override { return isa::Unit::Vector; }
  void execute(const IssuedInstruction &issued) override;

private:
  Machine &machine_;
};

} // namespace tpu::sim
