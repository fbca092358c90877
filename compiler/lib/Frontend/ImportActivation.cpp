// Elementwise functions of one input (a table, one formula per operator, each
// from the ONNX operator documentation), PRelu, Cast, Dropout, the
// comparisons and Where. Formulas use only what the TOSA graph needs; where a
// form avoids a transcendental the TPU lacks (Elu's exp(min(x, 0)) - 1 rather
// than a select) it is the same function, not an approximation.
#include "Importer.h"

namespace tpu::frontend::detail {
namespace {

using namespace mlir::tosa;

// y = f(x) with the node's attributes; the layout of x is kept.
using Activation = std::function<Value(Importer &, Value, const Node &)>;

template <typename TosaOp> Activation unaryOp() {
  return [](Importer &im, Value x, const Node &n) { return im.unary<TosaOp>(x, n.loc); };
}

const std::map<std::string, Activation> &activationTable() {
  // Elu's negative branch: alpha * (exp(min(x, 0)) - 1), zero for x >= 0.
  auto eluNegative = [](Importer &im, Value x, float alpha, const Node &n) {
    size_t rank = Importer::shapeOf(x).size();
    Value negative = im.clamp(x, std::numeric_limits<float>::lowest(), 0.0f, n.loc);
    Value expm1 =
        im.binary<SubOp>(im.unary<ExpOp>(negative, n.loc), im.scalar(1.0f, rank, n.loc), n.loc);
    return im.binary<MulOp>(expm1, im.scalar(alpha, rank, n.loc), n.loc);
  };
  static const std::map<std::string, Activation> table = {
      {"Neg", [](Importer &im, Value x, const Node &n) { return im.negate(x, n.loc); }},
      {"Abs", unaryOp<AbsOp>()},
      {"Exp", unaryOp<ExpOp>()},
      {"Log", unaryOp<LogOp>()},
      {"Reciprocal", unaryOp<ReciprocalOp>()},
      {"Sigmoid", unaryOp<SigmoidOp>()},
      {"Tanh", unaryOp<TanhOp>()},
      {"Erf", unaryOp<ErfOp>()},
      // TOSA has no sqrt: 1 / rsqrt(x), which is 0 at 0 (1 / inf) and NaN below.
      {"Sqrt",
       [](Importer &im, Value x, const Node &n) {
         return im.unary<ReciprocalOp>(im.unary<RsqrtOp>(x, n.loc), n.loc);
       }},
      // x / (1 + |x|)
      {"Softsign",
       [](Importer &im, Value x, const Node &n) {
         Value denominator = im.binary<AddOp>(
             im.unary<AbsOp>(x, n.loc), im.scalar(1.0f, Importer::shapeOf(x).size(), n.loc), n.loc);
         return im.binary<MulOp>(x, im.unary<ReciprocalOp>(denominator, n.loc), n.loc);
       }},
      // log(exp(x) + 1)
      {"Softplus",
       [](Importer &im, Value x, const Node &n) {
         Value shifted = im.binary<AddOp>(
             im.unary<ExpOp>(x, n.loc), im.scalar(1.0f, Importer::shapeOf(x).size(), n.loc), n.loc);
         return im.unary<LogOp>(shifted, n.loc);
       }},
      // max(0, min(1, alpha x + beta))
      {"HardSigmoid",
       [](Importer &im, Value x, const Node &n) {
         size_t rank = Importer::shapeOf(x).size();
         Value linear = im.binary<AddOp>(
             im.binary<MulOp>(x, im.scalar(n.floatAttr("alpha", 0.2f), rank, n.loc), n.loc),
             im.scalar(n.floatAttr("beta", 0.5f), rank, n.loc), n.loc);
         return im.clamp(linear, 0.0f, 1.0f, n.loc);
       }},
      // x max(0, min(1, x / 6 + 1/2))
      {"HardSwish",
       [](Importer &im, Value x, const Node &n) {
         size_t rank = Importer::shapeOf(x).size();
         Value linear =
             im.binary<AddOp>(im.binary<MulOp>(x, im.scalar(1.0f / 6.0f, rank, n.loc), n.loc),
                              im.scalar(0.5f, rank, n.loc), n.loc);
         return im.binary<MulOp>(x, im.clamp(linear, 0.0f, 1.0f, n.loc), n.loc);
       }},
      // x for x >= 0, alpha x below.
      {"LeakyRelu",
       [](Importer &im, Value x, const Node &n) {
         float alpha = n.floatAttr("alpha", 0.01f);
         size_t rank = Importer::shapeOf(x).size();
         // max(x, alpha x) is that function only for 0 <= alpha <= 1.
         if (alpha >= 0.0f && alpha <= 1.0f)
           return im.binary<MaximumOp>(x, im.binary<MulOp>(x, im.scalar(alpha, rank, n.loc), n.loc),
                                       n.loc);
         Value negative = im.clamp(x, std::numeric_limits<float>::lowest(), 0.0f, n.loc);
         return im.binary<AddOp>(im.relu(x, n.loc),
                                 im.binary<MulOp>(negative, im.scalar(alpha, rank, n.loc), n.loc),
                                 n.loc);
       }},
      // x for x > 0, alpha (exp(x) - 1) below.
      {"Elu",
       [eluNegative](Importer &im, Value x, const Node &n) {
         return im.binary<AddOp>(im.relu(x, n.loc),
                                 eluNegative(im, x, n.floatAttr("alpha", 1.0f), n), n.loc);
       }},
      // max(0, x) + min(0, alpha (exp(x / alpha) - 1)), which is Elu of x / alpha
      // scaled by alpha: relu(x) + alpha (exp(min(x, 0) / alpha) - 1).
      {"Celu",
       [eluNegative](Importer &im, Value x, const Node &n) {
         float alpha = n.floatAttr("alpha", 1.0f);
         size_t rank = Importer::shapeOf(x).size();
         Value scaled = im.binary<MulOp>(x, im.scalar(1.0f / alpha, rank, n.loc), n.loc);
         return im.binary<AddOp>(im.relu(x, n.loc), eluNegative(im, scaled, alpha, n), n.loc);
       }},
      // gamma (x for x > 0, alpha (exp(x) - 1) below).
      {"Selu",
       [eluNegative](Importer &im, Value x, const Node &n) {
         Value elu = im.binary<AddOp>(
             im.relu(x, n.loc),
             eluNegative(im, x, n.floatAttr("alpha", 1.67326319217681884765625f), n), n.loc);
         return im.binary<MulOp>(elu,
                                 im.scalar(n.floatAttr("gamma", 1.05070102214813232421875f),
                                           Importer::shapeOf(x).size(), n.loc),
                                 n.loc);
       }},
  };
  return table;
}

} // namespace

const std::vector<std::string> &activationOperators() {
  static const std::vector<std::string> names = keysOf(activationTable());
  return names;
}

Tensor Importer::importActivation(const Node &node) {
  node.expectInputs(1, 1);
  Tensor x = input(node, 0);
  if (elementType(x.value) != builder.getF32Type())
    node.fail("only float32 inputs are supported");
  return {activationTable().at(node.proto.op_type())(*this, x.value, node), x.layout};
}

Value Importer::negate(Value x, mlir::Location loc) {
  return builder.create<NegateOp>(loc, x.getType(), x);
}

// relu(x) + slope min(x, 0); the slope broadcasts to X (unidirectionally).
Tensor Importer::importPRelu(const Node &node) {
  node.expectInputs(2, 2);
  Tensor x = input(node, 0);
  Tensor negative{clamp(x.value, std::numeric_limits<float>::lowest(), 0.0f, node.loc), x.layout};
  Tensor scaled = broadcast<MulOp>(negative, input(node, 1), node);
  if (onnxShape(scaled) != onnxShape(x))
    node.fail("slope does not broadcast to X");
  return broadcast<AddOp>({relu(x.value, node.loc), x.layout}, scaled, node);
}

// Casts to float32 (the compiler's only arithmetic type) and between index
// types. Float to integer is rejected: ONNX truncates, tosa.cast rounds.
Tensor Importer::importCast(const Node &node) {
  node.expectInputs(1, 1);
  Tensor x = input(node, 0);
  if (!node.attr("to"))
    node.fail("the 'to' attribute is required");
  int64_t to = node.intAttr("to", 0);
  mlir::Type target = onnxElementType(static_cast<int32_t>(to), node.what);
  mlir::Type source = elementType(x.value);
  if (source == target)
    return x;
  if (source.isF32() && !target.isF32())
    node.fail("casting float32 to {} is not supported",
              onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(to)));
  return {builder.create<CastOp>(node.loc, tensorType(shapeOf(x.value), target), x.value),
          x.layout};
}

// Inference: the identity. Opset 12 made ratio and training_mode inputs.
Tensor Importer::importDropout(const Node &node) {
  node.expectInputs(1, 3);
  node.rejectOutputsFrom(1, "mask");
  if (node.hasInput(2)) {
    std::vector<int64_t> training = constantInts(node, 2);
    if (!training.empty() && training[0])
      node.fail("training_mode=1 is not supported");
  }
  return input(node, 0);
}

namespace {

struct Comparison {
  bool swap; // Less(a, b) is Greater(b, a)
  std::function<Value(Importer &, Value, Value, mlir::Location)> make;
};

template <typename TosaOp> Comparison comparison(bool swap) {
  return Comparison{swap, [](Importer &im, Value a, Value b, mlir::Location loc) {
                      return im.compare<TosaOp>(a, b, loc);
                    }};
}

const std::map<std::string, Comparison> &comparisonTable() {
  static const std::map<std::string, Comparison> table = {
      {"Equal", comparison<EqualOp>(false)},
      {"Greater", comparison<GreaterOp>(false)},
      {"GreaterOrEqual", comparison<GreaterEqualOp>(false)},
      {"Less", comparison<GreaterOp>(true)},
      {"LessOrEqual", comparison<GreaterEqualOp>(true)},
  };
  return table;
}

} // namespace

const std::vector<std::string> &comparisonOperators() {
  static const std::vector<std::string> names = keysOf(comparisonTable());
  return names;
}

Tensor Importer::importComparison(const Node &node) {
  node.expectInputs(2, 2);
  const Comparison &comparison = comparisonTable().at(node.proto.op_type());
  Tensor a = input(node, 0), b = input(node, 1);
  if (comparison.swap)
    std::swap(a, b);
  return broadcastWith(a, b, node,
                       [&](Value x, Value y) { return comparison.make(*this, x, y, node.loc); });
}

// select(condition, X, Y), the three broadcast together (numpy rules).
Tensor Importer::importWhere(const Node &node) {
  node.expectInputs(3, 3);
  std::array<Value, 3> operands;
  Shape shape;
  for (int i = 0; i < 3; ++i) {
    operands[i] = onnxInput(node, i);
    std::optional<Shape> joined = broadcastShapes(shape, shapeOf(operands[i]));
    if (!joined)
      node.fail("the inputs do not broadcast");
    shape = *joined;
  }
  for (Value &operand : operands) {
    Shape own = shapeOf(operand);
    own.insert(own.begin(), shape.size() - own.size(), 1);
    operand = reshape(operand, own, node.loc);
  }
  if (!elementType(operands[0]).isInteger(1))
    node.fail("the condition must be bool");
  return {builder.create<SelectOp>(node.loc, tensorType(shape, elementType(operands[1])),
                                   operands[0], operands[1], operands[2])};
}

} // namespace tpu::frontend::detail
