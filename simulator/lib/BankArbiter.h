// The banks of the on-chip memories. Each bank is a single-ported SRAM macro
// holding a contiguous slice of its memory's address space (bank = address /
// (words / banks)). An instruction holds every bank its operands touch from
// its start to its completion; a component cannot start while another
// component holds one of those banks (docs/simulator.md#banks).
#pragma once

#include "Clock.h"
#include "Interfaces.h"
#include "Profiler.h"

#include "tpu/isa/HardwareConfig.h"

#include <systemc>

#include <array>
#include <cstdint>

namespace tpu::sim {

class BankArbiter : public BankInterface {
public:
  BankArbiter(const HardwareConfig &config, const Clock &clock, Profiler &profiler);

  BankSet banksOf(isa::Space space, const Region &region) const override;
  void acquire(Component who, uint32_t pc, BankSet scratchpad, BankSet accumulator) override;
  void release(BankSet scratchpad, BankSet accumulator) override;

private:
  struct Banks {
    uint64_t bankWords;
    std::array<Component, 64> owner{};
    std::array<uint32_t, 64> holds{}; // the owner's holds; 0: free
    bool available(Component who, BankSet banks) const;
    void take(Component who, BankSet banks);
    void give(BankSet banks);
  };

  const Clock &clock_;
  Profiler &profiler_;
  std::array<Banks, 2> memories_; // indexed by isa::Space
  sc_core::sc_event released_;
};

} // namespace tpu::sim
