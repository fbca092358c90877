// Running a bundle on a backend: place inputs, run, fetch outputs.
#pragma once

#include "tpu/isa/Bundle.h"
#include "tpu/runtime/Backend.h"
#include "tpu/runtime/Tensor.h"

#include <string>
#include <vector>

namespace tpu::runtime {

class Session {
public:
  // `origin` (usually the bundle's path) prefixes error messages.
  Session(Bundle bundle, std::string origin);
  static Session fromFile(const std::string &path);

  const Bundle &bundle() const { return bundle_; }

  // Converts the tensor to input `index`'s DRAM type and places it. Floating
  // point tensors feed f32 / bf16 inputs (bf16 rounds to nearest even),
  // integer tensors i8 / i32 inputs (values must fit). Throws tpu::Error
  // naming the input and `source` (e.g. the tensor's file) on a shape or type
  // mismatch. Inputs never set are zero.
  void setInput(size_t index, const Tensor &tensor, const std::string &source);
  // Runs with the inputs set so far; each run starts from the same inputs,
  // except state (a training step's parameters and optimizer buffers): with
  // `commitState`, each state output's DRAM region is copied over its input's
  // after the run, DRAM to DRAM, so that the next run reads the updated
  // values without their passing through the host. Without it (evaluating
  // on held-out data) the state stays as it was.
  RunReport run(Backend &backend, bool commitState = true);
  // Output `index` of the last run, named and shaped as in the bundle, typed
  // as stored in DRAM (f32, bf16, i8 or i32).
  Tensor output(size_t index) const;
  // Input `index` as the next run will read it (for state: its current
  // value), typed as stored in DRAM.
  Tensor input(size_t index) const;

private:
  Bundle bundle_;
  std::string origin_;
  std::vector<uint8_t> inputImage_; // DRAM holding the inputs and zeros
  std::vector<uint8_t> dram_;       // DRAM after the last run
};

} // namespace tpu::runtime
