// Operators that pick elements by index: Gather, Pad (reflect and edge pick
// border elements), Resize (nearest and linear pick and blend neighbours).
// Indices known at compile time become slices and a concat, which every
// target runs; Gather's runtime indices are tosa.gather.
#include "Importer.h"

#include <cmath>
#include <numeric>

namespace tpu::frontend::detail {

Value Importer::gatherConstant(Value input, int64_t axis, const std::vector<int64_t> &indices,
                               const Node &node) {
  // No index would be a concat of nothing, which TOSA's verifier crashes on.
  if (indices.empty())
    node.fail("selects no elements; empty tensors are not supported");
  mlir::Location loc = node.loc;
  Shape shape = shapeOf(input);
  std::vector<Value> pieces;
  // Runs of consecutive indices are one slice each.
  for (size_t first = 0; first < indices.size();) {
    size_t end = first + 1;
    while (end < indices.size() && indices[end] == indices[end - 1] + 1)
      ++end;
    Shape begin(shape.size(), 0), size = shape;
    begin[axis] = indices[first];
    size[axis] = static_cast<int64_t>(end - first);
    pieces.push_back(slice(input, begin, size, loc));
    first = end;
  }
  if (pieces.size() == 1)
    return pieces[0];
  Shape result = shape;
  result[axis] = static_cast<int64_t>(indices.size());
  return builder.create<mlir::tosa::ConcatOp>(loc, tensorType(result, elementType(input)), pieces,
                                              builder.getI32IntegerAttr(axis));
}

// Output: data.shape[:axis] + indices.shape + data.shape[axis+1:]. Indices
// may be negative (counted from the end).
Tensor Importer::importGather(const Node &node) {
  node.expectInputs(2, 2);
  Value data = onnxInput(node, 0);
  Shape shape = shapeOf(data);
  int64_t rank = shape.size(), axis = node.normalizeAxis(node.intAttr("axis", 0), rank);
  int64_t dim = shape[axis];
  Shape before(shape.begin(), shape.begin() + axis), after(shape.begin() + axis + 1, shape.end());
  if (constants.count(node.proto.input(1))) {
    const onnx::TensorProto *indexTensor = constantInput(node, 1);
    Shape indexShape(indexTensor->dims().begin(), indexTensor->dims().end());
    std::vector<int64_t> indices = constantInts(node, 1);
    for (int64_t &index : indices) {
      if (index < -dim || index >= dim)
        node.fail("index {} is out of range for axis {} of size {}", index, axis, dim);
      index = index < 0 ? index + dim : index;
    }
    Value gathered = gatherConstant(data, axis, indices, node);
    Shape result = before;
    result.insert(result.end(), indexShape.begin(), indexShape.end());
    result.insert(result.end(), after.begin(), after.end());
    return {reshape(gathered, result, node.loc)};
  }
  // Runtime indices: tosa.gather takes values [N, K, C] and i32 indices
  // [N, W]; here N is the axes before `axis` (the indices repeated for
  // each), K the gathered axis and C the axes after it.
  Value indices = input(node, 1).value;
  Shape indexShape = shapeOf(indices);
  if (!elementType(indices).isInteger(64) && !elementType(indices).isInteger(32))
    node.fail("indices must be int64 or int32");
  auto i32 = builder.getI32Type(), i1 = builder.getI1Type();
  if (!elementType(indices).isInteger(32))
    indices = builder.create<mlir::tosa::CastOp>(node.loc, tensorType(indexShape, i32), indices);
  int64_t count = elementCount(indexShape), outer = elementCount(before),
          inner = elementCount(after);
  indices = reshape(indices, {1, count}, node.loc);
  auto scalarType = tensorType({1, 1}, i32);
  auto intScalar = [&](int32_t value) -> Value {
    return builder.create<mlir::tosa::ConstOp>(node.loc, scalarType,
                                               mlir::DenseElementsAttr::get(scalarType, value));
  };
  // index < 0 ? index + dim : index
  Value negative = builder.create<mlir::tosa::GreaterOp>(node.loc, tensorType({1, count}, i1),
                                                         intScalar(0), indices);
  Value wrapped =
      binary<mlir::tosa::AddOp>(indices, intScalar(static_cast<int32_t>(dim)), node.loc);
  indices =
      builder.create<mlir::tosa::SelectOp>(node.loc, indices.getType(), negative, wrapped, indices);
  indices = tileTo(indices, {outer, count}, node.loc);
  Value values = reshape(data, {outer, dim, inner}, node.loc);
  Value gathered = builder.create<mlir::tosa::GatherOp>(
      node.loc, tensorType({outer, count, inner}, elementType(data)), values, indices);
  Shape result = before;
  result.insert(result.end(), indexShape.begin(), indexShape.end());
  result.insert(result.end(), after.begin(), after.end());
  return {reshape(gathered, result, node.loc)};
}

namespace {

// The source index of each output position of one padded axis.
std::vector<int64_t> borderIndices(const std::string &mode, int64_t dim, int64_t low,
                                   int64_t high) {
  std::vector<int64_t> indices;
  for (int64_t i = -low; i < dim + high; ++i) {
    int64_t index = i;
    if (mode == "edge") {
      index = std::clamp<int64_t>(i, 0, dim - 1);
    } else { // reflect: mirror about the first and last element
      int64_t period = 2 * (dim - 1);
      index = period == 0 ? 0 : ((i % period) + period) % period;
      if (index >= dim)
        index = period - index;
    }
    indices.push_back(index);
  }
  return indices;
}

} // namespace

// Opset 11+: pads (and opset 18's axes) are inputs; constant, reflect and
// edge modes. Negative pads crop.
Tensor Importer::importPad(const Node &node) {
  node.expectInputs(2, 4);
  Value x = onnxInput(node, 0);
  Shape shape = shapeOf(x);
  int64_t rank = shape.size();
  std::vector<int64_t> pads = constantInts(node, 1);
  std::vector<int64_t> axes(rank);
  std::iota(axes.begin(), axes.end(), 0);
  if (node.hasInput(3))
    axes = constantInts(node, 3);
  if (pads.size() != 2 * axes.size())
    node.fail("pads has {} values for {} axes", pads.size(), axes.size());
  std::vector<int64_t> low(rank, 0), high(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = node.normalizeAxis(axes[i], rank);
    low[axis] = pads[i];
    high[axis] = pads[i + axes.size()];
  }
  // Crop first: a negative pad removes elements.
  Shape begin(rank, 0), size = shape;
  for (int64_t axis = 0; axis < rank; ++axis) {
    begin[axis] = std::max<int64_t>(0, -low[axis]);
    size[axis] -= begin[axis] + std::max<int64_t>(0, -high[axis]);
    if (size[axis] <= 0)
      node.fail("the pads leave nothing of axis {}", axis);
    low[axis] = std::max<int64_t>(0, low[axis]);
    high[axis] = std::max<int64_t>(0, high[axis]);
  }
  x = slice(x, begin, size, node.loc);
  std::string mode = node.stringAttr("mode", "constant");
  if (mode == "reflect" || mode == "edge") {
    for (int64_t axis = 0; axis < rank; ++axis) {
      if (low[axis] == 0 && high[axis] == 0)
        continue;
      if (mode == "reflect" && (low[axis] >= size[axis] || high[axis] >= size[axis]))
        node.fail("reflect pads of axis {} must be smaller than its size {}", axis, size[axis]);
      x = gatherConstant(x, axis, borderIndices(mode, size[axis], low[axis], high[axis]), node);
    }
    return {x};
  }
  if (mode != "constant")
    node.fail("mode '{}' is not supported", mode);
  float value = 0.0f;
  if (node.hasInput(2)) {
    std::vector<float> values = constantFloats(node, 2);
    if (values.size() > 1)
      node.fail("constant_value must be a scalar");
    value = values.empty() ? 0.0f : values[0];
  }
  std::vector<int64_t> lowHigh;
  for (int64_t axis = 0; axis < rank; ++axis)
    lowHigh.insert(lowHigh.end(), {low[axis], high[axis]});
  if (std::all_of(lowHigh.begin(), lowHigh.end(), [](int64_t p) { return p == 0; }))
    return {x};
  return {pad(x, lowHigh, node.loc, value)};
}

namespace {

// Resize's map from an output coordinate to the input, per
// coordinate_transformation_mode (ONNX operator documentation).
double sourceCoordinate(const Node &node, const std::string &mode, int64_t out, double scale,
                        int64_t inSize, int64_t outSize) {
  if (mode == "half_pixel")
    return (out + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel")
    return outSize > 1 ? (out + 0.5) / scale - 0.5 : 0.0;
  if (mode == "align_corners")
    return outSize > 1 ? out * static_cast<double>(inSize - 1) / (outSize - 1) : 0.0;
  if (mode == "asymmetric")
    return out / scale;
  if (mode == "tf_half_pixel_for_nearest")
    return (out + 0.5) / scale;
  node.fail("coordinate_transformation_mode '{}' is not supported", mode);
}

int64_t nearestIndex(const Node &node, const std::string &mode, double x) {
  double lower = std::floor(x);
  bool half = x - lower == 0.5;
  if (mode == "round_prefer_floor")
    return static_cast<int64_t>(half ? lower : std::round(x));
  if (mode == "round_prefer_ceil")
    return static_cast<int64_t>(half ? lower + 1 : std::round(x));
  if (mode == "floor")
    return static_cast<int64_t>(lower);
  if (mode == "ceil")
    return static_cast<int64_t>(std::ceil(x));
  node.fail("nearest_mode '{}' is not supported", mode);
}

} // namespace

// Nearest and (bi)linear resizing, axis by axis: each output position takes
// constant-index neighbours; linear blends two with constant weights.
// Inputs: X, roi, scales, sizes (opset 11+; only one of scales and sizes).
Tensor Importer::importResize(const Node &node) {
  node.expectInputs(1, 4);
  Tensor x = input(node, 0);
  Shape shape = onnxShape(x);
  int64_t rank = shape.size();
  std::string mode = node.stringAttr("mode", "nearest");
  std::string transform = node.stringAttr("coordinate_transformation_mode", "half_pixel");
  std::string nearest = node.stringAttr("nearest_mode", "round_prefer_floor");
  if (mode != "nearest" && mode != "linear")
    node.fail("mode '{}' is not supported (nearest and linear are)", mode);
  if (node.stringAttr("keep_aspect_ratio_policy", "stretch") != "stretch")
    node.fail("keep_aspect_ratio_policy other than stretch is not supported");
  std::vector<int64_t> axes(rank);
  std::iota(axes.begin(), axes.end(), 0);
  axes = node.intsAttr("axes").value_or(axes);
  std::vector<float> scaleValues = constantFloats(node, 2);
  std::vector<int64_t> sizeValues = constantInts(node, 3);
  if (scaleValues.empty() == sizeValues.empty())
    node.fail("exactly one of scales and sizes must be given");
  size_t given = scaleValues.empty() ? sizeValues.size() : scaleValues.size();
  if (given != axes.size())
    node.fail("{} scales or sizes for {} axes", given, axes.size());
  // NHWC images are resized in place: ONNX axis a is NHWC axis nhwcAxis[a].
  bool nhwc = x.layout == Layout::NHWC;
  Value result = x.value;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = node.normalizeAxis(axes[i], rank), inSize = shape[axis];
    double scale =
        scaleValues.empty() ? static_cast<double>(sizeValues[i]) / inSize : scaleValues[i];
    int64_t outSize = scaleValues.empty()
                          ? sizeValues[i]
                          : static_cast<int64_t>(std::floor(inSize * static_cast<double>(scale)));
    if (outSize <= 0)
      node.fail("axis {} would have size {}", axis, outSize);
    if (outSize == inSize && scale == 1.0)
      continue;
    if (node.intAttr("antialias", 0) && outSize < inSize)
      node.fail("antialias is not supported when downsampling");
    int64_t tosaAxis =
        nhwc ? std::find(std::begin(kToNHWC), std::end(kToNHWC), axis) - std::begin(kToNHWC) : axis;
    std::vector<int64_t> first, second;
    std::vector<float> weights;
    for (int64_t out = 0; out < outSize; ++out) {
      double source = sourceCoordinate(node, transform, out, scale, inSize, outSize);
      if (mode == "nearest") {
        first.push_back(std::clamp<int64_t>(nearestIndex(node, nearest, source), 0, inSize - 1));
        continue;
      }
      // Neighbours beyond the border repeat the edge element.
      double lower = std::floor(source);
      first.push_back(std::clamp<int64_t>(static_cast<int64_t>(lower), 0, inSize - 1));
      second.push_back(std::clamp<int64_t>(static_cast<int64_t>(lower) + 1, 0, inSize - 1));
      weights.push_back(static_cast<float>(source - lower));
    }
    Value near = gatherConstant(result, tosaAxis, first, node);
    if (mode == "nearest") {
      result = near;
      continue;
    }
    // near + (far - near) * w, with w along the axis.
    Value far = gatherConstant(result, tosaAxis, second, node);
    Shape weightShape(rank, 1);
    weightShape[tosaAxis] = outSize;
    Value blend = binary<mlir::tosa::MulOp>(binary<mlir::tosa::SubOp>(far, near, node.loc),
                                            constant(weightShape, weights, node.loc), node.loc);
    result = binary<mlir::tosa::AddOp>(near, blend, node.loc);
  }
  return {result, x.layout};
}

} // namespace tpu::frontend::detail
