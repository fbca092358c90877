// ONNX TensorProto reading and writing.
#include "RuntimeTestUtil.h"

#include "tpu/isa/Error.h"

#include <onnx/onnx_pb.h>

#include <cmath>

namespace tpu::runtime::test {
namespace {

TEST(TensorProto, RawDataRoundTripsEveryType) {
  const std::vector<std::pair<ElementType, std::vector<double>>> cases = {
      {ElementType::Float32, {1.5, -0.0, 3.4028234663852886e38, std::ldexp(1.0, -149)}},
      {ElementType::Float64, {0.1, -1e300, 5e-324, 2.0}},
      {ElementType::BFloat16, {1.0, -2.5, 0.0078125, 3.3895313892515355e38}},
      {ElementType::UInt8, {0, 1, 128, 255}},
      {ElementType::Int8, {-128, -1, 0, 127}},
      {ElementType::Int16, {-32768, -2, 300, 32767}},
      {ElementType::Int32, {-2147483648.0, -7, 65536, 2147483647.0}},
      {ElementType::Int64, {-9007199254740992.0, -1, 1e15, 9007199254740992.0}},
  };
  for (const auto &[type, values] : cases) {
    Tensor tensor{"t", type, {2, 2}, values};
    Tensor parsed = parseTensorProto(serializeTensorProto(tensor), "memory");
    EXPECT_EQ(parsed.name, "t");
    EXPECT_EQ(parsed.type, type);
    EXPECT_EQ(parsed.shape, tensor.shape);
    EXPECT_EQ(parsed.values, values) << elementTypeName(type);
  }
}

TEST(TensorProto, ReadsTypedFields) {
  onnx::TensorProto floats;
  floats.set_data_type(onnx::TensorProto::FLOAT);
  floats.add_dims(3);
  for (float v : {1.0f, -2.0f, 0.25f})
    floats.add_float_data(v);
  EXPECT_EQ(parseTensorProto(floats.SerializeAsString(), "f").values,
            (std::vector<double>{1.0, -2.0, 0.25}));

  onnx::TensorProto ints;
  ints.set_data_type(onnx::TensorProto::INT8);
  ints.add_dims(1);
  ints.add_dims(2);
  ints.add_int32_data(-128);
  ints.add_int32_data(127);
  Tensor int8 = parseTensorProto(ints.SerializeAsString(), "i");
  EXPECT_EQ(int8.type, ElementType::Int8);
  EXPECT_EQ(int8.shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(int8.values, (std::vector<double>{-128, 127}));

  onnx::TensorProto longs;
  longs.set_data_type(onnx::TensorProto::INT64);
  longs.add_dims(2);
  longs.add_int64_data(-5);
  longs.add_int64_data(1ll << 40);
  EXPECT_EQ(parseTensorProto(longs.SerializeAsString(), "l").values,
            (std::vector<double>{-5, std::ldexp(1.0, 40)}));

  onnx::TensorProto doubles;
  doubles.set_data_type(onnx::TensorProto::DOUBLE);
  doubles.add_double_data(0.1); // no dims: a scalar
  Tensor scalar = parseTensorProto(doubles.SerializeAsString(), "d");
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(scalar.values, (std::vector<double>{0.1}));

  onnx::TensorProto halves;
  halves.set_data_type(onnx::TensorProto::BFLOAT16);
  halves.add_dims(2);
  halves.add_int32_data(0x3fc0); // 1.5
  halves.add_int32_data(0xc000); // -2
  EXPECT_EQ(parseTensorProto(halves.SerializeAsString(), "b").values,
            (std::vector<double>{1.5, -2.0}));
}

void expectParseError(const onnx::TensorProto &proto, const std::string &problem) {
  try {
    parseTensorProto(proto.SerializeAsString(), "in.pb");
    FAIL() << "expected: " << problem;
  } catch (const Error &error) {
    EXPECT_EQ(std::string(error.what()), "in.pb: " + problem);
  }
}

TEST(TensorProto, RejectsMalformedTensors) {
  onnx::TensorProto proto;
  proto.set_data_type(onnx::TensorProto::FLOAT);
  proto.add_dims(2);
  proto.set_raw_data(std::string(7, '\0'));
  expectParseError(proto, "raw_data has 7 bytes; 2 float32 elements need 8");

  proto.clear_raw_data();
  proto.add_float_data(1.0f);
  expectParseError(proto, "shape [2] needs 2 values, got 1");

  proto.set_dims(0, -1);
  expectParseError(proto, "negative dimension -1");

  proto.set_dims(0, 1ll << 40);
  proto.add_dims(1ll << 40);
  expectParseError(proto, "shape [1099511627776, 1099511627776] has more elements than the "
                          "file has bytes");

  onnx::TensorProto strings;
  strings.set_data_type(onnx::TensorProto::STRING);
  expectParseError(strings, "unsupported data_type 8");

  onnx::TensorProto wide;
  wide.set_data_type(onnx::TensorProto::INT8);
  wide.add_int32_data(200);
  expectParseError(wide, "value 200 is out of range for int8");

  EXPECT_THROW(parseTensorProto("\xff\xff\xff", "junk"), Error);
}

TEST(TensorProto, WritingRejectsValuesTheTypeCannotHold) {
  EXPECT_THROW(serializeTensorProto({"t", ElementType::Int8, {1}, {128}}), Error);
  EXPECT_THROW(serializeTensorProto({"t", ElementType::Int32, {1}, {0.5}}), Error);
  EXPECT_THROW(serializeTensorProto({"t", ElementType::Float32, {3}, {1, 2}}), Error);
  // Floating-point types round instead.
  Tensor rounded = parseTensorProto(
      serializeTensorProto({"t", ElementType::BFloat16, {1}, {1.0 + 1.0 / 256}}), "memory");
  EXPECT_EQ(rounded.values, (std::vector<double>{1.0}));
}

TEST(TensorProto, FileRoundTripAndMissingFile) {
  ScratchDirectory directory;
  Tensor tensor = floatTensor("input", {2, 3}, {1, 2, 3, -4, 5.5, 6});
  writeTensor(tensor, directory.file("t.pb"));
  Tensor read = readTensor(directory.file("t.pb"));
  EXPECT_EQ(read.values, tensor.values);
  EXPECT_EQ(read.shape, tensor.shape);
  try {
    readTensor(directory.file("missing.pb"));
    FAIL();
  } catch (const Error &error) {
    EXPECT_EQ(std::string(error.what()),
              directory.file("missing.pb") + ": cannot read: No such file or directory");
  }
}

} // namespace
} // namespace tpu::runtime::test
