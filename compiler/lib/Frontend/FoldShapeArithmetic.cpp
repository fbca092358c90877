// Shape arithmetic evaluated while importing. Exporters write shapes as
// small integer graphs (x.view(x.size(0), -1) becomes Shape -> Gather ->
// Unsqueeze -> Concat -> Reshape); shapes are static here, so when every
// input of such a node is an integer constant of rank 0 or 1 its result is
// computed now and is a constant too, which Reshape, Expand, Slice and the
// rest can read.
#include "Importer.h"

#include <algorithm>
#include <limits>
#include <set>

namespace tpu::frontend::detail {
namespace {

struct IntTensor {
  std::vector<int64_t> values;
  bool scalar; // rank 0
};

bool isIntegerType(int32_t type) {
  return type == onnx::TensorProto::INT64 || type == onnx::TensorProto::INT32;
}

// Elementwise with a scalar (or one-element) operand broadcast.
IntTensor elementwise(const std::string &op, const IntTensor &a, const IntTensor &b,
                      const Node &node) {
  size_t count = std::max(a.values.size(), b.values.size());
  if ((a.values.size() != count && a.values.size() != 1) ||
      (b.values.size() != count && b.values.size() != 1))
    node.fail("operand lengths {} and {} do not broadcast", a.values.size(), b.values.size());
  IntTensor result{{}, a.scalar && b.scalar};
  for (size_t i = 0; i < count; ++i) {
    int64_t x = a.values[a.values.size() == 1 ? 0 : i], y = b.values[b.values.size() == 1 ? 0 : i];
    if (op == "Div" && y == 0)
      node.fail("integer division by zero");
    // ONNX's integer Div truncates, as C++ does.
    int64_t value = 0;
    bool overflow = op == "Add"   ? __builtin_add_overflow(x, y, &value)
                    : op == "Sub" ? __builtin_sub_overflow(x, y, &value)
                    : op == "Mul" ? __builtin_mul_overflow(x, y, &value)
                                  : x == std::numeric_limits<int64_t>::min() && y == -1;
    if (overflow)
      node.fail("{} of {} and {} overflows int64", op, x, y);
    result.values.push_back(op == "Div" ? x / y : value);
  }
  return result;
}

} // namespace

bool Importer::foldShapeArithmetic(const Node &node) {
  static const std::set<std::string> foldable = {"Gather", "Unsqueeze", "Squeeze", "Concat",
                                                 "Slice",  "Cast",      "Add",     "Sub",
                                                 "Mul",    "Div",       "Identity"};
  const std::string &op = node.proto.op_type();
  if (!foldable.count(op) || node.proto.output_size() != 1)
    return false;
  std::vector<IntTensor> inputs;
  for (int i = 0; i < node.proto.input_size(); ++i) {
    if (!node.hasInput(i)) {
      inputs.push_back({{}, false});
      continue;
    }
    auto it = constants.find(node.proto.input(i));
    if (it == constants.end() || !isIntegerType(it->second->data_type()) ||
        it->second->dims_size() > 1)
      return false;
    inputs.push_back({tensorInts(*it->second, node.what), it->second->dims_size() == 0});
  }
  if (inputs.empty())
    return false;
  const IntTensor &x = inputs[0];
  IntTensor result = x;
  if (op == "Gather") {
    if (inputs.size() != 2)
      return false; // the tensor import reports the malformed node
    const IntTensor &indices = inputs[1];
    result = {{}, indices.scalar};
    int64_t size = x.values.size();
    for (int64_t index : indices.values) {
      if (index < -size || index >= size)
        node.fail("index {} is out of range for size {}", index, size);
      result.values.push_back(x.values[index < 0 ? index + size : index]);
    }
  } else if (op == "Unsqueeze" || op == "Squeeze") {
    // Rank 0 <-> rank 1 of one element: the only forms of rank <= 1.
    if (op == "Unsqueeze" && !x.scalar)
      return false;
    if (op == "Squeeze" && (x.scalar || x.values.size() != 1))
      return false;
    result.scalar = op == "Squeeze";
  } else if (op == "Concat") {
    result = {{}, false};
    for (const IntTensor &part : inputs)
      result.values.insert(result.values.end(), part.values.begin(), part.values.end());
  } else if (op == "Slice") {
    // Steps other than 1, and starts or ends not of one element, are
    // imported (or reported) as a tensor op.
    if (inputs.size() < 3 || inputs[1].values.size() != 1 || inputs[2].values.size() != 1 ||
        (inputs.size() > 4 && !inputs[4].values.empty() &&
         inputs[4].values != std::vector<int64_t>{1}))
      return false;
    int64_t size = x.values.size();
    auto clampIndex = [&](int64_t index) {
      return std::clamp<int64_t>(index < 0 ? index + size : index, 0, size);
    };
    int64_t start = clampIndex(inputs[1].values[0]), end = clampIndex(inputs[2].values[0]);
    result = {{x.values.begin() + start, x.values.begin() + std::max(start, end)}, false};
  } else if (op == "Cast") {
    if (!isIntegerType(static_cast<int32_t>(node.intAttr("to", 0))))
      return false;
  } else if (op != "Identity") {
    if (inputs.size() != 2)
      return false;
    result = elementwise(op, inputs[0], inputs[1], node);
  }
  auto owned = std::make_unique<onnx::TensorProto>();
  owned->set_data_type(onnx::TensorProto::INT64);
  if (!result.scalar)
    owned->add_dims(static_cast<int64_t>(result.values.size()));
  for (int64_t value : result.values)
    owned->add_int64_data(value);
  constants[node.proto.output(0)] = owned.get();
  ownedConstants.push_back(std::move(owned));
  return true;
}

} // namespace tpu::frontend::detail
