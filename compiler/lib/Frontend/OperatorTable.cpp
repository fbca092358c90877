// The importer's operator table: each ONNX operator and the function that
// imports it (families with a table of their own are added from theirs),
// and the import of one node through it.
#include "Importer.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <memory>

namespace tpu::frontend::detail {
namespace {

using ImportFn = std::function<Outputs(Importer &, const Node &)>;

} // namespace

namespace {

// Binary operators with numpy broadcasting.
template <typename TosaOp> ImportFn elementwise(int minInputs, int maxInputs) {
  return [=](Importer &im, const Node &n) -> Outputs {
    return im.importElementwise<TosaOp>(n, minInputs, maxInputs);
  };
}

// The opset-independent part of each operator's contract; opset differences
// are handled inside the import functions (`opset`).
const std::map<std::string, ImportFn> &operatorTable() {
  using namespace mlir::tosa;
  auto one = [](Tensor (Importer::*fn)(const Node &)) -> ImportFn {
    return [fn](Importer &im, const Node &n) -> Outputs { return (im.*fn)(n); };
  };
  static const std::map<std::string, ImportFn> table = {
      {"Gemm", one(&Importer::importGemm)},
      {"MatMul", one(&Importer::importMatMul)},
      {"Add", elementwise<AddOp>(2, 2)},
      {"Sub", elementwise<SubOp>(2, 2)},
      {"Mul", elementwise<MulOp>(2, 2)},
      {"Max", elementwise<MaximumOp>(1, INT_MAX)},
      {"Min", elementwise<MinimumOp>(1, INT_MAX)},
      {"Sum", one(&Importer::importSum)},
      {"Mean", one(&Importer::importMean)},
      {"Pow", one(&Importer::importPow)},
      {"Div", one(&Importer::importDiv)},
      {"Relu", one(&Importer::importRelu)},
      {"Clip", one(&Importer::importClip)},
      {"PRelu", one(&Importer::importPRelu)},
      {"Cast", one(&Importer::importCast)},
      {"Dropout", one(&Importer::importDropout)},
      {"Where", one(&Importer::importWhere)},
      {"Conv", one(&Importer::importConv)},
      {"ConvTranspose", one(&Importer::importConvTranspose)},
      {"MaxPool", one(&Importer::importMaxPool)},
      {"AveragePool", one(&Importer::importAveragePool)},
      {"GlobalAveragePool", one(&Importer::importGlobalAveragePool)},
      {"GlobalMaxPool", one(&Importer::importGlobalMaxPool)},
      {"BatchNormalization", one(&Importer::importBatchNormalization)},
      {"Softmax", one(&Importer::importSoftmax)},
      {"LogSoftmax", one(&Importer::importSoftmax)},
      {"LayerNormalization", &Importer::importLayerNormalization},
      {"InstanceNormalization", one(&Importer::importInstanceNormalization)},
      {"ArgMax", one(&Importer::importArgExtremum)},
      {"ArgMin", one(&Importer::importArgExtremum)},
      {"Identity", one(&Importer::importIdentity)},
      {"Reshape", one(&Importer::importReshape)},
      {"Flatten", one(&Importer::importFlatten)},
      {"Transpose", one(&Importer::importTranspose)},
      {"Concat", one(&Importer::importConcat)},
      {"Slice", one(&Importer::importSlice)},
      {"Squeeze", one(&Importer::importSqueeze)},
      {"Unsqueeze", one(&Importer::importUnsqueeze)},
      {"Split", &Importer::importSplit},
      {"Expand", one(&Importer::importExpand)},
      {"Tile", one(&Importer::importTile)},
      {"DepthToSpace", one(&Importer::importDepthToSpace)},
      {"SpaceToDepth", one(&Importer::importDepthToSpace)},
      {"ConstantOfShape", &Importer::importConstantOfShape},
      {"MeanVarianceNormalization", one(&Importer::importMeanVarianceNormalization)},
      {"Size", &Importer::importSize},
      {"Gather", one(&Importer::importGather)},
      {"Pad", one(&Importer::importPad)},
      {"Resize", one(&Importer::importResize)},
      {"Shape", &Importer::importShape},
  };
  static const std::map<std::string, ImportFn> withFamilies = [] {
    std::map<std::string, ImportFn> all = table;
    for (const std::string &op : activationOperators())
      all[op] = [](Importer &im, const Node &n) -> Outputs { return im.importActivation(n); };
    for (const std::string &op : reductionOperators())
      all[op] = [](Importer &im, const Node &n) -> Outputs { return im.importReduction(n); };
    for (const std::string &op : comparisonOperators())
      all[op] = [](Importer &im, const Node &n) -> Outputs { return im.importComparison(n); };
    return all;
  }();
  return withFamilies;
}

} // namespace

std::vector<std::string> Importer::supportedOperators() {
  std::vector<std::string> names{"Constant"};
  for (const auto &entry : operatorTable())
    names.push_back(entry.first);
  std::sort(names.begin(), names.end());
  return names;
}

void Importer::importNode(const onnx::NodeProto &proto, int index) {
  const std::string &op = proto.op_type();
  std::string name = proto.name().empty() ? fmt::format("{}_{}", op, index) : proto.name();
  Node node(proto, fmt::format("{}: node '{}' ({})", path, name, op),
            // The node, in the model file: what every later diagnostic names.
            mlir::NameLoc::get(builder.getStringAttr(fmt::format("{} ({})", name, op)),
                               mlir::FileLineColLoc::get(&context, path, 0, 0)));
  if (!proto.domain().empty() && proto.domain() != "ai.onnx")
    node.fail("domain '{}' is not supported", proto.domain());
  if (op == "Constant") {
    importConstant(node);
    return;
  }
  if (foldShapeArithmetic(node))
    return;
  const auto &table = operatorTable();
  auto it = table.find(op);
  if (it == table.end())
    node.fail("operator is not supported");
  Outputs outputs = it->second(*this, node);
  for (size_t i = 0; i < outputs.tensors.size(); ++i)
    if (node.hasOutput(i))
      values[proto.output(i)] = outputs.tensors[i];
}

// Constant's value forms: a tensor, or one number or list (opset 12+).
void Importer::importConstant(const Node &node) {
  const std::string &output = node.proto.output(0);
  if (const onnx::AttributeProto *value = node.attr("value")) {
    constants[output] = &value->t();
    return;
  }
  auto owned = std::make_unique<onnx::TensorProto>();
  owned->set_name(output);
  if (const onnx::AttributeProto *a = node.attr("value_float")) {
    owned->set_data_type(onnx::TensorProto::FLOAT);
    owned->add_float_data(a->f());
  } else if (const onnx::AttributeProto *a = node.attr("value_floats")) {
    owned->set_data_type(onnx::TensorProto::FLOAT);
    owned->add_dims(a->floats_size());
    for (float v : a->floats())
      owned->add_float_data(v);
  } else if (const onnx::AttributeProto *a = node.attr("value_int")) {
    owned->set_data_type(onnx::TensorProto::INT64);
    owned->add_int64_data(a->i());
  } else if (const onnx::AttributeProto *a = node.attr("value_ints")) {
    owned->set_data_type(onnx::TensorProto::INT64);
    owned->add_dims(a->ints_size());
    for (int64_t v : a->ints())
      owned->add_int64_data(v);
  } else {
    node.fail("only the value, value_float(s) and value_int(s) forms are supported");
  }
  constants[output] = owned.get();
  ownedConstants.push_back(std::move(owned));
}

} // namespace tpu::frontend::detail
