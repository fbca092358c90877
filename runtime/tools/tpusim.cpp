// tpusim: runs a compiled bundle on the simulator (a CUDA bundle through the
// CUDA backend), prints cycles and statistics, and checks the outputs against
// reference tensors.
#include "tpu/isa/Error.h"
#include "tpu/runtime/Compare.h"
#ifdef TPU_HAVE_CUDA_BACKEND
#include "tpu/runtime/CudaBackend.h"
#endif
#include "tpu/runtime/Session.h"
#include "tpu/runtime/SimulatorBackend.h"
#include "tpu/runtime/Training.h"
#include "tpu/sim/Simulator.h"

#include "ToolMain.h"
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
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
  // --train
  std::string trainDirectory;
  uint64_t epochs = 1;
  uint64_t shuffleSeed = 0;
  std::string saveModelPath;
  // CUDA bundles
  std::string cuda = "gpu";
  std::string cudaCache;
  // The options given that only one kind of bundle takes.
  std::vector<std::string> simulatorOnly, cudaOnly;
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

void writeOutputs(const runtime::Session &session, const std::string &directory) {
  if (directory.empty())
    return;
  fs::create_directories(directory);
  for (size_t index = 0; index < session.bundle().outputs.size(); ++index)
    runtime::writeTensor(session.output(index),
                         (fs::path(directory) / fmt::format("output_{}.pb", index)).string());
}

std::vector<runtime::Tensor> outputsOf(const runtime::Session &session) {
  std::vector<runtime::Tensor> outputs;
  for (size_t index = 0; index < session.bundle().outputs.size(); ++index)
    outputs.push_back(session.output(index));
  return outputs;
}

// The output check of docs/numerics.md for every output with an expected
// tensor. On a bf16 array it runs the program once more with fp32 operands
// and DRAM's bf16 data at fp32 (fast mode: the same outputs as cycle mode);
// `session` then holds that run.
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
    session.run(referenceBackend, /*commitState=*/false);
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
  if (!bundle.cuda) {
    json["config"] = bundle.config.name;
    json["clock_ghz"] = bundle.config.clock_ghz;
    json["instructions"] = bundle.program.size();
  }
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

// The training step's instructions by phase and layer: forward (the node's
// own name), gradient ("NODE (gradient)", built by tpu-autodiff from the
// node), loss, and update ("PARAMETER (update)").
nlohmann::json trainingSplit(const nlohmann::json &bySourceOp) {
  nlohmann::json layers = nlohmann::json::array();
  std::map<std::string, nlohmann::json> phases;
  auto endsWith = [](const std::string &text, const std::string &suffix) {
    return text.size() >= suffix.size() &&
           text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  for (const nlohmann::json &op : bySourceOp) {
    std::string name = op["name"], phase = "forward", layer = name;
    for (const auto &[suffix, kind] :
         {std::pair<std::string, std::string>{" (gradient)", "backward"}, {" (update)", "update"}})
      if (endsWith(name, suffix)) {
        phase = kind;
        layer = name.substr(0, name.size() - suffix.size());
      }
    if (name == "loss")
      phase = "loss";
    if (name == "halt")
      continue;
    layers.push_back({{"layer", layer},
                      {"phase", phase},
                      {"gradient", phase == "backward"},
                      {"cycles", op["cycles"]},
                      {"instructions", op["instructions"]},
                      {"macs", op["macs"]},
                      {"dram_bytes", op["dram_bytes"]}});
    nlohmann::json &total = phases[phase];
    if (total.is_null())
      total = nlohmann::json::object();
    for (const char *key : {"cycles", "instructions", "macs", "dram_bytes"})
      total[key] = total.value(key, uint64_t{0}) + op[key].get<uint64_t>();
  }
  return {{"layers", layers}, {"phases", phases}};
}

runtime::Tensor readDataFile(const fs::path &directory, const std::string &name, bool required,
                             bool &found) {
  fs::path path = directory / name;
  found = fs::exists(path);
  if (!found) {
    if (required)
      throw Error(fmt::format("{}: missing; --train needs inputs.pb and labels.pb", path.string()));
    return {};
  }
  return runtime::readTensor(path.string());
}

// A progress bar on one terminal line, cleared afterwards.
void showTrainingProgress(uint64_t epoch, uint64_t epochs, uint64_t step, uint64_t steps) {
  constexpr int kWidth = 30;
  int filled = static_cast<int>(kWidth * step / std::max<uint64_t>(steps, 1));
  std::fprintf(stderr, "\repoch %llu/%llu [%s%s] step %llu/%llu ",
               static_cast<unsigned long long>(epoch), static_cast<unsigned long long>(epochs),
               std::string(filled, '#').c_str(), std::string(kWidth - filled, '.').c_str(),
               static_cast<unsigned long long>(step), static_cast<unsigned long long>(steps));
}

int train(const Options &options, runtime::Session &session) {
  const Bundle &bundle = session.bundle();
  runtime::Trainer trainer(session);
  fs::path directory = options.trainDirectory;
  if (!fs::is_directory(directory))
    throw Error(fmt::format("{}: not a directory of training data", directory.string()));
  bool found = false, foundLabels = false;
  runtime::Tensor inputs = readDataFile(directory, "inputs.pb", true, found);
  runtime::Tensor labels = readDataFile(directory, "labels.pb", true, found);
  trainer.check(inputs, labels, (directory / "inputs.pb").string(),
                (directory / "labels.pb").string());
  runtime::Tensor testInputs = readDataFile(directory, "test_inputs.pb", false, found);
  runtime::Tensor testLabels = readDataFile(directory, "test_labels.pb", false, foundLabels);
  if (found != foundLabels)
    throw Error(fmt::format("{}: test_inputs.pb and test_labels.pb go together; one is missing",
                            directory.string()));
  bool test = found;
  if (test)
    trainer.check(testInputs, testLabels, (directory / "test_inputs.pb").string(),
                  (directory / "test_labels.pb").string());
  auto samples = static_cast<uint64_t>(inputs.shape[0]);
  if (samples < static_cast<uint64_t>(trainer.batch()))
    throw Error(fmt::format("{}: {} samples, fewer than the step's batch of {}",
                            (directory / "inputs.pb").string(), samples, trainer.batch()));
  if (options.epochs == 0)
    throw Error("--epochs must be at least 1");

  sim::SimOptions simOptions;
  simOptions.mode = options.mode == "cycle" ? sim::Mode::Cycle : sim::Mode::Fast;
  simOptions.max_cycles = options.maxCycles;
  runtime::SimulatorBackend backend(simOptions);
  bool terminal = isatty(STDERR_FILENO);
  uint64_t steps = samples / static_cast<uint64_t>(trainer.batch());
  fmt::print("{}: config {} ({}x{} {}), {} instructions; {} samples, batch {}, {} steps per "
             "epoch{}\n",
             options.bundlePath, bundle.config.name, bundle.config.array.rows,
             bundle.config.array.cols, isa::dtypeName(bundle.config.array.dtype),
             bundle.program.size(), samples, trainer.batch(), steps,
             samples % static_cast<uint64_t>(trainer.batch())
                 ? fmt::format(" ({} samples left out each epoch)",
                               samples % static_cast<uint64_t>(trainer.batch()))
                 : "");
  nlohmann::json epochs = nlohmann::json::array();
  uint64_t stepCycles = 0;
  for (uint64_t epoch = 1; epoch <= options.epochs; ++epoch) {
    std::vector<size_t> order =
        runtime::Trainer::shuffled(samples, options.shuffleSeed + (epoch - 1));
    runtime::PassResult result =
        trainer.train(backend, inputs, labels, order, [&](uint64_t step, uint64_t total) {
          if (terminal)
            showTrainingProgress(epoch, options.epochs, step, total);
        });
    if (terminal)
      std::fprintf(stderr, "\r\033[K");
    stepCycles = result.cycles / result.steps;
    std::string line = fmt::format("epoch {}/{}: loss {:.4f}", epoch, options.epochs, result.loss);
    nlohmann::json record = {{"epoch", epoch},
                             {"loss", result.loss},
                             {"steps", result.steps},
                             {"cycles", result.cycles}};
    if (result.has_accuracy) {
      line += fmt::format(", accuracy {:.2f}%", 100 * result.accuracy());
      record["accuracy"] = result.accuracy();
    }
    if (test) {
      runtime::PassResult tested = trainer.evaluate(backend, testInputs, testLabels);
      if (tested.has_accuracy) {
        line += fmt::format(", test accuracy {:.2f}%", 100 * tested.accuracy());
        record["test_accuracy"] = tested.accuracy();
      }
      if (!std::isnan(tested.loss)) {
        line += fmt::format(", test loss {:.4f}", tested.loss);
        record["test_loss"] = tested.loss;
      }
    }
    line += fmt::format(" ({} cycles per step)", stepCycles);
    fmt::print("{}\n", line);
    std::fflush(stdout);
    epochs.push_back(record);
  }
  if (!options.saveModelPath.empty()) {
    trainer.saveModel(options.saveModelPath);
    fmt::print("trained model: {}\n", options.saveModelPath);
  }
  if (!options.reportPath.empty()) {
    // The statistics of the last step run (all steps run the same program).
    nlohmann::json json = sim::toJson(backend.stats(), bundle.config);
    json["bundle"] = options.bundlePath;
    json["config"] = bundle.config.name;
    json["clock_ghz"] = bundle.config.clock_ghz;
    json["instructions"] = bundle.program.size();
    json["epochs"] = epochs;
    json["cycles_per_step"] = stepCycles;
    json["training_split"] = trainingSplit(json["by_source_op"]);
    writeText(options.reportPath, json.dump(2) + "\n", "report");
  }
  return 0;
}

bool allPass(const std::vector<runtime::OutputCheck> &checks) {
  return std::all_of(checks.begin(), checks.end(),
                     [](const runtime::OutputCheck &check) { return check.pass; });
}

#ifdef TPU_HAVE_CUDA_BACKEND
// A CUDA bundle through the CUDA backend: its outputs checked as the
// generated program checks them, against the expected within the rounding
// tolerance of bf16 operands (there is no fp32-operand run to compare with).
int runCuda(const Options &options, runtime::Session &session) {
  const Bundle &bundle = session.bundle();
  if (!options.dataDirectory.empty())
    setInputs(session, options.dataDirectory);
  runtime::CudaOptions cudaOptions;
  cudaOptions.execution =
      options.cuda == "emulate" ? runtime::CudaExecution::Emulate : runtime::CudaExecution::Gpu;
  cudaOptions.cache_directory = options.cudaCache;
  runtime::CudaBackend backend(cudaOptions);
  runtime::RunReport runReport = session.run(backend);
  writeOutputs(session, options.outputDirectory);
  const runtime::CudaBuild &build = backend.build();
  fmt::print("{}: CUDA bundle for {} (fusion {}), {} kernels, {}\n", options.bundlePath,
             bundle.cuda->gpu, bundle.cuda->fusion, bundle.cuda->kernels.size(),
             options.cuda == "emulate" ? "emulated on the CPU" : "on the GPU");
  if (build.cached)
    fmt::print("cuda: cached build {}\n", build.library);
  else
    fmt::print("cuda: built {} in {:.1f} s\n", build.library, build.seconds);
  fmt::print("{}", runReport.summary);
  std::vector<runtime::OutputCheck> checks;
  if (!options.dataDirectory.empty()) {
    std::vector<std::optional<runtime::Tensor>> expected =
        readExpected(bundle, options.dataDirectory);
    for (size_t index = 0; index < bundle.outputs.size(); ++index) {
      if (!expected[index])
        continue;
      checks.push_back(runtime::checkRoundedOutput(bundle.outputs[index], session.output(index),
                                                   *expected[index]));
      fmt::print("{}", runtime::formatCheck(checks.back()));
    }
  }
  if (!options.reportPath.empty())
    writeText(options.reportPath, report(options, bundle, runReport, checks).dump(2) + "\n",
              "report");
  return allPass(checks) ? 0 : 1;
}
#else
int runCuda(const Options &options, runtime::Session &) {
  throw Error(fmt::format("{}: a CUDA bundle, and this tpusim has no CUDA backend (CMake found "
                          "no CUDA toolkit when it was built)",
                          options.bundlePath));
}
#endif

int run(const Options &options) {
  runtime::Session session = runtime::Session::fromFile(options.bundlePath);
  const Bundle &bundle = session.bundle();
  const std::vector<std::string> &misplaced =
      bundle.cuda ? options.simulatorOnly : options.cudaOnly;
  if (!misplaced.empty())
    throw Error(fmt::format("{}: {} is for {} bundles, and this is {}", options.bundlePath,
                            misplaced.front(), bundle.cuda ? "accelerator" : "CUDA",
                            bundle.cuda ? "a CUDA bundle" : "an accelerator bundle"));
  if (!options.trainDirectory.empty())
    return train(options, session);
  if (bundle.cuda)
    return runCuda(options, session);
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
    // One run of a training step leaves its state as given, so that the
    // output check's reference run starts from the same parameters.
    runReport = session.run(backend, /*commitState=*/false);
  } catch (...) {
    if (progressShown)
      std::fprintf(stderr, "\r\033[K");
    throw;
  }
  if (progressShown)
    std::fprintf(stderr, "\r\033[K");
  writeOutputs(session, options.outputDirectory);
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
  return allPass(checks) ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Runs a compiled bundle (.tpub) on the cycle-accurate SystemC simulator and prints "
               "cycles, the roofline (the model's lower bound, when the bundle records its "
               "work), MXU utilization, DRAM and SRAM traffic, an energy estimate, busy, stalled "
               "and idle cycles per unit and the longest source operations with their "
               "rooflines. A CUDA bundle (tpuc --target=cuda -o OUT.tpub) runs through the "
               "CUDA backend instead, on the GPU or emulated (--cuda), and prints its kernels' "
               "times (docs/gpu.md). Exits 1 on any error or output mismatch.",
               "tpusim"};
  Options options;
  app.add_option("bundle", options.bundlePath, "The bundle to run")->required();
  app.add_option("--data", options.dataDirectory,
                 "Directory of ONNX TensorProto files: input_0.pb, input_1.pb, ... are the "
                 "model's inputs in order (all required; without --data every input is zero); "
                 "each output_N.pb present is checked against output N as docs/numerics.md says "
                 "(on a bf16 array the program runs once more with fp32 operands and bf16 "
                 "DRAM data at fp32, which must match it tightly)");
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
  CLI::Option *trainOption = app.add_option(
      "--train", options.trainDirectory,
      "Train with a step bundle (tpuc MODEL.onnx --train): DIR holds inputs.pb (every "
      "training sample, the first axis the sample) and labels.pb (int64 class indices "
      "for cross-entropy, float targets for MSE), and optionally test_inputs.pb and "
      "test_labels.pb, evaluated after each epoch without changing the parameters. "
      "The parameters start as the model's initializers and stay in simulated DRAM "
      "between steps; prints loss and accuracy per epoch (docs/training.md)");
  app.add_option("--epochs", options.epochs, "--train: passes over the training data (default 1)")
      ->needs(trainOption);
  app.add_option("--shuffle-seed", options.shuffleSeed,
                 "--train: seed of the sample order; epoch E shuffles with seed S + E - 1 "
                 "(default 0)")
      ->needs(trainOption);
  app.add_option("--save-model", options.saveModelPath,
                 "--train: write the model with its trained initializers to this ONNX file")
      ->needs(trainOption);
  app.add_option("--cuda", options.cuda,
                 "CUDA bundles: gpu (compile with nvcc, run on this machine's GPU; the default, "
                 "an error when nvidia-smi finds none) or emulate (compile with the host C++ "
                 "compiler against the CPU emulation of runtime/cuda-emu; the kernel times are "
                 "then host wall-clock times). Compiled libraries are cached (--cuda-cache)")
      ->check(CLI::IsMember({"gpu", "emulate"}));
  app.add_option("--cuda-cache", options.cudaCache,
                 "CUDA bundles: where compiled libraries are kept, by a hash of the source, "
                 "compiler and flags (default: $XDG_CACHE_HOME/tpu, else ~/.cache/tpu)");
  return tpu::runTool(app, argc, argv, [&] {
    for (const char *name :
         {"--mode", "--trace", "--vcd", "--vcd-signals", "--max-cycles", "--train"})
      if (app.count(name))
        options.simulatorOnly.push_back(name);
    for (const char *name : {"--cuda", "--cuda-cache"})
      if (app.count(name))
        options.cudaOnly.push_back(name);
    return run(options);
  });
}
