// Softmax, LayerNormalization and the reductions, from TOSA's reductions
// (which keep the reduced axis with size 1) and elementwise operators.
#include "Importer.h"

#include <algorithm>

namespace tpu::frontend::detail {

// Softmax and LogSoftmax over the last axis (moveAxisLast brings any other
// there): exp(x - max) / sum, the shift keeping exp from overflowing;
// LogSoftmax is (x - max) - log(sum).
Value Importer::softmax(Value input, int64_t axis, bool logarithm, mlir::Location loc) {
  Value shifted =
      binary<mlir::tosa::SubOp>(input, reduce<mlir::tosa::ReduceMaxOp>(input, axis, loc), loc);
  Value exp = unary<mlir::tosa::ExpOp>(shifted, loc);
  Value sum = reduce<mlir::tosa::ReduceSumOp>(exp, axis, loc);
  if (logarithm)
    return binary<mlir::tosa::SubOp>(shifted, unary<mlir::tosa::LogOp>(sum, loc), loc);
  return binary<mlir::tosa::MulOp>(exp, unary<mlir::tosa::ReciprocalOp>(sum, loc), loc);
}

// The input with `axis` moved last (back: the inverse, for a result).
Value Importer::moveAxisLast(Value input, int64_t axis, mlir::Location loc, bool back) {
  int32_t rank = static_cast<int32_t>(shapeOf(input).size());
  if (axis == rank - 1)
    return input;
  std::vector<int32_t> perm;
  for (int32_t i = 0; i < rank; ++i)
    if (i != axis)
      perm.push_back(i);
  perm.push_back(static_cast<int32_t>(axis));
  if (back) {
    std::vector<int32_t> inverse(rank);
    for (int32_t i = 0; i < rank; ++i)
      inverse[perm[i]] = i;
    perm = inverse;
  }
  return transpose(input, perm, loc);
}

Tensor Importer::importSoftmax(const Node &node) {
  node.expectInputs(1, 1);
  bool logarithm = node.proto.op_type() == "LogSoftmax";
  Value x = onnxInput(node, 0);
  Shape shape = shapeOf(x);
  int64_t rank = shape.size();
  if (opset >= 13) {
    // One axis (default -1); the vector unit reduces rows, so the axis goes
    // last and comes back.
    int64_t axis = node.normalizeAxis(node.intAttr("axis", -1), rank);
    Value result = softmax(moveAxisLast(x, axis, node.loc), rank - 1, logarithm, node.loc);
    return {moveAxisLast(result, axis, node.loc, /*back=*/true)};
  }
  // Before opset 13 the input is flattened to 2-D at axis (default 1) and
  // each row of the flattening is normalized as a whole.
  int64_t axis = node.normalizeAxis(node.intAttr("axis", 1), rank);
  Shape flat{elementCount(Shape(shape.begin(), shape.begin() + axis)),
             elementCount(Shape(shape.begin() + axis, shape.end()))};
  return {reshape(softmax(reshape(x, flat, node.loc), 1, logarithm, node.loc), shape, node.loc)};
}

Value Importer::reduceAxes(Value input, const std::vector<int64_t> &axes, bool keepDims, bool mean,
                           mlir::Location loc) {
  Shape shape = shapeOf(input), kept;
  int64_t count = 1;
  for (int64_t axis : axes) {
    input = reduce<mlir::tosa::ReduceSumOp>(input, axis, loc);
    count *= shape[axis];
  }
  if (mean)
    input = binary<mlir::tosa::MulOp>(input, scalar(1.0f / count, shape.size(), loc), loc);
  if (keepDims)
    return input;
  for (size_t i = 0; i < shape.size(); ++i)
    if (std::find(axes.begin(), axes.end(), i) == axes.end())
      kept.push_back(shape[i]);
  return reshape(input, kept, loc);
}

// Opset 17: normalizes over the axes from `axis` on; Scale and B broadcast
// to the normalized shape. The optional outputs are the mean and
// 1 / sqrt(variance + epsilon), with the normalized axes kept as size 1.
Outputs Importer::importLayerNormalization(const Node &node) {
  if (opset < 17)
    node.fail("operator is not in opset {} (it exists from opset 17)", opset);
  node.expectInputs(2, 3);
  Value x = onnxInput(node, 0);
  Shape shape = shapeOf(x);
  int64_t rank = shape.size();
  std::vector<int64_t> axes;
  for (int64_t axis = node.normalizeAxis(node.intAttr("axis", -1), rank); axis < rank; ++axis)
    axes.push_back(axis);
  Value mean, inverse;
  Value normalized =
      normalize(x, axes, node.floatAttr("epsilon", 1e-5f), node.loc, &mean, &inverse);
  Tensor result = broadcast<mlir::tosa::MulOp>({normalized}, input(node, 1), node);
  if (node.hasInput(2))
    result = broadcast<mlir::tosa::AddOp>(result, input(node, 2), node);
  if (shapeOf(result.value) != shape)
    node.fail("Scale and B must broadcast to the input shape [{}]", fmt::join(shape, ","));
  return std::vector<Tensor>{result, {mean}, {inverse}};
}

Value Importer::normalize(Value x, const std::vector<int64_t> &axes, float epsilon,
                          mlir::Location loc, Value *meanOut, Value *inverseOut) {
  int64_t rank = shapeOf(x).size();
  Value mean = reduceAxes(x, axes, /*keepDims=*/true, /*mean=*/true, loc);
  Value centered = binary<mlir::tosa::SubOp>(x, mean, loc);
  Value variance = reduceAxes(binary<mlir::tosa::MulOp>(centered, centered, loc), axes,
                              /*keepDims=*/true, /*mean=*/true, loc);
  Value inverse = unary<mlir::tosa::RsqrtOp>(
      binary<mlir::tosa::AddOp>(variance, scalar(epsilon, rank, loc), loc), loc);
  if (meanOut)
    *meanOut = mean;
  if (inverseOut)
    *inverseOut = inverse;
  return binary<mlir::tosa::MulOp>(centered, inverse, loc);
}

// Per sample and channel over the spatial axes, then a per-channel scale
// and bias.
Tensor Importer::importInstanceNormalization(const Node &node) {
  node.expectInputs(3, 3);
  Value x = onnxInput(node, 0);
  Shape shape = shapeOf(x);
  if (shape.size() < 3)
    node.fail("input must have rank 3 or more");
  std::vector<int64_t> axes;
  for (size_t axis = 2; axis < shape.size(); ++axis)
    axes.push_back(axis);
  Value normalized = normalize(x, axes, node.floatAttr("epsilon", 1e-5f), node.loc);
  Shape perChannel(shape.size(), 1);
  perChannel[1] = shape[1];
  Tensor scale{reshape(onnxInput(node, 1), perChannel, node.loc)};
  Tensor bias{reshape(onnxInput(node, 2), perChannel, node.loc)};
  return broadcast<mlir::tosa::AddOp>(broadcast<mlir::tosa::MulOp>({normalized}, scale, node), bias,
                                      node);
}

// (x - mean) / sqrt(variance + 1e-9) over the axes (default N, H, W).
Tensor Importer::importMeanVarianceNormalization(const Node &node) {
  node.expectInputs(1, 1);
  Value x = onnxInput(node, 0);
  int64_t rank = shapeOf(x).size();
  std::vector<int64_t> axes = node.intsAttr("axes").value_or(std::vector<int64_t>{0, 2, 3});
  for (int64_t &axis : axes)
    axis = node.normalizeAxis(axis, rank);
  std::sort(axes.begin(), axes.end());
  return {normalize(x, axes, 1e-9f, node.loc)};
}

namespace {

enum class ReduceKind { Sum, Max, Min, Prod };
enum class Before { None, Abs, Square, Exp };
enum class After { None, Mean, Sqrt, Log };

struct Reduction {
  ReduceKind kind;
  Before before;
  After after;
  int64_t axesInputFrom; // the opset that made axes an input
};

const std::map<std::string, Reduction> &reductionTable() {
  static const std::map<std::string, Reduction> table = {
      {"ReduceSum", {ReduceKind::Sum, Before::None, After::None, 13}},
      {"ReduceMean", {ReduceKind::Sum, Before::None, After::Mean, 18}},
      {"ReduceMax", {ReduceKind::Max, Before::None, After::None, 18}},
      {"ReduceMin", {ReduceKind::Min, Before::None, After::None, 18}},
      {"ReduceProd", {ReduceKind::Prod, Before::None, After::None, 18}},
      {"ReduceL1", {ReduceKind::Sum, Before::Abs, After::None, 18}},
      {"ReduceL2", {ReduceKind::Sum, Before::Square, After::Sqrt, 18}},
      {"ReduceSumSquare", {ReduceKind::Sum, Before::Square, After::None, 18}},
      {"ReduceLogSum", {ReduceKind::Sum, Before::None, After::Log, 18}},
      {"ReduceLogSumExp", {ReduceKind::Sum, Before::Exp, After::Log, 18}},
  };
  return table;
}

} // namespace

const std::vector<std::string> &reductionOperators() {
  static const std::vector<std::string> names = keysOf(reductionTable());
  return names;
}

std::optional<std::vector<int64_t>> Importer::reduceAxesOperand(const Node &node,
                                                                int64_t inputFromOpset) {
  if (opset < inputFromOpset) {
    node.expectInputs(1, 1);
    return node.intsAttr("axes").value_or(std::vector<int64_t>{});
  }
  node.expectInputs(1, 2);
  if (node.attr("axes"))
    node.fail("axes is an input from opset {}, not an attribute", inputFromOpset);
  std::vector<int64_t> axes = constantInts(node, 1);
  // noop_with_empty_axes=1: no axes is the identity, not every axis.
  if (axes.empty() && node.intAttr("noop_with_empty_axes", 0))
    return std::nullopt;
  return axes;
}

// A Reduce* over any set of axes: an elementwise step before (|x|, x^2,
// exp), one TOSA reduction per axis, a step after (mean, sqrt, log).
Tensor Importer::importReduction(const Node &node) {
  const Reduction &reduction = reductionTable().at(node.proto.op_type());
  std::optional<std::vector<int64_t>> maybeAxes = reduceAxesOperand(node, reduction.axesInputFrom);
  if (!maybeAxes)
    return input(node, 0);
  std::vector<int64_t> axes = *maybeAxes;
  Value x = onnxInput(node, 0);
  Shape shape = shapeOf(x);
  int64_t rank = shape.size();
  if (axes.empty()) // every axis
    for (int64_t axis = 0; axis < rank; ++axis)
      axes.push_back(axis);
  for (int64_t &axis : axes)
    axis = node.normalizeAxis(axis, rank);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    node.fail("axes [{}] repeat an axis", fmt::join(axes, ","));

  switch (reduction.before) {
  case Before::Abs:
    x = unary<mlir::tosa::AbsOp>(x, node.loc);
    break;
  case Before::Square:
    x = binary<mlir::tosa::MulOp>(x, x, node.loc);
    break;
  case Before::Exp:
    x = unary<mlir::tosa::ExpOp>(x, node.loc);
    break;
  case Before::None:
    break;
  }
  int64_t count = 1;
  for (int64_t axis : axes) {
    count *= shape[axis];
    switch (reduction.kind) {
    case ReduceKind::Sum:
      x = reduce<mlir::tosa::ReduceSumOp>(x, axis, node.loc);
      break;
    case ReduceKind::Max:
      x = reduce<mlir::tosa::ReduceMaxOp>(x, axis, node.loc);
      break;
    case ReduceKind::Min:
      x = reduce<mlir::tosa::ReduceMinOp>(x, axis, node.loc);
      break;
    case ReduceKind::Prod:
      x = reduce<mlir::tosa::ReduceProdOp>(x, axis, node.loc);
      break;
    }
  }
  switch (reduction.after) {
  case After::Mean:
    x = binary<mlir::tosa::MulOp>(x, scalar(1.0f / count, rank, node.loc), node.loc);
    break;
  case After::Sqrt:
    x = unary<mlir::tosa::ReciprocalOp>(unary<mlir::tosa::RsqrtOp>(x, node.loc), node.loc);
    break;
  case After::Log:
    x = unary<mlir::tosa::LogOp>(x, node.loc);
    break;
  case After::None:
    break;
  }
  if (node.intAttr("keepdims", 1))
    return {x};
  Shape kept;
  for (int64_t i = 0; i < rank; ++i)
    if (!std::binary_search(axes.begin(), axes.end(), i))
      kept.push_back(shape[i]);
  return {reshape(x, kept, node.loc)};
}

// ArgMax and ArgMin (as ArgMax of -x): int64 indices; select_last_index
// searches the reversed axis and maps the index back.
Tensor Importer::importArgExtremum(const Node &node) {
  node.expectInputs(1, 1);
  Value x = onnxInput(node, 0);
  Shape shape = shapeOf(x);
  int64_t rank = shape.size();
  int64_t axis = node.normalizeAxis(node.intAttr("axis", 0), rank);
  if (node.proto.op_type() == "ArgMin")
    x = negate(x, node.loc);
  bool last = node.intAttr("select_last_index", 0);
  if (last)
    x = builder.create<mlir::tosa::ReverseOp>(node.loc, x.getType(), x,
                                              builder.getI32IntegerAttr(axis));
  Shape reduced = shape;
  reduced.erase(reduced.begin() + axis);
  auto i32 = builder.getI32Type();
  Value index = builder.create<mlir::tosa::ArgMaxOp>(node.loc, tensorType(reduced, i32), x,
                                                     builder.getI32IntegerAttr(axis));
  if (last) {
    auto one = tensorType(Shape(reduced.size(), 1), i32);
    Value end = builder.create<mlir::tosa::ConstOp>(
        node.loc, one, mlir::DenseElementsAttr::get(one, static_cast<int32_t>(shape[axis] - 1)));
    index = builder.create<mlir::tosa::SubOp>(node.loc, index.getType(), end, index);
  }
  if (node.intAttr("keepdims", 1)) {
    Shape kept = shape;
    kept[axis] = 1;
    index = reshape(index, kept, node.loc);
  }
  return {builder.create<mlir::tosa::CastOp>(
      node.loc, tensorType(shapeOf(index), builder.getI64Type()), index)};
}

} // namespace tpu::frontend::detail
