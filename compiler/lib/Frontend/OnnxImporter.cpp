// ONNX -> TOSA. Shapes are computed here from the operator semantics, not
// taken from the model's value_info, so a model that lies about a shape
// cannot produce wrong code. The operators themselves are imported by the
// Import*.cpp files, one family each.
#include "tpu/Frontend/OnnxImporter.h"

#include "Importer.h"
#include "TensorElements.h"
#include "UpgradeOpset.h"

#include "tpu/Dialect/TPUDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"

#include <climits>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>

namespace tpu::frontend {
namespace detail {

// Opsets imported directly; older models are first upgraded to
// kUpgradeOpset by ONNX's own version converter (libonnx), so their operator
// forms are never re-implemented here by hand.
constexpr int64_t kMinOpset = 11;
constexpr int64_t kMaxOpset = 18;
constexpr int kUpgradeOpset = 13;

namespace {

// The values of raw_data, which must hold exactly `count` of them.
template <typename T>
std::vector<T> rawValues(const std::string &raw, int64_t count, const std::string &what) {
  if (raw.size() != static_cast<size_t>(count) * sizeof(T))
    throw Error(fmt::format("{}: raw data holds {} bytes, shape needs {}", what, raw.size(),
                            count * sizeof(T)));
  std::vector<T> values(count);
  if (count != 0)
    std::memcpy(values.data(), raw.data(), raw.size());
  return values;
}

// The values of a typed field (float_data, int64_data, ...), which must hold
// exactly `count` of them.
template <typename T, typename Field>
std::vector<T> fieldValues(const Field &field, int64_t count, const std::string &what) {
  if (field.size() != count)
    throw Error(fmt::format("{}: holds {} values, shape needs {}", what, field.size(), count));
  return {field.begin(), field.end()};
}

} // namespace

std::vector<float> tensorFloats(const onnx::TensorProto &tensor, const std::string &what) {
  if (tensor.data_type() != onnx::TensorProto::FLOAT)
    throw Error(fmt::format("{}: only float32 tensors are supported, got data type {}", what,
                            tensor.data_type()));
  if (tensor.has_data_location() && tensor.data_location() == onnx::TensorProto::EXTERNAL)
    throw Error(fmt::format("{}: external tensor data is not supported", what));
  std::string where = fmt::format("{}: tensor '{}'", what, tensor.name());
  int64_t count = tensorElements(tensor, where);
  if (tensor.has_raw_data())
    return rawValues<float>(tensor.raw_data(), count, where);
  return fieldValues<float>(tensor.float_data(), count, where);
}

// Integer tensors (shapes, axes, slice bounds) come as int64 or int32.
std::vector<int64_t> tensorInts(const onnx::TensorProto &tensor, const std::string &what) {
  std::string where = fmt::format("{}: tensor '{}'", what, tensor.name());
  int64_t count = tensorElements(tensor, where);
  switch (tensor.data_type()) {
  case onnx::TensorProto::INT64:
    if (tensor.has_raw_data())
      return rawValues<int64_t>(tensor.raw_data(), count, where);
    return fieldValues<int64_t>(tensor.int64_data(), count, where);
  case onnx::TensorProto::INT32: {
    std::vector<int32_t> values = tensor.has_raw_data()
                                      ? rawValues<int32_t>(tensor.raw_data(), count, where)
                                      : fieldValues<int32_t>(tensor.int32_data(), count, where);
    return {values.begin(), values.end()};
  }
  default:
    throw Error(fmt::format("{}: expected an int64 or int32 tensor", what));
  }
}

namespace {

// Bools are stored one byte each (raw) or as int32 values.
std::vector<int64_t> tensorBools(const onnx::TensorProto &tensor) {
  if (tensor.has_raw_data())
    return {tensor.raw_data().begin(), tensor.raw_data().end()};
  return {tensor.int32_data().begin(), tensor.int32_data().end()};
}

} // namespace

int64_t elementCount(const Shape &shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b) {
  Shape result(std::max(a.size(), b.size()));
  for (size_t i = 0; i < result.size(); ++i) {
    int64_t da = i < result.size() - a.size() ? 1 : a[i - (result.size() - a.size())];
    int64_t db = i < result.size() - b.size() ? 1 : b[i - (result.size() - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    result[i] = std::max(da, db);
  }
  return result;
}

void Node::expectInputs(int lo, int hi) const {
  if (proto.input_size() < lo || proto.input_size() > hi || proto.output_size() < 1)
    fail("expected {} to {} inputs and one output, got {} and {}", lo, hi, proto.input_size(),
         proto.output_size());
}

void Node::rejectOutputsFrom(int first, const char *outputs) const {
  for (int i = first; i < proto.output_size(); ++i)
    if (hasOutput(i))
      fail("the {} output is not supported", outputs);
}

const onnx::AttributeProto *Node::attr(const std::string &name) const {
  for (const onnx::AttributeProto &attribute : proto.attribute())
    if (attribute.name() == name)
      return &attribute;
  return nullptr;
}

int64_t Node::checkedInt(const std::string &name, int64_t value) const {
  if (value < INT32_MIN || value > INT32_MAX)
    fail("attribute {} = {} is out of range (at most 32 bits)", name, value);
  return value;
}

int64_t Node::intAttr(const std::string &name, int64_t fallback) const {
  const onnx::AttributeProto *attribute = attr(name);
  return attribute ? checkedInt(name, attribute->i()) : fallback;
}

float Node::floatAttr(const std::string &name, float fallback) const {
  const onnx::AttributeProto *attribute = attr(name);
  return attribute ? attribute->f() : fallback;
}

std::string Node::stringAttr(const std::string &name, const std::string &fallback) const {
  const onnx::AttributeProto *attribute = attr(name);
  return attribute ? attribute->s() : fallback;
}

std::optional<std::vector<int64_t>> Node::intsAttr(const std::string &name) const {
  const onnx::AttributeProto *attribute = attr(name);
  if (!attribute)
    return std::nullopt;
  std::vector<int64_t> values;
  for (int64_t value : attribute->ints())
    values.push_back(checkedInt(name, value));
  return values;
}

int64_t Node::normalizeAxis(int64_t axis, int64_t rank) const {
  if (axis < -rank || axis >= rank)
    fail("axis {} is out of range for rank {}", axis, rank);
  return axis < 0 ? axis + rank : axis;
}

mlir::OwningOpRef<mlir::ModuleOp> Importer::run(const onnx::ModelProto &model) {
  checkOpset(model);
  const onnx::GraphProto &graph = model.graph();
  for (const onnx::TensorProto &tensor : graph.initializer()) {
    constants[tensor.name()] = &tensor;
    initializers.insert(tensor.name());
  }

  mlir::Location fileLoc = mlir::FileLineColLoc::get(&context, path, 0, 0);
  // Owned from the start: an error thrown mid-import must not leak the IR.
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(fileLoc);
  std::vector<mlir::Type> argTypes;
  std::vector<const onnx::ValueInfoProto *> graphInputs;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (constants.count(input.name()))
      continue; // old exporters list initializers as inputs too
    graphInputs.push_back(&input);
    argTypes.push_back(
        tensorType(graphInputShape(input),
                   onnxElementType(input.type().tensor_type().elem_type(),
                                   fmt::format("{}: input '{}'", path, input.name()))));
  }
  auto func = mlir::func::FuncOp::create(fileLoc, "main", builder.getFunctionType(argTypes, {}));
  module->push_back(func);
  mlir::Block *entry = func.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  for (size_t i = 0; i < graphInputs.size(); ++i) {
    values[graphInputs[i]->name()] = {entry->getArgument(i)};
    func.setArgAttr(i, mlir::tpu::kTensorNameAttr, builder.getStringAttr(graphInputs[i]->name()));
  }

  for (int index = 0; index < graph.node_size(); ++index)
    importNode(graph.node(index), index);

  std::vector<Value> results;
  for (const onnx::ValueInfoProto &output : graph.output())
    results.push_back(toOnnxLayout(
        lookup(output.name(), fmt::format("{}: graph output '{}'", path, output.name())), fileLoc));
  builder.create<mlir::func::ReturnOp>(fileLoc, results);
  func.setType(builder.getFunctionType(argTypes, mlir::ValueRange(results).getTypes()));
  for (int i = 0; i < graph.output_size(); ++i)
    func.setResultAttr(i, mlir::tpu::kTensorNameAttr,
                       builder.getStringAttr(graph.output(i).name()));
  if (mlir::failed(mlir::verify(*module)))
    throw Error(fmt::format("{}: the imported graph does not verify", path));
  return module;
}

void Importer::checkOpset(const onnx::ModelProto &model) {
  for (const onnx::OperatorSetIdProto &opsetId : model.opset_import()) {
    if (!opsetId.domain().empty() && opsetId.domain() != "ai.onnx")
      continue;
    if (opsetId.version() < kMinOpset || opsetId.version() > kMaxOpset)
      throw Error(fmt::format("{}: opset {} is not supported (supported: {} to {}, older ones "
                              "through ONNX's version converter)",
                              path, opsetId.version(), kMinOpset, kMaxOpset));
    opset = opsetId.version();
    return;
  }
  throw Error(fmt::format("{}: the model imports no default-domain opset", path));
}

Shape Importer::graphInputShape(const onnx::ValueInfoProto &input) {
  const auto &type = input.type().tensor_type();
  Shape shape;
  int64_t elements = 1;
  for (const auto &dim : type.shape().dim()) {
    if (shape.empty() && options.batch != 0) {
      shape.push_back(options.batch);
      elements = options.batch;
      continue;
    }
    if (!dim.has_dim_value() || dim.dim_value() <= 0)
      throw Error(fmt::format("{}: input '{}' has a dynamic or empty dimension; static shapes "
                              "are required",
                              path, input.name()));
    if (dim.dim_value() > kMaxElements / elements)
      throw Error(fmt::format("{}: input '{}' has more than {} elements", path, input.name(),
                              kMaxElements));
    elements *= dim.dim_value();
    shape.push_back(dim.dim_value());
  }
  return shape;
}

Tensor Importer::lookup(const std::string &name, const std::string &what) {
  if (auto it = values.find(name); it != values.end())
    return it->second;
  if (auto it = constants.find(name); it != constants.end()) {
    const onnx::TensorProto &tensor = *it->second;
    Shape shape(tensor.dims().begin(), tensor.dims().end());
    Tensor result;
    if (tensor.data_type() == onnx::TensorProto::FLOAT) {
      result.value = constant(shape, tensorFloats(tensor, what), builder.getUnknownLoc());
      if (initializers.count(name))
        result.value.getDefiningOp()->setAttr("tpu.name", builder.getStringAttr(name));
    } else {
      // Indices and conditions: integer or boolean data.
      mlir::Type element = onnxElementType(tensor.data_type(), what);
      std::vector<int64_t> ints = tensor.data_type() == onnx::TensorProto::BOOL
                                      ? tensorBools(tensor)
                                      : tensorInts(tensor, what);
      auto type = tensorType(shape, element);
      std::vector<llvm::APInt> data;
      for (int64_t v : ints)
        data.emplace_back(element.getIntOrFloatBitWidth(), v, /*isSigned=*/true);
      result.value = builder.create<mlir::tosa::ConstOp>(builder.getUnknownLoc(), type,
                                                         mlir::DenseElementsAttr::get(type, data));
    }
    values[name] = result;
    return result;
  }
  throw Error(fmt::format("{} uses '{}', which no earlier node produces", what, name));
}

mlir::Type Importer::onnxElementType(int32_t dataType, const std::string &what) {
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return builder.getF32Type();
  case onnx::TensorProto::INT64:
    return builder.getI64Type(); // indices (Gather)
  case onnx::TensorProto::INT32:
    return builder.getI32Type();
  case onnx::TensorProto::BOOL:
    return builder.getI1Type(); // conditions (Where)
  default:
    throw Error(fmt::format(
        "{}: data type {} is not supported (float32, int64, int32 and bool are)", what,
        onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(dataType))));
  }
}

Value Importer::toOnnxLayout(const Tensor &tensor, mlir::Location loc) {
  return tensor.layout == Layout::NHWC ? transpose(tensor.value, kToNCHW, loc) : tensor.value;
}

Value Importer::toNHWC(const Tensor &tensor, mlir::Location loc) {
  return tensor.layout == Layout::NHWC ? tensor.value : transpose(tensor.value, kToNHWC, loc);
}

Shape Importer::onnxShape(const Tensor &tensor) {
  Shape shape = shapeOf(tensor.value);
  if (tensor.layout == Layout::NHWC)
    return {shape[0], shape[3], shape[1], shape[2]};
  return shape;
}

const onnx::TensorProto *Importer::constantInput(const Node &node, int index) {
  if (!node.hasInput(index))
    return nullptr;
  auto it = constants.find(node.proto.input(index));
  if (it == constants.end())
    node.fail("input {} ('{}') must be a constant", index, node.proto.input(index));
  return it->second;
}

std::vector<float> Importer::constantFloats(const Node &node, int index) {
  const onnx::TensorProto *tensor = constantInput(node, index);
  return tensor ? tensorFloats(*tensor, node.what) : std::vector<float>{};
}

std::vector<int64_t> Importer::constantInts(const Node &node, int index) {
  const onnx::TensorProto *tensor = constantInput(node, index);
  return tensor ? tensorInts(*tensor, node.what) : std::vector<int64_t>{};
}

Shape Importer::shapeOf(Value value) {
  auto shape = llvm::cast<mlir::RankedTensorType>(value.getType()).getShape();
  return {shape.begin(), shape.end()};
}

Value Importer::constant(const Shape &shape, llvm::ArrayRef<float> data, mlir::Location loc) {
  auto type = tensorType(shape);
  return builder.create<mlir::tosa::ConstOp>(loc, type, mlir::DenseElementsAttr::get(type, data));
}

Value Importer::reshape(Value input, const Shape &shape, mlir::Location loc) {
  if (shapeOf(input) == shape)
    return input;
  return builder.create<mlir::tosa::ReshapeOp>(loc, tensorType(shape, elementType(input)), input,
                                               builder.getDenseI64ArrayAttr(shape));
}

Value Importer::transpose(Value input, llvm::ArrayRef<int32_t> perm, mlir::Location loc) {
  Shape shape = shapeOf(input), permuted;
  for (int32_t axis : perm)
    permuted.push_back(shape[axis]);
  auto permsType =
      mlir::RankedTensorType::get({static_cast<int64_t>(perm.size())}, builder.getI32Type());
  Value perms = builder.create<mlir::tosa::ConstOp>(loc, permsType,
                                                    mlir::DenseElementsAttr::get(permsType, perm));
  return builder.create<mlir::tosa::TransposeOp>(loc, tensorType(permuted, elementType(input)),
                                                 input, perms);
}

Value Importer::slice(Value input, const Shape &start, const Shape &size, mlir::Location loc) {
  if (shapeOf(input) == size)
    return input;
  return builder.create<mlir::tosa::SliceOp>(loc, tensorType(size, elementType(input)), input,
                                             builder.getDenseI64ArrayAttr(start),
                                             builder.getDenseI64ArrayAttr(size));
}

Value Importer::pad(Value input, llvm::ArrayRef<int64_t> lowHigh, mlir::Location loc, float value) {
  Shape shape = shapeOf(input);
  std::vector<int32_t> padding;
  for (size_t i = 0; i < shape.size(); ++i) {
    padding.push_back(static_cast<int32_t>(lowHigh[2 * i]));
    padding.push_back(static_cast<int32_t>(lowHigh[2 * i + 1]));
    shape[i] += lowHigh[2 * i] + lowHigh[2 * i + 1];
  }
  auto paddingType = mlir::RankedTensorType::get({static_cast<int64_t>(shapeOf(input).size()), 2},
                                                 builder.getI32Type());
  Value paddingValue = builder.create<mlir::tosa::ConstOp>(
      loc, paddingType, mlir::DenseElementsAttr::get(paddingType, llvm::ArrayRef(padding)));
  if (value == 0.0f)
    return builder.create<mlir::tosa::PadOp>(loc, tensorType(shape, elementType(input)), input,
                                             paddingValue);
  auto valueType = tensorType({});
  Value padConst = builder.create<mlir::tosa::ConstOp>(
      loc, valueType, mlir::DenseElementsAttr::get(valueType, value));
  return builder.create<mlir::tosa::PadOp>(loc, tensorType(shape, elementType(input)), input,
                                           paddingValue, padConst);
}

Value Importer::clamp(Value input, float lo, float hi, mlir::Location loc) {
  return builder.create<mlir::tosa::ClampOp>(
      loc, input.getType(), input, builder.getI64IntegerAttr(std::numeric_limits<int64_t>::min()),
      builder.getI64IntegerAttr(std::numeric_limits<int64_t>::max()), builder.getF32FloatAttr(lo),
      builder.getF32FloatAttr(hi));
}

} // namespace detail

std::vector<std::string> supportedOperators() { return detail::Importer::supportedOperators(); }

mlir::OwningOpRef<mlir::ModuleOp> importOnnx(const std::string &path, mlir::MLIRContext &context,
                                             const ImportOptions &options) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    throw Error(fmt::format("{}: cannot open the model file", path));
  std::string bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  if (file.bad())
    throw Error(fmt::format("{}: cannot read the model file", path));
  return importOnnxBytes(bytes, path, context, options);
}

mlir::OwningOpRef<mlir::ModuleOp> importOnnxBytes(std::string_view bytes, const std::string &path,
                                                  mlir::MLIRContext &context,
                                                  const ImportOptions &options) {
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) || !model.has_graph())
    throw Error(fmt::format("{}: not a valid ONNX model (protobuf parse failed)", path));
  context.loadDialect<mlir::func::FuncDialect, mlir::tosa::TosaDialect>();
  for (const onnx::OperatorSetIdProto &opsetId : model.opset_import())
    if ((opsetId.domain().empty() || opsetId.domain() == "ai.onnx") &&
        opsetId.version() < detail::kMinOpset) {
      onnx::ModelProto upgraded = upgradeOpset(model, detail::kUpgradeOpset, path);
      return detail::Importer(context, path, options).run(upgraded);
    }
  return detail::Importer(context, path, options).run(model);
}

} // namespace tpu::frontend
