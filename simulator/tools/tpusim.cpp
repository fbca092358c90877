// tpusim: runs a compiled bundle on the simulator, prints cycles and
// statistics, and checks the outputs against reference tensors.
#include "tpu/isa/Error.h"
#include "tpu/runtime/Compare.h"
#include "tpu/runtime/Session.h"
#include "tpu/sim/Simulator.h"

#include "ToolMain.h"
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace {

namespace fs = std::filesystem;
using namespace tpu;

struct Options {
  std::string bundlePath;
  std::string dataDirectory;
  std::string reportPath;
};

void setInputs(runtime::Session &session, const fs::path &directory) {
  for (size_t index = 0; index < session.bundle().inputs.size(); ++index) {
    fs::path path = directory / fmt::format("input_{}.pb", index);
    if (!fs::exists(path))
      throw Error(fmt::format("{}: missing; it holds input {} '{}'", path.string(), index,
                              session.bundle().inputs[index].name));
    session.setInput(index, runtime::readTensor(path.string()), path.string());
  }
}

// Compares every output that has a reference file; returns the comparisons.
std::vector<runtime::Comparison> checkOutputs(const runtime::Session &session,
                                              const fs::path &directory) {
  std::vector<runtime::Comparison> comparisons;
  const Bundle &bundle = session.bundle();
  for (size_t index = 0; index < bundle.outputs.size(); ++index) {
    fs::path path = directory / fmt::format("output_{}.pb", index);
    if (!fs::exists(path)) {
      fmt::print("{}: no {}, not compared\n", session.bundle().outputs[index].name, path.string());
      continue;
    }
    comparisons.push_back(
        runtime::compareTensors(session.output(index), runtime::readTensor(path.string()),
                                runtime::outputTolerance(bundle.config, bundle.outputs[index])));
    fmt::print("{}\n", runtime::formatComparison(comparisons.back()));
  }
  return comparisons;
}

nlohmann::json report(const Options &options, const Bundle &bundle, const sim::SimStats &stats,
                      const std::vector<runtime::Comparison> &comparisons) {
  nlohmann::json json = sim::toJson(stats);
  json["bundle"] = options.bundlePath;
  json["config"] = bundle.config.name;
  json["clock_ghz"] = bundle.config.clock_ghz;
  json["instructions"] = bundle.program.size();
  nlohmann::json outputs = nlohmann::json::array();
  for (const runtime::Comparison &comparison : comparisons)
    outputs.push_back({{"name", comparison.name},
                       {"max_abs_error", comparison.max_abs_error},
                       {"max_rel_error", comparison.max_rel_error},
                       {"tolerance", comparison.tolerance},
                       {"pass", comparison.pass}});
  json["outputs"] = outputs;
  return json;
}

int run(const Options &options) {
  runtime::Session session = runtime::Session::fromFile(options.bundlePath);
  const Bundle &bundle = session.bundle();
  if (!options.dataDirectory.empty())
    setInputs(session, options.dataDirectory);
  runtime::SimulatorBackend backend;
  sim::SimStats stats = *session.run(backend);

  fmt::print("{}: config {} ({}x{} {}), {} instructions\n", options.bundlePath, bundle.config.name,
             bundle.config.array.rows, bundle.config.array.cols,
             isa::dtypeName(bundle.config.array.dtype), bundle.program.size());
  fmt::print("{}", sim::formatSummary(stats, bundle.config));
  std::vector<runtime::Comparison> comparisons;
  if (!options.dataDirectory.empty())
    comparisons = checkOutputs(session, options.dataDirectory);

  if (!options.reportPath.empty()) {
    std::ofstream file(options.reportPath);
    file << report(options, bundle, stats, comparisons).dump(2) << '\n';
    if (!file.flush())
      throw Error(fmt::format("{}: cannot write the report", options.reportPath));
  }
  bool pass = std::all_of(comparisons.begin(), comparisons.end(),
                          [](const runtime::Comparison &c) { return c.pass; });
  return pass ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Runs a compiled bundle (.tpub) on the cycle-approximate SystemC simulator and "
               "prints the total cycles with DRAM traffic, MACs, MXU utilization and per-queue "
               "busy cycles. Exits 1 on any error or output mismatch.",
               "tpusim"};
  Options options;
  app.add_option("bundle", options.bundlePath, "The bundle to run")->required();
  app.add_option("--data", options.dataDirectory,
                 "Directory of ONNX TensorProto files: input_0.pb, input_1.pb, ... are the "
                 "model's inputs in order (all required; without --data every input is zero); "
                 "each output_N.pb present is compared with output N within the tolerance of "
                 "docs/numerics.md");
  app.add_option("--report", options.reportPath,
                 "Also write the statistics (and comparisons) as JSON to this file");
  return tpu::runTool(app, argc, argv, [&] { return run(options); });
}
