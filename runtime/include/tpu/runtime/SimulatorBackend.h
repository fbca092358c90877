// The SystemC simulator as a runtime backend. Its RunReport carries the
// report of docs/simulator.md and tpusim's summary; stats() gives the whole
// SimStats (per-unit stalls, trace events) to those who know the backend.
#pragma once

#include "tpu/runtime/Backend.h"
#include "tpu/sim/Simulator.h"

#include <optional>

namespace tpu::runtime {

class SimulatorBackend : public Backend {
public:
  explicit SimulatorBackend(sim::SimOptions options = {}) : options_(std::move(options)) {}
  std::string name() const override { return "simulator"; }
  RunReport run(const Bundle &bundle, std::vector<uint8_t> &dram) override;
  // The statistics of the last run; throws tpu::Error before the first.
  const sim::SimStats &stats() const;

private:
  sim::SimOptions options_;
  std::optional<sim::SimStats> stats_;
};

} // namespace tpu::runtime
