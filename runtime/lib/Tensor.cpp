#include "tpu/runtime/Tensor.h"

#include "tpu/isa/Error.h"
#include "tpu/isa/LittleEndian.h"
#include "tpu/isa/Numerics.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/onnx_pb.h> // defines ONNX_API, then includes onnx-ml.pb.h

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

namespace tpu::runtime {
namespace {

struct TypeInfo {
  ElementType type;
  std::string_view name;
  unsigned bytes;
  bool floatingPoint;
  double min; // integer types: the representable range
  double max;
};

constexpr double kMaxExactInt64 = 9007199254740992.0; // 2^53

constexpr TypeInfo kTypes[] = {
    {ElementType::Float32, "float32", 4, true, 0, 0},
    {ElementType::UInt8, "uint8", 1, false, 0, 255},
    {ElementType::Int8, "int8", 1, false, -128, 127},
    {ElementType::Int16, "int16", 2, false, -32768, 32767},
    {ElementType::Int32, "int32", 4, false, -2147483648.0, 2147483647.0},
    {ElementType::Int64, "int64", 8, false, -kMaxExactInt64, kMaxExactInt64},
    {ElementType::Float64, "float64", 8, true, 0, 0},
    {ElementType::BFloat16, "bfloat16", 2, true, 0, 0},
};

const TypeInfo *findType(int32_t code) {
  for (const TypeInfo &info : kTypes)
    if (static_cast<int32_t>(info.type) == code)
      return &info;
  return nullptr;
}

const TypeInfo &typeInfo(ElementType type) {
  const TypeInfo *info = findType(static_cast<int32_t>(type));
  if (!info)
    throw Error(fmt::format("invalid element type {}", static_cast<int32_t>(type)));
  return *info;
}

double decode(const TypeInfo &type, const uint8_t *bytes) {
  uint64_t bits = readLittleEndian(bytes, type.bytes);
  switch (type.type) {
  case ElementType::Float32:
    return bitsFloat(static_cast<uint32_t>(bits));
  case ElementType::Float64: {
    double value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  }
  case ElementType::BFloat16:
    return bf16ToFloat(static_cast<uint16_t>(bits));
  case ElementType::UInt8:
    return static_cast<double>(bits);
  case ElementType::Int8:
  case ElementType::Int16:
  case ElementType::Int32:
  case ElementType::Int64: {
    unsigned unused = 64 - 8 * type.bytes; // sign-extend from the element's width
    return static_cast<double>(static_cast<int64_t>(bits << unused) >> unused);
  }
  }
  throw Error("unreachable element type");
}

uint64_t bitsOf(const TypeInfo &type, double value) {
  switch (type.type) {
  case ElementType::Float32:
    return floatBits(static_cast<float>(value));
  case ElementType::Float64: {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
  }
  case ElementType::BFloat16:
    return floatToBF16(static_cast<float>(value));
  default:
    if (!(value >= type.min && value <= type.max) || std::trunc(value) != value)
      throw Error(fmt::format("value {} does not fit {}", value, type.name));
    return static_cast<uint64_t>(static_cast<int64_t>(value));
  }
}

void encode(const TypeInfo &type, double value, uint8_t *bytes) {
  writeLittleEndian(bytes, type.bytes, bitsOf(type, value));
}

template <typename Repeated>
std::vector<double> typedValues(const Repeated &field, const TypeInfo &type) {
  std::vector<double> values;
  values.reserve(static_cast<size_t>(field.size()));
  for (auto value : field) {
    auto converted = static_cast<double>(value);
    if (!type.floatingPoint && !(converted >= type.min && converted <= type.max))
      throw Error(fmt::format("value {} is out of range for {}", value, type.name));
    values.push_back(converted);
  }
  return values;
}

std::vector<double> valuesOf(const onnx::TensorProto &proto, const TypeInfo &type,
                             uint64_t elements) {
  if (proto.has_raw_data()) {
    const std::string &raw = proto.raw_data();
    if (raw.size() != elements * type.bytes)
      throw Error(fmt::format("raw_data has {} bytes; {} {} elements need {}", raw.size(), elements,
                              type.name, elements * type.bytes));
    std::vector<double> values;
    values.reserve(elements);
    for (uint64_t i = 0; i < elements; ++i)
      values.push_back(
          decode(type, reinterpret_cast<const uint8_t *>(raw.data()) + i * type.bytes));
    return values;
  }
  switch (type.type) {
  case ElementType::Float32:
    return typedValues(proto.float_data(), type);
  case ElementType::Float64:
    return typedValues(proto.double_data(), type);
  case ElementType::Int64:
    return typedValues(proto.int64_data(), type);
  case ElementType::BFloat16: {
    // int32_data holds the bf16 bit patterns.
    std::vector<double> values;
    for (int32_t bits : proto.int32_data())
      values.push_back(bf16ToFloat(static_cast<uint16_t>(bits)));
    return values;
  }
  default:
    return typedValues(proto.int32_data(), type);
  }
}

} // namespace

std::string_view elementTypeName(ElementType type) { return typeInfo(type).name; }

bool isFloatingPoint(ElementType type) { return typeInfo(type).floatingPoint; }

unsigned elementBytes(ElementType type) { return typeInfo(type).bytes; }

double decodeElement(ElementType type, const uint8_t *bytes) {
  return decode(typeInfo(type), bytes);
}

void encodeElement(ElementType type, double value, uint8_t *bytes) {
  encode(typeInfo(type), value, bytes);
}

uint64_t Tensor::elements() const {
  uint64_t count = 1;
  for (int64_t dim : shape)
    count *= static_cast<uint64_t>(dim);
  return count;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

Tensor parseTensorProto(const std::string &bytes, const std::string &origin) {
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes))
    throw Error(fmt::format("{}: not an ONNX TensorProto", origin));
  try {
    const TypeInfo *type = findType(proto.data_type());
    if (!type)
      throw Error(fmt::format("unsupported data_type {}", proto.data_type()));
    if (proto.data_location() == onnx::TensorProto::EXTERNAL)
      throw Error("external data is not supported");
    if (proto.has_segment())
      throw Error("segmented tensors are not supported");
    Tensor tensor;
    tensor.name = proto.name();
    tensor.type = type->type;
    uint64_t elements = 1;
    for (int64_t dim : proto.dims()) {
      if (dim < 0)
        throw Error(fmt::format("negative dimension {}", dim));
      // Every element takes at least a byte of the file; checking that as we
      // go also keeps the product from overflowing.
      if (dim != 0 && elements > bytes.size() / static_cast<uint64_t>(dim))
        throw Error(fmt::format("shape {} has more elements than the file has bytes",
                                formatShape({proto.dims().begin(), proto.dims().end()})));
      elements *= static_cast<uint64_t>(dim);
      tensor.shape.push_back(dim);
    }
    tensor.values = valuesOf(proto, *type, elements);
    if (tensor.values.size() != elements)
      throw Error(fmt::format("shape {} needs {} values, got {}", formatShape(tensor.shape),
                              elements, tensor.values.size()));
    return tensor;
  } catch (const Error &error) {
    throw Error(fmt::format("{}: {}", origin, error.what()));
  }
}

std::string serializeTensorProto(const Tensor &tensor) {
  const TypeInfo &type = typeInfo(tensor.type);
  if (tensor.values.size() != tensor.elements())
    throw Error(fmt::format("tensor '{}': shape {} needs {} values, got {}", tensor.name,
                            formatShape(tensor.shape), tensor.elements(), tensor.values.size()));
  onnx::TensorProto proto;
  proto.set_name(tensor.name);
  proto.set_data_type(static_cast<int32_t>(tensor.type));
  for (int64_t dim : tensor.shape)
    proto.add_dims(dim);
  std::vector<uint8_t> raw(tensor.values.size() * type.bytes);
  for (size_t i = 0; i < tensor.values.size(); ++i) {
    try {
      encode(type, tensor.values[i], raw.data() + i * type.bytes);
    } catch (const Error &error) {
      throw Error(fmt::format("tensor '{}' element {}: {}", tensor.name, i, error.what()));
    }
  }
  proto.set_raw_data(raw.data(), raw.size());
  return proto.SerializeAsString();
}

Tensor readTensor(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    throw Error(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return parseTensorProto(bytes.str(), path);
}

void writeTensor(const Tensor &tensor, const std::string &path) {
  std::string bytes = serializeTensorProto(tensor);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file || !file.write(bytes.data(), static_cast<std::streamsize>(bytes.size())) ||
      !file.flush())
    throw Error(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
}

} // namespace tpu::runtime
