// What runs a bundle: the simulator (SimulatorBackend.h) for accelerator
// bundles, the CUDA backend (CudaBackend.h, where built) for CUDA bundles. The
// interface names no backend's own types, so that the runtime and the tools
// above it can hold any backend.
#pragma once

#include "tpu/isa/Bundle.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tpu::runtime {

// What every backend says about a run.
struct RunReport {
  // The program's time on the device: simulated for the simulator (its
  // cycles at the config's clock), measured on hardware.
  double device_seconds = 0;
  // The host's wall-clock time for the run.
  double host_seconds = 0;
  // The backend's own figures as JSON (the simulator's keys are in
  // docs/simulator.md) and as text for a terminal.
  nlohmann::json json;
  std::string summary;
};

class Backend {
public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Runs the program on `dram` (bundle.dram_bytes bytes with the inputs in
  // place; the backend places the constants) and leaves the outputs there.
  // For a CUDA bundle `dram` is the host image of its inputs and outputs,
  // laid out the same way, so that one Session serves every backend.
  virtual RunReport run(const Bundle &bundle, std::vector<uint8_t> &dram) = 0;
};

} // namespace tpu::runtime
