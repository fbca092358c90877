// Collects what the report, the summary and the traces need: spans of busy
// and stalled cycles per component, per-instruction durations and the work
// counters. Plain C++, no SystemC: components pass times in cycles.
#pragma once

#include "tpu/isa/Bundle.h"
#include "tpu/sim/Simulator.h"

#include <cstdint>
#include <vector>

namespace tpu::sim {

class Profiler {
public:
  Profiler(const Bundle &bundle, bool recordEvents);

  // An instruction ran on `component` over [start, end): counts towards its
  // opcode and source operation, and is a busy span unless `busy` is false
  // (DMA transfers report their busy cycles on the bus through busy()).
  void instruction(Component component, uint32_t pc, uint64_t start, uint64_t end,
                   bool busy = true);
  void busy(Component component, uint64_t start, uint64_t end);
  // `component` waits over [start, end) for `reason`. Stall spans of one
  // component may overlap each other and its busy spans; finish() gives each
  // cycle one state (see there).
  void stall(Component component, uint32_t pc, StallReason reason, uint64_t start, uint64_t end);

  void macs(uint32_t pc, uint64_t count);
  void dramBytes(uint32_t pc, uint64_t bytes, bool read);
  void memoryAccess(isa::Space space, uint64_t reads, uint64_t writes);
  void vectorElements(uint64_t count, bool transcendental) {
    stats_.vector_elements += count;
    stats_.vector_transcendental_elements += transcendental ? count : 0;
  }

  // Totals, idle cycles, utilization and energy as of `totalCycles`; with
  // recorded events, the states each component spent its cycles in.
  SimStats finish(uint64_t totalCycles, const HardwareConfig &config);
  size_t programSize() const { return bundle_.program.size(); }

private:
  struct Span {
    uint64_t start, end;
  };
  struct StallSpan {
    uint64_t start, end;
    StallReason reason;
    uint32_t pc;
  };
  WorkStats &sourceOf(uint32_t pc);
  static void addWork(WorkStats &work, uint64_t start, uint64_t end);
  // Counts component `c`'s busy and stalled cycles into `stats` and, with
  // recorded events, its state spans.
  void classify(unsigned c, SimStats &stats) const;

  const Bundle &bundle_;
  bool recordEvents_;
  SimStats stats_;
  std::array<std::vector<Span>, kNumComponents> busy_;
  std::array<std::vector<StallSpan>, kNumComponents> stalls_;
  std::vector<WorkStats> byOpcode_; // indexed by opcode
  WorkStats unattributed_;
};

} // namespace tpu::sim
