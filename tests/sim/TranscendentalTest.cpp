// The vector unit's transcendentals against double-precision libm, in units
// in the last place (ulp) of the fp32 result: the bounds docs/isa.md states.
#include "SimTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

namespace tpu::sim::test {
namespace {

constexpr uint64_t kCols = 64, kRows = 64, kElements = kRows * kCols;

// The test machine with a scratchpad that holds the inputs and the results.
HardwareConfig roomyConfig() {
  HardwareConfig config = smallConfig();
  config.scratchpad = {2 * kElements * 4, 1};
  return config;
}

// Runs `opcode` over `inputs` (kElements values) on the simulator.
std::vector<float> runUnary(Opcode opcode, const std::vector<float> &inputs) {
  const uint64_t out = kElements * 4;
  std::vector<uint8_t> dram(2 * out);
  for (size_t i = 0; i < inputs.size(); ++i)
    putWord(dram, 4 * i, floatBits(inputs[i]));
  Bundle bundle = makeBundle(
      loadComputeStore(
          {dmaLoad(0, kCols, Space::Scratchpad, 0, kCols, kRows, kCols, DType::F32)},
          {vectorUnary(opcode, {Space::Scratchpad, kElements}, {Space::Scratchpad, 0}, kRows,
                       kCols)},
          {dmaStore(out, kCols, Space::Scratchpad, kElements, kCols, kRows, kCols, DType::F32)}),
      dram.size(), roomyConfig());
  simulate(bundle, dram);
  std::vector<float> results;
  for (uint64_t i = 0; i < kElements; ++i)
    results.push_back(bitsFloat(getWord(dram, out + 4 * i)));
  return results;
}

// |got - exact| in ulps of the fp32 value nearest to `exact`.
double ulpError(float got, double exact) {
  float nearest = static_cast<float>(exact);
  double ulp = std::nextafter(std::fabs(nearest), INFINITY) - std::fabs(nearest);
  return std::fabs(static_cast<double>(got) - exact) / ulp;
}

struct Accuracy {
  Opcode opcode;
  std::function<double(double)> exact;
  double low, high; // the sweep, evenly spaced (or in log space when `logSpaced`)
  bool logSpaced;
  double maxUlps; // the bound docs/isa.md states
};

void PrintTo(const Accuracy &accuracy, std::ostream *os) {
  *os << isa::opcodeInfo(accuracy.opcode).mnemonic;
}

class Transcendental : public ::testing::TestWithParam<Accuracy> {};

TEST_P(Transcendental, WithinTheStatedUlpsOfDoublePrecisionLibm) {
  const Accuracy &test = GetParam();
  std::vector<float> inputs;
  for (uint64_t i = 0; i < kElements; ++i) {
    double t = static_cast<double>(i) / (kElements - 1);
    inputs.push_back(static_cast<float>(
        test.logSpaced
            ? std::exp(std::log(test.low) + t * (std::log(test.high) - std::log(test.low)))
            : test.low + t * (test.high - test.low)));
  }
  std::vector<float> got = runUnary(test.opcode, inputs);
  double worst = 0;
  float worstInput = 0;
  for (uint64_t i = 0; i < kElements; ++i) {
    double error = ulpError(got[i], test.exact(static_cast<double>(inputs[i])));
    if (error > worst) {
      worst = error;
      worstInput = inputs[i];
    }
  }
  RecordProperty("max_ulps", std::to_string(worst));
  EXPECT_LE(worst, test.maxUlps) << isa::opcodeInfo(test.opcode).mnemonic << " at " << worstInput;
}

INSTANTIATE_TEST_SUITE_P(
    Ops, Transcendental,
    ::testing::Values(
        Accuracy{Opcode::VExp, [](double x) { return std::exp(x); }, -87, 88, false, 1},
        Accuracy{Opcode::VSigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }, -80, 20, false,
                 2},
        Accuracy{Opcode::VTanh, [](double x) { return std::tanh(x); }, -10, 10, false, 2},
        Accuracy{Opcode::VLog, [](double x) { return std::log(x); }, 1e-30, 1e30, true, 1},
        Accuracy{Opcode::VRsqrt, [](double x) { return 1 / std::sqrt(x); }, 1e-30, 1e30, true,
                 1.5}),
    [](const auto &info) {
      std::string name(isa::opcodeInfo(info.param.opcode).mnemonic);
      return name.substr(2);
    });

} // namespace
} // namespace tpu::sim::test
