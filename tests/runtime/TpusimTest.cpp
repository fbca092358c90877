// tpusim end to end: inputs and references from --data, exit codes, report.
#include "RuntimeTestUtil.h"

#include "tpu/runtime/Tensor.h"

#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <fstream>
#include <sstream>

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
  EXPECT_NE(result.out.find("y: max abs error 0.000e+00, max rel error 0.000e+00, tolerance "
                            "3.906e-03: PASS"),
            std::string::npos)
      << result.out;
  nlohmann::json report = nlohmann::json::parse(readText(directory.file("report.json")));
  for (const char *key : {"total_cycles", "dram_bytes_read", "dram_bytes_written",
                          "mxu_utilization", "macs", "queues", "config", "outputs"})
    EXPECT_TRUE(report.contains(key)) << key;
  EXPECT_EQ(report["dram_bytes_read"], 32);
  EXPECT_EQ(report["outputs"][0]["pass"], true);
}

TEST_F(Tpusim, MismatchExitsOne) {
  writeCase({1, 0, 3, 0, 0.5, 0, 0, 7.5});
  Result result = run(directory.file("relu.tpub") + " --data " + directory.file("data"));
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_NE(result.out.find("y: max abs error 5.000e-01, max rel error 6.667e-02, tolerance "
                            "3.906e-03: FAIL"),
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
