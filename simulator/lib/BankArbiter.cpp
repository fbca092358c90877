#include "BankArbiter.h"

namespace tpu::sim {

BankArbiter::BankArbiter(const HardwareConfig &config, const Clock &clock, Profiler &profiler)
    : clock_(clock), profiler_(profiler) {
  memories_[static_cast<unsigned>(isa::Space::Scratchpad)].bankWords =
      config.scratchpad.words() / config.scratchpad.banks;
  memories_[static_cast<unsigned>(isa::Space::Accumulator)].bankWords =
      config.accumulator.words() / config.accumulator.banks;
}

BankSet BankArbiter::banksOf(isa::Space space, const Region &region) const {
  uint64_t bankWords = memories_[static_cast<unsigned>(space)].bankWords;
  BankSet banks = 0;
  for (uint64_t r = 0; r < region.rows && region.cols > 0; ++r) {
    uint64_t first = region.at(r, 0) / bankWords;
    uint64_t last = region.at(r, region.cols - 1) / bankWords;
    for (uint64_t bank = first; bank <= last && bank < 64; ++bank)
      banks |= BankSet{1} << bank;
    if (last - first >= 63)
      break; // every bank already
  }
  return banks;
}

bool BankArbiter::Banks::available(Component who, BankSet banks) const {
  for (unsigned bank = 0; bank < 64; ++bank)
    if ((banks >> bank & 1) && holds[bank] > 0 && owner[bank] != who)
      return false;
  return true;
}

void BankArbiter::Banks::take(Component who, BankSet banks) {
  for (unsigned bank = 0; bank < 64; ++bank) {
    if (banks >> bank & 1) {
      owner[bank] = who;
      holds[bank] += 1;
    }
  }
}

void BankArbiter::Banks::give(BankSet banks) {
  for (unsigned bank = 0; bank < 64; ++bank)
    if (banks >> bank & 1)
      holds[bank] -= 1;
}

void BankArbiter::acquire(Component who, uint32_t pc, BankSet scratchpad, BankSet accumulator) {
  Banks &scratchpadBanks = memories_[static_cast<unsigned>(isa::Space::Scratchpad)];
  Banks &accumulatorBanks = memories_[static_cast<unsigned>(isa::Space::Accumulator)];
  uint64_t start = clock_.now();
  while (!scratchpadBanks.available(who, scratchpad) ||
         !accumulatorBanks.available(who, accumulator))
    sc_core::wait(released_);
  profiler_.stall(who, pc, StallReason::Bank, start, clock_.now());
  scratchpadBanks.take(who, scratchpad);
  accumulatorBanks.take(who, accumulator);
}

void BankArbiter::release(BankSet scratchpad, BankSet accumulator) {
  memories_[static_cast<unsigned>(isa::Space::Scratchpad)].give(scratchpad);
  memories_[static_cast<unsigned>(isa::Space::Accumulator)].give(accumulator);
  released_.notify(sc_core::SC_ZERO_TIME);
}

} // namespace tpu::sim
