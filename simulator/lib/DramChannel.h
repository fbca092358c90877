// DRAM behind one shared bus (docs/simulator.md#dram). A transfer is one
// request per row; each request is issued once fewer than max_outstanding
// requests are in flight, its data is ready latency_cycles later, and it then
// holds the bus for ceil(bytes / bytes_per_cycle) cycles. The bus serves
// requests in the order they are issued. Plain C++: times are cycles.
#pragma once

#include "tpu/isa/HardwareConfig.h"

#include <cstdint>
#include <deque>
#include <vector>

namespace tpu::sim {

struct DramSchedule {
  uint64_t completion = 0;
  // The bus cycles carrying this transfer's data, merged into runs.
  std::vector<std::pair<uint64_t, uint64_t>> busRuns;
};

class DramChannel {
public:
  explicit DramChannel(const HardwareConfig &config) : config_(config) {}

  // Issues a transfer of `rows` requests of `rowBytes` bytes each at cycle
  // `start` and reserves the bus for it.
  DramSchedule transfer(uint64_t start, uint64_t rows, uint64_t rowBytes);

  // Bus cycles one request of `bytes` holds.
  uint64_t busCycles(uint64_t bytes) const;

private:
  const HardwareConfig &config_;
  uint64_t busFree_ = 0;
  std::deque<uint64_t> inFlight_; // completion cycles of the latest requests, oldest first
};

} // namespace tpu::sim
