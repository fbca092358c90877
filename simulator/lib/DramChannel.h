// DRAM behind one shared bus (docs/simulator.md#dram). A transfer is one
// request per row; each request is issued once fewer than max_outstanding
// requests are in flight, its data is ready latency_cycles later, and it then
// holds the bus for ceil(bytes / bytes_per_cycle) cycles. The bus serves
// requests in the order they are issued. Times are cycles.
#pragma once

#include "Interfaces.h"

#include "tpu/isa/HardwareConfig.h"

#include <cstdint>
#include <deque>
#include <vector>

namespace tpu::sim {

class DramChannel : public DramInterface {
public:
  explicit DramChannel(const HardwareConfig &config) : config_(config) {}

  DramSchedule transfer(uint64_t start, uint64_t rows, uint64_t rowBytes) override;

private:
  // Bus cycles one request of `bytes` holds.
  uint64_t busCycles(uint64_t bytes) const;

  const HardwareConfig &config_;
  uint64_t busFree_ = 0;
  std::deque<uint64_t> inFlight_; // completion cycles of the latest requests, oldest first
};

} // namespace tpu::sim
