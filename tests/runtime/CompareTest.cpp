// The output check of docs/numerics.md: its tolerances, the measurement and
// the verdict.
#include "RuntimeTestUtil.h"

#include "tpu/isa/Error.h"
#include "tpu/runtime/Compare.h"

#include <cfloat>
#include <cmath>

namespace tpu::runtime::test {
namespace {

TEST(Tolerance, FollowsTheFormulas) {
  Bundle bundle = reluBundle();
  TensorInfo &output = bundle.outputs.at(0);
  output.reduction_length = 0; // treated as 1
  EXPECT_DOUBLE_EQ(programTolerance(bundle.config, output), 32 * std::ldexp(1.0, -24));
  EXPECT_DOUBLE_EQ(roundingTolerance(output), std::ldexp(1.0, -8) + std::ldexp(1.0, -24));
  output.reduction_length = 1024;
  EXPECT_DOUBLE_EQ(programTolerance(bundle.config, output), 16 * 33 * std::ldexp(1.0, -24));
  EXPECT_DOUBLE_EQ(roundingTolerance(output),
                   32 * std::ldexp(1.0, -8) + 1024 * std::ldexp(1.0, -24));
  bundle.config.array.dtype = isa::DType::I8;
  EXPECT_EQ(programTolerance(bundle.config, output), 0.0);
}

TEST(Measure, RelativeToTheLargestExpectedValueWithTheWorstElement) {
  Tensor expected = floatTensor("y", {2, 2}, {10, -20, 0.5, 0});
  Discrepancy discrepancy = measure(floatTensor("y", {2, 2}, {10.2, -20, 0.3, -0.25}), expected);
  EXPECT_DOUBLE_EQ(discrepancy.max_error, 0.25);
  EXPECT_DOUBLE_EQ(discrepancy.scale, 20);
  EXPECT_DOUBLE_EQ(discrepancy.relative, 0.0125);
  EXPECT_EQ(discrepancy.worst_index, 3u);
  EXPECT_EQ(discrepancy.worst_got, -0.25);
  EXPECT_EQ(discrepancy.worst_expected, 0);
  EXPECT_TRUE(discrepancy.within(0.0125));
  EXPECT_FALSE(discrepancy.within(0.0124));
}

TEST(Measure, AllZeroExpectedUsesFltMin) {
  Tensor zeros = floatTensor("z", {2}, {0, 0});
  EXPECT_TRUE(measure(zeros, zeros).within(0));
  Discrepancy discrepancy = measure(floatTensor("z", {2}, {0, 1e-30}), zeros);
  EXPECT_DOUBLE_EQ(discrepancy.relative, 1e-30 / FLT_MIN);
  EXPECT_FALSE(discrepancy.within(0.01));
}

Tensor expected2() { return floatTensor("y", {2}, {1, 2}); }

TEST(Measure, NaNIsNeverWithinAnyTolerance) {
  Tensor expected = floatTensor("y", {3}, {1, 2, 3});
  Discrepancy discrepancy = measure(floatTensor("y", {3}, {1, std::nan(""), 100}), expected);
  EXPECT_TRUE(std::isnan(discrepancy.max_error));
  EXPECT_EQ(discrepancy.worst_index, 1u);
  EXPECT_FALSE(discrepancy.within(1e6));
  Tensor infinite = floatTensor("y", {2}, {1, INFINITY});
  EXPECT_FALSE(measure(infinite, expected2()).within(1e6));
}

TEST(Measure, SpecialValuesMatchOnlyTheSameInTheExpected) {
  Tensor expected = floatTensor("y", {4}, {std::nan(""), INFINITY, -INFINITY, 2});
  EXPECT_TRUE(measure(expected, expected).within(0));
  EXPECT_EQ(measure(expected, expected).scale, 2);
  Tensor flipped = floatTensor("y", {4}, {std::nan(""), -INFINITY, -INFINITY, 2});
  EXPECT_FALSE(measure(flipped, expected).within(1e6));
  Tensor number = floatTensor("y", {4}, {0, INFINITY, -INFINITY, 2});
  EXPECT_FALSE(measure(number, expected).within(1e6));
}

TEST(Measure, ShapeMismatchIsAnError) {
  EXPECT_THROW(measure(floatTensor("y", {2}, {1, 2}), floatTensor("y", {1, 2}, {1, 2})), Error);
}

TEST(Check, TheProgramRunDecidesAgainstTheExpectedAndTheHardwareRunAgainstIt) {
  Bundle bundle = reluBundle();
  const TensorInfo &output = bundle.outputs.at(0); // K = 1
  Tensor expected = floatTensor("y", {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor reference = expected;
  Tensor hardware = expected;
  hardware.values[0] = 1.01; // rounding: 0.01 / 8 = 1.25e-3 of the scale, allowed 3.9e-3
  OutputCheck pass = checkOutput(bundle.config, output, hardware, reference, expected);
  EXPECT_TRUE(pass.pass);
  ASSERT_TRUE(pass.rounding.has_value());
  EXPECT_NEAR(pass.rounding->relative, 0.01 / 8, 1e-15);

  // 1.5 ulps of 8 off in the program run is within 32 ulps of the scale...
  reference.values[7] = 8 + 1.5 * std::ldexp(8.0, -24);
  EXPECT_TRUE(checkOutput(bundle.config, output, hardware, reference, expected).pass);
  // ...a 1e-4 relative error is not, although the rounding bound would take it.
  reference.values[7] = 8 * (1 + 1e-4);
  OutputCheck fail = checkOutput(bundle.config, output, hardware, reference, expected);
  EXPECT_FALSE(fail.pass);
  EXPECT_TRUE(fail.rounding->within(fail.rounding_tolerance));

  // The hardware run far from the program run fails even when the latter is right.
  hardware.values[0] = 2;
  EXPECT_FALSE(checkOutput(bundle.config, output, hardware, expected, expected).pass);
}

TEST(Check, ARoundedRunIsHeldToTheRoundingToleranceAgainstTheExpected) {
  Bundle bundle = reluBundle();
  TensorInfo &output = bundle.outputs.at(0);
  output.reduction_length = 64; // 2^-8 * 8 + 64 * 2^-24: about 0.0313
  Tensor expected = floatTensor("y", {1, 2}, {1, -1});
  OutputCheck close = checkRoundedOutput(output, floatTensor("y", {1, 2}, {1.03, -1}), expected);
  EXPECT_TRUE(close.pass);
  EXPECT_FALSE(close.rounding);
  EXPECT_DOUBLE_EQ(close.program_tolerance, roundingTolerance(output));
  EXPECT_FALSE(checkRoundedOutput(output, floatTensor("y", {1, 2}, {1.04, -1}), expected).pass);
}

TEST(Check, AnIntegerArrayHasOneExactRun) {
  Bundle bundle = reluBundle();
  bundle.config.array.dtype = isa::DType::I8;
  Tensor expected{"y", ElementType::Int8, {2, 4}, {-128, 5, 127, 0, 1, 2, 3, 4}};
  OutputCheck pass = checkOutput(bundle.config, bundle.outputs[0], expected, {}, expected);
  EXPECT_TRUE(pass.pass);
  EXPECT_FALSE(pass.rounding.has_value());
  Tensor offByOne = expected;
  offByOne.values[1] = 6;
  EXPECT_FALSE(checkOutput(bundle.config, bundle.outputs[0], offByOne, {}, expected).pass);
}

TEST(Check, AnIntegerOutputMustBeEqualInBothRuns) {
  Bundle bundle = reluBundle(); // a bf16 array: two runs
  Tensor expected{"y", ElementType::Int64, {2, 4}, {0, 4, 2, 1, 1, 3, 0, 2}};
  OutputCheck pass = checkOutput(bundle.config, bundle.outputs[0], expected, expected, expected);
  EXPECT_TRUE(pass.exact);
  EXPECT_TRUE(pass.pass);
  EXPECT_EQ(pass.program_tolerance, 0.0);
  EXPECT_EQ(pass.rounding_tolerance, 0.0);
  EXPECT_EQ(formatCheck(pass), "y [2, 4]: PASS\n"
                               "  program:  fp32 vs expected, exact: 0 of 8 elements differ\n"
                               "  rounding: bf16 vs fp32, exact: 0 of 8 elements differ\n");

  // An index off by one is a mismatch however large the indices are.
  Tensor program = expected;
  program.values[1] = 3;
  program.values[6] = 3;
  OutputCheck fail = checkOutput(bundle.config, bundle.outputs[0], program, program, expected);
  EXPECT_FALSE(fail.pass);
  EXPECT_EQ(fail.program.mismatches, 2u);
  EXPECT_EQ(formatCheck(fail), "y [2, 4]: FAIL\n"
                               "  program:  fp32 vs expected, exact: 2 of 8 elements differ; "
                               "worst at [1, 2]: fp32 3, expected 0\n"
                               "  rounding: bf16 vs fp32, exact: 0 of 8 elements differ\n");

  // The hardware run must give the same indices as the fp32-operand run.
  Tensor hardware = expected;
  hardware.values[0] = 1;
  EXPECT_FALSE(checkOutput(bundle.config, bundle.outputs[0], hardware, expected, expected).pass);
}

TEST(Check, FormatNamesTheWorstElementAndTheRelativeFigures) {
  Bundle bundle = reluBundle();
  Tensor expected = floatTensor("y", {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor hardware = expected;
  hardware.values[5] = 6.5;
  OutputCheck check = checkOutput(bundle.config, bundle.outputs[0], hardware, expected, expected);
  EXPECT_EQ(formatCheck(check),
            "y [2, 4]: FAIL\n"
            "  program:  max|fp32 - expected| = 0 (max|expected| = 8.000e+00), allowed 1.91e-06 x\n"
            "  rounding: max|bf16 - fp32| = 6.25e-02 x max|fp32| (= 8.000e+00), allowed 3.91e-03 "
            "x; worst at [1, 1]: bf16 6.5, fp32 6\n");
}

} // namespace
} // namespace tpu::runtime::test
