// Models older than the importer's opsets go through ONNX's own version
// converter, so old operator forms are upgraded by ONNX's adapters rather
// than re-implemented by hand. Built apart from the importer: libonnx's
// converter headers need RTTI, which the MLIR code is built without.
#include "UpgradeOpset.h"

#include "TensorElements.h"

#include "tpu/isa/Error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <set>

namespace tpu::frontend {
namespace {

// The converter trusts its input: a graph output that nothing makes crashes
// it (fuzz/corpus/onnx-importer/regression-upgrade-*.onnx), and ONNX's
// checker lets that through.
void checkOutputsAreMade(const onnx::GraphProto &graph, const std::string &path) {
  std::set<std::string> made;
  for (const onnx::ValueInfoProto &input : graph.input())
    made.insert(input.name());
  for (const onnx::TensorProto &initializer : graph.initializer())
    made.insert(initializer.name());
  for (const onnx::NodeProto &node : graph.node())
    made.insert(node.output().begin(), node.output().end());
  for (const onnx::ValueInfoProto &output : graph.output())
    if (!made.count(output.name()))
      throw Error(fmt::format("{}: output '{}' is made by no node", path, output.name()));
}

// Bytes of one element of a tensor of `dataType` in raw_data, and the
// number of values its typed field holds; 0 for strings and unknown types.
struct ElementLayout {
  size_t rawBytes;
  int fieldValues;
};

ElementLayout layoutOf(const onnx::TensorProto &tensor) {
  using T = onnx::TensorProto;
  switch (tensor.data_type()) {
  case T::FLOAT:
    return {4, tensor.float_data_size()};
  case T::DOUBLE:
    return {8, tensor.double_data_size()};
  case T::INT64:
    return {8, tensor.int64_data_size()};
  case T::UINT64:
    return {8, tensor.uint64_data_size()};
  case T::UINT32:
    return {4, tensor.uint64_data_size()};
  case T::INT32:
    return {4, tensor.int32_data_size()};
  case T::INT16:
  case T::UINT16:
  case T::FLOAT16:
  case T::BFLOAT16:
    return {2, tensor.int32_data_size()};
  case T::INT8:
  case T::UINT8:
  case T::BOOL:
    return {1, tensor.int32_data_size()};
  default:
    return {0, 0};
  }
}

// A tensor's data must be where and as long as its shape says: libonnx's
// shape inference and adapters read it unchecked (a short raw_data crashed
// a Reshape's inference: fuzz/corpus/onnx-importer/regression-upgrade-short-raw-data.onnx).
void checkTensor(const onnx::TensorProto &tensor, const std::string &where) {
  if (tensor.has_data_location() && tensor.data_location() == onnx::TensorProto::EXTERNAL)
    throw Error(fmt::format("{}: tensor '{}': external tensor data is not supported", where,
                            tensor.name()));
  auto count =
      uint64_t(tensorElements(tensor, fmt::format("{}: tensor '{}'", where, tensor.name())));
  ElementLayout layout = layoutOf(tensor);
  if (layout.rawBytes == 0)
    return; // strings and types the importer refuses later
  if (tensor.has_raw_data() ? tensor.raw_data().size() != count * layout.rawBytes
                            : uint64_t(layout.fieldValues) != count)
    throw Error(fmt::format("{}: tensor '{}': its data does not match its shape [{}]", where,
                            tensor.name(), fmt::join(tensor.dims(), ", ")));
}

// Every tensor of the graph and of the graphs inside its nodes.
void checkTensors(const onnx::GraphProto &graph, const std::string &path) {
  for (const onnx::TensorProto &initializer : graph.initializer())
    checkTensor(initializer, path);
  for (const onnx::NodeProto &node : graph.node())
    for (const onnx::AttributeProto &attribute : node.attribute()) {
      std::string where = fmt::format("{}: node '{}' ({})", path, node.name(), node.op_type());
      if (attribute.has_t())
        checkTensor(attribute.t(), where);
      for (const onnx::TensorProto &tensor : attribute.tensors())
        checkTensor(tensor, where);
      if (attribute.has_g())
        checkTensors(attribute.g(), path);
      for (const onnx::GraphProto &subgraph : attribute.graphs())
        checkTensors(subgraph, path);
    }
}

// The rank of `name` as the shapes inferred for `graph` give it, or -1.
int rankOf(const onnx::GraphProto &graph, const std::string &name) {
  for (const auto *values : {&graph.input(), &graph.value_info()})
    for (const onnx::ValueInfoProto &value : *values)
      if (value.name() == name && value.type().tensor_type().has_shape())
        return value.type().tensor_type().shape().dim_size();
  for (const onnx::TensorProto &initializer : graph.initializer())
    if (initializer.name() == name)
      return initializer.dims_size();
  return -1;
}

// libonnx's shape inference for the old Gemm reads dimension 1 of both
// operands without checking their rank, so a Gemm of vectors crashes it
// (fuzz/corpus/onnx-importer/regression-upgrade-gemm-of-vectors.onnx). Each
// Gemm's operand ranks are checked first, with the shapes inferred for the
// nodes before it (a model's nodes are in order: ONNX's checker says so).
void checkGemmOperandsAreMatrices(const onnx::ModelProto &model, const std::string &path) {
  const onnx::GraphProto &graph = model.graph();
  for (int index = 0; index < graph.node_size(); ++index) {
    const onnx::NodeProto &gemm = graph.node(index);
    if (gemm.op_type() != "Gemm" || gemm.input_size() < 2)
      continue;
    onnx::ModelProto before = model;
    onnx::GraphProto &prefix = *before.mutable_graph();
    prefix.mutable_node()->DeleteSubrange(index, graph.node_size() - index);
    prefix.clear_output();
    onnx::shape_inference::InferShapes(before);
    for (int operand = 0; operand < 2; ++operand) {
      int rank = rankOf(prefix, gemm.input(operand));
      if (rank != -1 && rank != 2)
        throw Error(fmt::format("{}: node '{}' (Gemm): input '{}' has rank {}; Gemm multiplies "
                                "matrices",
                                path, gemm.name(), gemm.input(operand), rank));
    }
  }
}

} // namespace

onnx::ModelProto upgradeOpset(const onnx::ModelProto &model, int target, const std::string &path) {
  checkOutputsAreMade(model.graph(), path);
  checkTensors(model.graph(), path);
  try {
    onnx::checker::check_model(model);
    checkGemmOperandsAreMatrices(model, path);
    // The adapters read operand shapes (Gemm's, Softmax's): inferred first,
    // as python3-onnx's convert_version does.
    onnx::ModelProto inferred = model;
    onnx::shape_inference::InferShapes(inferred);
    return onnx::version_conversion::ConvertVersion(inferred, target);
  } catch (const Error &) {
    throw; // ours, already one line naming the problem
  } catch (const std::exception &error) {
    // The converter's messages span lines; the first says what failed.
    std::string message = error.what();
    message = message.substr(0, message.find('\n'));
    throw Error(fmt::format("{}: ONNX's version converter cannot upgrade the model to opset {}: {}",
                            path, target, message));
  }
}

} // namespace tpu::frontend
