// The ONNX importer's internals, shared by the files that import one family
// of operators each (ImportMath.cpp, ImportConv.cpp, ImportNormalization.cpp,
// ImportShape.cpp). Not part of the compiler's interface.
#pragma once

#include "tpu/Frontend/OnnxImporter.h"
#include "tpu/isa/Error.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>

#include <array>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tpu::frontend::detail {

using mlir::Value;
using Shape = std::vector<int64_t>;

int64_t elementCount(const Shape &shape);

// How an imported value is stored relative to its ONNX shape. TOSA's
// convolutions and pools take and give NHWC while ONNX is NCHW; a 4-D value
// made by one of them stays NHWC through the layout-neutral operators after
// it (elementwise, BatchNormalization, Concat) and is transposed back only
// where an operator needs the ONNX order, so consecutive convolutions carry
// no transpose pairs between them.
enum class Layout { Onnx, NHWC };

struct Tensor {
  Value value;
  Layout layout = Layout::Onnx;
};

// What an operator gives: one tensor per ONNX output (Split has several).
struct Outputs {
  Outputs(Tensor tensor) : tensors{tensor} {}
  Outputs(std::vector<Tensor> tensors) : tensors(std::move(tensors)) {}
  std::vector<Tensor> tensors;
};

// Permutations between NCHW (ONNX) and NHWC (TOSA's convolutions and pools).
inline constexpr int32_t kToNHWC[] = {0, 2, 3, 1};
inline constexpr int32_t kToNCHW[] = {0, 3, 1, 2};

// One ONNX node: its attributes and the one-line errors that name it.
class Node {
public:
  Node(const onnx::NodeProto &proto, std::string what, mlir::Location loc)
      : proto(proto), what(std::move(what)), loc(loc) {}

  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> format, Args &&...args) const {
    throw Error(what + ": " + fmt::format(format, std::forward<Args>(args)...));
  }

  // Present and not the empty name ONNX uses for a skipped optional input.
  bool hasInput(int index) const {
    return index < proto.input_size() && !proto.input(index).empty();
  }
  bool hasOutput(int index) const {
    return index < proto.output_size() && !proto.output(index).empty();
  }
  void expectInputs(int lo, int hi) const;
  // Optional outputs from `first` on (training statistics, pooling indices)
  // are not computed: using one is an error that says which.
  void rejectOutputsFrom(int first, const char *what) const;

  const onnx::AttributeProto *attr(const std::string &name) const;
  // Integer attributes (axes, sizes, strides, pads, flags) are bounded to 32
  // bits, so that the importer's arithmetic on them cannot overflow int64.
  int64_t checkedInt(const std::string &name, int64_t value) const;
  int64_t intAttr(const std::string &name, int64_t fallback) const;
  float floatAttr(const std::string &name, float fallback) const;
  std::string stringAttr(const std::string &name, const std::string &fallback) const;
  std::optional<std::vector<int64_t>> intsAttr(const std::string &name) const;
  // An axis attribute or value in [-rank, rank), made non-negative.
  int64_t normalizeAxis(int64_t axis, int64_t rank) const;

  const onnx::NodeProto &proto;
  const std::string what;
  const mlir::Location loc;
};

// Internal to the frontend; the operator table calls the import functions.
class Importer {
public:
  Importer(mlir::MLIRContext &context, std::string path, const ImportOptions &options)
      : context(context), builder(&context), path(std::move(path)), options(options) {}

  mlir::OwningOpRef<mlir::ModuleOp> run(const onnx::ModelProto &model);

  void checkOpset(const onnx::ModelProto &model);
  Shape graphInputShape(const onnx::ValueInfoProto &input);
  void importNode(const onnx::NodeProto &proto, int index);

  // The operators the importer handles (docs/compiler.md's table is tested
  // against this list).
  static std::vector<std::string> supportedOperators();
  void importConstant(const Node &node);
  // FoldShapeArithmetic.cpp: true when the node's integer constant inputs
  // made its result a constant.
  bool foldShapeArithmetic(const Node &node);

  // Values.
  Tensor lookup(const std::string &name, const std::string &what);
  Tensor input(const Node &node, int index) { return lookup(node.proto.input(index), node.what); }
  // An input in ONNX order, transposed back from NHWC where needed.
  Value onnxInput(const Node &node, int index) {
    return toOnnxLayout(input(node, index), node.loc);
  }
  Value toOnnxLayout(const Tensor &tensor, mlir::Location loc);
  Value toNHWC(const Tensor &tensor, mlir::Location loc);
  // The data of an input the compiler needs at compile time; nullptr when
  // the optional input is absent, an error when it is not a constant.
  const onnx::TensorProto *constantInput(const Node &node, int index);
  std::vector<float> constantFloats(const Node &node, int index);
  std::vector<int64_t> constantInts(const Node &node, int index);

  // TOSA building blocks.
  mlir::RankedTensorType tensorType(const Shape &shape, mlir::Type element = {}) {
    return mlir::RankedTensorType::get(shape, element ? element : builder.getF32Type());
  }
  static mlir::Type elementType(Value value) {
    return llvm::cast<mlir::RankedTensorType>(value.getType()).getElementType();
  }
  // The MLIR element type of an ONNX data type the importer handles.
  mlir::Type onnxElementType(int32_t dataType, const std::string &what);
  static Shape shapeOf(Value value);
  Value constant(const Shape &shape, llvm::ArrayRef<float> data, mlir::Location loc);
  // A one-element constant of the given rank, for broadcasting.
  Value scalar(float number, size_t rank, mlir::Location loc) {
    return constant(Shape(rank, 1), {number}, loc);
  }
  Value reshape(Value input, const Shape &shape, mlir::Location loc);
  // Elements `indices` (in range) of `axis`, as constant slices and a concat:
  // Gather with constant indices, Pad's reflect and edge modes, Resize.
  Value gatherConstant(Value input, int64_t axis, const std::vector<int64_t> &indices,
                       const Node &node);
  Value transpose(Value input, llvm::ArrayRef<int32_t> perm, mlir::Location loc);
  Value slice(Value input, const Shape &start, const Shape &size, mlir::Location loc);
  Value pad(Value input, llvm::ArrayRef<int64_t> lowHigh, mlir::Location loc, float value = 0.0f);
  Value clamp(Value input, float lo, float hi, mlir::Location loc);
  // Equal-rank elementwise op with TOSA's size-1 broadcasting.
  template <typename TosaOp> Value binary(Value a, Value b, mlir::Location loc);
  // A comparison (i1 result) with TOSA's size-1 broadcasting at equal rank.
  template <typename TosaOp> Value compare(Value a, Value b, mlir::Location loc);
  template <typename TosaOp> Value unary(Value input, mlir::Location loc) {
    return builder.create<TosaOp>(loc, input.getType(), input);
  }
  template <typename TosaReduceOp> Value reduce(Value input, int64_t axis, mlir::Location loc);
  // numpy broadcasting of any ranks; the result is NHWC when an operand is
  // and the result is 4-D.
  template <typename TosaOp> Tensor broadcast(const Tensor &a, const Tensor &b, const Node &node);
  template <typename Combine>
  Tensor broadcastWith(const Tensor &a, const Tensor &b, const Node &node, Combine combine);
  static Shape onnxShape(const Tensor &tensor);
  // numpy matmul: 1-D operands, broadcast batch dimensions.
  Value matmul(Value a, Value b, const Node &node);
  Value tileTo(Value input, const Shape &shape, mlir::Location loc);

  // Operators, one file per family.
  // ImportMath.cpp
  Tensor importGemm(const Node &node);
  Tensor importMatMul(const Node &node);
  // Max and Min take one or more inputs, the arithmetic operators two.
  template <typename TosaOp>
  Tensor importElementwise(const Node &node, int minInputs, int maxInputs);
  Tensor importDiv(const Node &node);
  template <typename TosaOp> Tensor importUnary(const Node &node);
  Tensor importRelu(const Node &node);
  Tensor importClip(const Node &node);
  Tensor importPow(const Node &node);
  Tensor importSum(const Node &node);
  Tensor importMean(const Node &node);
  // ImportActivation.cpp: the elementwise functions of one input, table-driven.
  Tensor importActivation(const Node &node);
  Tensor importPRelu(const Node &node);
  Tensor importCast(const Node &node);
  Tensor importDropout(const Node &node);
  Tensor importWhere(const Node &node);
  Tensor importComparison(const Node &node);
  Value negate(Value x, mlir::Location loc);
  Value relu(Value x, mlir::Location loc) {
    return clamp(x, 0.0f, std::numeric_limits<float>::max(), loc);
  }
  // ImportConv.cpp
  Tensor importConv(const Node &node);
  Tensor importConvTranspose(const Node &node);
  // Input 0 as an image: a 1-D one (NCL) as 2-D of height 1 (NC1L); a
  // result goes back to 1-D with fromImage.
  struct Image {
    Tensor x;
    Shape shape; // NCHW
    bool oneD;
  };
  Image imageInput(const Node &node);
  Tensor fromImage(const Tensor &result, bool oneD, mlir::Location loc);
  // The weights of a grouped convolution as one block-diagonal constant
  // (zeros between the groups), or nullptr when they are not constant.
  Value blockDiagonalWeights(const Node &node, int64_t group, int64_t channels);
  // A convolution's or pool's input in NHWC without the rows and columns
  // after its last window.
  Value windowInput(const Tensor &x, const std::array<int64_t, 2> &crop, mlir::Location loc);
  Tensor importMaxPool(const Node &node);
  Tensor importAveragePool(const Node &node);
  Value dilatedMaxPool(Value image, llvm::ArrayRef<int64_t> kernel, llvm::ArrayRef<int64_t> stride,
                       llvm::ArrayRef<int64_t> dilation, llvm::ArrayRef<int64_t> pads,
                       llvm::ArrayRef<int64_t> output, mlir::Location loc);
  Tensor importGlobalAveragePool(const Node &node);
  Tensor importGlobalMaxPool(const Node &node);
  // tosa.avg_pool2d on an NHWC image; pad is TOSA's [top, bottom, left, right].
  Value averagePool(Value image, llvm::ArrayRef<int64_t> kernel, llvm::ArrayRef<int64_t> stride,
                    llvm::ArrayRef<int64_t> pad, mlir::Location loc);
  Tensor importBatchNormalization(const Node &node);
  // ImportNormalization.cpp
  Tensor importSoftmax(const Node &node);
  Outputs importLayerNormalization(const Node &node);
  Tensor importInstanceNormalization(const Node &node);
  // (x - mean) / sqrt(variance + epsilon) over the axes, which stay as size 1
  // in the mean and inverse deviation given back.
  Value normalize(Value x, const std::vector<int64_t> &axes, float epsilon, mlir::Location loc,
                  Value *mean = nullptr, Value *inverse = nullptr);
  // ReduceSum/Mean/Max/Min/Prod/L1/L2/SumSquare/LogSumExp, table-driven.
  Tensor importReduction(const Node &node);
  Tensor importArgExtremum(const Node &node);
  Value softmax(Value input, int64_t axis, bool logarithm, mlir::Location loc);
  // The axes of a Reduce*: attribute before its opset, input from it on.
  std::optional<std::vector<int64_t>> reduceAxesOperand(const Node &node, int64_t inputFromOpset);
  // Sums (or means) over the axes, one tosa.reduce_sum per axis.
  Value reduceAxes(Value input, const std::vector<int64_t> &axes, bool keepDims, bool mean,
                   mlir::Location loc);
  Value moveAxisLast(Value input, int64_t axis, mlir::Location loc, bool back = false);
  // ImportShape.cpp
  Tensor importIdentity(const Node &node);
  Tensor importReshape(const Node &node);
  Tensor importFlatten(const Node &node);
  Tensor importTranspose(const Node &node);
  Tensor importConcat(const Node &node);
  Tensor importSlice(const Node &node);
  Tensor importSqueeze(const Node &node);
  Tensor importUnsqueeze(const Node &node);
  Outputs importSplit(const Node &node);
  Tensor importExpand(const Node &node);
  Tensor importTile(const Node &node);
  Tensor importDepthToSpace(const Node &node);
  Outputs importConstantOfShape(const Node &node);
  Tensor importMeanVarianceNormalization(const Node &node);
  Outputs importSize(const Node &node);
  Tensor importGather(const Node &node);
  Tensor importPad(const Node &node);
  Tensor importResize(const Node &node);
  Outputs importShape(const Node &node);
  // An axes list from the attribute (before `inputFromOpset`) or input 1.
  std::vector<int64_t> axesOperand(const Node &node, int64_t inputFromOpset);
  Value stridedSlice(Value input, int64_t axis, int64_t start, int64_t step, int64_t count,
                     mlir::Location loc);

  mlir::MLIRContext &context;
  mlir::OpBuilder builder;
  std::string path;
  ImportOptions options;
  int64_t opset = 0;
  std::map<std::string, Tensor> values;
  std::map<std::string, const onnx::TensorProto *> constants;
  // The graph's initializers among them: float ones carry their name as
  // tpu.name, which tpu-autodiff reads to find the trainable parameters.
  std::set<std::string> initializers;
  // Constants the importer makes itself (Constant's value_* forms, Shape).
  std::vector<std::unique_ptr<onnx::TensorProto>> ownedConstants;
};

// The names a family's table holds.
template <typename Map> std::vector<std::string> keysOf(const Map &table) {
  std::vector<std::string> keys;
  for (const auto &entry : table)
    keys.push_back(entry.first);
  return keys;
}

// The families imported by one table-driven function each.
const std::vector<std::string> &activationOperators();
const std::vector<std::string> &reductionOperators();
const std::vector<std::string> &comparisonOperators();

std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b);
// The data of a float32 or an integer (int64, int32) initializer.
std::vector<float> tensorFloats(const onnx::TensorProto &tensor, const std::string &what);
std::vector<int64_t> tensorInts(const onnx::TensorProto &tensor, const std::string &what);

template <typename TosaOp> Value Importer::binary(Value a, Value b, mlir::Location loc) {
  Shape as = shapeOf(a), bs = shapeOf(b), shape(as.size());
  for (size_t i = 0; i < shape.size(); ++i)
    shape[i] = std::max(as[i], bs[i]);
  if constexpr (std::is_same_v<TosaOp, mlir::tosa::MulOp>)
    return builder.create<TosaOp>(loc, tensorType(shape, elementType(a)), a, b,
                                  builder.getI8IntegerAttr(0));
  else
    return builder.create<TosaOp>(loc, tensorType(shape, elementType(a)), a, b);
}

template <typename TosaOp> Value Importer::compare(Value a, Value b, mlir::Location loc) {
  Shape as = shapeOf(a), bs = shapeOf(b), shape(as.size());
  for (size_t i = 0; i < shape.size(); ++i)
    shape[i] = std::max(as[i], bs[i]);
  return builder.create<TosaOp>(loc, tensorType(shape, builder.getI1Type()), a, b);
}

template <typename TosaReduceOp>
Value Importer::reduce(Value input, int64_t axis, mlir::Location loc) {
  Shape shape = shapeOf(input);
  shape[axis] = 1;
  return builder.create<TosaReduceOp>(loc, tensorType(shape, elementType(input)), input,
                                      builder.getI32IntegerAttr(static_cast<int32_t>(axis)));
}

template <typename TosaOp>
Tensor Importer::broadcast(const Tensor &a, const Tensor &b, const Node &node) {
  return broadcastWith(a, b, node,
                       [&](Value x, Value y) { return binary<TosaOp>(x, y, node.loc); });
}

template <typename Combine>
Tensor Importer::broadcastWith(const Tensor &a, const Tensor &b, const Node &node,
                               Combine combine) {
  Shape as = onnxShape(a), bs = onnxShape(b);
  std::optional<Shape> shape = broadcastShapes(as, bs);
  if (!shape)
    node.fail("shapes [{}] and [{}] do not broadcast", fmt::join(as, ","), fmt::join(bs, ","));
  bool nhwc = shape->size() == 4 && (a.layout == Layout::NHWC || b.layout == Layout::NHWC);
  // TOSA broadcasts only between equal ranks: prepend ones to the shorter.
  auto prepare = [&](const Tensor &operand, Shape onnxOperandShape) {
    onnxOperandShape.insert(onnxOperandShape.begin(), shape->size() - onnxOperandShape.size(), 1);
    if (!nhwc)
      return reshape(toOnnxLayout(operand, node.loc), onnxOperandShape, node.loc);
    if (operand.layout == Layout::NHWC)
      return operand.value;
    return transpose(reshape(operand.value, onnxOperandShape, node.loc), kToNHWC, node.loc);
  };
  return {combine(prepare(a, as), prepare(b, bs)), nhwc ? Layout::NHWC : Layout::Onnx};
}

template <typename TosaOp>
Tensor Importer::importElementwise(const Node &node, int minInputs, int maxInputs) {
  node.expectInputs(minInputs, maxInputs);
  Tensor result = input(node, 0);
  for (int i = 1; i < node.proto.input_size(); ++i)
    result = broadcast<TosaOp>(result, input(node, i), node);
  return result;
}

template <typename TosaOp> Tensor Importer::importUnary(const Node &node) {
  node.expectInputs(1, 1);
  Tensor x = input(node, 0);
  return {unary<TosaOp>(x.value, node.loc), x.layout};
}

} // namespace tpu::frontend::detail
