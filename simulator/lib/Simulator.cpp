#include "tpu/sim/Simulator.h"

#include "Accelerator.h"

#include "tpu/isa/Error.h"
#include "tpu/isa/Legality.h"

#include <fmt/format.h>

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

const char *modeName(Mode mode) { return mode == Mode::Cycle ? "cycle" : "fast"; }

const char *componentName(Component component) {
  static const char *const names[kNumComponents] = {"controller", "dma_load", "matrix", "vector",
                                                    "dma_store"};
  return names[static_cast<unsigned>(component)];
}

const char *stallReasonName(StallReason reason) {
  static const char *const names[kNumStallReasons] = {"token",   "dram",  "bank",
                                                      "weights", "fence", "queue_full"};
  return names[static_cast<unsigned>(reason)];
}

SimStats simulate(const Bundle &bundle, std::vector<uint8_t> &dram, const SimOptions &options) {
  if (dram.size() != bundle.dram_bytes)
    throw Error(fmt::format("the DRAM image has {} bytes; the bundle needs {}", dram.size(),
                            bundle.dram_bytes));
  checkProgramNotEmpty(bundle.program);
  // The timing model divides by config values; validate() keeps them in range.
  bundle.config.validate("bundle config");
  placeConstants(bundle, dram);

  FreshKernel kernel;
  try {
    Accelerator accelerator("accelerator", bundle, dram, options);
    return accelerator.run();
  } catch (const sc_core::sc_report &report) {
    throw Error(fmt::format("SystemC: {}", report.get_msg()));
  }
}

} // namespace tpu::sim
