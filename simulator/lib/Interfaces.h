// The interfaces of the channels between the units: the units reach the
// token channels, the DRAM channel and the bank arbiter through sc_ports.
#pragma once

#include "Memory.h"

#include "tpu/isa/Isa.h"
#include "tpu/sim/Simulator.h"

#include <systemc>

#include <cstdint>
#include <utility>
#include <vector>

namespace tpu::sim {

// sync.push / sync.pop.
class TokenInterface : public virtual sc_core::sc_interface {
public:
  virtual void push(isa::Queue from, isa::Queue to) = 0;
  // Blocks the calling thread until the channel holds a token, then takes it.
  virtual void pop(isa::Queue from, isa::Queue to) = 0;
};

struct DramSchedule {
  uint64_t completion = 0;
  uint64_t lastIssue = 0; // the cycle the transfer's last request was issued
  // The bus cycles carrying this transfer's data, merged into runs.
  std::vector<std::pair<uint64_t, uint64_t>> busRuns;
};

class DramInterface : public virtual sc_core::sc_interface {
public:
  // Issues a transfer of `rows` requests of `rowBytes` bytes each at cycle
  // `start` and reserves the bus for it.
  virtual DramSchedule transfer(uint64_t start, uint64_t rows, uint64_t rowBytes) = 0;
};

using BankSet = uint64_t; // bit b: bank b (at most 64 banks)

class BankInterface : public virtual sc_core::sc_interface {
public:
  // The banks of `space` a region touches.
  virtual BankSet banksOf(isa::Space space, const Region &region) const = 0;
  // Waits until no other component holds one of the banks, recording the
  // wait as a bank stall of `who` at `pc`, then takes them.
  virtual void acquire(Component who, uint32_t pc, BankSet scratchpad, BankSet accumulator) = 0;
  virtual void release(BankSet scratchpad, BankSet accumulator) = 0;
};

} // namespace tpu::sim
