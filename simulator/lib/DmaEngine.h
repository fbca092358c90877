// Moves data between DRAM and the on-chip memories for the load queue
// (dma.ld) and the store queue (dma.st), converting per element type.
#pragma once

#include "ExecutionUnit.h"
#include "Machine.h"

#include <systemc>

namespace tpu::sim {

class DmaEngine : public sc_core::sc_module, public ExecutionUnit {
public:
  DmaEngine(const sc_core::sc_module_name &name, Machine &machine)
      : sc_module(name), machine_(machine) {}

  isa::Unit unit() const override { return isa::Unit::Dma; }
  void execute(const isa::Instruction &instruction) override;

private:
  Machine &machine_;
};

} // namespace tpu::sim
