// Host tensors and their files: ONNX TensorProto (.pb), as written by
// onnx.numpy_helper.from_array or ONNX's test data sets.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tpu::runtime {

// The element types the runtime reads and writes; the values are ONNX's
// TensorProto.DataType codes.
enum class ElementType : int32_t {
  Float32 = 1,
  UInt8 = 2,
  Int8 = 3,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  Float64 = 11,
  BFloat16 = 16,
};

std::string_view elementTypeName(ElementType type);
bool isFloatingPoint(ElementType type);
unsigned elementBytes(ElementType type);
// One little-endian element, as in raw_data and in DRAM.
double decodeElement(ElementType type, const uint8_t *bytes);
// Floating-point types round to nearest even; integer types throw tpu::Error
// unless the value is an integer in range.
void encodeElement(ElementType type, double value, uint8_t *bytes);

struct Tensor {
  std::string name;
  ElementType type = ElementType::Float32;
  std::vector<int64_t> shape;
  // Row-major. A double holds every value of every ElementType exactly
  // (int64 is limited to +-2^53 on reading).
  std::vector<double> values;

  uint64_t elements() const;
};

// "[1, 3, 224, 224]"
std::string formatShape(const std::vector<int64_t> &shape);

// Reads raw_data as well as the typed fields (float_data, int32_data,
// int64_data, double_data). Throws tpu::Error naming `origin` on malformed
// data or an unsupported type.
Tensor parseTensorProto(const std::string &bytes, const std::string &origin);
// Writes raw_data (little-endian). Throws tpu::Error when a value does not
// fit the tensor's type.
std::string serializeTensorProto(const Tensor &tensor);
Tensor readTensor(const std::string &path);
void writeTensor(const Tensor &tensor, const std::string &path);

} // namespace tpu::runtime
