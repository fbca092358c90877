// The timing model of this first version, in cycles (docs/simulator.md).
#pragma once

#include "tpu/isa/HardwareConfig.h"

#include <cmath>
#include <cstdint>

namespace tpu::sim {

// The controller dispatches one instruction per cycle.
constexpr uint64_t kDispatchCycles = 1;
// sync.push and sync.pop (once its token is there) occupy their queue one cycle.
constexpr uint64_t kSyncCycles = 1;

// Each transfer pays the full DRAM latency; transfers do not overlap within a
// queue, and the load and store queues do not share bandwidth.
inline uint64_t dmaCycles(const HardwareConfig &config, uint64_t bytes) {
  return config.dram.latency_cycles +
         static_cast<uint64_t>(std::ceil(static_cast<double>(bytes) / config.dram.bytes_per_cycle));
}

// One weight row enters the shadow buffer per cycle.
inline uint64_t loadWeightsCycles(uint64_t tileRows) { return tileRows; }

// One activation row enters per cycle; the last one needs R + C - 1 more
// cycles to cross the array.
inline uint64_t matmulCycles(const HardwareConfig &config, uint64_t rows) {
  return rows + config.array.rows + config.array.cols - 1;
}

inline uint64_t vectorCycles(const HardwareConfig &config, uint64_t rows, uint64_t cols) {
  return config.vector.pipeline_latency +
         rows * ((cols + config.vector.lanes - 1) / config.vector.lanes);
}

} // namespace tpu::sim
