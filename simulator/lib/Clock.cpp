#include "Clock.h"

#include "tpu/isa/Error.h"

#include <fmt/format.h>

namespace tpu::sim {

Clock::Clock(double ghz) : period_(1.0 / ghz, sc_core::SC_NS) {
  if (period_ == sc_core::SC_ZERO_TIME)
    throw Error(fmt::format("clock_ghz {} is too fast for the kernel's time resolution", ghz));
}

// Every delay is a whole number of periods, so times divide exactly.
sc_core::sc_time Clock::cycles(uint64_t count) const {
  return sc_core::sc_time::from_value(period_.value() * count);
}

uint64_t Clock::cyclesIn(const sc_core::sc_time &duration) const {
  return duration.value() / period_.value();
}

void Clock::waitUntil(uint64_t cycle) const {
  uint64_t current = now();
  if (cycle > current)
    sc_core::wait(cycles(cycle - current));
}

} // namespace tpu::sim
