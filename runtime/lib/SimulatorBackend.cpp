#include "tpu/runtime/SimulatorBackend.h"

#include "tpu/isa/Error.h"

namespace tpu::runtime {

RunReport SimulatorBackend::run(const Bundle &bundle, std::vector<uint8_t> &dram) {
  if (bundle.cuda)
    throw Error("the simulator runs accelerator bundles, and this is a CUDA bundle (tpusim runs "
                "it through the CUDA backend)");
  stats_ = sim::simulate(bundle, dram, options_);
  RunReport report;
  report.device_seconds =
      static_cast<double>(stats_->total_cycles) / (bundle.config.clock_ghz * 1e9);
  report.host_seconds = stats_->wall_seconds;
  report.json = sim::toJson(*stats_, bundle.config);
  report.summary = sim::formatSummary(*stats_, bundle.config);
  return report;
}

const sim::SimStats &SimulatorBackend::stats() const {
  if (!stats_)
    throw Error("the simulator backend has not run yet");
  return *stats_;
}

} // namespace tpu::runtime
