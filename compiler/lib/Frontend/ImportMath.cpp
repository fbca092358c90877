// Matrix products and elementwise operators.
#include "Importer.h"

#include <climits>
#include <limits>

namespace tpu::frontend::detail {

Value Importer::tileTo(Value input, const Shape &shape, mlir::Location loc) {
  Shape own = shapeOf(input), multiples;
  for (size_t i = 0; i < shape.size(); ++i)
    multiples.push_back(shape[i] / own[i]);
  if (own == shape)
    return input;
  return builder.create<mlir::tosa::TileOp>(loc, tensorType(shape, elementType(input)), input,
                                            builder.getDenseI64ArrayAttr(multiples));
}

Value Importer::matmul(Value a, Value b, const Node &node) {
  Shape as = shapeOf(a), bs = shapeOf(b);
  if (as.empty() || bs.empty())
    node.fail("operands must have rank 1 or more");
  // numpy: a vector on the left is a row, on the right a column, and the
  // added dimension is dropped from the result.
  bool rowVector = as.size() == 1, columnVector = bs.size() == 1;
  if (rowVector)
    as.insert(as.begin(), 1);
  if (columnVector)
    bs.push_back(1);
  int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  if (bs[bs.size() - 2] != k)
    node.fail("inner dimensions differ ({} vs {})", k, bs[bs.size() - 2]);
  Shape aBatch(as.begin(), as.end() - 2), bBatch(bs.begin(), bs.end() - 2);
  std::optional<Shape> batch = broadcastShapes(aBatch, bBatch);
  if (!batch)
    node.fail("batch dimensions [{}] and [{}] do not broadcast", fmt::join(aBatch, ","),
              fmt::join(bBatch, ","));
  Shape resultShape = *batch;
  if (!rowVector)
    resultShape.push_back(m);
  if (!columnVector)
    resultShape.push_back(n);

  // tosa.matmul multiplies [B, M, K] by [B, K, N] with equal B.
  int64_t batches = elementCount(*batch), rows = m;
  if (elementCount(bBatch) == 1) {
    // One right-hand matrix (a weight): the left batch folds into the rows.
    rows *= batches;
    batches = 1;
  } else {
    // Both sides repeated to the broadcast batch shape.
    auto expand = [&](Value operand, Shape ownBatch, int64_t r, int64_t c) {
      ownBatch.insert(ownBatch.begin(), batch->size() - ownBatch.size(), 1);
      Shape full = *batch;
      ownBatch.insert(ownBatch.end(), {r, c});
      full.insert(full.end(), {r, c});
      return tileTo(reshape(operand, ownBatch, node.loc), full, node.loc);
    };
    a = expand(a, aBatch, m, k);
    b = expand(b, bBatch, k, n);
  }
  Value product = builder.create<mlir::tosa::MatMulOp>(node.loc, tensorType({batches, rows, n}),
                                                       reshape(a, {batches, rows, k}, node.loc),
                                                       reshape(b, {batches, k, n}, node.loc));
  return reshape(product, resultShape, node.loc);
}

Tensor Importer::importMatMul(const Node &node) {
  node.expectInputs(2, 2);
  return {matmul(onnxInput(node, 0), onnxInput(node, 1), node)};
}

Tensor Importer::importGemm(const Node &node) {
  node.expectInputs(2, 3);
  Value a = onnxInput(node, 0), b = onnxInput(node, 1);
  if (shapeOf(a).size() != 2 || shapeOf(b).size() != 2)
    node.fail("A and B must be 2-D");
  if (node.intAttr("transA", 0))
    a = transpose(a, {1, 0}, node.loc);
  if (node.intAttr("transB", 0))
    b = transpose(b, {1, 0}, node.loc);
  Tensor result{matmul(a, b, node)};
  Shape shape = shapeOf(result.value);
  if (float alpha = node.floatAttr("alpha", 1.0f); alpha != 1.0f)
    result.value = binary<mlir::tosa::MulOp>(result.value, scalar(alpha, 2, node.loc), node.loc);
  if (node.hasInput(2)) {
    Tensor c = input(node, 2);
    if (float beta = node.floatAttr("beta", 1.0f); beta != 1.0f)
      c = broadcast<mlir::tosa::MulOp>(c, {scalar(beta, 1, node.loc)}, node);
    result = broadcast<mlir::tosa::AddOp>(result, c, node);
    if (shapeOf(result.value) != shape)
      node.fail("C does not broadcast to the output shape");
  }
  return result;
}

// Div as multiplication by the reciprocal: TOSA has no float division. The
// result can differ from a true quotient in the last bit.
Tensor Importer::importDiv(const Node &node) {
  node.expectInputs(2, 2);
  Tensor divisor = input(node, 1);
  divisor.value = unary<mlir::tosa::ReciprocalOp>(divisor.value, node.loc);
  return broadcast<mlir::tosa::MulOp>(input(node, 0), divisor, node);
}

Tensor Importer::importRelu(const Node &node) {
  node.expectInputs(1, 1);
  Tensor x = input(node, 0);
  return {clamp(x.value, 0.0f, std::numeric_limits<float>::max(), node.loc), x.layout};
}

// Opset 11 made min and max optional inputs (attributes before, which ONNX's
// version converter turns into inputs). Constant bounds are one clamp;
// others a maximum and a minimum with the bound as a broadcast scalar.
Tensor Importer::importClip(const Node &node) {
  node.expectInputs(1, 3);
  Tensor x = input(node, 0);
  auto isConstant = [&](int index) {
    return !node.hasInput(index) || constants.count(node.proto.input(index));
  };
  auto scalarInput = [&](int index) {
    Tensor bound = input(node, index);
    if (elementCount(shapeOf(bound.value)) != 1)
      node.fail("input {} ('{}') must be a scalar", index, node.proto.input(index));
    return bound;
  };
  if (isConstant(1) && isConstant(2)) {
    auto bound = [&](int index, float fallback) {
      if (!node.hasInput(index))
        return fallback;
      std::vector<float> value = constantFloats(node, index);
      if (value.size() != 1)
        node.fail("input {} ('{}') must be a scalar", index, node.proto.input(index));
      return value[0];
    };
    float lo = bound(1, std::numeric_limits<float>::lowest());
    float hi = bound(2, std::numeric_limits<float>::max());
    // min > max gives max everywhere, as numpy.clip does.
    return {clamp(x.value, std::min(lo, hi), hi, node.loc), x.layout};
  }
  // min(max(x, lo), hi), which is hi everywhere when lo > hi.
  if (node.hasInput(1))
    x = broadcast<mlir::tosa::MaximumOp>(x, scalarInput(1), node);
  if (node.hasInput(2))
    x = broadcast<mlir::tosa::MinimumOp>(x, scalarInput(2), node);
  return x;
}

// x^2 is x * x exactly (both are the correctly rounded square), which every
// target runs; other exponents are tosa.pow.
Tensor Importer::importPow(const Node &node) {
  node.expectInputs(2, 2);
  Tensor x = input(node, 0);
  if (elementType(x.value) != elementType(input(node, 1).value))
    node.fail("a base and an exponent of different types are not supported");
  if (constants.count(node.proto.input(1)) &&
      constantInput(node, 1)->data_type() == onnx::TensorProto::FLOAT) {
    std::vector<float> exponent = constantFloats(node, 1);
    if (exponent.size() == 1 && exponent[0] == 2.0f)
      return {binary<mlir::tosa::MulOp>(x.value, x.value, node.loc), x.layout};
  }
  return broadcast<mlir::tosa::PowOp>(x, input(node, 1), node);
}

Tensor Importer::importSum(const Node &node) {
  return importElementwise<mlir::tosa::AddOp>(node, 1, INT_MAX);
}

Tensor Importer::importMean(const Node &node) {
  Tensor sum = importElementwise<mlir::tosa::AddOp>(node, 1, INT_MAX);
  float inverse = 1.0f / static_cast<float>(node.proto.input_size());
  return broadcast<mlir::tosa::MulOp>(sum, {scalar(inverse, 1, node.loc)}, node);
}

} // namespace tpu::frontend::detail
