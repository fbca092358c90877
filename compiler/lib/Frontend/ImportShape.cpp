// Operators that move data without arithmetic.
#include "Importer.h"

#include <algorithm>
#include <numeric>

namespace tpu::frontend::detail {
namespace {

Shape reshapeTarget(const Node &node, const Shape &inputShape, Shape target) {
  int64_t total = elementCount(inputShape), known = 1, inferred = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !node.intAttr("allowzero", 0))
      target[i] = i < inputShape.size() ? inputShape[i] : 0;
    if (target[i] == -1) {
      if (inferred >= 0)
        node.fail("more than one -1 in the shape");
      inferred = i;
    } else if (target[i] <= 0) {
      node.fail("invalid dimension {} in the shape", target[i]);
    } else if (__builtin_mul_overflow(known, target[i], &known)) {
      node.fail("the shape [{}] has more elements than an int64 counts", fmt::join(target, ","));
    }
  }
  if (inferred >= 0 && total % known == 0)
    target[inferred] = total / known;
  if (elementCount(target) != total)
    node.fail("cannot reshape [{}] to [{}]", fmt::join(inputShape, ","), fmt::join(target, ","));
  return target;
}

} // namespace

Tensor Importer::importIdentity(const Node &node) {
  node.expectInputs(1, 1);
  return input(node, 0);
}

Tensor Importer::importReshape(const Node &node) {
  node.expectInputs(2, 2);
  if (!node.hasInput(1))
    node.fail("the shape input is required");
  Value x = onnxInput(node, 0);
  return {reshape(x, reshapeTarget(node, shapeOf(x), constantInts(node, 1)), node.loc)};
}

Tensor Importer::importFlatten(const Node &node) {
  node.expectInputs(1, 1);
  Value x = onnxInput(node, 0);
  Shape shape = shapeOf(x);
  // axis may equal the rank: everything goes to the outer dimension.
  int64_t axis = node.intAttr("axis", 1);
  int64_t rank = shape.size();
  if (axis < -rank || axis > rank)
    node.fail("axis {} is out of range for rank {}", axis, rank);
  if (axis < 0)
    axis += rank;
  return {reshape(x,
                  {elementCount(Shape(shape.begin(), shape.begin() + axis)),
                   elementCount(Shape(shape.begin() + axis, shape.end()))},
                  node.loc)};
}

Tensor Importer::importTranspose(const Node &node) {
  node.expectInputs(1, 1);
  Value x = onnxInput(node, 0);
  int64_t rank = shapeOf(x).size();
  // The default reverses the axes.
  std::vector<int64_t> perm(rank);
  std::iota(perm.rbegin(), perm.rend(), 0);
  perm = node.intsAttr("perm").value_or(perm);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> identity(rank);
  std::iota(identity.begin(), identity.end(), 0);
  if (sorted != identity)
    node.fail("perm [{}] is not a permutation of the {} axes", fmt::join(perm, ","), rank);
  if (perm == identity)
    return {x};
  return {transpose(x, std::vector<int32_t>(perm.begin(), perm.end()), node.loc)};
}

Tensor Importer::importConcat(const Node &node) {
  node.expectInputs(1, INT_MAX);
  if (!node.attr("axis"))
    node.fail("axis is required");
  std::vector<Tensor> inputs;
  for (int i = 0; i < node.proto.input_size(); ++i)
    inputs.push_back(input(node, i));
  Shape shape = onnxShape(inputs[0]);
  int64_t axis = node.normalizeAxis(node.intAttr("axis", 0), shape.size());
  shape[axis] = 0;
  for (const Tensor &tensor : inputs) {
    Shape other = onnxShape(tensor);
    if (other.size() != shape.size() ||
        !std::equal(other.begin(), other.begin() + axis, shape.begin()) ||
        !std::equal(other.begin() + axis + 1, other.end(), shape.begin() + axis + 1))
      node.fail("input shapes differ outside axis {}", axis);
    shape[axis] += other[axis];
  }
  // Channels of NHWC images join in NHWC.
  bool nhwc = std::all_of(inputs.begin(), inputs.end(),
                          [](const Tensor &t) { return t.layout == Layout::NHWC; });
  std::vector<Value> operands;
  for (const Tensor &tensor : inputs)
    operands.push_back(nhwc ? tensor.value : toOnnxLayout(tensor, node.loc));
  if (nhwc) {
    axis = std::find(std::begin(kToNHWC), std::end(kToNHWC), axis) - std::begin(kToNHWC);
    shape = {shape[0], shape[2], shape[3], shape[1]};
  }
  return {builder.create<mlir::tosa::ConcatOp>(node.loc, tensorType(shape), operands,
                                               builder.getI32IntegerAttr(axis)),
          nhwc ? Layout::NHWC : Layout::Onnx};
}

// Elements start, start + step, ... (count of them) along axis, step > 0:
// a slice, and for steps over 1 a reshape into groups of `step` whose heads
// are kept.
Value Importer::stridedSlice(Value input, int64_t axis, int64_t start, int64_t step, int64_t count,
                             mlir::Location loc) {
  Shape shape = shapeOf(input), begin(shape.size(), 0), size = shape;
  begin[axis] = start;
  size[axis] = step == 1 ? count : std::min(count * step, shape[axis] - start);
  Value result = slice(input, begin, size, loc);
  if (step == 1)
    return result;
  // Pad the last group to a whole `step` when the input ends inside it.
  std::vector<int64_t> padding(2 * shape.size(), 0);
  padding[2 * axis + 1] = count * step - size[axis];
  if (padding[2 * axis + 1] > 0)
    result = pad(result, padding, loc);
  Shape grouped = size;
  grouped[axis] = count;
  grouped.insert(grouped.begin() + axis + 1, step);
  Shape headsBegin(grouped.size(), 0), heads = grouped;
  heads[axis + 1] = 1;
  result = slice(reshape(result, grouped, loc), headsBegin, heads, loc);
  size[axis] = count;
  return reshape(result, size, loc);
}

// Opset 10 and later: starts, ends, axes and steps are inputs, which must be
// constants here. Indices are clamped as the ONNX documentation says.
Tensor Importer::importSlice(const Node &node) {
  node.expectInputs(3, 5);
  Value result = onnxInput(node, 0);
  Shape shape = shapeOf(result);
  int64_t rank = shape.size();
  std::vector<int64_t> starts = constantInts(node, 1), ends = constantInts(node, 2);
  std::vector<int64_t> axes(starts.size()), steps(starts.size(), 1);
  std::iota(axes.begin(), axes.end(), 0);
  if (node.hasInput(3))
    axes = constantInts(node, 3);
  if (node.hasInput(4))
    steps = constantInts(node, 4);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    node.fail("starts, ends, axes and steps differ in length");
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis = node.normalizeAxis(axes[i], rank), dim = shape[axis], step = steps[i];
    if (seen[axis])
      node.fail("axis {} is sliced twice", axis);
    seen[axis] = true;
    if (step == 0)
      node.fail("step 0 on axis {}", axis);
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    // Forward slices clamp to [0, dim], backward ones to [-1, dim - 1].
    start = step > 0 ? std::clamp<int64_t>(start, 0, dim) : std::clamp<int64_t>(start, 0, dim - 1);
    end = step > 0 ? std::clamp<int64_t>(end, 0, dim) : std::clamp<int64_t>(end, -1, dim - 1);
    int64_t distance = step > 0 ? end - start : start - end, stride = std::abs(step);
    int64_t count = distance > 0 ? (distance + stride - 1) / stride : 0;
    if (count == 0)
      node.fail("the result is empty on axis {}", axis);
    if (step < 0) {
      // Backward: forward on the reversed axis.
      result = builder.create<mlir::tosa::ReverseOp>(node.loc, result.getType(), result,
                                                     builder.getI32IntegerAttr(axis));
      start = dim - 1 - start;
    }
    result = stridedSlice(result, axis, start, stride, count, node.loc);
  }
  return {result};
}

} // namespace tpu::frontend::detail

namespace tpu::frontend::detail {

std::vector<int64_t> Importer::axesOperand(const Node &node, int64_t inputFromOpset) {
  if (opset < inputFromOpset)
    return node.intsAttr("axes").value_or(std::vector<int64_t>{});
  return constantInts(node, 1);
}

// Axes attribute before opset 13, input from 13; no axes: every size-1 axis.
Tensor Importer::importSqueeze(const Node &node) {
  node.expectInputs(1, opset < 13 ? 1 : 2);
  Value x = onnxInput(node, 0);
  Shape shape = shapeOf(x), result;
  int64_t rank = shape.size();
  std::vector<bool> squeezed(rank, false);
  std::vector<int64_t> axes = axesOperand(node, 13);
  for (int64_t axis : axes) {
    axis = node.normalizeAxis(axis, rank);
    if (shape[axis] != 1)
      node.fail("axis {} has size {}, not 1", axis, shape[axis]);
    squeezed[axis] = true;
  }
  for (int64_t i = 0; i < rank; ++i)
    if (!(axes.empty() ? shape[i] == 1 : squeezed[i]))
      result.push_back(shape[i]);
  return {reshape(x, result, node.loc)};
}

// Axes (of the result) attribute before opset 13, input from 13.
Tensor Importer::importUnsqueeze(const Node &node) {
  node.expectInputs(1, opset < 13 ? 1 : 2);
  Value x = onnxInput(node, 0);
  Shape shape = shapeOf(x);
  std::vector<int64_t> axes = axesOperand(node, 13);
  if (axes.empty())
    node.fail("axes are required");
  int64_t rank = shape.size() + axes.size();
  std::vector<bool> inserted(rank, false);
  for (int64_t axis : axes) {
    axis = node.normalizeAxis(axis, rank);
    if (inserted[axis])
      node.fail("axis {} repeats", axis);
    inserted[axis] = true;
  }
  Shape result;
  auto next = shape.begin();
  for (int64_t i = 0; i < rank; ++i)
    result.push_back(inserted[i] ? 1 : *next++);
  return {reshape(x, result, node.loc)};
}

// Sizes from the split attribute (before opset 13) or input (13+), else
// equal parts for the outputs; opset 18's num_outputs makes parts of
// ceil(size / n) with a smaller last one.
Outputs Importer::importSplit(const Node &node) {
  node.expectInputs(1, 2);
  Value x = onnxInput(node, 0);
  Shape shape = shapeOf(x);
  int64_t axis = node.normalizeAxis(node.intAttr("axis", 0), shape.size());
  std::vector<int64_t> sizes =
      opset < 13 ? node.intsAttr("split").value_or(std::vector<int64_t>{}) : constantInts(node, 1);
  int64_t outputs = node.proto.output_size(), dim = shape[axis];
  if (sizes.empty()) {
    int64_t parts = node.intAttr("num_outputs", outputs);
    if (parts != outputs)
      node.fail("num_outputs {} differs from the {} outputs", parts, outputs);
    int64_t part = opset >= 18 ? (dim + parts - 1) / parts : dim / parts;
    if (opset < 18 && dim % parts)
      node.fail("axis {} of size {} does not split into {} equal parts", axis, dim, parts);
    for (int64_t i = 0; i < parts; ++i)
      sizes.push_back(std::min(part, dim - i * part));
  }
  if (static_cast<int64_t>(sizes.size()) != outputs ||
      std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) != dim ||
      *std::min_element(sizes.begin(), sizes.end()) <= 0)
    node.fail("split sizes [{}] do not divide axis {} of size {} into {} outputs",
              fmt::join(sizes, ","), axis, dim, outputs);
  std::vector<Tensor> results;
  Shape begin(shape.size(), 0);
  for (int64_t size : sizes) {
    Shape part = shape;
    part[axis] = size;
    results.push_back({slice(x, begin, part, node.loc)});
    begin[axis] += size;
  }
  return results;
}

// numpy broadcasting of the input and the constant shape, both ways.
Tensor Importer::importExpand(const Node &node) {
  node.expectInputs(2, 2);
  Value x = onnxInput(node, 0);
  Shape own = shapeOf(x);
  std::optional<Shape> shape = broadcastShapes(own, constantInts(node, 1));
  if (!shape)
    node.fail("shape [{}] does not broadcast to [{}]", fmt::join(own, ","),
              fmt::join(constantInts(node, 1), ","));
  own.insert(own.begin(), shape->size() - own.size(), 1);
  return {tileTo(reshape(x, own, node.loc), *shape, node.loc)};
}

// Constant repeats per axis.
Tensor Importer::importTile(const Node &node) {
  node.expectInputs(2, 2);
  Value x = onnxInput(node, 0);
  Shape shape = shapeOf(x);
  std::vector<int64_t> repeats = constantInts(node, 1);
  if (repeats.size() != shape.size() || *std::min_element(repeats.begin(), repeats.end()) < 1)
    node.fail("repeats [{}] must be one positive value per axis", fmt::join(repeats, ","));
  for (size_t i = 0; i < shape.size(); ++i)
    shape[i] *= repeats[i];
  return {tileTo(x, shape, node.loc)};
}

// Shapes are static: Size is a constant, like Shape.
Outputs Importer::importSize(const Node &node) {
  node.expectInputs(1, 1);
  auto owned = std::make_unique<onnx::TensorProto>();
  owned->set_data_type(onnx::TensorProto::INT64);
  owned->add_int64_data(elementCount(onnxShape(input(node, 0))));
  constants[node.proto.output(0)] = owned.get();
  ownedConstants.push_back(std::move(owned));
  return std::vector<Tensor>{}; // a constant, made a tensor where one is used
}

// DepthToSpace (DCR or CRD) and SpaceToDepth: a reshape, a transpose and a
// reshape, as the operator documentation writes them.
Tensor Importer::importDepthToSpace(const Node &node) {
  node.expectInputs(1, 1);
  Value x = onnxInput(node, 0);
  Shape s = shapeOf(x);
  int64_t b = node.intAttr("blocksize", 0);
  if (s.size() != 4 || b < 1)
    node.fail("needs a 4-D input and a positive blocksize");
  if (node.proto.op_type() == "SpaceToDepth") {
    if (s[2] % b || s[3] % b)
      node.fail("H and W must be multiples of blocksize {}", b);
    Value t = transpose(reshape(x, {s[0], s[1], s[2] / b, b, s[3] / b, b}, node.loc),
                        {0, 3, 5, 1, 2, 4}, node.loc);
    return {reshape(t, {s[0], s[1] * b * b, s[2] / b, s[3] / b}, node.loc)};
  }
  if (s[1] % (b * b))
    node.fail("channels must be a multiple of blocksize^2 = {}", b * b);
  int64_t c = s[1] / (b * b);
  bool crd = node.stringAttr("mode", "DCR") == "CRD";
  Value t = crd ? transpose(reshape(x, {s[0], c, b, b, s[2], s[3]}, node.loc), {0, 1, 4, 2, 5, 3},
                            node.loc)
                : transpose(reshape(x, {s[0], b, b, c, s[2], s[3]}, node.loc), {0, 3, 4, 1, 5, 2},
                            node.loc);
  return {reshape(t, {s[0], c, s[2] * b, s[3] * b}, node.loc)};
}

// A constant of the given (constant) shape filled with the value attribute.
Outputs Importer::importConstantOfShape(const Node &node) {
  node.expectInputs(1, 1);
  std::vector<int64_t> shape = constantInts(node, 0);
  auto owned = std::make_unique<onnx::TensorProto>();
  const onnx::AttributeProto *value = node.attr("value");
  owned->set_data_type(value ? value->t().data_type() : onnx::TensorProto::FLOAT);
  for (int64_t dim : shape)
    owned->add_dims(dim);
  int64_t count = elementCount(shape);
  if (owned->data_type() == onnx::TensorProto::FLOAT) {
    float fill = value ? tensorFloats(value->t(), node.what).at(0) : 0.0f;
    for (int64_t i = 0; i < count; ++i)
      owned->add_float_data(fill);
  } else if (owned->data_type() == onnx::TensorProto::INT64) {
    int64_t fill = tensorInts(value->t(), node.what).at(0);
    for (int64_t i = 0; i < count; ++i)
      owned->add_int64_data(fill);
  } else {
    node.fail("only float32 and int64 values are supported");
  }
  constants[node.proto.output(0)] = owned.get();
  ownedConstants.push_back(std::move(owned));
  return std::vector<Tensor>{}; // a constant, made a tensor where one is used
}

// Shapes are static: Shape is a constant (start and end from opset 15).
Outputs Importer::importShape(const Node &node) {
  node.expectInputs(1, 1);
  Shape shape = onnxShape(input(node, 0));
  int64_t rank = shape.size();
  auto bound = [&](const char *name, int64_t fallback) {
    int64_t value = node.intAttr(name, fallback);
    return std::clamp<int64_t>(value < 0 ? value + rank : value, 0, rank);
  };
  int64_t start = bound("start", 0), end = bound("end", rank);
  auto owned = std::make_unique<onnx::TensorProto>();
  owned->set_data_type(onnx::TensorProto::INT64);
  owned->add_dims(std::max<int64_t>(0, end - start));
  for (int64_t i = start; i < end; ++i)
    owned->add_int64_data(shape[i]);
  constants[node.proto.output(0)] = owned.get();
  ownedConstants.push_back(std::move(owned));
  return std::vector<Tensor>{}; // a constant, made a tensor where one is used
}

} // namespace tpu::frontend::detail
