#include "tpu/runtime/Session.h"

#include "tpu/isa/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tpu::runtime {
namespace {

// The tensor type of data stored in DRAM as `dtype`.
ElementType elementTypeOf(isa::DType dtype) {
  switch (dtype) {
  case isa::DType::F32:
    return ElementType::Float32;
  case isa::DType::BF16:
    return ElementType::BFloat16;
  case isa::DType::I8:
    return ElementType::Int8;
  case isa::DType::I32:
    return ElementType::Int32;
  }
  throw Error(fmt::format("invalid dtype {}", static_cast<unsigned>(dtype)));
}

// `info`'s tensor as `dram` holds it.
Tensor decodeTensor(const TensorInfo &info, const std::vector<uint8_t> &dram) {
  Tensor tensor;
  tensor.name = info.name;
  ElementType stored = elementTypeOf(info.dtype);
  // int32 words widen to the model's int64 exactly (outputs); inputs are
  // given as they are stored.
  tensor.type = info.host_type == HostType::I64 && info.role == TensorInfo::Role::Output
                    ? ElementType::Int64
                    : stored;
  tensor.shape = info.shape;
  unsigned bytes = elementBytes(stored);
  for (uint64_t i = 0; i < info.elements(); ++i)
    tensor.values.push_back(decodeElement(stored, dram.data() + info.dram_address + i * bytes));
  return tensor;
}

} // namespace

Session::Session(Bundle bundle, std::string origin)
    : bundle_(std::move(bundle)), origin_(std::move(origin)), inputImage_(bundle_.dram_bytes) {}

Session Session::fromFile(const std::string &path) { return Session(readBundle(path), path); }

void Session::setInput(size_t index, const Tensor &tensor, const std::string &source) {
  if (index >= bundle_.inputs.size())
    throw Error(fmt::format("{}: the model has {} inputs, so there is no input {} ({})", origin_,
                            bundle_.inputs.size(), index, source));
  const TensorInfo &input = bundle_.inputs[index];
  auto fail = [&](const std::string &problem) {
    throw Error(
        fmt::format("{}: input {} '{}' ({}): {}", origin_, index, input.name, source, problem));
  };
  if (tensor.shape != input.shape)
    fail(fmt::format("shape {} differs from the model's {}", formatShape(tensor.shape),
                     formatShape(input.shape)));
  ElementType stored = elementTypeOf(input.dtype);
  // Integers the program reads as f32 (a training step's class labels).
  bool floatingPoint = isFloatingPoint(stored) && input.host_type != HostType::I64;
  if (isFloatingPoint(tensor.type) != floatingPoint)
    fail(fmt::format("the {} input needs {} data, got {}", isa::dtypeName(input.dtype),
                     floatingPoint ? "floating-point" : "integer", elementTypeName(tensor.type)));
  unsigned bytes = elementBytes(stored);
  constexpr double kExactInF32 = 16777216.0; // 2^24
  for (size_t i = 0; i < tensor.values.size(); ++i) {
    if (input.host_type == HostType::I64 && std::fabs(tensor.values[i]) > kExactInF32)
      fail(fmt::format("element {}: {} is beyond 2^24, which the program's fp32 holds exactly", i,
                       tensor.values[i]));
    try {
      encodeElement(stored, tensor.values[i], inputImage_.data() + input.dram_address + i * bytes);
    } catch (const Error &error) {
      fail(fmt::format("element {}: {}", i, error.what()));
    }
  }
}

RunReport Session::run(Backend &backend, bool commitState) {
  dram_ = inputImage_;
  RunReport report = backend.run(bundle_, dram_);
  if (commitState)
    for (const TensorInfo &output : bundle_.outputs)
      if (const TensorInfo *input = stateInput(bundle_, output))
        std::copy_n(dram_.begin() + static_cast<std::ptrdiff_t>(output.dram_address),
                    output.bytes(),
                    inputImage_.begin() + static_cast<std::ptrdiff_t>(input->dram_address));
  return report;
}

Tensor Session::input(size_t index) const {
  if (index >= bundle_.inputs.size())
    throw Error(fmt::format("{}: the model has {} inputs, so there is no input {}", origin_,
                            bundle_.inputs.size(), index));
  return decodeTensor(bundle_.inputs[index], inputImage_);
}

Tensor Session::output(size_t index) const {
  if (index >= bundle_.outputs.size())
    throw Error(fmt::format("{}: the model has {} outputs, so there is no output {}", origin_,
                            bundle_.outputs.size(), index));
  if (dram_.empty() && bundle_.dram_bytes != 0)
    throw Error(fmt::format("{}: no outputs before the first run", origin_));
  return decodeTensor(bundle_.outputs[index], dram_);
}

} // namespace tpu::runtime
