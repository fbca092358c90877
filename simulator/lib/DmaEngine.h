// Moves data between DRAM and the on-chip memories, one engine for the load
// queue (dma.ld, dma.gather) and one for the store queue (dma.st), both on the shared
// DRAM channel; converts per element type. An engine takes its next transfer
// once the last request of the current one is issued, so the DRAM latency of
// back-to-back transfers overlaps; transfers complete in order, and a
// sync.push of its queue delivers its token when those before it have
// completed, without holding up the queue (docs/simulator.md#dram).
#pragma once

#include "ExecutionUnit.h"
#include "Machine.h"

#include <systemc>

#include <deque>
#include <functional>
#include <optional>

namespace tpu::sim {

class DmaEngine : public sc_core::sc_module, public ExecutionUnit {
public:
  sc_core::sc_port<DramInterface> dram;
  sc_core::sc_port<BankInterface> banks;

  DmaEngine(const sc_core::sc_module_name &name, Component component, Machine &machine);

  isa::Unit unit() const override { return isa::Unit::Dma; }
  // Returns once the transfer's requests are issued (a dma.gather, once it
  // has completed); drain() waits for completion.
  void execute(const IssuedInstruction &issued) override;
  void drain(bool weightLoadsOnly = false) override;
  bool whenCompleted(const IssuedInstruction &issued, std::function<void()> action) override;
  // The pc of the oldest transfer (or deferred sync.push) not yet completed,
  // if any.
  std::optional<uint32_t> inFlight() const;

private:
  // A transfer between its start and its completion, or a sync.push
  // waiting for the transfers before it.
  struct Pending {
    IssuedInstruction issued;
    uint64_t completion;
    std::function<void()> complete; // runs at `completion`
  };

  void gather(const IssuedInstruction &issued);
  // Process: completes the pending transfers in order, each at its cycle.
  void completeInOrder();
  // Accounts a transfer that started at `start` and ends with the schedule.
  void finish(const IssuedInstruction &issued, uint64_t start, const DramSchedule &schedule);

  Component component_;
  Machine &machine_;
  std::deque<Pending> pending_;
  uint64_t turnFree_ = 0; // the corner turn is done with its latest transfer
  sc_core::sc_event queued_, completed_;
};

} // namespace tpu::sim
