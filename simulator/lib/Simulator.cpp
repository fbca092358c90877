#include "tpu/sim/Simulator.h"

#include "Accelerator.h"

#include "tpu/isa/Error.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>

// libsystemc's own main() calls sc_main; we drive the kernel from simulate()
// instead, but the symbol must exist for executables to link.
int sc_main(int, char *[]) { return 1; }

namespace tpu::sim {
namespace {

// SystemC 2.3 cannot elaborate again once sc_start has run. Every module,
// process and event registers with sc_get_curr_simcontext(), which returns
// the sc_curr_simcontext global, so each simulation installs a context of its
// own and deletes it afterwards, restoring whatever was current before.
class FreshKernel {
public:
  FreshKernel()
      : previousCurrent_(sc_core::sc_curr_simcontext),
        previousDefault_(sc_core::sc_default_global_context) {
    // The banner and the kernel's notes (such as sc_stop's "Simulation
    // stopped by user.") go to stdout, which tpusim reserves for results.
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO,
                                            sc_core::SC_DO_NOTHING);
    context_ = new sc_core::sc_simcontext;
    sc_core::sc_curr_simcontext = context_;
    sc_core::sc_default_global_context = context_;
  }
  ~FreshKernel() {
    delete context_;
    sc_core::sc_curr_simcontext = previousCurrent_;
    sc_core::sc_default_global_context = previousDefault_;
  }
  FreshKernel(const FreshKernel &) = delete;
  FreshKernel &operator=(const FreshKernel &) = delete;

private:
  sc_core::sc_simcontext *previousCurrent_;
  sc_core::sc_simcontext *previousDefault_;
  sc_core::sc_simcontext *context_;
};

void placeConstants(const Bundle &bundle, std::vector<uint8_t> &dram) {
  if (bundle.constant_address > dram.size() ||
      bundle.constants.size() > dram.size() - bundle.constant_address)
    throw Error(fmt::format("constants ({} bytes at {:#x}) exceed the DRAM ({:#x} bytes)",
                            bundle.constants.size(), bundle.constant_address, dram.size()));
  std::copy(bundle.constants.begin(), bundle.constants.end(),
            dram.begin() + static_cast<std::ptrdiff_t>(bundle.constant_address));
}

} // namespace

SimStats simulate(const Bundle &bundle, std::vector<uint8_t> &dram) {
  if (dram.size() != bundle.dram_bytes)
    throw Error(fmt::format("the DRAM image has {} bytes; the bundle needs {}", dram.size(),
                            bundle.dram_bytes));
  if (bundle.program.empty())
    throw Error("the program is empty; it must end with halt");
  // The timing model divides by config values; validate() keeps them in range.
  bundle.config.validate("bundle config");
  placeConstants(bundle, dram);

  FreshKernel kernel;
  try {
    Accelerator accelerator("accelerator", bundle, dram);
    return accelerator.run();
  } catch (const sc_core::sc_report &report) {
    throw Error(fmt::format("SystemC: {}", report.get_msg()));
  }
}

nlohmann::json toJson(const SimStats &stats) {
  nlohmann::json queues = nlohmann::json::object();
  for (unsigned q = 0; q < isa::kNumQueues; ++q) {
    const QueueStats &queue = stats.queues[q];
    queues[std::string(isa::queueName(static_cast<isa::Queue>(q)))] = {
        {"instructions", queue.instructions},
        {"busy_cycles", queue.busy_cycles},
        {"wait_cycles", queue.wait_cycles}};
  }
  return {{"total_cycles", stats.total_cycles},
          {"dram_bytes_read", stats.dram_bytes_read},
          {"dram_bytes_written", stats.dram_bytes_written},
          {"macs", stats.macs},
          {"mxu_utilization", stats.mxu_utilization},
          {"queues", queues}};
}

std::string formatSummary(const SimStats &stats, const HardwareConfig &config) {
  std::string text = fmt::format("total cycles: {} ({:.3f} us at {} GHz)\n", stats.total_cycles,
                                 static_cast<double>(stats.total_cycles) / (config.clock_ghz * 1e3),
                                 config.clock_ghz);
  text += fmt::format("DRAM: {} bytes read, {} bytes written\n", stats.dram_bytes_read,
                      stats.dram_bytes_written);
  text += fmt::format("MACs: {}, MXU utilization {:.2f}% of {}x{}\n", stats.macs,
                      100 * stats.mxu_utilization, config.array.rows, config.array.cols);
  text += fmt::format("{:<8} {:>12} {:>12} {:>12}\n", "queue", "instructions", "busy", "wait");
  for (unsigned q = 0; q < isa::kNumQueues; ++q) {
    const QueueStats &queue = stats.queues[q];
    text += fmt::format("{:<8} {:>12} {:>12} {:>12}\n", isa::queueName(static_cast<isa::Queue>(q)),
                        queue.instructions, queue.busy_cycles, queue.wait_cycles);
  }
  return text;
}

} // namespace tpu::sim
