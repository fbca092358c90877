#include "tpu/runtime/Training.h"

#include "tpu/isa/Error.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h> // defines ONNX_API, then includes onnx-ml.pb.h

#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <random>

namespace tpu::runtime {
namespace {

onnx::ModelProto parseModel(const std::string &bytes, const std::string &path) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes))
    throw Error(fmt::format("{}: not an ONNX model", path));
  return model;
}

std::optional<size_t> findTensor(const std::vector<TensorInfo> &tensors, const std::string &name) {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == name)
      return i;
  return std::nullopt;
}

uint64_t cyclesOf(const RunReport &report, const Bundle &bundle) {
  return static_cast<uint64_t>(std::llround(report.device_seconds * bundle.config.clock_ghz * 1e9));
}

} // namespace

Trainer::Trainer(Session &session) : session_(session) {
  const Bundle &bundle = session.bundle();
  if (!bundle.training)
    throw Error("the bundle is no training step; compile one with tpuc MODEL.onnx --train");
  const std::string &path = bundle.training->model_path;
  std::ifstream file(path, std::ios::binary);
  if (!file)
    throw Error(fmt::format("{}: cannot open the model the training step was compiled from", path));
  modelBytes_.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  onnx::ModelProto model = parseModel(modelBytes_, path);

  // The step's roles (docs/compiler.md, Training steps): one data input
  // besides the labels and the state, the loss and (cross-entropy) the
  // correct count.
  std::optional<size_t> labels = findTensor(bundle.inputs, "labels");
  std::optional<size_t> loss = findTensor(bundle.outputs, "loss");
  std::vector<size_t> data;
  for (size_t i = 0; i < bundle.inputs.size(); ++i) {
    bool state = false;
    for (const TensorInfo &output : bundle.outputs)
      state = state || stateInput(bundle, output) == &bundle.inputs[i];
    if (!state && i != labels)
      data.push_back(i);
  }
  if (!labels || !loss || data.size() != 1)
    throw Error("the training step needs one data input, 'labels' and 'loss'; this one has "
                "another signature");
  labels_ = *labels;
  loss_ = *loss;
  data_ = data[0];
  correct_ = findTensor(bundle.outputs, "correct");
  batch_ = bundle.inputs[data_].shape.empty() ? 0 : bundle.inputs[data_].shape[0];
  if (correct_ && model.graph().output_size() > 0) {
    const auto &shape = model.graph().output(0).type().tensor_type().shape();
    if (shape.dim_size() > 0)
      classes_ = shape.dim(shape.dim_size() - 1).dim_value();
  }
  if (correct_ && classes_ <= 0)
    throw Error(fmt::format("{}: the model's output gives no class count", path));

  std::map<std::string, const onnx::TensorProto *> initializers;
  for (const onnx::TensorProto &initializer : model.graph().initializer())
    initializers[initializer.name()] = &initializer;
  for (const std::string &name : bundle.training->parameters) {
    auto found = initializers.find(name);
    if (found == initializers.end())
      throw Error(
          fmt::format("{}: no initializer '{}', which the training step trains", path, name));
    session_.setInput(*findTensor(bundle.inputs, name),
                      parseTensorProto(found->second->SerializeAsString(), path + ": " + name),
                      path);
  }
}

void Trainer::check(const Tensor &inputs, const Tensor &labels, const std::string &inputsPath,
                    const std::string &labelsPath) const {
  const Bundle &bundle = session_.bundle();
  const std::vector<int64_t> &sample = bundle.inputs[data_].shape;
  std::vector<int64_t> expected(sample.begin() + 1, sample.end());
  if (inputs.shape.size() != sample.size() ||
      !std::equal(expected.begin(), expected.end(), inputs.shape.begin() + 1))
    throw Error(fmt::format("{}: shape {} is not [samples] + the model's sample shape {}",
                            inputsPath, formatShape(inputs.shape), formatShape(expected)));
  if (!isFloatingPoint(inputs.type))
    throw Error(fmt::format("{}: samples must be floating point, got {}", inputsPath,
                            elementTypeName(inputs.type)));
  int64_t samples = inputs.shape[0];
  if (samples == 0)
    throw Error(fmt::format("{}: no samples", inputsPath));
  if (correct_) {
    if (labels.shape != std::vector<int64_t>{samples})
      throw Error(fmt::format("{}: shape {} is not [{}], one class index per sample of {}",
                              labelsPath, formatShape(labels.shape), samples, inputsPath));
    if (isFloatingPoint(labels.type))
      throw Error(fmt::format("{}: class indices must be integers, got {}", labelsPath,
                              elementTypeName(labels.type)));
    for (size_t i = 0; i < labels.values.size(); ++i)
      if (labels.values[i] < 0 || labels.values[i] >= double(classes_))
        throw Error(fmt::format("{}: label {} of sample {} is outside [0, {})", labelsPath,
                                labels.values[i], i, classes_));
  } else {
    std::vector<int64_t> target = bundle.inputs[labels_].shape;
    target[0] = samples;
    if (labels.shape != target)
      throw Error(fmt::format("{}: shape {} is not the targets' {}", labelsPath,
                              formatShape(labels.shape), formatShape(target)));
    if (!isFloatingPoint(labels.type))
      throw Error(fmt::format("{}: targets must be floating point, got {}", labelsPath,
                              elementTypeName(labels.type)));
  }
}

std::vector<size_t> Trainer::shuffled(size_t count, uint64_t seed) {
  std::vector<size_t> order(count);
  for (size_t i = 0; i < count; ++i)
    order[i] = i;
  std::mt19937_64 random(seed);
  for (size_t i = count; i > 1; --i)
    std::swap(order[i - 1], order[random() % i]);
  return order;
}

// Rows `rows` of `data` (samples along axis 0) as one batch; missing rows
// (the end of a partial batch) are `pad`.
Tensor Trainer::batchOf(const Tensor &data, const std::vector<size_t> &rows, double pad) const {
  Tensor batch;
  batch.type = data.type;
  batch.shape = data.shape;
  batch.shape[0] = batch_;
  uint64_t rowSize = data.elements() / static_cast<uint64_t>(data.shape[0]);
  batch.values.assign(static_cast<size_t>(batch_) * rowSize, pad);
  for (size_t r = 0; r < rows.size(); ++r)
    std::copy_n(data.values.begin() + static_cast<std::ptrdiff_t>(rows[r] * rowSize), rowSize,
                batch.values.begin() + static_cast<std::ptrdiff_t>(r * rowSize));
  return batch;
}

PassResult Trainer::run(Backend &backend, const Tensor &inputs, const Tensor &labels,
                        const std::vector<size_t> &order, bool commit,
                        const std::function<void(uint64_t, uint64_t)> &progress) {
  PassResult result;
  result.has_accuracy = correct_.has_value();
  auto batch = static_cast<size_t>(batch_);
  // Training leaves out a partial batch; evaluation pads it (cross-entropy).
  size_t steps = commit || !correct_ ? order.size() / batch : (order.size() + batch - 1) / batch;
  double lossSum = 0;
  uint64_t fullSteps = 0;
  for (size_t step = 0; step < steps; ++step) {
    std::vector<size_t> rows(
        order.begin() + static_cast<std::ptrdiff_t>(step * batch),
        order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), (step + 1) * batch)));
    session_.setInput(data_, batchOf(inputs, rows, 0.0), "batch");
    session_.setInput(labels_, batchOf(labels, rows, -1.0), "batch");
    result.cycles += cyclesOf(session_.run(backend, commit), session_.bundle());
    if (rows.size() == batch) {
      lossSum += session_.output(loss_).values.at(0);
      ++fullSteps;
    }
    if (correct_) {
      result.correct += static_cast<uint64_t>(session_.output(*correct_).values.at(0));
      result.samples += rows.size();
    }
    ++result.steps;
    if (progress)
      progress(step + 1, steps);
  }
  result.loss = fullSteps ? lossSum / double(fullSteps) : std::nan("");
  return result;
}

PassResult Trainer::train(Backend &backend, const Tensor &inputs, const Tensor &labels,
                          const std::vector<size_t> &order,
                          const std::function<void(uint64_t, uint64_t)> &progress) {
  return run(backend, inputs, labels, order, /*commit=*/true, progress);
}

PassResult Trainer::evaluate(Backend &backend, const Tensor &inputs, const Tensor &labels) {
  std::vector<size_t> order(static_cast<size_t>(inputs.shape[0]));
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  return run(backend, inputs, labels, order, /*commit=*/false, {});
}

void Trainer::saveModel(const std::string &path) const {
  const Bundle &bundle = session_.bundle();
  onnx::ModelProto model = parseModel(modelBytes_, bundle.training->model_path);
  std::map<std::string, onnx::TensorProto *> initializers;
  for (onnx::TensorProto &initializer : *model.mutable_graph()->mutable_initializer())
    initializers[initializer.name()] = &initializer;
  for (const std::string &name : bundle.training->parameters) {
    Tensor trained = session_.input(*findTensor(bundle.inputs, name));
    trained.name = name;
    onnx::TensorProto proto;
    if (!proto.ParseFromString(serializeTensorProto(trained)))
      throw Error(fmt::format("{}: cannot encode the trained '{}'", path, name));
    *initializers.at(name) = proto;
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file || !model.SerializeToOstream(&file) || !file.flush())
    throw Error(fmt::format("{}: cannot write the trained model", path));
}

} // namespace tpu::runtime
