// The banks of one on-chip memory. Each bank is a single-ported SRAM macro
// holding a contiguous slice of the address space (bank = address /
// (words / banks)). An instruction holds every bank its operands touch from
// its start to its completion; a component cannot start while another
// component holds one of those banks (docs/simulator.md#banks).
#pragma once

#include "Memory.h"

#include "tpu/sim/Simulator.h"

#include <systemc>

#include <array>
#include <cstdint>

namespace tpu::sim {

using BankSet = uint64_t; // bit b: bank b (at most 64 banks)

class BankArbiter {
public:
  BankArbiter(uint64_t words, uint32_t banks) : bankWords_(words / banks) {}

  // The banks a region touches.
  BankSet banksOf(const Region &region) const;
  bool available(Component who, BankSet banks) const;
  void acquire(Component who, BankSet banks);
  void release(BankSet banks);
  // Notified on every release.
  const sc_core::sc_event &released() const { return released_; }

private:
  uint64_t bankWords_;
  std::array<Component, 64> owner_{};
  std::array<uint32_t, 64> holds_{}; // the owner's holds; 0: free
  sc_core::sc_event released_;
};

} // namespace tpu::sim
