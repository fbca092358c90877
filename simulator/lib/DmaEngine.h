// Moves data between DRAM and the on-chip memories, one engine for the load
// queue (dma.ld, dma.gather) and one for the store queue (dma.st), both on the shared
// DRAM channel; converts per element type.
#pragma once

#include "ExecutionUnit.h"
#include "Machine.h"

#include <systemc>

namespace tpu::sim {

class DmaEngine : public sc_core::sc_module, public ExecutionUnit {
public:
  sc_core::sc_port<DramInterface> dram;
  sc_core::sc_port<BankInterface> banks;

  DmaEngine(const sc_core::sc_module_name &name, Component component, Machine &machine)
      : sc_module(name), dram("dram"), banks("banks"), component_(component), machine_(machine) {}

  isa::Unit unit() const override { return isa::Unit::Dma; }
  void execute(const IssuedInstruction &issued) override;

private:
  void gather(const IssuedInstruction &issued);
  // Accounts a transfer that started at `start` and ends with the schedule.
  void finish(const IssuedInstruction &issued, uint64_t start, const DramSchedule &schedule);

  Component component_;
  Machine &machine_;
};

} // namespace tpu::sim
