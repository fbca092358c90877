// Softmax, LayerNormalization and the reductions, from TOSA's reductions
// (which keep the reduced axis with size 1) and elementwise operators.
#include "Importer.h"

#include <algorithm>

namespace tpu::frontend::detail {

Value Importer::softmax(Value input, int64_t axis, mlir::Location loc) {
  // exp(x - max) / sum: the shift keeps exp from overflowing.
  Value shifted =
      binary<mlir::tosa::SubOp>(input, reduce<mlir::tosa::ReduceMaxOp>(input, axis, loc), loc);
  Value exp = unary<mlir::tosa::ExpOp>(shifted, loc);
  Value sum = reduce<mlir::tosa::ReduceSumOp>(exp, axis, loc);
  return binary<mlir::tosa::MulOp>(exp, unary<mlir::tosa::ReciprocalOp>(sum, loc), loc);
}

Tensor Importer::importSoftmax(const Node &node) {
  node.expectInputs(1, 1);
  Value x = onnxInput(node, 0);
  Shape shape = shapeOf(x);
  int64_t rank = shape.size();
  if (opset >= 13)
    return {softmax(x, node.normalizeAxis(node.intAttr("axis", -1), rank), node.loc)};
  // Before opset 13 the input is flattened to 2-D at axis (default 1) and
  // each row of the flattening is normalized as a whole.
  int64_t axis = node.normalizeAxis(node.intAttr("axis", 1), rank);
  Shape flat{elementCount(Shape(shape.begin(), shape.begin() + axis)),
             elementCount(Shape(shape.begin() + axis, shape.end()))};
  return {reshape(softmax(reshape(x, flat, node.loc), 1, node.loc), shape, node.loc)};
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
// to the normalized shape.
Tensor Importer::importLayerNormalization(const Node &node) {
  if (opset < 17)
    node.fail("operator is not in opset {} (it exists from opset 17)", opset);
  node.expectInputs(2, 3);
  node.rejectOutputsFrom(1, "Mean/InvStdDev");
  Value x = onnxInput(node, 0);
  Shape shape = shapeOf(x);
  int64_t rank = shape.size();
  std::vector<int64_t> axes;
  for (int64_t axis = node.normalizeAxis(node.intAttr("axis", -1), rank); axis < rank; ++axis)
    axes.push_back(axis);
  Value mean = reduceAxes(x, axes, /*keepDims=*/true, /*mean=*/true, node.loc);
  Value centered = binary<mlir::tosa::SubOp>(x, mean, node.loc);
  Value variance = reduceAxes(binary<mlir::tosa::MulOp>(centered, centered, node.loc), axes,
                              /*keepDims=*/true, /*mean=*/true, node.loc);
  Value epsilon = scalar(node.floatAttr("epsilon", 1e-5f), rank, node.loc);
  Value inverse =
      unary<mlir::tosa::RsqrtOp>(binary<mlir::tosa::AddOp>(variance, epsilon, node.loc), node.loc);
  Tensor result = broadcast<mlir::tosa::MulOp>(
      {binary<mlir::tosa::MulOp>(centered, inverse, node.loc)}, input(node, 1), node);
  if (node.hasInput(2))
    result = broadcast<mlir::tosa::AddOp>(result, input(node, 2), node);
  if (shapeOf(result.value) != shape)
    node.fail("Scale and B must broadcast to the input shape [{}]", fmt::join(shape, ","));
  return result;
}

Tensor Importer::importReduce(const Node &node, std::vector<int64_t> axes, bool mean) {
  Value x = onnxInput(node, 0);
  int64_t rank = shapeOf(x).size();
  // No axes: every axis.
  if (axes.empty())
    for (int64_t axis = 0; axis < rank; ++axis)
      axes.push_back(axis);
  for (int64_t &axis : axes)
    axis = node.normalizeAxis(axis, rank);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    node.fail("axes [{}] repeat an axis", fmt::join(axes, ","));
  return {reduceAxes(x, axes, node.intAttr("keepdims", 1), mean, node.loc)};
}

// ReduceMean takes axes as an attribute up to opset 17.
Tensor Importer::importReduceMean(const Node &node) {
  node.expectInputs(1, 1);
  return importReduce(node, node.intsAttr("axes").value_or(std::vector<int64_t>{}), true);
}

// ReduceSum takes axes as an attribute before opset 13 and as an optional
// constant input from 13 on, where noop_with_empty_axes=1 makes empty axes
// the identity instead of a sum over everything.
Tensor Importer::importReduceSum(const Node &node) {
  if (opset < 13) {
    node.expectInputs(1, 1);
    return importReduce(node, node.intsAttr("axes").value_or(std::vector<int64_t>{}), false);
  }
  node.expectInputs(1, 2);
  std::vector<int64_t> axes = constantInts(node, 1);
  if (axes.empty() && node.intAttr("noop_with_empty_axes", 0))
    return input(node, 0);
  return importReduce(node, axes, false);
}

} // namespace tpu::frontend::detail
