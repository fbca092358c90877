#include "tpu/runtime/Compare.h"

#include "tpu/isa/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace tpu::runtime {
namespace {

constexpr double kFP32Roundoff = 0x1p-24;
constexpr double kBF16Roundoff = 0x1p-8;

double reductionLength(const TensorInfo &output) {
  return static_cast<double>(std::max<uint64_t>(output.reduction_length, 1));
}

// "[0, 3]" for flat index 3 of a [1, 10] tensor.
std::string formatIndex(uint64_t flat, const std::vector<int64_t> &shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t axis = shape.size(); axis-- > 0;) {
    int64_t size = std::max<int64_t>(shape[axis], 1);
    index[axis] = static_cast<int64_t>(flat % size);
    flat /= size;
  }
  return fmt::format("[{}]", fmt::join(index, ", "));
}

std::string formatDiscrepancy(const Discrepancy &discrepancy, double tolerance,
                              const std::vector<int64_t> &shape, const char *got,
                              const char *expected) {
  if (discrepancy.max_error == 0)
    return fmt::format("max|{} - {}| = 0 (max|{}| = {:.3e}), allowed {:.2e} x", got, expected,
                       expected, discrepancy.scale, tolerance);
  return fmt::format("max|{0} - {1}| = {2:.2e} x max|{1}| (= {3:.3e}), allowed {4:.2e} x; "
                     "worst at {5}: {0} {6:.9g}, {1} {7:.9g}",
                     got, expected, discrepancy.relative, discrepancy.scale, tolerance,
                     formatIndex(discrepancy.worst_index, shape), discrepancy.worst_got,
                     discrepancy.worst_expected);
}

std::string formatExact(const Discrepancy &discrepancy, uint64_t elements,
                        const std::vector<int64_t> &shape, const char *got, const char *expected) {
  std::string text = fmt::format("{} vs {}, exact: {} of {} elements differ", got, expected,
                                 discrepancy.mismatches, elements);
  if (discrepancy.mismatches == 0)
    return text;
  return text + fmt::format("; worst at {}: {} {:.17g}, {} {:.17g}",
                            formatIndex(discrepancy.worst_index, shape), got, discrepancy.worst_got,
                            expected, discrepancy.worst_expected);
}

} // namespace

bool Discrepancy::within(double tolerance) const {
  return !std::isnan(max_error) && relative <= tolerance;
}

Discrepancy measure(const Tensor &got, const Tensor &expected) {
  if (got.shape != expected.shape || got.values.size() != expected.values.size())
    throw Error(fmt::format("'{}': shape {} differs from the expected {}", got.name,
                            formatShape(got.shape), formatShape(expected.shape)));
  Discrepancy discrepancy;
  double maxExpected = 0;
  for (size_t i = 0; i < got.values.size(); ++i) {
    double value = got.values[i], reference = expected.values[i];
    // A NaN or an infinity is right only where the expected output has the
    // same (ONNX's sqrt of a negative is NaN); anywhere else the error is NaN.
    bool sameSpecial =
        (std::isnan(value) && std::isnan(reference)) || (std::isinf(value) && value == reference);
    double error = sameSpecial ? 0.0 : std::fabs(value - reference);
    if (std::isinf(error))
      error = std::nan("");
    if (error != 0)
      ++discrepancy.mismatches;
    if (std::isfinite(reference))
      maxExpected = std::max(maxExpected, std::fabs(reference));
    bool worse =
        std::isnan(error) ? !std::isnan(discrepancy.max_error) : error > discrepancy.max_error;
    if (worse) {
      discrepancy.max_error = error;
      discrepancy.worst_index = i;
    }
  }
  discrepancy.scale = std::max(maxExpected, static_cast<double>(FLT_MIN));
  discrepancy.relative = discrepancy.max_error / discrepancy.scale;
  if (!got.values.empty()) {
    discrepancy.worst_got = got.values[discrepancy.worst_index];
    discrepancy.worst_expected = expected.values[discrepancy.worst_index];
  }
  return discrepancy;
}

double programTolerance(const HardwareConfig &config, const TensorInfo &output) {
  if (config.array.dtype == isa::DType::I8)
    return 0.0;
  return 16 * kFP32Roundoff * (std::sqrt(reductionLength(output)) + 1);
}

double roundingTolerance(const TensorInfo &output) {
  double k = reductionLength(output);
  return kBF16Roundoff * std::sqrt(k) + k * kFP32Roundoff;
}

OutputCheck checkOutput(const HardwareConfig &config, const TensorInfo &output,
                        const Tensor &hardware, const std::optional<Tensor> &reference,
                        const Tensor &expected) {
  OutputCheck check;
  check.name = output.name;
  check.shape = output.shape;
  check.exact = !isFloatingPoint(hardware.type);
  check.program = measure(reference ? *reference : hardware, expected);
  // An index off by one is no rounding error: integers must be equal.
  check.program_tolerance = check.exact ? 0.0 : programTolerance(config, output);
  check.pass = check.program.within(check.program_tolerance);
  if (reference) {
    check.rounding = measure(hardware, *reference);
    check.rounding_tolerance = check.exact ? 0.0 : roundingTolerance(output);
    check.pass = check.pass && check.rounding->within(check.rounding_tolerance);
  }
  return check;
}

OutputCheck checkRoundedOutput(const TensorInfo &output, const Tensor &got,
                               const Tensor &expected) {
  OutputCheck check;
  check.name = output.name;
  check.shape = output.shape;
  check.exact = !isFloatingPoint(got.type);
  check.program = measure(got, expected);
  check.program_tolerance = check.exact ? 0.0 : roundingTolerance(output);
  check.pass = check.program.within(check.program_tolerance);
  return check;
}

std::string formatCheck(const OutputCheck &check) {
  std::string text = fmt::format("{} {}: {}\n", check.name, formatShape(check.shape),
                                 check.pass ? "PASS" : "FAIL");
  if (check.exact) {
    uint64_t elements = 1;
    for (int64_t dim : check.shape)
      elements *= static_cast<uint64_t>(dim);
    text +=
        fmt::format("  program:  {}\n", formatExact(check.program, elements, check.shape,
                                                    check.rounding ? "fp32" : "got", "expected"));
    if (check.rounding)
      text += fmt::format("  rounding: {}\n",
                          formatExact(*check.rounding, elements, check.shape, "bf16", "fp32"));
    return text;
  }
  text += fmt::format("  program:  {}\n",
                      formatDiscrepancy(check.program, check.program_tolerance, check.shape,
                                        check.rounding ? "fp32" : "got", "expected"));
  if (check.rounding)
    text +=
        fmt::format("  rounding: {}\n", formatDiscrepancy(*check.rounding, check.rounding_tolerance,
                                                          check.shape, "bf16", "fp32"));
  return text;
}

} // namespace tpu::runtime
