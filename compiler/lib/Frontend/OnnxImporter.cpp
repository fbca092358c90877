// ONNX -> TOSA. Shapes are computed here from the operator semantics, not
// taken from the model's value_info, so a model that lies about a shape
// cannot produce wrong code.
#include "tpu/Frontend/OnnxImporter.h"

#include "tpu/CodeGen/ProgramEmitter.h"
#include "tpu/isa/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>

#include <fstream>
#include <limits>
#include <map>

namespace tpu::frontend {
namespace {

using mlir::Value;
using Shape = std::vector<int64_t>;

constexpr int64_t kMinOpset = 11;
constexpr int64_t kMaxOpset = 17;

std::vector<float> tensorFloats(const onnx::TensorProto &tensor, const std::string &what) {
  if (tensor.data_type() != onnx::TensorProto::FLOAT)
    throw Error(fmt::format("{}: only float32 tensors are supported, got data type {}", what,
                            tensor.data_type()));
  if (tensor.has_data_location() && tensor.data_location() == onnx::TensorProto::EXTERNAL)
    throw Error(fmt::format("{}: external tensor data is not supported", what));
  int64_t count = 1;
  for (int64_t dim : tensor.dims())
    count *= dim;
  std::vector<float> values;
  if (tensor.has_raw_data()) {
    const std::string &raw = tensor.raw_data();
    if (raw.size() != static_cast<size_t>(count) * sizeof(float))
      throw Error(fmt::format("{}: raw data holds {} bytes, shape needs {}", what, raw.size(),
                              count * sizeof(float)));
    values.resize(count);
    std::memcpy(values.data(), raw.data(), raw.size());
  } else {
    values.assign(tensor.float_data().begin(), tensor.float_data().end());
    if (values.size() != static_cast<size_t>(count))
      throw Error(fmt::format("{}: holds {} values, shape needs {}", what, values.size(), count));
  }
  return values;
}

std::vector<int64_t> tensorInts(const onnx::TensorProto &tensor, const std::string &what) {
  if (tensor.data_type() != onnx::TensorProto::INT64)
    throw Error(fmt::format("{}: expected an int64 tensor", what));
  if (tensor.has_raw_data()) {
    std::vector<int64_t> values(tensor.raw_data().size() / sizeof(int64_t));
    std::memcpy(values.data(), tensor.raw_data().data(), values.size() * sizeof(int64_t));
    return values;
  }
  return {tensor.int64_data().begin(), tensor.int64_data().end()};
}

Shape tensorShape(const onnx::TensorProto &tensor) {
  return {tensor.dims().begin(), tensor.dims().end()};
}

// numpy broadcasting of two shapes; nullopt when incompatible.
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

class Importer {
public:
  Importer(mlir::MLIRContext &context, std::string path)
      : context(context), builder(&context), path(std::move(path)) {}

  mlir::OwningOpRef<mlir::ModuleOp> run(const onnx::ModelProto &model) {
    checkOpset(model);
    const onnx::GraphProto &graph = model.graph();
    for (const onnx::TensorProto &tensor : graph.initializer())
      constants[tensor.name()] = &tensor;

    mlir::Location fileLoc = mlir::FileLineColLoc::get(&context, path, 0, 0);
    // Owned from the start: an error thrown mid-import must not leak the IR.
    mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(fileLoc);
    std::vector<mlir::Type> argTypes;
    std::vector<const onnx::ValueInfoProto *> graphInputs;
    for (const onnx::ValueInfoProto &input : graph.input()) {
      if (constants.count(input.name()))
        continue; // old exporters list initializers as inputs too
      graphInputs.push_back(&input);
      argTypes.push_back(tensorType(inputShape(input)));
    }
    auto func = mlir::func::FuncOp::create(fileLoc, "main", builder.getFunctionType(argTypes, {}));
    module->push_back(func);
    mlir::Block *entry = func.addEntryBlock();
    builder.setInsertionPointToStart(entry);
    for (size_t i = 0; i < graphInputs.size(); ++i) {
      values[graphInputs[i]->name()] = entry->getArgument(i);
      func.setArgAttr(i, codegen::kTensorNameAttr, builder.getStringAttr(graphInputs[i]->name()));
    }

    for (int index = 0; index < graph.node_size(); ++index)
      importNode(graph.node(index), index);

    std::vector<Value> results;
    for (const onnx::ValueInfoProto &output : graph.output())
      results.push_back(value(output.name(), fmt::format("graph output '{}'", output.name())));
    builder.create<mlir::func::ReturnOp>(fileLoc, results);
    func.setType(builder.getFunctionType(argTypes, mlir::ValueRange(results).getTypes()));
    for (int i = 0; i < graph.output_size(); ++i)
      func.setResultAttr(i, codegen::kTensorNameAttr,
                         builder.getStringAttr(graph.output(i).name()));
    if (mlir::failed(mlir::verify(*module)))
      throw Error(fmt::format("{}: the imported graph does not verify", path));
    return module;
  }

private:
  void checkOpset(const onnx::ModelProto &model) {
    for (const onnx::OperatorSetIdProto &opset : model.opset_import()) {
      if (!opset.domain().empty() && opset.domain() != "ai.onnx")
        continue;
      if (opset.version() < kMinOpset || opset.version() > kMaxOpset)
        throw Error(fmt::format("{}: opset {} is not supported (supported: {} to {})", path,
                                opset.version(), kMinOpset, kMaxOpset));
      return;
    }
    throw Error(fmt::format("{}: the model imports no default-domain opset", path));
  }

  Shape inputShape(const onnx::ValueInfoProto &input) {
    const auto &type = input.type().tensor_type();
    if (type.elem_type() != onnx::TensorProto::FLOAT)
      throw Error(fmt::format("{}: input '{}' must be float32", path, input.name()));
    Shape shape;
    for (const auto &dim : type.shape().dim()) {
      if (!dim.has_dim_value() || dim.dim_value() <= 0)
        throw Error(fmt::format("{}: input '{}' has a dynamic or empty dimension; static shapes "
                                "are required",
                                path, input.name()));
      shape.push_back(dim.dim_value());
    }
    return shape;
  }

  mlir::RankedTensorType tensorType(const Shape &shape) {
    return mlir::RankedTensorType::get(shape, builder.getF32Type());
  }

  static Shape shapeOf(Value value) {
    auto shape = llvm::cast<mlir::RankedTensorType>(value.getType()).getShape();
    return {shape.begin(), shape.end()};
  }

  Value constantTensor(const Shape &shape, llvm::ArrayRef<float> data, mlir::Location loc) {
    auto type = tensorType(shape);
    return builder.create<mlir::tosa::ConstOp>(loc, type, mlir::DenseElementsAttr::get(type, data));
  }

  Value value(const std::string &name, const std::string &what) {
    if (auto it = values.find(name); it != values.end())
      return it->second;
    if (auto it = constants.find(name); it != constants.end()) {
      Value constant = constantTensor(tensorShape(*it->second), tensorFloats(*it->second, what),
                                      builder.getUnknownLoc());
      values[name] = constant;
      return constant;
    }
    throw Error(fmt::format("{}: {} uses '{}', which no earlier node produces", path, what, name));
  }

  Value reshape(Value input, const Shape &shape, mlir::Location loc) {
    if (shapeOf(input) == shape)
      return input;
    return builder.create<mlir::tosa::ReshapeOp>(loc, tensorType(shape), input,
                                                 builder.getDenseI64ArrayAttr(shape));
  }

  Value transpose2D(Value input, mlir::Location loc) {
    Shape shape = shapeOf(input);
    auto permsType = mlir::RankedTensorType::get({2}, builder.getI32Type());
    Value perms = builder.create<mlir::tosa::ConstOp>(
        loc, permsType, mlir::DenseElementsAttr::get(permsType, llvm::ArrayRef<int32_t>{1, 0}));
    return builder.create<mlir::tosa::TransposeOp>(loc, tensorType({shape[1], shape[0]}), input,
                                                   perms);
  }

  // 2-D matrix product as TOSA spells it: rank-3 tosa.matmul with batch 1.
  Value matmul2D(Value a, Value b, mlir::Location loc) {
    Shape as = shapeOf(a), bs = shapeOf(b);
    Value product = builder.create<mlir::tosa::MatMulOp>(loc, tensorType({1, as[0], bs[1]}),
                                                         reshape(a, {1, as[0], as[1]}, loc),
                                                         reshape(b, {1, bs[0], bs[1]}, loc));
    return reshape(product, {as[0], bs[1]}, loc);
  }

  Value clamp(Value input, float lo, float hi, mlir::Location loc) {
    return builder.create<mlir::tosa::ClampOp>(
        loc, input.getType(), input, builder.getI64IntegerAttr(std::numeric_limits<int64_t>::min()),
        builder.getI64IntegerAttr(std::numeric_limits<int64_t>::max()), builder.getF32FloatAttr(lo),
        builder.getF32FloatAttr(hi));
  }

  template <typename TosaOp>
  Value elementwise(Value a, Value b, const std::string &what, mlir::Location loc) {
    Shape as = shapeOf(a), bs = shapeOf(b);
    std::optional<Shape> shape = broadcastShapes(as, bs);
    if (!shape)
      throw Error(fmt::format("{}: shapes [{}] and [{}] do not broadcast", what, fmt::join(as, ","),
                              fmt::join(bs, ",")));
    // TOSA broadcasts only between equal ranks: prepend ones to the shorter.
    auto toRank = [&](Value v, Shape s) {
      s.insert(s.begin(), shape->size() - s.size(), 1);
      return reshape(v, s, loc);
    };
    a = toRank(a, as);
    b = toRank(b, bs);
    if constexpr (std::is_same_v<TosaOp, mlir::tosa::MulOp>)
      return builder.create<TosaOp>(loc, tensorType(*shape), a, b, builder.getI8IntegerAttr(0));
    else
      return builder.create<TosaOp>(loc, tensorType(*shape), a, b);
  }

  float floatAttr(const onnx::NodeProto &node, const std::string &name, float fallback) {
    for (const onnx::AttributeProto &attr : node.attribute())
      if (attr.name() == name)
        return attr.f();
    return fallback;
  }

  int64_t intAttr(const onnx::NodeProto &node, const std::string &name, int64_t fallback) {
    for (const onnx::AttributeProto &attr : node.attribute())
      if (attr.name() == name)
        return attr.i();
    return fallback;
  }

  // The value of an optional constant input, for inputs the hardware needs
  // at compile time (Clip bounds, Reshape shapes).
  const onnx::TensorProto *constantInput(const onnx::NodeProto &node, int index,
                                         const std::string &what) {
    if (index >= node.input_size() || node.input(index).empty())
      return nullptr;
    auto it = constants.find(node.input(index));
    if (it == constants.end())
      throw Error(
          fmt::format("{}: input {} ('{}') must be a constant", what, index, node.input(index)));
    return it->second;
  }

  void requireInputs(const onnx::NodeProto &node, int lo, int hi, const std::string &what) {
    if (node.input_size() < lo || node.input_size() > hi || node.output_size() < 1)
      throw Error(fmt::format("{}: expected {} to {} inputs and one output, got {} and {}", what,
                              lo, hi, node.input_size(), node.output_size()));
  }

  void importNode(const onnx::NodeProto &node, int index) {
    const std::string &op = node.op_type();
    std::string name = node.name().empty() ? fmt::format("{}_{}", op, index) : node.name();
    std::string what = fmt::format("{}: node '{}' ({})", path, name, op);
    mlir::Location loc =
        mlir::NameLoc::get(builder.getStringAttr(fmt::format("{} ({})", name, op)));
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      throw Error(fmt::format("{}: domain '{}' is not supported", what, node.domain()));
    auto input = [&](int i) { return value(node.input(i), what); };
    Value result;

    if (op == "Gemm") {
      requireInputs(node, 2, 3, what);
      Value a = input(0), b = input(1);
      if (shapeOf(a).size() != 2 || shapeOf(b).size() != 2)
        throw Error(fmt::format("{}: A and B must be 2-D", what));
      if (intAttr(node, "transA", 0))
        a = transpose2D(a, loc);
      if (intAttr(node, "transB", 0))
        b = transpose2D(b, loc);
      if (shapeOf(a)[1] != shapeOf(b)[0])
        throw Error(fmt::format("{}: inner dimensions differ ({} vs {})", what, shapeOf(a)[1],
                                shapeOf(b)[0]));
      result = matmul2D(a, b, loc);
      if (float alpha = floatAttr(node, "alpha", 1.0f); alpha != 1.0f)
        result =
            elementwise<mlir::tosa::MulOp>(result, constantTensor({1, 1}, {alpha}, loc), what, loc);
      if (node.input_size() == 3 && !node.input(2).empty()) {
        Value c = input(2);
        if (float beta = floatAttr(node, "beta", 1.0f); beta != 1.0f)
          c = elementwise<mlir::tosa::MulOp>(c, constantTensor({1}, {beta}, loc), what, loc);
        result = elementwise<mlir::tosa::AddOp>(result, c, what, loc);
        if (shapeOf(result) != Shape{shapeOf(a)[0], shapeOf(b)[1]})
          throw Error(fmt::format("{}: C does not broadcast to the output shape", what));
      }
    } else if (op == "MatMul") {
      requireInputs(node, 2, 2, what);
      Value a = input(0), b = input(1);
      if (shapeOf(a).size() != 2 || shapeOf(b).size() != 2)
        throw Error(fmt::format("{}: only 2-D operands are supported yet, got ranks {} and {}",
                                what, shapeOf(a).size(), shapeOf(b).size()));
      if (shapeOf(a)[1] != shapeOf(b)[0])
        throw Error(fmt::format("{}: inner dimensions differ ({} vs {})", what, shapeOf(a)[1],
                                shapeOf(b)[0]));
      result = matmul2D(a, b, loc);
    } else if (op == "Relu") {
      requireInputs(node, 1, 1, what);
      result = clamp(input(0), 0.0f, std::numeric_limits<float>::max(), loc);
    } else if (op == "Clip") {
      requireInputs(node, 1, 3, what);
      float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
      if (auto *min = constantInput(node, 1, what))
        lo = tensorFloats(*min, what).at(0);
      if (auto *max = constantInput(node, 2, what))
        hi = tensorFloats(*max, what).at(0);
      result = clamp(input(0), lo, hi, loc);
    } else if (op == "Add") {
      requireInputs(node, 2, 2, what);
      result = elementwise<mlir::tosa::AddOp>(input(0), input(1), what, loc);
    } else if (op == "Sub") {
      requireInputs(node, 2, 2, what);
      result = elementwise<mlir::tosa::SubOp>(input(0), input(1), what, loc);
    } else if (op == "Mul") {
      requireInputs(node, 2, 2, what);
      result = elementwise<mlir::tosa::MulOp>(input(0), input(1), what, loc);
    } else if (op == "Max" || op == "Min") {
      requireInputs(node, 2, 2, what);
      result = op == "Max" ? elementwise<mlir::tosa::MaximumOp>(input(0), input(1), what, loc)
                           : elementwise<mlir::tosa::MinimumOp>(input(0), input(1), what, loc);
    } else if (op == "Identity") {
      requireInputs(node, 1, 1, what);
      result = input(0);
    } else if (op == "Flatten") {
      requireInputs(node, 1, 1, what);
      Shape shape = shapeOf(input(0));
      int64_t axis = intAttr(node, "axis", 1);
      if (axis < 0)
        axis += shape.size();
      if (axis < 0 || axis > static_cast<int64_t>(shape.size()))
        throw Error(fmt::format("{}: axis {} out of range", what, intAttr(node, "axis", 1)));
      int64_t outer = 1, inner = 1;
      for (size_t i = 0; i < shape.size(); ++i)
        (static_cast<int64_t>(i) < axis ? outer : inner) *= shape[i];
      result = reshape(input(0), {outer, inner}, loc);
    } else if (op == "Reshape") {
      requireInputs(node, 2, 2, what);
      result = reshape(input(0), reshapeTarget(node, shapeOf(input(0)), what), loc);
    } else if (op == "Constant") {
      for (const onnx::AttributeProto &attr : node.attribute())
        if (attr.name() == "value")
          constants[node.output(0)] = &attr.t();
      if (!constants.count(node.output(0)))
        throw Error(fmt::format("{}: only the 'value' form is supported", what));
      return;
    } else {
      throw Error(fmt::format("{}: operator is not supported yet", what));
    }
    values[node.output(0)] = result;
  }

  Shape reshapeTarget(const onnx::NodeProto &node, const Shape &inputShape,
                      const std::string &what) {
    const onnx::TensorProto *shapeTensor = constantInput(node, 1, what);
    if (!shapeTensor)
      throw Error(fmt::format("{}: the shape input is required", what));
    Shape target = tensorInts(*shapeTensor, what);
    int64_t total = 1, known = 1, inferred = -1;
    for (int64_t dim : inputShape)
      total *= dim;
    for (size_t i = 0; i < target.size(); ++i) {
      if (target[i] == 0 && !intAttr(node, "allowzero", 0))
        target[i] = i < inputShape.size() ? inputShape[i] : 0;
      if (target[i] == -1) {
        if (inferred >= 0)
          throw Error(fmt::format("{}: more than one -1 in the shape", what));
        inferred = i;
      } else if (target[i] <= 0) {
        throw Error(fmt::format("{}: invalid dimension {} in the shape", what, target[i]));
      } else {
        known *= target[i];
      }
    }
    if (inferred >= 0 && known > 0 && total % known == 0)
      target[inferred] = total / known;
    int64_t product = 1;
    for (int64_t dim : target)
      product *= dim;
    if (product != total)
      throw Error(fmt::format("{}: cannot reshape [{}] to [{}]", what, fmt::join(inputShape, ","),
                              fmt::join(target, ",")));
    return target;
  }

  mlir::MLIRContext &context;
  mlir::OpBuilder builder;
  std::string path;
  std::map<std::string, Value> values;
  std::map<std::string, const onnx::TensorProto *> constants;
};

} // namespace

mlir::OwningOpRef<mlir::ModuleOp> importOnnx(const std::string &path, mlir::MLIRContext &context) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    throw Error(fmt::format("{}: cannot open the model file", path));
  onnx::ModelProto model;
  if (!model.ParseFromIstream(&file) || !model.has_graph())
    throw Error(fmt::format("{}: not a valid ONNX model (protobuf parse failed)", path));
  context.loadDialect<mlir::func::FuncDialect, mlir::tosa::TosaDialect>();
  return Importer(context, path).run(model);
}

} // namespace tpu::frontend
