// The weight-stationary R x C matrix unit (mxu.ldw, mxu.mm): MatrixCore's
// arithmetic with the first, simple timing model of Timing.h.
#pragma once

#include "ExecutionUnit.h"
#include "Machine.h"
#include "MatrixCore.h"

#include <systemc>

namespace tpu::sim {

class MatrixUnit : public sc_core::sc_module, public ExecutionUnit {
public:
  MatrixUnit(const sc_core::sc_module_name &name, Machine &machine);

  isa::Unit unit() const override { return isa::Unit::Matrix; }
  void execute(const isa::Instruction &instruction) override;

private:
  Machine &machine_;
  MatrixCore core_;
};

} // namespace tpu::sim
