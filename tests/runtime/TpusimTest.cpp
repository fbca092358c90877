// tpusim end to end: inputs and references from --data, exit codes, report.
#include "RuntimeTestUtil.h"

#include "tpu/runtime/Tensor.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace tpu::runtime::test {
namespace {

struct Result {
  int exitCode;
  std::string out;
  std::string err;
};

std::string readText(const std::string &path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

class Tpusim : public ::testing::Test {
protected:
  Result run(const std::string &arguments) {
    std::string command = std::string(TPUSIM_PATH) + " " + arguments + " >" +
                          directory.file("stdout") + " 2>" + directory.file("stderr");
    int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, readText(directory.file("stdout")),
            readText(directory.file("stderr"))};
  }

  // relu.tpub, and data/ with input_0.pb = x and output_0.pb = `expected`.
  void writeCase(const std::vector<double> &expected = {1, 0, 3, 0, 0.5, 0, 0, 7}) {
    writeBundle(reluBundle(), directory.file("relu.tpub"));
    std::filesystem::create_directory(directory.file("data"));
    writeTensor(floatTensor("x", {2, 4}, {1, -2, 3, -4, 0.5, -0.5, 0, 7}),
                directory.file("data/input_0.pb"));
    writeTensor(floatTensor("y", {2, 4}, expected), directory.file("data/output_0.pb"));
  }

  ScratchDirectory directory;
};

TEST_F(Tpusim, MatchingOutputsPassAndReportIsWritten) {
  writeCase();
  Result result = run(directory.file("relu.tpub") + " --data " + directory.file("data") +
                      " --report " + directory.file("report.json"));
  EXPECT_EQ(result.exitCode, 0) << result.out << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_NE(result.out.find("total cycles: "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("y [2, 4]: PASS\n"
                            "  program:  max|fp32 - expected| = 0 (max|expected| = 7.000e+00), "
                            "allowed 1.91e-06 x\n"),
            std::string::npos)
      << result.out;
  nlohmann::json report = nlohmann::json::parse(readText(directory.file("report.json")));
  for (const char *key :
       {"mode", "total_cycles", "dram_bytes_read", "dram_bytes_written", "dram_bandwidth",
        "mxu_utilization", "macs", "sram", "energy_pj", "units", "by_instruction", "by_source_op",
        "config", "outputs", "wall_seconds", "simulated_macs_per_second"})
    EXPECT_TRUE(report.contains(key)) << key;
  EXPECT_EQ(report["dram_bytes_read"], 32);
  EXPECT_EQ(report["outputs"][0]["pass"], true);
  EXPECT_EQ(report["outputs"][0]["program"]["relative_error"], 0.0);
  EXPECT_EQ(report["outputs"][0]["rounding"]["tolerance"],
            std::ldexp(1.0, -8) + std::ldexp(1.0, -24));
  EXPECT_EQ(report["mode"], "fast");
  // Every unit's cycles add up to the total.
  uint64_t total = report["total_cycles"];
  for (const auto &[unit, stats] : report["units"].items()) {
    uint64_t sum = stats["busy"].get<uint64_t>() + stats["idle"].get<uint64_t>();
    for (const auto &[reason, cycles] : stats["stalled"].items())
      sum += cycles.get<uint64_t>();
    EXPECT_EQ(sum, total) << unit;
  }
  EXPECT_EQ(report["sram"]["scratchpad"]["writes"], 16); // dma.ld 8 words, v.relu 8
  EXPECT_EQ(report["by_source_op"][0]["name"], "Relu");
  EXPECT_EQ(report["by_source_op"][0]["instructions"], 8);
  EXPECT_GT(report["energy_pj"]["total"].get<double>(), 0.0);
  // A bundle that does not record its work (older ones, or built in code)
  // has no roofline.
  EXPECT_FALSE(report.contains("roofline_cycles"));
  EXPECT_FALSE(report["by_source_op"][0].contains("roofline_cycles"));
  EXPECT_EQ(result.out.find("roofline:"), std::string::npos) << result.out;
}

TEST_F(Tpusim, ReportsTheRooflineOfBundlesThatRecordTheirWork) {
  // The relu's 8 elements through the vector unit, and x and y through DRAM.
  Bundle bundle = reluBundle();
  bundle.work = CompulsoryWork{64, {SourceWork{{}, 8, 0, 64}}};
  writeBundle(bundle, directory.file("relu.tpub"));
  Result result = run(directory.file("relu.tpub") + " --report " + directory.file("report.json"));
  ASSERT_EQ(result.exitCode, 0) << result.out << result.err;
  const HardwareConfig &config = bundle.config;
  uint64_t compute =
      config.vector.pipeline_latency + (8 + config.vector.lanes - 1) / config.vector.lanes;
  auto memory = static_cast<uint64_t>(std::ceil(64 / config.dram.bytes_per_cycle));
  uint64_t latency = config.dram.latency_cycles;
  ASSERT_GT(latency, 0u);
  nlohmann::json report = nlohmann::json::parse(readText(directory.file("report.json")));
  // The model's compute waits for a load's latency and a store's; a source
  // op's bytes wait for one latency, its compute for none of its own.
  uint64_t modelBound = std::max(compute + 2 * latency, memory + latency);
  for (auto [entry, computeLatency, bound] :
       {std::tuple{report, 2 * latency, modelBound},
        std::tuple{report["by_source_op"][0], uint64_t{0}, std::max(compute, memory + latency)}}) {
    EXPECT_EQ(entry["roofline_matrix_cycles"], 0);
    EXPECT_EQ(entry["roofline_vector_cycles"], compute);
    EXPECT_EQ(entry["roofline_compute_cycles"], compute);
    EXPECT_EQ(entry["roofline_memory_cycles"], memory);
    EXPECT_EQ(entry["roofline_compute_latency_cycles"], computeLatency);
    EXPECT_EQ(entry["roofline_memory_latency_cycles"], latency);
    EXPECT_EQ(entry["roofline_cycles"], bound);
  }
  uint64_t total = report["total_cycles"];
  EXPECT_GE(total, modelBound);
  EXPECT_DOUBLE_EQ(report["cycles_over_roofline"].get<double>(),
                   static_cast<double>(total) / static_cast<double>(modelBound));
  EXPECT_NE(
      result.out.find(fmt::format("roofline: {} cycles = max(compute {} + DRAM latency {}, "
                                  "memory {} + DRAM latency {}), compute = matrix 0 + "
                                  "vector {};",
                                  modelBound, compute, 2 * latency, memory, latency, compute)),
      std::string::npos)
      << result.out;
}

TEST_F(Tpusim, Int64OutputsAreWrittenAndComparedExactly) {
  Bundle bundle = int64OutputBundle();
  writeBundle(bundle, directory.file("indices.tpub"));
  std::filesystem::create_directory(directory.file("data"));
  writeTensor(floatTensor("x", {2, 4}, {1, -2, 3, -4, 0, 5, 0, 7}),
              directory.file("data/input_0.pb"));
  writeTensor(Tensor{"y", ElementType::Int64, {2, 4}, {1, -2, 3, -4, 0, 5, 0, 6}},
              directory.file("data/output_0.pb"));
  Result result =
      run(directory.file("indices.tpub") + " --data " + directory.file("data") + " --outputs " +
          directory.file("out") + " --report " + directory.file("report.json"));
  EXPECT_EQ(result.exitCode, 1) << result.out << result.err;
  EXPECT_NE(result.out.find("y [2, 4]: FAIL\n"
                            "  program:  fp32 vs expected, exact: 1 of 8 elements differ; "
                            "worst at [1, 3]: fp32 7, expected 6\n"),
            std::string::npos)
      << result.out;
  nlohmann::json report = nlohmann::json::parse(readText(directory.file("report.json")));
  EXPECT_EQ(report["outputs"][0]["program"]["mismatches"], 1);
  Tensor y = readTensor(directory.file("out/output_0.pb"));
  EXPECT_EQ(y.type, ElementType::Int64);
  EXPECT_EQ(y.values, (std::vector<double>{1, -2, 3, -4, 0, 5, 0, 7}));
}

TEST_F(Tpusim, CycleModeGivesTheSameCycles) {
  writeCase();
  Result fast = run(directory.file("relu.tpub") + " --data " + directory.file("data") +
                    " --report " + directory.file("fast.json"));
  Result cycle = run(directory.file("relu.tpub") + " --mode=cycle --data " +
                     directory.file("data") + " --report " + directory.file("cycle.json"));
  EXPECT_EQ(cycle.exitCode, 0) << cycle.err;
  nlohmann::json fastReport = nlohmann::json::parse(readText(directory.file("fast.json")));
  nlohmann::json cycleReport = nlohmann::json::parse(readText(directory.file("cycle.json")));
  EXPECT_EQ(cycleReport["mode"], "cycle");
  EXPECT_EQ(cycleReport["total_cycles"], fastReport["total_cycles"]);
  EXPECT_EQ(cycleReport["units"], fastReport["units"]);
  EXPECT_EQ(run(directory.file("relu.tpub") + " --mode=slow").exitCode, 1);
}

// The trace-event format as ui.perfetto.dev and chrome://tracing read it:
// metadata naming one thread (track) of instructions and one of states per
// unit, complete events ("X") with non-negative times that never overlap on
// a track (a pipelined mxu.mm cut short by the next may last no time).
TEST_F(Tpusim, TraceIsWellFormedTraceEventJson) {
  writeCase();
  Result result = run(directory.file("relu.tpub") + " --data " + directory.file("data") +
                      " --trace " + directory.file("trace.json"));
  ASSERT_EQ(result.exitCode, 0) << result.err;
  nlohmann::json trace = nlohmann::json::parse(readText(directory.file("trace.json")));
  ASSERT_TRUE(trace["traceEvents"].is_array());
  std::map<int, std::string> tracks;
  std::map<int, std::vector<std::pair<double, double>>> spans;
  for (const nlohmann::json &event : trace["traceEvents"]) {
    ASSERT_TRUE(event.contains("ph") && event.contains("pid") && event.contains("name"));
    if (event["ph"] == "M" && event["name"] == "thread_name")
      tracks[event["tid"].get<int>()] = event["args"]["name"];
    if (event["ph"] == "X") {
      ASSERT_TRUE(event["ts"].is_number() && event["dur"].is_number()) << event;
      EXPECT_GE(event["ts"].get<double>(), 0.0);
      EXPECT_GE(event["dur"].get<double>(), 0.0);
      spans[event["tid"].get<int>()].emplace_back(event["ts"], event["ts"].get<double>() +
                                                                   event["dur"].get<double>());
    }
  }
  std::set<std::string> names;
  for (const auto &[tid, name] : tracks)
    names.insert(name);
  EXPECT_EQ(names,
            (std::set<std::string>{"controller", "controller state", "dma_load", "dma_load state",
                                   "matrix", "matrix_weights", "matrix state", "vector",
                                   "vector state", "dma_store", "dma_store state"}));
  for (auto &[tid, list] : spans) {
    EXPECT_TRUE(tracks.count(tid)) << "events on an unnamed track " << tid;
    std::sort(list.begin(), list.end());
    for (size_t i = 1; i < list.size(); ++i)
      EXPECT_LE(list[i - 1].second, list[i].first + 1e-9) << tracks[tid];
  }
  // The relu runs on the vector track, named by opcode and source op.
  bool relu = false;
  for (const nlohmann::json &event : trace["traceEvents"])
    relu = relu || (event["ph"] == "X" && event["name"] == "v.relu Relu" &&
                    tracks[event["tid"].get<int>()] == "vector");
  EXPECT_TRUE(relu);
}

TEST_F(Tpusim, VcdHasTheChosenSignals) {
  writeCase();
  Result result = run(directory.file("relu.tpub") + " --vcd " + directory.file("run.vcd") +
                      " --vcd-signals vector.busy,dma_load.pc");
  ASSERT_EQ(result.exitCode, 0) << result.err;
  std::string vcd = readText(directory.file("run.vcd"));
  EXPECT_NE(vcd.find("$timescale 1 ps $end"), std::string::npos);
  // Signals come in unit order, whatever the order asked for.
  EXPECT_NE(vcd.find("$scope module dma_load $end\n$var wire 32 s0 pc $end"), std::string::npos)
      << vcd;
  EXPECT_NE(vcd.find("$scope module vector $end\n$var wire 1 s1 busy $end"), std::string::npos)
      << vcd;
  EXPECT_EQ(vcd.find("stalled"), std::string::npos);
  EXPECT_NE(vcd.find("$enddefinitions $end\n#0\n"), std::string::npos);
  EXPECT_NE(vcd.find("\n1s1\n"), std::string::npos);
  Result bad = run(directory.file("relu.tpub") + " --vcd " + directory.file("run.vcd") +
                   " --vcd-signals vector.bogus");
  EXPECT_EQ(bad.exitCode, 1);
  EXPECT_NE(bad.err.find("unknown VCD signal 'vector.bogus'"), std::string::npos) << bad.err;
}

TEST_F(Tpusim, MismatchExitsOne) {
  writeCase({1, 0, 3, 0, 0.5, 0, 0, 7.5});
  Result result = run(directory.file("relu.tpub") + " --data " + directory.file("data"));
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_NE(
      result.out.find("y [2, 4]: FAIL\n"
                      "  program:  max|fp32 - expected| = 6.67e-02 x max|expected| (= "
                      "7.500e+00), allowed 1.91e-06 x; worst at [1, 3]: fp32 7, expected 7.5"),
      std::string::npos)
      << result.out;
}

TEST_F(Tpusim, WithoutDataTheInputsAreZero) {
  writeCase();
  Result result = run(directory.file("relu.tpub"));
  EXPECT_EQ(result.exitCode, 0) << result.err;
  EXPECT_NE(result.out.find("total cycles: "), std::string::npos);
}

TEST_F(Tpusim, MissingInputFileIsOneLineNamingIt) {
  writeCase();
  std::filesystem::remove(directory.file("data/input_0.pb"));
  Result result = run(directory.file("relu.tpub") + " --data " + directory.file("data"));
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_EQ(result.err, "tpusim: error: " + directory.file("data/input_0.pb") +
                            ": missing; it holds input 0 'x'\n");
}

TEST_F(Tpusim, BadInputIsOneLine) {
  writeCase();
  writeTensor(floatTensor("x", {8}, std::vector<double>(8)), directory.file("data/input_0.pb"));
  Result result = run(directory.file("relu.tpub") + " --data " + directory.file("data"));
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_EQ(result.err, "tpusim: error: " + directory.file("relu.tpub") + ": input 0 'x' (" +
                            directory.file("data/input_0.pb") +
                            "): shape [8] differs from the model's [2, 4]\n");
}

} // namespace
} // namespace tpu::runtime::test
