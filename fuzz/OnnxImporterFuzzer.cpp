// The ONNX importer (tpu::frontend::importOnnxBytes, what tpuc MODEL.onnx
// runs first): any bytes either import to a module that verifies or are
// rejected with tpu::Error.
//
// Random bytes seldom survive protobuf's parser, so most mutations here are
// made on the parsed model (LLVMFuzzerCustomMutator): an attribute, a shape,
// an op type, an input edge, an initializer or the opset changes, and the
// model is serialized again.
#include "FuzzHarness.h"

#include "tpu/Frontend/OnnxImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <iterator>
#include <limits>
#include <random>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace {

// Values at the edges of what the importer checks: signs, zero, one, sizes
// just past a small shape, and the extremes.
constexpr int64_t kInterestingInts[] = {0,  1,  -1, 2,       3,         4,         7,
                                        -2, -5, 64, 1 << 16, INT32_MAX, INT64_MIN, INT64_MAX};
constexpr float kInterestingFloats[] = {0.0f,
                                        1.0f,
                                        -1.0f,
                                        0.5f,
                                        6.0f,
                                        1e-30f,
                                        1e30f,
                                        -1e30f,
                                        std::numeric_limits<float>::infinity(),
                                        std::numeric_limits<float>::quiet_NaN()};
// Operators the importer knows and some it does not; a node gets one of
// these instead of its own, keeping its inputs and attributes.
constexpr const char *kOpTypes[] = {"Add",
                                    "Sub",
                                    "Mul",
                                    "Div",
                                    "MatMul",
                                    "Gemm",
                                    "Relu",
                                    "Clip",
                                    "LeakyRelu",
                                    "Erf",
                                    "Sqrt",
                                    "Max",
                                    "Min",
                                    "Conv",
                                    "MaxPool",
                                    "AveragePool",
                                    "GlobalAveragePool",
                                    "BatchNormalization",
                                    "LayerNormalization",
                                    "Softmax",
                                    "ReduceMean",
                                    "ReduceSum",
                                    "Identity",
                                    "Reshape",
                                    "Flatten",
                                    "Transpose",
                                    "Concat",
                                    "Slice",
                                    "Pad",
                                    "Squeeze",
                                    "Gather",
                                    "Sigmoid",
                                    "Split"};

template <typename T> T pick(std::mt19937_64 &random, const T *items, size_t count) {
  return items[std::uniform_int_distribution<size_t>(0, count - 1)(random)];
}

int64_t mutateInt(std::mt19937_64 &random, int64_t value) {
  if (random() % 2)
    return pick(random, kInterestingInts, std::size(kInterestingInts));
  // One step up or down, wrapping around at the extremes.
  return static_cast<int64_t>(static_cast<uint64_t>(value) + (random() % 2 ? 1 : ~uint64_t{0}));
}

// One structural change; false when the model has nothing of the kind picked.
bool mutateModel(onnx::ModelProto &model, std::mt19937_64 &random) {
  onnx::GraphProto &graph = *model.mutable_graph();
  auto index = [&](int size) { return static_cast<int>(random() % static_cast<unsigned>(size)); };
  switch (random() % 7) {
  case 0: { // an integer attribute or one element of an integer list
    if (graph.node_size() == 0)
      return false;
    onnx::NodeProto &node = *graph.mutable_node(index(graph.node_size()));
    if (node.attribute_size() == 0)
      return false;
    onnx::AttributeProto &attribute = *node.mutable_attribute(index(node.attribute_size()));
    if (attribute.ints_size() > 0) {
      int element = index(attribute.ints_size());
      attribute.set_ints(element, mutateInt(random, attribute.ints(element)));
    } else if (attribute.has_f()) {
      attribute.set_f(pick(random, kInterestingFloats, std::size(kInterestingFloats)));
    } else {
      attribute.set_i(mutateInt(random, attribute.i()));
    }
    return true;
  }
  case 1: { // a graph input's dimension
    if (graph.input_size() == 0)
      return false;
    auto &shape = *graph.mutable_input(index(graph.input_size()))
                       ->mutable_type()
                       ->mutable_tensor_type()
                       ->mutable_shape();
    if (shape.dim_size() == 0 || random() % 4 == 0) {
      shape.add_dim()->set_dim_value(mutateInt(random, 1));
      return true;
    }
    auto &dim = *shape.mutable_dim(index(shape.dim_size()));
    dim.set_dim_value(mutateInt(random, dim.dim_value()));
    return true;
  }
  case 2: { // a node's operator
    if (graph.node_size() == 0)
      return false;
    graph.mutable_node(index(graph.node_size()))
        ->set_op_type(pick(random, kOpTypes, std::size(kOpTypes)));
    return true;
  }
  case 3: { // a node's input: another value of the graph, or none
    if (graph.node_size() == 0)
      return false;
    onnx::NodeProto &node = *graph.mutable_node(index(graph.node_size()));
    std::vector<std::string> names{""};
    for (const auto &input : graph.input())
      names.push_back(input.name());
    for (const auto &tensor : graph.initializer())
      names.push_back(tensor.name());
    for (const auto &other : graph.node())
      names.insert(names.end(), other.output().begin(), other.output().end());
    std::string name = names[random() % names.size()];
    if (node.input_size() == 0 || random() % 4 == 0)
      node.add_input(name);
    else
      node.set_input(index(node.input_size()), name);
    return true;
  }
  case 4: { // an initializer's shape, or its data cut short
    if (graph.initializer_size() == 0)
      return false;
    onnx::TensorProto &tensor = *graph.mutable_initializer(index(graph.initializer_size()));
    if (tensor.dims_size() > 0 && random() % 2) {
      int dim = index(tensor.dims_size());
      tensor.set_dims(dim, mutateInt(random, tensor.dims(dim)));
    } else if (tensor.float_data_size() > 0) {
      tensor.mutable_float_data()->Truncate(index(tensor.float_data_size()));
    } else if (tensor.int64_data_size() > 0) {
      tensor.mutable_int64_data()->Truncate(index(tensor.int64_data_size()));
    } else if (!tensor.raw_data().empty()) {
      tensor.mutable_raw_data()->resize(static_cast<size_t>(index(tensor.raw_data().size())));
    } else {
      return false;
    }
    return true;
  }
  case 5: { // the opset
    if (model.opset_import_size() == 0)
      return false;
    model.mutable_opset_import(0)->set_version(static_cast<int64_t>(random() % 20));
    return true;
  }
  default: { // a node removed or repeated
    if (graph.node_size() == 0)
      return false;
    int node = index(graph.node_size());
    if (random() % 2) {
      graph.mutable_node()->DeleteSubrange(node, 1);
    } else {
      onnx::NodeProto copy = graph.node(node);
      *graph.add_node() = copy;
    }
    return true;
  }
  }
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t maxSize,
                                          unsigned int seed) {
  std::mt19937_64 random(seed);
  onnx::ModelProto model;
  // One mutation in eight stays on the bytes: it reaches the parser's own
  // corners, and the models no structural change can make.
  if (random() % 8 != 0 && model.ParseFromArray(data, static_cast<int>(size))) {
    for (int attempt = 0; attempt < 4; ++attempt)
      if (mutateModel(model, random)) {
        std::string bytes = model.SerializeAsString();
        if (bytes.size() <= maxSize) {
          std::memcpy(data, bytes.data(), bytes.size());
          return bytes.size();
        }
        break;
      }
  }
  return LLVMFuzzerMutate(data, size, maxSize);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A context per input: one shared context would keep every input's
  // constants and types alive and grow until libFuzzer's memory limit.
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  // The importer turns a failed verification into tpu::Error; the
  // diagnostics behind it would only slow the fuzzer down.
  mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic &) { return mlir::success(); });
  tpu::fuzz::rejectOnlyWithError(
      [&] { tpu::frontend::importOnnxBytes(tpu::fuzz::asText(data, size), "fuzz.onnx", context); });
  return 0;
}
