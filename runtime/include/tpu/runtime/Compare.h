// The output check of docs/numerics.md: the program run with fp32 operands
// must match the expected outputs tightly, and the run with the hardware's
// bf16 operands must stay within the rounding bound of that reference run.
#pragma once

#include "tpu/isa/Bundle.h"
#include "tpu/runtime/Tensor.h"

#include <optional>
#include <string>
#include <vector>

namespace tpu::runtime {

// How far `got` is from `expected`, measured against scale =
// max(max|finite expected|, FLT_MIN). A NaN or infinity matches only the
// same in `expected`; anywhere else it makes the error NaN.
struct Discrepancy {
  double max_error = 0;     // max |got - expected|; NaN when an element is NaN
  double scale = 0;         // max(max|expected|, FLT_MIN)
  double relative = 0;      // max_error / scale
  uint64_t worst_index = 0; // flat index of the largest error (or the first NaN)
  double worst_got = 0;     // the elements there
  double worst_expected = 0;
  uint64_t mismatches = 0; // elements that are not equal (a NaN matching a NaN is equal)
  // relative <= tolerance, and no NaN.
  bool within(double tolerance) const;
};
// Throws tpu::Error when the shapes differ.
Discrepancy measure(const Tensor &got, const Tensor &expected);

// Relative tolerance of the program check (the fp32-operand run against the
// expected output): 16 * 2^-24 * (sqrt(K) + 1) with K = max(reduction_length,
// 1); 0 on an i8 array, whose arithmetic is exact.
double programTolerance(const HardwareConfig &config, const TensorInfo &output);
// Relative tolerance of the rounding check (the bf16-operand run against the
// fp32-operand run): u sqrt(K) + K 2^-24 with u = 2^-8.
double roundingTolerance(const TensorInfo &output);

struct OutputCheck {
  std::string name;
  std::vector<int64_t> shape;
  // An integer output (ArgMax's indices): it passes only when every element
  // is equal, in both runs; the tolerances are 0.
  bool exact = false;
  // The fp32-operand run (on an i8 array, the only run) against the expected.
  Discrepancy program;
  double program_tolerance = 0;
  // The hardware run against the fp32-operand run; absent on an i8 array.
  std::optional<Discrepancy> rounding;
  double rounding_tolerance = 0;
  bool pass = false;
};

// Checks output `output` of a bundle on `config`. `hardware` is the output of
// the run as the hardware computes; `reference` that of the run with fp32
// operands (nullopt on an i8 array, where the two are the same run). An
// output of an integer type is checked for equality.
OutputCheck checkOutput(const HardwareConfig &config, const TensorInfo &output,
                        const Tensor &hardware, const std::optional<Tensor> &reference,
                        const Tensor &expected);

// Checks output `output` of a run with no fp32-operand reference (a CUDA
// bundle's, whose tensor cores round their operands to bf16): `got` against
// the expected within the rounding tolerance; an integer output must be
// equal. The check is `program`; there is no `rounding`.
OutputCheck checkRoundedOutput(const TensorInfo &output, const Tensor &got, const Tensor &expected);

// Lines that cannot be misread, e.g.
//   logits [1x10]: PASS
//     program:  fp32-operand run vs expected, max error 2.4e-07 of max|expected| 3.1e+00
//               (tolerance 7.6e-06), worst [0, 3]: 1.25 vs 1.25
//     rounding: bf16 vs fp32-operand run, max error 1.9e-03 of max|expected| (tolerance
//               1.3e-02), worst [0, 7]: ...
// and for an integer output
//   indices [3, 1]: FAIL
//     program:  fp32 vs expected, exact: 1 of 3 elements differ; worst at [2, 0]: fp32 4,
//               expected 1
std::string formatCheck(const OutputCheck &check);

} // namespace tpu::runtime
