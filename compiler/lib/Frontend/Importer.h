// The ONNX importer's internals, shared by the files that import one family
// of operators each (ImportMath.cpp, ImportConv.cpp, ImportNormalization.cpp,
// ImportShape.cpp). Not part of the compiler's interface.
#pragma once

#include "tpu/isa/Error.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/onnx_pb.h>

#include <array>
#include <map>
#include <optional>
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

class Importer {
public:
  Importer(mlir::MLIRContext &context, std::string path)
      : context(context), builder(&context), path(std::move(path)) {}

  mlir::OwningOpRef<mlir::ModuleOp> run(const onnx::ModelProto &model);

private:
  void checkOpset(const onnx::ModelProto &model);
  Shape graphInputShape(const onnx::ValueInfoProto &input);
  void importNode(const onnx::NodeProto &proto, int index);

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
  mlir::RankedTensorType tensorType(const Shape &shape) {
    return mlir::RankedTensorType::get(shape, builder.getF32Type());
  }
  static Shape shapeOf(Value value);
  Value constant(const Shape &shape, llvm::ArrayRef<float> data, mlir::Location loc);
  // A one-element constant of the given rank, for broadcasting.
  Value scalar(float number, size_t rank, mlir::Location loc) {
    return constant(Shape(rank, 1), {number}, loc);
  }
  Value reshape(Value input, const Shape &shape, mlir::Location loc);
  Value transpose(Value input, llvm::ArrayRef<int32_t> perm, mlir::Location loc);
  Value slice(Value input, const Shape &start, const Shape &size, mlir::Location loc);
  Value pad(Value input, llvm::ArrayRef<int64_t> lowHigh, mlir::Location loc);
  Value clamp(Value input, float lo, float hi, mlir::Location loc);
  // Equal-rank elementwise op with TOSA's size-1 broadcasting.
  template <typename TosaOp> Value binary(Value a, Value b, mlir::Location loc);
  template <typename TosaOp> Value unary(Value input, mlir::Location loc) {
    return builder.create<TosaOp>(loc, input.getType(), input);
  }
  template <typename TosaReduceOp> Value reduce(Value input, int64_t axis, mlir::Location loc);
  // numpy broadcasting of any ranks; the result is NHWC when an operand is
  // and the result is 4-D.
  template <typename TosaOp> Tensor broadcast(const Tensor &a, const Tensor &b, const Node &node);
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
  Tensor importLeakyRelu(const Node &node);
  // ImportConv.cpp
  Tensor importConv(const Node &node);
  // A convolution's or pool's input in NHWC without the rows and columns
  // after its last window.
  Value windowInput(const Tensor &x, const std::array<int64_t, 2> &crop, mlir::Location loc);
  Tensor importMaxPool(const Node &node);
  Tensor importAveragePool(const Node &node);
  Tensor importGlobalAveragePool(const Node &node);
  // tosa.avg_pool2d on an NHWC image; pad is TOSA's [top, bottom, left, right].
  Value averagePool(Value image, llvm::ArrayRef<int64_t> kernel, llvm::ArrayRef<int64_t> stride,
                    llvm::ArrayRef<int64_t> pad, mlir::Location loc);
  Tensor importBatchNormalization(const Node &node);
  // ImportNormalization.cpp
  Tensor importSoftmax(const Node &node);
  Tensor importLayerNormalization(const Node &node);
  Tensor importReduceMean(const Node &node);
  Tensor importReduceSum(const Node &node);
  Value softmax(Value input, int64_t axis, mlir::Location loc);
  // Sums (or means) over the axes, one tosa.reduce_sum per axis.
  Value reduceAxes(Value input, const std::vector<int64_t> &axes, bool keepDims, bool mean,
                   mlir::Location loc);
  Tensor importReduce(const Node &node, std::vector<int64_t> axes, bool mean);
  // ImportShape.cpp
  Tensor importIdentity(const Node &node);
  Tensor importReshape(const Node &node);
  Tensor importFlatten(const Node &node);
  Tensor importTranspose(const Node &node);
  Tensor importConcat(const Node &node);
  Tensor importSlice(const Node &node);
  Value stridedSlice(Value input, int64_t axis, int64_t start, int64_t step, int64_t count,
                     mlir::Location loc);

  mlir::MLIRContext &context;
  mlir::OpBuilder builder;
  std::string path;
  int64_t opset = 0;
  std::map<std::string, Tensor> values;
  std::map<std::string, const onnx::TensorProto *> constants;
};

std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b);

template <typename TosaOp> Value Importer::binary(Value a, Value b, mlir::Location loc) {
  Shape as = shapeOf(a), bs = shapeOf(b), shape(as.size());
  for (size_t i = 0; i < shape.size(); ++i)
    shape[i] = std::max(as[i], bs[i]);
  if constexpr (std::is_same_v<TosaOp, mlir::tosa::MulOp>)
    return builder.create<TosaOp>(loc, tensorType(shape), a, b, builder.getI8IntegerAttr(0));
  else
    return builder.create<TosaOp>(loc, tensorType(shape), a, b);
}

template <typename TosaReduceOp>
Value Importer::reduce(Value input, int64_t axis, mlir::Location loc) {
  Shape shape = shapeOf(input);
  shape[axis] = 1;
  return builder.create<TosaReduceOp>(loc, tensorType(shape), input,
                                      builder.getI32IntegerAttr(static_cast<int32_t>(axis)));
}

template <typename TosaOp>
Tensor Importer::broadcast(const Tensor &a, const Tensor &b, const Node &node) {
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
  return {binary<TosaOp>(prepare(a, as), prepare(b, bs), node.loc),
          nhwc ? Layout::NHWC : Layout::Onnx};
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
