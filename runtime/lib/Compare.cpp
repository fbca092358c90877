#include "tpu/runtime/Compare.h"

#include "tpu/isa/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace tpu::runtime {

double outputTolerance(const HardwareConfig &config, const TensorInfo &output) {
  if (config.array.dtype == isa::DType::I8)
    return 0.0; // integer arithmetic is exact
  constexpr double kBF16Roundoff = 0x1p-8;
  constexpr double kFP32Roundoff = 0x1p-24;
  double k = static_cast<double>(std::max<uint64_t>(output.reduction_length, 1));
  return kBF16Roundoff * std::sqrt(k) + k * kFP32Roundoff;
}

Comparison compareTensors(const Tensor &got, const Tensor &expected, double tolerance) {
  if (got.shape != expected.shape || got.values.size() != expected.values.size())
    throw Error(fmt::format("'{}': shape {} differs from the expected {}", got.name,
                            formatShape(got.shape), formatShape(expected.shape)));
  double maxAbsError = 0;
  double maxExpected = 0;
  bool nan = false;
  for (size_t i = 0; i < got.values.size(); ++i) {
    double error = std::fabs(got.values[i] - expected.values[i]);
    // Also NaN when both are the same infinity: no finite error bound holds.
    nan = nan || std::isnan(error);
    maxAbsError = std::max(maxAbsError, error);
    maxExpected = std::max(maxExpected, std::fabs(expected.values[i]));
  }
  Comparison comparison;
  comparison.name = got.name;
  comparison.tolerance = tolerance;
  comparison.max_abs_error = nan ? std::nan("") : maxAbsError;
  double scale = std::max(maxExpected, static_cast<double>(FLT_MIN));
  comparison.max_rel_error = comparison.max_abs_error / scale;
  comparison.pass = !nan && maxAbsError <= tolerance * scale;
  return comparison;
}

std::string formatComparison(const Comparison &comparison) {
  return fmt::format("{}: max abs error {:.3e}, max rel error {:.3e}, tolerance {:.3e}: {}",
                     comparison.name, comparison.max_abs_error, comparison.max_rel_error,
                     comparison.tolerance, comparison.pass ? "PASS" : "FAIL");
}

} // namespace tpu::runtime
