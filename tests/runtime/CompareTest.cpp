// The output tolerance of docs/numerics.md and the comparison against it.
#include "RuntimeTestUtil.h"

#include "tpu/isa/Error.h"
#include "tpu/runtime/Compare.h"

#include <cfloat>
#include <cmath>

namespace tpu::runtime::test {
namespace {

TEST(Tolerance, FollowsTheFormula) {
  Bundle bundle = reluBundle();
  TensorInfo &output = bundle.outputs.at(0);
  output.reduction_length = 0; // treated as 1
  EXPECT_DOUBLE_EQ(outputTolerance(bundle.config, output),
                   std::ldexp(1.0, -8) + std::ldexp(1.0, -24));
  output.reduction_length = 1024;
  EXPECT_DOUBLE_EQ(outputTolerance(bundle.config, output),
                   32 * std::ldexp(1.0, -8) + 1024 * std::ldexp(1.0, -24));
  bundle.config.array.dtype = isa::DType::I8;
  EXPECT_EQ(outputTolerance(bundle.config, output), 0.0);
}

TEST(Compare, PassesWithinTheToleranceRelativeToTheLargestExpectedValue) {
  Tensor expected = floatTensor("y", {4}, {10, -20, 0.5, 0});
  // tolerance 0.01 of max|expected| = 20: errors up to 0.2 anywhere pass.
  Tensor got = floatTensor("y", {4}, {10.2, -20, 0.3, -0.2});
  Comparison pass = compareTensors(got, expected, 0.01);
  EXPECT_TRUE(pass.pass);
  EXPECT_NEAR(pass.max_abs_error, 0.2, 1e-12);
  EXPECT_NEAR(pass.max_rel_error, 0.01, 1e-12);
  EXPECT_EQ(pass.tolerance, 0.01);
  EXPECT_EQ(pass.name, "y");

  got.values[3] = 0.21;
  Comparison fail = compareTensors(got, expected, 0.01);
  EXPECT_FALSE(fail.pass);
  EXPECT_NEAR(fail.max_abs_error, 0.21, 1e-12);
}

TEST(Compare, ExactWhenTheToleranceIsZero) {
  Tensor expected{"q", ElementType::Int8, {3}, {-128, 5, 127}};
  EXPECT_TRUE(compareTensors(expected, expected, 0).pass);
  Tensor offByOne = expected;
  offByOne.values[1] = 6;
  EXPECT_FALSE(compareTensors(offByOne, expected, 0).pass);
}

TEST(Compare, AllZeroExpectedUsesFltMin) {
  Tensor zeros = floatTensor("z", {2}, {0, 0});
  EXPECT_TRUE(compareTensors(zeros, zeros, 0.01).pass);
  Tensor tiny = floatTensor("z", {2}, {0, 1e-30});
  Comparison comparison = compareTensors(tiny, zeros, 0.01);
  EXPECT_FALSE(comparison.pass);
  EXPECT_DOUBLE_EQ(comparison.max_rel_error, 1e-30 / FLT_MIN);
}

TEST(Compare, NaNIsAMismatch) {
  Tensor expected = floatTensor("y", {2}, {1, 2});
  Tensor got = floatTensor("y", {2}, {1, std::nan("")});
  Comparison comparison = compareTensors(got, expected, 1e6);
  EXPECT_FALSE(comparison.pass);
  EXPECT_TRUE(std::isnan(comparison.max_abs_error));
  EXPECT_EQ(formatComparison(comparison),
            "y: max abs error nan, max rel error nan, tolerance 1.000e+06: FAIL");
  Tensor infinite = floatTensor("y", {2}, {1, INFINITY});
  EXPECT_FALSE(compareTensors(infinite, infinite, 1e6).pass);
}

TEST(Compare, ShapeMismatchIsAnError) {
  EXPECT_THROW(compareTensors(floatTensor("y", {2}, {1, 2}), floatTensor("y", {1, 2}, {1, 2}), 0),
               Error);
}

TEST(Compare, Format) {
  Comparison comparison{"logits", 1.5e-3, 2.5e-4, 7.8125e-3, true};
  EXPECT_EQ(formatComparison(comparison),
            "logits: max abs error 1.500e-03, max rel error 2.500e-04, tolerance 7.812e-03: PASS");
}

} // namespace
} // namespace tpu::runtime::test
