#include "BankArbiter.h"

namespace tpu::sim {

BankSet BankArbiter::banksOf(const Region &region) const {
  BankSet banks = 0;
  for (uint64_t r = 0; r < region.rows && region.cols > 0; ++r) {
    uint64_t first = region.at(r, 0) / bankWords_;
    uint64_t last = region.at(r, region.cols - 1) / bankWords_;
    for (uint64_t bank = first; bank <= last && bank < 64; ++bank)
      banks |= BankSet{1} << bank;
    if (last - first >= 63)
      break; // every bank already
  }
  return banks;
}

bool BankArbiter::available(Component who, BankSet banks) const {
  for (unsigned bank = 0; bank < 64; ++bank)
    if ((banks >> bank & 1) && holds_[bank] > 0 && owner_[bank] != who)
      return false;
  return true;
}

void BankArbiter::acquire(Component who, BankSet banks) {
  for (unsigned bank = 0; bank < 64; ++bank) {
    if (banks >> bank & 1) {
      owner_[bank] = who;
      holds_[bank] += 1;
    }
  }
}

void BankArbiter::release(BankSet banks) {
  for (unsigned bank = 0; bank < 64; ++bank)
    if (banks >> bank & 1)
      holds_[bank] -= 1;
  released_.notify(sc_core::SC_ZERO_TIME);
}

} // namespace tpu::sim
