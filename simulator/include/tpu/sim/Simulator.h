// The cycle-approximate simulator of the accelerator (docs/simulator.md).
//
// This header is free of SystemC so that the compiler and the runtime can use
// the simulator without its kernel headers.
#pragma once

#include "tpu/isa/Bundle.h"
#include "tpu/isa/Isa.h"

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tpu::sim {

// Instructions the controller can hold undispatched per queue; when a queue is
// full the controller stalls.
constexpr unsigned kQueueDepth = 32;

struct QueueStats {
  uint64_t instructions = 0; // executed on this queue (control: dispatched)
  uint64_t busy_cycles = 0;  // executing instructions
  uint64_t wait_cycles = 0;  // blocked in sync.pop (control: on a full queue)
};

struct SimStats {
  uint64_t total_cycles = 0;
  uint64_t dram_bytes_read = 0;
  uint64_t dram_bytes_written = 0;
  uint64_t macs = 0;
  double mxu_utilization = 0;                       // macs / (R * C * total_cycles)
  std::array<QueueStats, isa::kNumQueues> queues{}; // indexed by isa::Queue

  const QueueStats &queue(isa::Queue q) const { return queues[static_cast<unsigned>(q)]; }
};

// Runs the bundle's program to completion on `dram`, which must hold exactly
// bundle.dram_bytes bytes with the inputs already placed at their
// dram_address. simulate() copies bundle.constants to constant_address first;
// on return `dram` holds the outputs. Each call uses a fresh SystemC kernel,
// so any number of simulations can run one after another in a process (not
// concurrently from several threads).
//
// Throws tpu::Error "pc N (disassembly): reason" for an illegal instruction
// and "deadlock: ..." when every unfinished queue waits for a token that can
// never arrive.
SimStats simulate(const Bundle &bundle, std::vector<uint8_t> &dram);

// The report keys of docs/simulator.md: totals, MACs, utilization, per queue.
nlohmann::json toJson(const SimStats &stats);
// A few human-readable lines: cycles, DRAM traffic, MACs, utilization and a
// per-queue table.
std::string formatSummary(const SimStats &stats, const HardwareConfig &config);

} // namespace tpu::sim
