#include "ElementCode.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

namespace mlir::tpu::cuda {

std::vector<int64_t> shapeOf(Value value) {
  auto type = llvm::cast<ShapedType>(value.getType());
  return {type.getShape().begin(), type.getShape().end()};
}

int64_t elementsOf(llvm::ArrayRef<int64_t> shape) {
  int64_t elements = 1;
  for (int64_t dim : shape)
    elements *= dim;
  return elements;
}

std::string linearIndex(const Coords &at, llvm::ArrayRef<int64_t> shape) {
  std::vector<std::string> terms;
  int64_t stride = 1;
  for (size_t axis = shape.size(); axis-- > 0;) {
    bool compound = at[axis].find_first_of(" +-*/%") != std::string::npos;
    if (at[axis] != "0")
      terms.insert(terms.begin(), stride == 1 ? at[axis]
                                  : compound  ? fmt::format("({}) * {}", at[axis], stride)
                                              : fmt::format("{} * {}", at[axis], stride));
    stride *= shape[axis];
  }
  return terms.empty() ? "0" : fmt::format("{}", fmt::join(terms, " + "));
}

Coords delinearize(const std::string &index, llvm::ArrayRef<int64_t> shape) {
  Coords at(shape.size());
  int64_t stride = 1;
  for (size_t axis = shape.size(); axis-- > 0;) {
    bool outermost = stride * shape[axis] == elementsOf(shape);
    std::string quotient = stride == 1 ? index : fmt::format("({} / {})", index, stride);
    at[axis] = shape[axis] == 1 ? "0"
               : outermost      ? quotient
                                : fmt::format("{} % {}", quotient, shape[axis]);
    stride *= shape[axis];
  }
  return at;
}

std::string floatLiteral(double value) {
  if (std::isinf(value))
    return value > 0 ? "INFINITY" : "-INFINITY";
  if (std::isnan(value))
    return "NAN";
  std::string text = fmt::format("{:.9g}", float(value));
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text + "f";
}

DenseElementsAttr constantData(Value value) {
  DenseElementsAttr data;
  return matchPattern(value, m_Constant(&data)) ? data : DenseElementsAttr();
}

std::optional<std::string> splatLiteral(Value value) {
  DenseElementsAttr data = constantData(value);
  if (!data || !data.isSplat() || !data.getElementType().isF32())
    return std::nullopt;
  return floatLiteral(data.getSplatValue<APFloat>().convertToDouble());
}

ElementCode::ElementCode(const llvm::DenseSet<Operation *> &members, Load load, int indent)
    : members(members), load(std::move(load)), indent(indent) {}

void ElementCode::line(const std::string &text) {
  statements += std::string(2 * indent, ' ') + text + "\n";
}

std::string ElementCode::nested(const std::function<void()> &body) {
  std::string outer = take();
  auto outerCache = cache;
  ++indent;
  body();
  --indent;
  std::string inner = take();
  statements = std::move(outer);
  cache = std::move(outerCache);
  return inner;
}

std::string ElementCode::take() { return std::exchange(statements, std::string()); }

std::string ElementCode::fresh(const char *prefix) {
  return fmt::format("{}{}", prefix, counter++);
}

Coords ElementCode::coordinates(const std::string &index, llvm::ArrayRef<int64_t> shape) {
  Coords at;
  for (const std::string &coordinate : delinearize(index, shape)) {
    if (coordinate == "0" || coordinate == index) {
      at.push_back(coordinate);
      continue;
    }
    std::string name = fresh("c");
    line(fmt::format("const int {} = {};", name, coordinate));
    at.push_back(name);
  }
  return at;
}

std::string ElementCode::define(const std::string &expression) {
  std::string name = fresh("v");
  line(fmt::format("const float {} = {};", name, expression));
  return name;
}

std::string ElementCode::defineIndex(const std::string &expression) {
  if (expression.find_first_of(" +*/%") == std::string::npos)
    return expression;
  std::string name = fresh("i");
  line(fmt::format("const int {} = {};", name, expression));
  return name;
}

FailureOr<std::string> ElementCode::valueAt(Value value, const Coords &at) {
  if (auto it = given.find(value); it != given.end())
    return it->second;
  if (std::optional<std::string> literal = splatLiteral(value))
    return *literal;
  std::string key = fmt::format("{}", fmt::join(at, ","));
  auto cached = cache.find({value.getAsOpaquePointer(), key});
  if (cached != cache.end())
    return cached->second;
  Operation *op = value.getDefiningOp();
  FailureOr<std::string> result =
      op && members.contains(op)
          ? compute(op, value, at)
          : FailureOr<std::string>(define(load(value, linearIndex(at, shapeOf(value)))));
  if (succeeded(result))
    cache[{value.getAsOpaquePointer(), key}] = *result;
  return result;
}

// Broadcasting: an operand's axis of size one is read at 0; a lower-rank
// operand lines up with the result's trailing axes.
FailureOr<std::string> ElementCode::operandAt(Value operand, Value result, const Coords &at) {
  std::vector<int64_t> from = shapeOf(operand), to = shapeOf(result);
  Coords operandAt(from.size());
  size_t offset = to.size() - from.size();
  for (size_t axis = 0; axis < from.size(); ++axis)
    operandAt[axis] = from[axis] == 1 && to[axis + offset] != 1 ? "0" : at[axis + offset];
  return valueAt(operand, operandAt);
}

// `combine` folds {1} into the accumulator {0}, which starts at `initial`.
FailureOr<std::string> ElementCode::reduce(Value input, int64_t axis, const char *initial,
                                           const char *combine, const Coords &at) {
  std::string accumulator = fresh("v"), index = fresh("r");
  Coords inner = at;
  inner[axis] = index;
  FailureOr<std::string> element = failure();
  std::string body = nested([&] {
    element = valueAt(input, inner);
    if (succeeded(element))
      line(fmt::format(fmt::runtime(combine), accumulator, *element));
  });
  if (failed(element))
    return failure();
  line(fmt::format("float {} = {};", accumulator, initial));
  line(fmt::format("for (int {0} = 0; {0} < {1}; ++{0}) {{", index, shapeOf(input)[axis]));
  statements += body;
  line("}");
  return accumulator;
}

// The input whose range along the axis holds the coordinate, in order.
FailureOr<std::string> ElementCode::concat(tosa::ConcatOp op, const Coords &at) {
  int64_t axis = op.getAxis(), offset = 0;
  std::string result = fresh("v"), text;
  size_t inputs = op.getInput1().size();
  for (auto [index, input] : llvm::enumerate(op.getInput1())) {
    Coords inner = at;
    if (offset != 0)
      inner[axis] = fmt::format("{} - {}", at[axis], offset);
    FailureOr<std::string> element = failure();
    std::string body = nested([&] {
      element = valueAt(input, inner);
      if (succeeded(element))
        line(fmt::format("{} = {};", result, *element));
    });
    if (failed(element))
      return failure();
    offset += shapeOf(input)[axis];
    std::string indentText(2 * indent, ' ');
    text += indentText + (index == 0 ? fmt::format("if ({} < {}) {{\n", at[axis], offset)
                          : index + 1 < inputs
                              ? fmt::format("}} else if ({} < {}) {{\n", at[axis], offset)
                              : std::string("} else {\n"));
    text += body;
  }
  line(fmt::format("float {};", result));
  statements += text + std::string(2 * indent, ' ') + "}\n";
  return result;
}

// The pad value outside the input, the input inside it.
FailureOr<std::string> ElementCode::pad(tosa::PadOp op, const Coords &at) {
  DenseElementsAttr padding;
  if (!matchPattern(op.getPadding(), m_Constant(&padding)))
    return op.emitError("the CUDA target needs constant padding");
  std::vector<int64_t> amounts;
  for (const APInt &amount : padding.getValues<APInt>())
    amounts.push_back(amount.getSExtValue());
  std::vector<int64_t> inputShape = shapeOf(op.getInput1());
  std::string padValue = "0.0f";
  if (Value constant = op.getPadConst()) {
    std::optional<std::string> literal = splatLiteral(constant);
    if (!literal)
      return op.emitError("the CUDA target needs a constant pad value");
    padValue = *literal;
  }
  Coords inner = at;
  std::vector<std::string> outside;
  for (size_t axis = 0; axis < at.size(); ++axis) {
    int64_t before = amounts[2 * axis], after = amounts[2 * axis + 1];
    if (before == 0 && after == 0)
      continue;
    inner[axis] = defineIndex(before == 0 ? at[axis] : fmt::format("{} - {}", at[axis], before));
    outside.push_back(fmt::format("{0} < 0 || {0} >= {1}", inner[axis], inputShape[axis]));
  }
  if (outside.empty())
    return valueAt(op.getInput1(), at);
  std::string result = fresh("v");
  FailureOr<std::string> element = failure();
  std::string body = nested([&] {
    element = valueAt(op.getInput1(), inner);
    if (succeeded(element))
      line(fmt::format("{} = {};", result, *element));
  });
  if (failed(element))
    return failure();
  line(fmt::format("float {} = {};", result, padValue));
  line(fmt::format("if (!({})) {{", fmt::join(outside, " || ")));
  statements += body;
  line("}");
  return result;
}

// Pools and depthwise convolution on NHWC, one output element at a time:
// the window's taps inside the input, in order.
FailureOr<std::string> ElementCode::window(Operation *op, const Coords &at) {
  Value input = op->getOperand(0);
  std::vector<int64_t> inputShape = shapeOf(input);
  auto copy = [](llvm::ArrayRef<int64_t> values) {
    return std::vector<int64_t>(values.begin(), values.end());
  };
  std::vector<int64_t> kernel, stride, pad, dilation = {1, 1};
  int64_t multiplier = 1;
  std::string kind;
  if (auto pool = llvm::dyn_cast<tosa::MaxPool2dOp>(op)) {
    kernel = copy(pool.getKernel()), stride = copy(pool.getStride()), pad = copy(pool.getPad());
    kind = "max";
  } else if (auto pool = llvm::dyn_cast<tosa::AvgPool2dOp>(op)) {
    kernel = copy(pool.getKernel()), stride = copy(pool.getStride()), pad = copy(pool.getPad());
    kind = "avg";
  } else {
    auto conv = llvm::cast<tosa::DepthwiseConv2DOp>(op);
    std::vector<int64_t> weights = shapeOf(conv.getWeight()); // [KH, KW, C, M]
    kernel = {weights[0], weights[1]}, stride = copy(conv.getStride()), pad = copy(conv.getPad());
    dilation = copy(conv.getDilation()), multiplier = weights[3], kind = "depthwise";
  }
  std::string channel = at[3], outChannel = at[3];
  if (kind == "depthwise" && multiplier != 1)
    channel = defineIndex(fmt::format("{} / {}", at[3], multiplier));
  std::string accumulator = fresh("v"), count = fresh("n"), kh = fresh("kh"), kw = fresh("kw");
  std::string ih = fresh("ih"), iw = fresh("iw");
  FailureOr<std::string> element = failure(), weight = success(std::string());
  std::string body = nested([&] {
    line(fmt::format("const int {} = {} * {} - {} + {} * {};", ih, at[1], stride[0], pad[0], kh,
                     dilation[0]));
    line(fmt::format("if ({0} < 0 || {0} >= {1}) continue;", ih, inputShape[1]));
    line(fmt::format("for (int {0} = 0; {0} < {1}; ++{0}) {{", kw, kernel[1]));
    std::string taps = nested([&] {
      line(fmt::format("const int {} = {} * {} - {} + {} * {};", iw, at[2], stride[1], pad[2], kw,
                       dilation[1]));
      line(fmt::format("if ({0} < 0 || {0} >= {1}) continue;", iw, inputShape[2]));
      element = valueAt(input, {at[0], ih, iw, channel});
      if (failed(element))
        return;
      if (kind == "max") {
        line(fmt::format("{0} = fmaxf({0}, {1});", accumulator, *element));
      } else if (kind == "avg") {
        line(fmt::format("{} += {};", accumulator, *element));
        line(fmt::format("++{};", count));
      } else {
        std::string m =
            multiplier == 1 ? "0" : defineIndex(fmt::format("{} % {}", outChannel, multiplier));
        weight = valueAt(op->getOperand(1), {kh, kw, channel, m});
        if (succeeded(weight))
          line(fmt::format("{} += {} * {};", accumulator, *element, *weight));
      }
    });
    statements += taps;
    line("}");
  });
  if (failed(element) || failed(weight))
    return failure();
  std::string initial = kind == "max" ? "-INFINITY" : "0.0f";
  if (kind == "depthwise") {
    FailureOr<std::string> bias = valueAt(op->getOperand(2), {outChannel});
    if (failed(bias))
      return failure();
    initial = *bias;
  }
  line(fmt::format("float {} = {};", accumulator, initial));
  if (kind == "avg")
    line(fmt::format("int {} = 0;", count));
  line(fmt::format("for (int {0} = 0; {0} < {1}; ++{0}) {{", kh, kernel[0]));
  statements += body;
  line("}");
  if (kind == "avg") // TOSA divides by the taps inside the input only
    return define(fmt::format("{} / float({})", accumulator, count));
  return accumulator;
}

FailureOr<std::string> ElementCode::compute(Operation *op, Value value, const Coords &at) {
  auto unary = [&](const char *pattern) -> FailureOr<std::string> {
    FailureOr<std::string> x = operandAt(op->getOperand(0), value, at);
    if (failed(x))
      return failure();
    return define(fmt::format(fmt::runtime(pattern), *x));
  };
  auto binary = [&](const char *pattern) -> FailureOr<std::string> {
    FailureOr<std::string> x = operandAt(op->getOperand(0), value, at);
    if (failed(x))
      return failure();
    FailureOr<std::string> y = operandAt(op->getOperand(1), value, at);
    if (failed(y))
      return failure();
    return define(fmt::format(fmt::runtime(pattern), *x, *y));
  };
  return llvm::TypeSwitch<Operation *, FailureOr<std::string>>(op)
      .Case([&](tosa::AddOp) { return binary("{} + {}"); })
      .Case([&](tosa::SubOp) { return binary("{} - {}"); })
      .Case([&](tosa::MulOp) { return binary("{} * {}"); })
      .Case([&](tosa::MaximumOp) { return binary("fmaxf({}, {})"); })
      .Case([&](tosa::MinimumOp) { return binary("fminf({}, {})"); })
      .Case([&](tosa::PowOp) { return binary("powf({}, {})"); })
      .Case([&](tosa::ExpOp) { return unary("expf({})"); })
      .Case([&](tosa::LogOp) { return unary("logf({})"); })
      .Case([&](tosa::ReciprocalOp) { return unary("1.0f / {}"); })
      .Case([&](tosa::RsqrtOp) { return unary("1.0f / sqrtf({})"); })
      .Case([&](tosa::ErfOp) { return unary("erff({})"); })
      .Case([&](tosa::TanhOp) { return unary("tanhf({})"); })
      .Case([&](tosa::SigmoidOp) { return unary("1.0f / (1.0f + expf(-{}))"); })
      .Case([&](tosa::AbsOp) { return unary("fabsf({})"); })
      .Case([&](tosa::NegateOp) { return unary("-{}"); })
      .Case([&](tosa::FloorOp) { return unary("floorf({})"); })
      .Case([&](tosa::CeilOp) { return unary("ceilf({})"); })
      .Case([&](tosa::ClampOp clamp) -> FailureOr<std::string> {
        FailureOr<std::string> x = operandAt(clamp.getInput(), value, at);
        if (failed(x))
          return failure();
        double low = clamp.getMinFp().convertToDouble(), high = clamp.getMaxFp().convertToDouble();
        std::string expression = *x;
        if (low > -3.4e38)
          expression = fmt::format("fmaxf({}, {})", expression, floatLiteral(low));
        if (high < 3.4e38)
          expression = fmt::format("fminf({}, {})", expression, floatLiteral(high));
        return define(expression);
      })
      .Case([&](tosa::ReshapeOp reshape) {
        std::string index = defineIndex(linearIndex(at, shapeOf(value)));
        return valueAt(reshape.getInput1(), delinearize(index, shapeOf(reshape.getInput1())));
      })
      .Case([&](tosa::TransposeOp transpose) -> FailureOr<std::string> {
        llvm::SmallVector<int64_t> perms;
        if (failed(transpose.getConstantPerms(perms)))
          return transpose.emitError("the CUDA target needs constant permutations");
        Coords from(at.size());
        for (size_t axis = 0; axis < at.size(); ++axis)
          from[size_t(perms[axis])] = at[axis];
        return valueAt(transpose.getInput1(), from);
      })
      .Case([&](tosa::SliceOp slice) {
        Coords from = at;
        for (size_t axis = 0; axis < at.size(); ++axis)
          if (slice.getStart()[axis] != 0)
            from[axis] = fmt::format("{} + {}", at[axis], slice.getStart()[axis]);
        return valueAt(slice.getInput(), from);
      })
      .Case([&](tosa::ReduceSumOp sum) {
        return reduce(sum.getInput(), sum.getAxis(), "0.0f", "{} += {};", at);
      })
      .Case([&](tosa::ReduceMaxOp max) {
        return reduce(max.getInput(), max.getAxis(), "-INFINITY", "{0} = fmaxf({0}, {1});", at);
      })
      .Case([&](tosa::ReduceMinOp min) {
        return reduce(min.getInput(), min.getAxis(), "INFINITY", "{0} = fminf({0}, {1});", at);
      })
      .Case([&](tosa::TileOp tile) {
        std::vector<int64_t> from = shapeOf(tile.getInput1());
        Coords inner = at;
        for (size_t axis = 0; axis < at.size(); ++axis)
          if (tile.getMultiples()[axis] != 1)
            inner[axis] = from[axis] == 1 ? "0" : fmt::format("{} % {}", at[axis], from[axis]);
        return valueAt(tile.getInput1(), inner);
      })
      .Case([&](tosa::ReverseOp reverse) {
        Coords inner = at;
        int64_t axis = reverse.getAxis();
        inner[axis] = fmt::format("{} - {}", shapeOf(value)[axis] - 1, at[axis]);
        return valueAt(reverse.getInput(), inner);
      })
      .Case([&](tosa::ConcatOp concat) { return this->concat(concat, at); })
      .Case([&](tosa::PadOp pad) { return this->pad(pad, at); })
      .Case<tosa::MaxPool2dOp, tosa::AvgPool2dOp, tosa::DepthwiseConv2DOp>(
          [&](Operation *) { return window(op, at); })
      .Default([&](Operation *) -> FailureOr<std::string> {
        return op->emitError(fmt::format("'{}' has no CUDA lowering in this position",
                                         op->getName().getStringRef().str()));
      });
}

} // namespace mlir::tpu::cuda
