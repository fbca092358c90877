// tpusim: runs a compiled bundle on the simulator, prints cycles and
// statistics, and checks the outputs against reference tensors.
#include "tpu/isa/Error.h"
#include "tpu/runtime/Compare.h"
#include "tpu/runtime/Session.h"
#include "tpu/runtime/SimulatorBackend.h"
#include "tpu/sim/Simulator.h"

#include "ToolMain.h"
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>

namespace {

namespace fs = std::filesystem;
using namespace tpu;

struct Options {
  std::string bundlePath;
  std::string dataDirectory;
  std::string reportPath;
  std::string tracePath;
  std::string outputDirectory;
  std::string vcdPath;
  std::vector<std::string> vcdSignals;
  std::string mode = "fast";
  uint64_t maxCycles = 0;
};

void writeText(const std::string &path, const std::string &text, const char *what) {
  std::ofstream file(path);
  file << text;
  if (!file.flush())
    throw Error(fmt::format("{}: cannot write the {}", path, what));
}

// Long runs show where they are on a terminal, on one line that is then cleared.
void showProgress(const sim::Progress &progress) {
  std::fprintf(stderr, "\rtpusim: cycle %llu, %u of %u instructions dispatched ",
               static_cast<unsigned long long>(progress.cycle), progress.dispatched,
               progress.program_size);
}

void setInputs(runtime::Session &session, const fs::path &directory) {
  for (size_t index = 0; index < session.bundle().inputs.size(); ++index) {
    fs::path path = directory / fmt::format("input_{}.pb", index);
    if (!fs::exists(path))
      throw Error(fmt::format("{}: missing; it holds input {} '{}'", path.string(), index,
                              session.bundle().inputs[index].name));
    session.setInput(index, runtime::readTensor(path.string()), path.string());
  }
}

// The expected outputs in `directory` (output_N.pb), by output index.
std::vector<std::optional<runtime::Tensor>> readExpected(const Bundle &bundle,
                                                         const fs::path &directory) {
  std::vector<std::optional<runtime::Tensor>> expected(bundle.outputs.size());
  for (size_t index = 0; index < bundle.outputs.size(); ++index) {
    fs::path path = directory / fmt::format("output_{}.pb", index);
    if (fs::exists(path))
      expected[index] = runtime::readTensor(path.string());
    else
      fmt::print("{}: no {}, not compared\n", bundle.outputs[index].name, path.string());
  }
  return expected;
}

std::vector<runtime::Tensor> outputsOf(const runtime::Session &session) {
  std::vector<runtime::Tensor> outputs;
  for (size_t index = 0; index < session.bundle().outputs.size(); ++index)
    outputs.push_back(session.output(index));
  return outputs;
}

// The output check of docs/numerics.md for every output with an expected
// tensor. On a bf16 array it runs the program once more with fp32 operands
// (fast mode: the same outputs as cycle mode); `session` then holds that run.
std::vector<runtime::OutputCheck>
checkOutputs(runtime::Session &session, const std::vector<runtime::Tensor> &hardware,
             const std::vector<std::optional<runtime::Tensor>> &expected, uint64_t maxCycles) {
  const Bundle &bundle = session.bundle();
  std::vector<std::optional<runtime::Tensor>> reference(bundle.outputs.size());
  bool anyExpected = std::any_of(expected.begin(), expected.end(),
                                 [](const auto &tensor) { return tensor.has_value(); });
  if (anyExpected && bundle.config.array.dtype == isa::DType::BF16) {
    sim::SimOptions referenceOptions;
    referenceOptions.round_operands = false;
    referenceOptions.max_cycles = maxCycles;
    runtime::SimulatorBackend referenceBackend(referenceOptions);
    session.run(referenceBackend);
    for (size_t index = 0; index < bundle.outputs.size(); ++index)
      reference[index] = session.output(index);
  }
  std::vector<runtime::OutputCheck> checks;
  for (size_t index = 0; index < bundle.outputs.size(); ++index) {
    if (!expected[index])
      continue;
    checks.push_back(runtime::checkOutput(bundle.config, bundle.outputs[index], hardware[index],
                                          reference[index], *expected[index]));
    fmt::print("{}", runtime::formatCheck(checks.back()));
  }
  return checks;
}

nlohmann::json toJson(const runtime::Discrepancy &discrepancy, double tolerance) {
  return {{"max_error", discrepancy.max_error},
          {"relative_error", discrepancy.relative},
          {"tolerance", tolerance},
          {"scale", discrepancy.scale},
          {"worst_index", discrepancy.worst_index},
          {"worst_got", discrepancy.worst_got},
          {"worst_expected", discrepancy.worst_expected},
          {"mismatches", discrepancy.mismatches}};
}

nlohmann::json report(const Options &options, const Bundle &bundle,
                      const runtime::RunReport &runReport,
                      const std::vector<runtime::OutputCheck> &checks) {
  nlohmann::json json = runReport.json;
  json["bundle"] = options.bundlePath;
  json["config"] = bundle.config.name;
  json["clock_ghz"] = bundle.config.clock_ghz;
  json["instructions"] = bundle.program.size();
  nlohmann::json outputs = nlohmann::json::array();
  for (const runtime::OutputCheck &check : checks) {
    nlohmann::json output = {{"name", check.name},
                             {"pass", check.pass},
                             {"program", toJson(check.program, check.program_tolerance)}};
    if (check.rounding)
      output["rounding"] = toJson(*check.rounding, check.rounding_tolerance);
    outputs.push_back(output);
  }
  json["outputs"] = outputs;
  return json;
}

int run(const Options &options) {
  runtime::Session session = runtime::Session::fromFile(options.bundlePath);
  const Bundle &bundle = session.bundle();
  if (!options.dataDirectory.empty())
    setInputs(session, options.dataDirectory);
  sim::SimOptions simOptions;
  simOptions.mode = options.mode == "cycle" ? sim::Mode::Cycle : sim::Mode::Fast;
  simOptions.trace = !options.tracePath.empty() || !options.vcdPath.empty();
  simOptions.max_cycles = options.maxCycles;
  bool progressShown = false;
  if (isatty(STDERR_FILENO))
    simOptions.progress = [&](const sim::Progress &progress) {
      showProgress(progress);
      progressShown = true;
    };
  runtime::SimulatorBackend backend(simOptions);
  runtime::RunReport runReport;
  try {
    runReport = session.run(backend);
  } catch (...) {
    if (progressShown)
      std::fprintf(stderr, "\r\033[K");
    throw;
  }
  if (progressShown)
    std::fprintf(stderr, "\r\033[K");
  if (!options.outputDirectory.empty()) {
    fs::create_directories(options.outputDirectory);
    for (size_t index = 0; index < bundle.outputs.size(); ++index)
      runtime::writeTensor(
          session.output(index),
          (fs::path(options.outputDirectory) / fmt::format("output_{}.pb", index)).string());
  }
  // The trace and the VCD need the simulator's own statistics.
  if (!options.tracePath.empty())
    writeText(options.tracePath, sim::traceJson(backend.stats(), bundle).dump() + "\n", "trace");
  if (!options.vcdPath.empty())
    writeText(options.vcdPath, sim::vcd(backend.stats(), bundle, options.vcdSignals), "VCD");

  fmt::print("{}: config {} ({}x{} {}), {} instructions\n", options.bundlePath, bundle.config.name,
             bundle.config.array.rows, bundle.config.array.cols,
             isa::dtypeName(bundle.config.array.dtype), bundle.program.size());
  fmt::print("{}", runReport.summary);
  std::vector<runtime::OutputCheck> checks;
  if (!options.dataDirectory.empty())
    checks = checkOutputs(session, outputsOf(session), readExpected(bundle, options.dataDirectory),
                          options.maxCycles);

  if (!options.reportPath.empty())
    writeText(options.reportPath, report(options, bundle, runReport, checks).dump(2) + "\n",
              "report");
  bool pass = std::all_of(checks.begin(), checks.end(),
                          [](const runtime::OutputCheck &check) { return check.pass; });
  return pass ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Runs a compiled bundle (.tpub) on the cycle-accurate SystemC simulator and prints "
               "cycles, the roofline (the model's lower bound, when the bundle records its "
               "work), MXU utilization, DRAM and SRAM traffic, an energy estimate, busy, stalled "
               "and idle cycles per unit and the longest source operations with their "
               "rooflines. Exits 1 on any error or output mismatch.",
               "tpusim"};
  Options options;
  app.add_option("bundle", options.bundlePath, "The bundle to run")->required();
  app.add_option("--data", options.dataDirectory,
                 "Directory of ONNX TensorProto files: input_0.pb, input_1.pb, ... are the "
                 "model's inputs in order (all required; without --data every input is zero); "
                 "each output_N.pb present is checked against output N as docs/numerics.md says "
                 "(on a bf16 array the program runs once more with fp32 operands, which must "
                 "match it tightly)");
  app.add_option("--report", options.reportPath,
                 "Also write the statistics (and comparisons) as JSON to this file");
  app.add_option("--mode", options.mode,
                 "cycle: step the matrix unit's PE registers every cycle; fast: compute each "
                 "matmul at once. Both give the same outputs and cycle counts (default: fast)")
      ->check(CLI::IsMember({"cycle", "fast"}));
  app.add_option("--outputs", options.outputDirectory,
                 "Write output N as DIR/output_N.pb (ONNX TensorProto), creating DIR");
  app.add_option("--trace", options.tracePath,
                 "Write a Chrome/Perfetto trace (trace-event JSON) to this file: per unit a "
                 "track of its instructions and one of its busy and stalled cycles, which add up "
                 "to the report's; open it in ui.perfetto.dev");
  app.add_option("--vcd", options.vcdPath,
                 "Write a VCD of per-unit busy, stalled and pc signals to this file");
  app.add_option("--vcd-signals", options.vcdSignals,
                 "Only these VCD signals, e.g. matrix.busy,dma_load.pc (units: controller, "
                 "dma_load, matrix, vector, dma_store with busy, stalled, pc; matrix_weights "
                 "with busy, pc)")
      ->delimiter(',');
  app.add_option("--max-cycles", options.maxCycles,
                 "Watchdog: stop at this cycle with an error naming what still runs, unless the "
                 "run has completed by then");
  return tpu::runTool(app, argc, argv, [&] { return run(options); });
}
