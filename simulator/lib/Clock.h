// The machine's clock: cycles and SystemC time.
#pragma once

#include <systemc>

#include <cstdint>

namespace tpu::sim {

// Every module is synchronous to this clock: all waits are whole periods, so
// every event falls on a clock edge.
class Clock {
public:
  explicit Clock(double ghz);
  sc_core::sc_time cycles(uint64_t count) const;
  uint64_t cyclesIn(const sc_core::sc_time &duration) const;
  uint64_t now() const { return cyclesIn(sc_core::sc_time_stamp()); }
  // Waits (in the calling thread) until cycle `cycle`; returns at once if it
  // has passed.
  void waitUntil(uint64_t cycle) const;

private:
  sc_core::sc_time period_;
};

} // namespace tpu::sim
