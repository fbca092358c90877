// Training on a step bundle (tpuc --train): the parameters start as the
// model's initializers and stay in simulated DRAM from step to step (state,
// Session::run); batches of samples go in, the loss and the correct count
// come out; the trained parameters go back into the model on request.
#pragma once

#include "tpu/runtime/Backend.h"
#include "tpu/runtime/Session.h"
#include "tpu/runtime/Tensor.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tpu::runtime {

// Loss and accuracy over the batches of one pass through a data set.
struct PassResult {
  double loss = 0;      // mean of the steps' losses over full batches
  uint64_t correct = 0; // rows whose argmax is the label (cross-entropy)
  uint64_t samples = 0; // rows counted in `correct`
  uint64_t steps = 0;
  uint64_t cycles = 0; // simulated, all steps
  bool has_accuracy = false;
  double accuracy() const { return samples ? double(correct) / double(samples) : 0.0; }
};

class Trainer {
public:
  // Checks that the bundle is a training step and sets its parameters from
  // the model it names (bundle.training.model_path); optimizer buffers
  // start at zero. Errors are one line.
  explicit Trainer(Session &session);

  int64_t batch() const { return batch_; }
  bool crossEntropy() const { return correct_.has_value(); }
  // Checks a data set (`inputs`: samples along the first axis; `labels`:
  // int64 class indices in [0, classes) for cross-entropy, float targets for
  // MSE); one-line errors naming the files.
  void check(const Tensor &inputs, const Tensor &labels, const std::string &inputsPath,
             const std::string &labelsPath) const;
  // One epoch of steps over the samples in `order` (full batches; the rest
  // is left out), updating the parameters. `progress(step, steps)` after
  // each step.
  PassResult train(Backend &backend, const Tensor &inputs, const Tensor &labels,
                   const std::vector<size_t> &order,
                   const std::function<void(uint64_t, uint64_t)> &progress = {});
  // The loss and accuracy of the current parameters, which stay as they
  // are: every step runs without committing its state. The last, partial
  // batch is padded with rows labelled -1, which no argmax matches, so the
  // accuracy counts every sample; the loss is that of the full batches.
  PassResult evaluate(Backend &backend, const Tensor &inputs, const Tensor &labels);
  // The model with its trained initializers, as an ONNX file.
  void saveModel(const std::string &path) const;

  // 0, 1, ..., count - 1 shuffled by a Fisher-Yates shuffle on a 64-bit
  // Mersenne Twister seeded with `seed` (the same order on every platform).
  static std::vector<size_t> shuffled(size_t count, uint64_t seed);

private:
  Tensor batchOf(const Tensor &data, const std::vector<size_t> &rows, double pad) const;
  PassResult run(Backend &backend, const Tensor &inputs, const Tensor &labels,
                 const std::vector<size_t> &order, bool commit,
                 const std::function<void(uint64_t, uint64_t)> &progress);

  Session &session_;
  std::string modelBytes_;
  size_t data_ = 0, labels_ = 0, loss_ = 0;
  std::optional<size_t> correct_;
  int64_t batch_ = 0;
  int64_t classes_ = 0;
};

} // namespace tpu::runtime
