// Comparing outputs against expected tensors with the tolerance of
// docs/numerics.md.
#pragma once

#include "tpu/isa/Bundle.h"
#include "tpu/runtime/Tensor.h"

#include <string>

namespace tpu::runtime {

// Relative tolerance for `output` on `config`'s array: u * sqrt(K) + K * 2^-24
// with u = 2^-8 and K = max(output.reduction_length, 1) on a bf16 array; 0 on
// an i8 array.
double outputTolerance(const HardwareConfig &config, const TensorInfo &output);

struct Comparison {
  std::string name;
  double max_abs_error = 0;
  double max_rel_error = 0; // max_abs_error / max|expected|
  double tolerance = 0;     // relative, as from outputTolerance()
  bool pass = false;
};

// Passes iff no element of `got` or `expected` is NaN and max|got - expected|
// <= tolerance * max(max|expected|, FLT_MIN). Throws tpu::Error when the
// shapes differ.
Comparison compareTensors(const Tensor &got, const Tensor &expected, double tolerance);
// "logits: max abs error 1.2e-03, max rel error 3.4e-04, tolerance 7.8e-03: PASS"
std::string formatComparison(const Comparison &comparison);

} // namespace tpu::runtime
