// tpu-autodiff: the forward function becomes a training step (loss,
// gradients by reverse-mode differentiation, optimizer update), all in TOSA.
// Gradients are built at compile time on the graph, one vector-Jacobian rule
// per op, as JAX and Enzyme do, so the step is an ordinary graph that every
// later pass and target handles like any other.
#include "TosaBuilders.h"
#include "tpu/Transforms/Passes.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

namespace mlir::tpu {
#define GEN_PASS_DEF_AUTODIFF
#include "tpu/Transforms/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;

namespace {

using Shape = SmallVector<int64_t>;

using tpu::shapeOf;

bool isFloatTensor(Value value) {
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  return type && llvm::isa<FloatType>(type.getElementType());
}

// Creates TOSA ops with explicit result types at one location.
class Emitter {
public:
  Emitter(OpBuilder &builder, Location loc, int64_t &count) : b(builder), loc(loc), count(count) {}

  RankedTensorType type(ArrayRef<int64_t> shape, Type element = {}) {
    return RankedTensorType::get(shape, element ? element : b.getF32Type());
  }

  template <typename Op, typename... Args> Value make(Type type, Args &&...args) {
    ++count;
    return b.create<Op>(loc, type, std::forward<Args>(args)...).getResult();
  }

  // A float splat with `rank` axes of size 1, which broadcasts everywhere.
  Value scalar(double value, int64_t rank) {
    auto t = type(Shape(rank, 1));
    return make<tosa::ConstOp>(t, DenseElementsAttr::get(t, static_cast<float>(value)));
  }

  // numpy broadcasting of equal-rank operands, as TOSA requires.
  Shape broadcast(Value x, Value y) {
    Shape a = shapeOf(x), c = shapeOf(y);
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = std::max(a[i], c[i]);
    return a;
  }

  template <typename Op> Value binary(Value x, Value y) {
    return make<Op>(type(broadcast(x, y)), x, y);
  }
  Value mul(Value x, Value y) {
    return make<tosa::MulOp>(type(broadcast(x, y)), x, y, b.getI8IntegerAttr(0));
  }
  template <typename Op> Value unary(Value x) { return make<Op>(x.getType(), x); }

  Value reduceSum(Value x, int64_t axis) {
    Shape shape = shapeOf(x);
    shape[axis] = 1;
    auto element = llvm::cast<RankedTensorType>(x.getType()).getElementType();
    return make<tosa::ReduceSumOp>(type(shape, element), x, b.getI32IntegerAttr(axis));
  }
  Value reshape(Value x, ArrayRef<int64_t> shape) {
    if (shapeOf(x) == Shape(shape))
      return x;
    ++count;
    return tpu::createReshape(b, loc, x, shape);
  }
  Value transpose(Value x, ArrayRef<int32_t> perm) {
    count += 2; // the permutation's constant and the transpose
    return tpu::createTranspose(b, loc, x, perm);
  }

  // The gradient of a broadcast operand: summed over the axes it was
  // repeated along, to its own shape.
  Value unbroadcast(Value gradient, ArrayRef<int64_t> shape) {
    Shape have = shapeOf(gradient);
    for (size_t axis = 0; axis < shape.size(); ++axis)
      if (shape[axis] == 1 && have[axis] != 1)
        gradient = reduceSum(gradient, static_cast<int64_t>(axis));
    return gradient;
  }

  // 1.0 where `mask` holds, else 0.0.
  Value indicator(Value mask) {
    int64_t rank = static_cast<int64_t>(shapeOf(mask).size());
    return make<tosa::SelectOp>(type(shapeOf(mask)), mask, scalar(1.0, rank), scalar(0.0, rank));
  }

  // A float constant of `shape` holding `values` (one value: a splat).
  Value constant(ArrayRef<int64_t> shape, ArrayRef<float> values) {
    auto t = type(shape);
    return make<tosa::ConstOp>(t, values.size() == 1 ? DenseElementsAttr::get(t, values[0])
                                                     : DenseElementsAttr::get(t, values));
  }

  // reduce_sum over several axes (those of size 1 need none), reshaped to
  // `shape`.
  Value sum(Value x, ArrayRef<int64_t> axes, ArrayRef<int64_t> shape) {
    for (int64_t axis : axes)
      if (shapeOf(x)[axis] != 1)
        x = reduceSum(x, axis);
    return reshape(x, shape);
  }

  Value slice(Value x, ArrayRef<int64_t> start, ArrayRef<int64_t> size) {
    if (shapeOf(x) == Shape(size))
      return x;
    auto element = llvm::cast<RankedTensorType>(x.getType()).getElementType();
    return make<tosa::SliceOp>(type(size, element), x, b.getDenseI64ArrayAttr(start),
                               b.getDenseI64ArrayAttr(size));
  }

  // Pads each axis by low[i] before and high[i] after with `value`; a
  // negative amount removes elements from that end instead.
  Value padOrCrop(Value x, ArrayRef<int64_t> low, ArrayRef<int64_t> high, float value = 0.0f) {
    Shape shape = shapeOf(x), start, size;
    for (size_t i = 0; i < shape.size(); ++i) {
      start.push_back(std::max<int64_t>(0, -low[i]));
      size.push_back(shape[i] - start.back() - std::max<int64_t>(0, -high[i]));
    }
    x = slice(x, start, size);
    SmallVector<int32_t> padding;
    for (size_t i = 0; i < size.size(); ++i) {
      padding.push_back(static_cast<int32_t>(std::max<int64_t>(0, low[i])));
      padding.push_back(static_cast<int32_t>(std::max<int64_t>(0, high[i])));
      size[i] += padding[2 * i] + padding[2 * i + 1];
    }
    if (size == Shape(shapeOf(x)))
      return x;
    auto paddingType = type({static_cast<int64_t>(size.size()), 2}, b.getI32Type());
    Value paddingValue =
        make<tosa::ConstOp>(paddingType, DenseElementsAttr::get(paddingType, ArrayRef(padding)));
    auto valueType = type({});
    Value padConst = make<tosa::ConstOp>(valueType, DenseElementsAttr::get(valueType, value));
    return make<tosa::PadOp>(type(size), x, paddingValue, padConst);
  }

  // One axis of padOrCrop.
  Value padOrCrop(Value x, int64_t axis, int64_t low, int64_t high, float value = 0.0f) {
    Shape lows(shapeOf(x).size(), 0), highs = lows;
    lows[axis] = low;
    highs[axis] = high;
    return padOrCrop(x, lows, highs, value);
  }

  // Elements start, start + stride, ... (count of them) along `axis`.
  Value stridedSlice(Value x, int64_t axis, int64_t start, int64_t stride, int64_t count) {
    // The count * stride elements from start (padded with zeros past the
    // end), split into [count, stride], column 0.
    x = padOrCrop(x, axis, -start, start + count * stride - shapeOf(x)[axis]);
    if (stride == 1)
      return x;
    Shape split = shapeOf(x);
    split[axis] = count;
    split.insert(split.begin() + axis + 1, stride);
    Shape begin(split.size(), 0), size = split;
    size[axis + 1] = 1;
    Shape result = shapeOf(x);
    result[axis] = count;
    return reshape(slice(reshape(x, split), begin, size), result);
  }

  // The adjoint of stridedSlice: element i of `x` at start + i * stride of
  // an axis of `size` zeros; positions outside [0, size) are dropped.
  Value place(Value x, int64_t axis, int64_t start, int64_t stride, int64_t size) {
    Shape shape = shapeOf(x);
    int64_t count = shape[axis];
    if (stride != 1) {
      Shape split = shape;
      split.insert(split.begin() + axis + 1, 1);
      Value spread = padOrCrop(reshape(x, split), axis + 1, 0, stride - 1);
      shape[axis] = count * stride;
      x = reshape(spread, shape);
    }
    return padOrCrop(x, axis, start, size - start - count * stride);
  }

  Value reverse(Value x, int32_t axis) {
    return make<tosa::ReverseOp>(x.getType(), x, b.getI32IntegerAttr(axis));
  }

  Value select(Value mask, Value onTrue, Value onFalse) {
    Shape shape = broadcast(onTrue, onFalse), maskShape = shapeOf(mask);
    for (size_t i = 0; i < shape.size(); ++i)
      shape[i] = std::max(shape[i], maskShape[i]);
    return make<tosa::SelectOp>(type(shape), mask, onTrue, onFalse);
  }

  template <typename Op> Value compare(Value x, Value y) {
    return make<Op>(type(broadcast(x, y), b.getI1Type()), x, y);
  }

  // Convolutions without padding and with a zero bias (the window rules
  // pad explicitly).
  Value conv2d(Value input, Value ohwi, ArrayRef<int64_t> stride, ArrayRef<int64_t> dilation) {
    return window<tosa::Conv2DOp>(input, ohwi, shapeOf(ohwi)[0], stride, dilation);
  }
  Value depthwiseConv2d(Value input, Value hwcm, ArrayRef<int64_t> stride,
                        ArrayRef<int64_t> dilation) {
    Shape w = shapeOf(hwcm);
    return window<tosa::DepthwiseConv2DOp>(input, hwcm, w[2] * w[3], stride, dilation);
  }

  OpBuilder &b;
  Location loc;

private:
  template <typename Op>
  Value window(Value input, Value weights, int64_t channels, ArrayRef<int64_t> stride,
               ArrayRef<int64_t> dilation) {
    Shape in = shapeOf(input), w = shapeOf(weights);
    int64_t kh = std::is_same_v<Op, tosa::Conv2DOp> ? w[1] : w[0];
    int64_t kw = std::is_same_v<Op, tosa::Conv2DOp> ? w[2] : w[1];
    Shape out{in[0], (in[1] - dilation[0] * (kh - 1) - 1) / stride[0] + 1,
              (in[2] - dilation[1] * (kw - 1) - 1) / stride[1] + 1, channels};
    return make<Op>(type(out), input, weights, constant({channels}, {0.0f}),
                    b.getDenseI64ArrayAttr({0, 0, 0, 0}), b.getDenseI64ArrayAttr(stride),
                    b.getDenseI64ArrayAttr(dilation));
  }

  int64_t &count;
};

// A gradient op's location: its forward op's, named "NODE (gradient)", so
// that reports attribute it to the forward node and tell it from the forward
// pass (docs/training.md).
Location gradientLocation(Location loc) {
  auto name = llvm::dyn_cast<NameLoc>(loc);
  if (!name)
    return loc;
  return NameLoc::get(StringAttr::get(loc.getContext(), name.getName().str() + " (gradient)"),
                      name.getChildLoc());
}

// The gradient of each operand of an op given its result's gradient `dy`,
// each built only when called, so that operands which need none (inputs,
// constants, transpose's perms) cost nothing.
using Gradient = std::function<Value()>;
using Gradients = SmallVector<Gradient>;

Shape integers(Value constant) {
  DenseIntElementsAttr attr;
  if (!matchPattern(constant, m_Constant(&attr)))
    return {};
  Shape values;
  for (const APInt &value : attr.getValues<APInt>())
    values.push_back(value.getSExtValue());
  return values;
}

// A binary elementwise op: each operand's gradient summed over the axes it
// was broadcast along.
Gradients elementwise(Emitter &e, Operation *op, Gradient da, Gradient db) {
  Shape a = shapeOf(op->getOperand(0)), b = shapeOf(op->getOperand(1));
  return {[&e, da, a] { return e.unbroadcast(da(), a); },
          [&e, db, b] { return e.unbroadcast(db(), b); }};
}

// clamp: 1 strictly inside the bounds, as PyTorch's relu and hardtanh have
// it; an unbounded side (ReLU's top) needs no comparison. Tested on the
// output, which is inside exactly where the input is, so that the input has
// no other use (a matmul's bias and ReLU stay its epilogue), and applied as
// a multiplication by the 1/0 mask, which can join the matmul that produces
// dy as its epilogue: the mask is built right after the clamp, in the
// forward part, so that it is there before that matmul.
Gradients clampRule(Emitter &e, tosa::ClampOp clamp, Value dy) {
  float lo = clamp.getMinFp().convertToFloat(), hi = clamp.getMaxFp().convertToFloat();
  return {[&e, dy, lo, hi, y = clamp.getOutput()] {
    int64_t rank = static_cast<int64_t>(shapeOf(y).size());
    OpBuilder::InsertPoint backward = e.b.saveInsertionPoint();
    e.b.setInsertionPointAfterValue(y);
    Value inside;
    if (lo != std::numeric_limits<float>::lowest())
      inside = e.compare<tosa::GreaterOp>(y, e.scalar(lo, rank));
    if (hi != std::numeric_limits<float>::max()) {
      Value below = e.compare<tosa::GreaterOp>(e.scalar(hi, rank), y);
      inside = inside ? e.make<tosa::LogicalAndOp>(below.getType(), inside, below) : below;
    }
    Value mask = inside ? e.make<tosa::CastOp>(e.type(shapeOf(y)), inside) : Value();
    e.b.restoreInsertionPoint(backward);
    return mask ? e.mul(dy, mask) : dy;
  }};
}

// maximum and minimum: dy to the operand that wins, the first one on ties
// (first >= second for maximum, first <= second for minimum).
template <typename Op> Gradients extremumRule(Emitter &e, Op op, Value dy) {
  Value a = op->getOperand(0), b = op->getOperand(1);
  auto firstWins = [&e, a, b] {
    return std::is_same_v<Op, tosa::MaximumOp> ? e.compare<tosa::GreaterEqualOp>(a, b)
                                               : e.compare<tosa::GreaterEqualOp>(b, a);
  };
  int64_t rank = static_cast<int64_t>(shapeOf(dy).size());
  return elementwise(
      e, op, [&e, dy, rank, firstWins] { return e.select(firstWins(), dy, e.scalar(0.0, rank)); },
      [&e, dy, rank, firstWins] { return e.select(firstWins(), e.scalar(0.0, rank), dy); });
}

// select(c, a, b): dy where the condition picked the operand, else 0.
Gradients selectRule(Emitter &e, tosa::SelectOp op, Value dy) {
  Value c = op.getPred();
  int64_t rank = static_cast<int64_t>(shapeOf(dy).size());
  Shape a = shapeOf(op.getOnTrue()), b = shapeOf(op.getOnFalse());
  return {nullptr,
          [&e, dy, c, rank, a] { return e.unbroadcast(e.select(c, dy, e.scalar(0.0, rank)), a); },
          [&e, dy, c, rank, b] { return e.unbroadcast(e.select(c, e.scalar(0.0, rank), dy), b); }};
}

// reduce_max and reduce_min: dy shared equally among the tied extrema, so
// that the rule stays the gradient of a symmetric function.
template <typename Op> Gradients extremeReductionRule(Emitter &e, Op op, Value dy) {
  int64_t axis = op.getAxis();
  return {[&e, dy, axis, x = op.getInput(), y = op.getOutput()] {
    Value isExtreme = e.indicator(e.compare<tosa::EqualOp>(x, y));
    Value share = e.mul(dy, e.unary<tosa::ReciprocalOp>(e.reduceSum(isExtreme, axis)));
    return e.mul(isExtreme, share);
  }};
}

// tile: the copies' gradients summed, one tiled axis at a time as
// [before, multiple, size, after].
Gradients tileRule(Emitter &e, tosa::TileOp op, Value dy) {
  Shape multiples(op.getMultiples());
  return {[&e, dy, multiples, x = op.getInput1()] {
    Shape in = shapeOf(x), now = shapeOf(dy);
    Value g = dy;
    for (size_t axis = 0; axis < in.size(); ++axis) {
      if (multiples[axis] == 1)
        continue;
      int64_t before = 1, after = 1;
      for (size_t i = 0; i < axis; ++i)
        before *= now[i];
      for (size_t i = axis + 1; i < now.size(); ++i)
        after *= now[i];
      now[axis] = in[axis];
      g = e.sum(e.reshape(g, {before, multiples[axis], in[axis], after}), {1}, now);
    }
    return g;
  }};
}

// concat: each operand's part of dy.
Gradients concatRule(Emitter &e, tosa::ConcatOp op, Value dy) {
  Gradients gradients;
  int64_t axis = op.getAxis(), offset = 0;
  for (Value part : op.getOperands()) {
    Shape start(shapeOf(part).size(), 0);
    start[axis] = offset;
    offset += shapeOf(part)[axis];
    gradients.push_back([&e, dy, start, part] { return e.slice(dy, start, shapeOf(part)); });
  }
  return gradients;
}

// gather (values [N, K, C], i32 indices [N, W], result [N, W, C]): the
// gradient adds dy's rows into the rows they were read from. TOSA's scatter
// overwrites and leaves an index that occurs twice undefined, so it cannot
// add; the scatter-add is a matmul with the one-hot matrix
// onehot[n, k, w] = (indices[n, w] == k) instead: N K W C multiply-adds,
// fine for the small tables (embeddings, a few hundred rows) that runtime
// indices select from, and the shape a matrix unit runs best.
Gradients gatherRule(Emitter &e, tosa::GatherOp op, Value dy) {
  return {[&e, dy, values = op.getValues(), indices = op.getIndices()] {
    Shape v = shapeOf(values), w = shapeOf(indices);
    auto i32 = e.b.getI32Type();
    SmallVector<int32_t> iota(v[1]);
    std::iota(iota.begin(), iota.end(), 0);
    auto iotaType = e.type({1, v[1], 1}, i32);
    Value rows = e.make<tosa::ConstOp>(iotaType, DenseElementsAttr::get(iotaType, ArrayRef(iota)));
    Value onehot = e.indicator(e.compare<tosa::EqualOp>(e.reshape(indices, {w[0], 1, w[1]}), rows));
    return e.make<tosa::MatMulOp>(values.getType(), onehot, dy);
  }};
}

// The window of a convolution or pool along H and W of NHWC images, and
// the two reshapes of the input and of dy that the window rules share.
struct Window {
  std::array<int64_t, 2> kernel, stride, dilation;
  std::array<int64_t, 4> pad; // top, bottom, left, right
  Shape input, output;

  Window(int64_t kh, int64_t kw, ArrayRef<int64_t> stride, ArrayRef<int64_t> dilation,
         ArrayRef<int64_t> pad, Value x, Value y)
      : kernel{kh, kw}, stride{stride[0], stride[1]}, dilation{dilation[0], dilation[1]},
        pad{pad[0], pad[1], pad[2], pad[3]}, input(shapeOf(x)), output(shapeOf(y)) {}

  // dy spread over an image of H + d (K - 1) rows, row oh at
  // oh s + d (K - 1) - pad_top, zeros between: a stride-1 convolution of it
  // with the kernel flipped in H and W (dilated by d) is the transposed
  // convolution, H rows. Rows beyond the last window (when
  // (H + pads - extent) % s != 0) get zeros, rows of windows lying in the
  // padding only are dropped.
  Value spread(Emitter &e, Value dy) const {
    for (int d = 0; d < 2; ++d) {
      int64_t reach = dilation[d] * (kernel[d] - 1);
      dy = e.place(dy, 1 + d, reach - pad[2 * d], stride[d], input[1 + d] + reach);
    }
    return dy;
  }

  // The input padded with `value` to exactly the rows its windows read,
  // (OH - 1) s + d (K - 1) + 1, cropping rows that no window reads.
  Value padded(Emitter &e, Value x, float value = 0.0f) const {
    for (int d = 0; d < 2; ++d) {
      int64_t rows = (output[1 + d] - 1) * stride[d] + dilation[d] * (kernel[d] - 1) + 1;
      x = e.padOrCrop(x, 1 + d, pad[2 * d], rows - input[1 + d] - pad[2 * d], value);
    }
    return x;
  }

  // Windows that tile the padded image (stride = kernel, the usual 2x2/2
  // pool) turn the image into blocks with one space-to-depth transpose:
  // [N, OH * KH, OW * KW, C] <-> [N, OH, OW, KH * KW, C], each window's taps
  // side by side in row-major window order.
  bool tiles() const { return stride == kernel; }
  Shape blockShape(int64_t taps) const {
    return {output[0], output[1], output[2], taps, output[3]};
  }
  Shape blockShape() const { return blockShape(kernel[0] * kernel[1]); }

  Value toBlocks(Emitter &e, Value padded) const {
    Shape image = {output[0], output[1], kernel[0], output[2], kernel[1], output[3]};
    return e.reshape(e.transpose(e.reshape(padded, image), {0, 1, 3, 2, 4, 5}), blockShape());
  }

  // The adjoint of toBlocks after padded: the blocks back at the input
  // positions they read, the padding dropped, unread rows zero.
  Value fromBlocks(Emitter &e, Value blocks) const {
    Shape split = {output[0], output[1], output[2], kernel[0], kernel[1], output[3]};
    Value x = e.transpose(e.reshape(blocks, split), {0, 1, 3, 2, 4, 5});
    x = e.reshape(x, {output[0], output[1] * kernel[0], output[2] * kernel[1], output[3]});
    for (int d = 0; d < 2; ++d) {
      int64_t rows = output[1 + d] * kernel[d], low = pad[2 * d];
      x = e.padOrCrop(x, 1 + d, -low, input[1 + d] - (rows - low));
    }
    return x;
  }
};

Gradient biasGradient(Emitter &e, Value dy) {
  return [&e, dy] { return e.sum(dy, {0, 1, 2}, {shapeOf(dy)[3]}); };
}

// conv2d (input NHWC, weights OHWI, bias O).
Gradients conv2dRule(Emitter &e, tosa::Conv2DOp op, Value dy) {
  Value x = op.getInput(), w = op.getWeight();
  Shape ws = shapeOf(w);
  Window window(ws[1], ws[2], op.getStride(), op.getDilation(), op.getPad(), x, dy);
  return {
      // dx: the transposed convolution, the spread dy convolved with the
      // kernel flipped and its input and output channels swapped.
      [&e, dy, w, window] {
        Value flipped = e.transpose(e.reverse(e.reverse(w, 1), 2), {3, 1, 2, 0});
        return e.conv2d(window.spread(e, dy), flipped, {1, 1}, window.dilation);
      },
      // dw[o, kh, kw, i] = sum over n, oh, ow of
      // dy[n, oh, ow, o] x[n, oh s + kh d, ow s + kw d, i], the correlation
      // of input and dy: a convolution of the padded input with its
      // channels as the batch and its batch as channels, dy as the kernel,
      // stride and dilation swapped.
      [&e, dy, x, window] {
        Value image = e.transpose(window.padded(e, x), {3, 1, 2, 0});
        Value kernel = e.transpose(dy, {3, 1, 2, 0});
        return e.transpose(e.conv2d(image, kernel, window.dilation, window.stride), {3, 1, 2, 0});
      },
      biasGradient(e, dy)};
}

// depthwise_conv2d (input NHWC, weights [KH, KW, C, M], output channel
// c M + m reads input channel c).
Gradients depthwiseConv2dRule(Emitter &e, tosa::DepthwiseConv2DOp op, Value dy) {
  Value x = op.getInput(), w = op.getWeight();
  Shape ws = shapeOf(w);
  Window window(ws[0], ws[1], op.getStride(), op.getDilation(), op.getPad(), x, dy);
  return {
      // dx: each output channel's transposed convolution with its own
      // flipped filter, then the M channels of each input channel summed.
      [&e, dy, w, ws, window] {
        Value flipped = e.reshape(e.reverse(e.reverse(w, 0), 1), {ws[0], ws[1], ws[2] * ws[3], 1});
        Value dx = e.depthwiseConv2d(window.spread(e, dy), flipped, {1, 1}, window.dilation);
        Shape in = window.input;
        return e.sum(e.reshape(dx, {in[0], in[1], in[2], ws[2], ws[3]}), {4}, in);
      },
      // dw[kh, kw, c, m] = sum over n, oh, ow of
      // dy[n, oh, ow, c M + m] x[n, oh s + kh d, ow s + kw d, c]: one image
      // whose channels are (n, c), dy's (n, c, m) as its depthwise kernel,
      // stride and dilation swapped, then summed over n.
      [&e, dy, x, ws, window] {
        Value padded = window.padded(e, x);
        Shape p = shapeOf(padded), out = window.output;
        int64_t batch = p[0], channels = ws[2], multiplier = ws[3];
        Value image =
            e.reshape(e.transpose(padded, {1, 2, 0, 3}), {1, p[1], p[2], batch * channels});
        Value kernel =
            e.reshape(e.transpose(e.reshape(dy, {batch, out[1], out[2], channels, multiplier}),
                                  {1, 2, 0, 3, 4}),
                      {out[1], out[2], batch * channels, multiplier});
        Value dw = e.depthwiseConv2d(image, kernel, window.dilation, window.stride);
        return e.sum(e.reshape(dw, {ws[0], ws[1], batch, channels * multiplier}), {2}, ws);
      },
      biasGradient(e, dy)};
}

// max_pool2d: each window's dy goes to the window's first maximum in
// row-major window order (the element PyTorch's and ONNX's max pool
// indices name); other tied elements get none. The taps in that order,
// each marking where it holds the maximum and no earlier tap did, its share
// placed back at the input positions it read. Windows that tile the image
// take their taps from the input's blocks and put the shares back as
// blocks, instead of a strided slice, a placement and an add per tap at the
// input's resolution.
Gradients maxPool2dRule(Emitter &e, tosa::MaxPool2dOp op, Value dy) {
  ArrayRef<int64_t> kernel = op.getKernel();
  Window window(kernel[0], kernel[1], op.getStride(), {1, 1}, op.getPad(), op.getInput(), dy);
  return {[&e, dy, window, x = op.getInput(), y = op.getOutput()] {
    // TOSA pads a max pool with the lowest value, so padding never wins.
    Value padded = window.padded(e, x, std::numeric_limits<float>::lowest());
    auto [kh, kw] = window.kernel;
    Shape out = window.output, tapShape = window.blockShape(1);
    Value blocks = window.tiles() ? window.toBlocks(e, padded) : Value();
    Value taken, dx;
    SmallVector<Value> shares;
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t j = 0; j < kw; ++j) {
        Value tap;
        if (blocks) {
          tap = e.reshape(e.slice(blocks, {0, 0, 0, i * kw + j, 0}, tapShape), out);
        } else {
          tap = e.stridedSlice(padded, 1, i, window.stride[0], out[1]);
          tap = e.stridedSlice(tap, 2, j, window.stride[1], out[2]);
        }
        Value first = e.compare<tosa::EqualOp>(tap, y);
        bool last = i + 1 == kh && j + 1 == kw;
        if (taken) {
          Type mask = taken.getType();
          first = e.make<tosa::LogicalAndOp>(mask, first, e.make<tosa::LogicalNotOp>(mask, taken));
          if (!last)
            taken = e.make<tosa::LogicalOrOp>(mask, taken, first);
        } else {
          taken = first;
        }
        Value share = e.select(first, dy, e.scalar(0.0, 4));
        if (blocks) {
          shares.push_back(e.reshape(share, tapShape));
          continue;
        }
        share = e.place(share, 1, i - window.pad[0], window.stride[0], window.input[1]);
        share = e.place(share, 2, j - window.pad[2], window.stride[1], window.input[2]);
        dx = dx ? e.binary<tosa::AddOp>(dx, share) : share;
      }
    if (!blocks)
      return dx;
    return window.fromBlocks(
        e, e.make<tosa::ConcatOp>(e.type(window.blockShape()), shares, e.b.getI32IntegerAttr(3)));
  }};
}

// avg_pool2d: y is a window's sum over its count, the input elements in the
// window (TOSA's divisor leaves the padding out; the importer pads
// count_include_pad=1 pools with real zeros first). dx is the transposed
// convolution of dy / count with a kernel of ones; windows that tile the
// image give each of their taps the same share, as blocks.
Gradients avgPool2dRule(Emitter &e, tosa::AvgPool2dOp op, Value dy) {
  ArrayRef<int64_t> kernel = op.getKernel();
  Window window(kernel[0], kernel[1], op.getStride(), {1, 1}, op.getPad(), op.getInput(), dy);
  return {[&e, dy, window] {
    std::array<SmallVector<int64_t>, 2> counts;
    for (int d = 0; d < 2; ++d)
      for (int64_t o = 0; o < window.output[1 + d]; ++o) {
        int64_t first = o * window.stride[d] - window.pad[2 * d];
        counts[d].push_back(std::min(first + window.kernel[d], window.input[1 + d]) -
                            std::max<int64_t>(first, 0));
      }
    SmallVector<float> inverse;
    for (int64_t h : counts[0])
      for (int64_t w : counts[1])
        // A window in the padding only (not from the importer) reads nothing.
        inverse.push_back(h > 0 && w > 0 ? 1.0f / static_cast<float>(h * w) : 0.0f);
    Value scaled = e.mul(dy, e.constant({1, window.output[1], window.output[2], 1}, inverse));
    if (window.tiles()) {
      // Every tap of a window gets the same share: the blocks repeat it.
      SmallVector<int64_t> multiples = {1, 1, 1, window.kernel[0] * window.kernel[1], 1};
      return window.fromBlocks(e, e.make<tosa::TileOp>(e.type(window.blockShape()),
                                                       e.reshape(scaled, window.blockShape(1)),
                                                       e.b.getDenseI64ArrayAttr(multiples)));
    }
    Value ones = e.constant({window.kernel[0], window.kernel[1], window.input[3], 1}, {1.0f});
    return e.depthwiseConv2d(window.spread(e, scaled), ones, {1, 1}, {1, 1});
  }};
}

FailureOr<Gradients> vectorJacobian(Emitter &e, Operation *op, Value dy) {
  for (Value v : op->getOperands())
    if (auto type = llvm::dyn_cast<RankedTensorType>(v.getType()); !type || !type.hasStaticShape())
      return op->emitError() << "training needs static shapes, " << op->getName()
                             << " has an operand of type " << v.getType();
  Value y = op->getResult(0);
  auto x = [op] { return op->getOperand(0); };
  int64_t rank = static_cast<int64_t>(shapeOf(y).size());
  auto one = [](Gradient gradient) { return Gradients{std::move(gradient)}; };
  auto fail = [op](const Twine &why) -> FailureOr<Gradients> {
    return op->emitError() << "training needs " << why;
  };
  return llvm::TypeSwitch<Operation *, FailureOr<Gradients>>(op)
      .Case([&](tosa::AddOp) {
        return elementwise(
            e, op, [dy] { return dy; }, [dy] { return dy; });
      })
      .Case([&](tosa::SubOp) {
        return elementwise(
            e, op, [dy] { return dy; }, [&e, dy] { return e.unary<tosa::NegateOp>(dy); });
      })
      .Case([&](tosa::MulOp) {
        return elementwise(
            e, op, [&e, dy, op] { return e.mul(dy, op->getOperand(1)); },
            [&e, dy, x] { return e.mul(dy, x()); });
      })
      .Case([&](tosa::NegateOp) { return one([&e, dy] { return e.unary<tosa::NegateOp>(dy); }); })
      .Case([&](tosa::MatMulOp) -> FailureOr<Gradients> {
        // [B, M, K] x [B, K, N]: dA = dY B^T, dB = A^T dY, batch by batch.
        Value a = op->getOperand(0), b = op->getOperand(1);
        if (shapeOf(a)[0] != shapeOf(b)[0])
          return fail("a matmul with equal batches");
        return Gradients{
            [&e, dy, a, b] {
              return e.make<tosa::MatMulOp>(a.getType(), dy, e.transpose(b, {0, 2, 1}));
            },
            [&e, dy, a, b] {
              return e.make<tosa::MatMulOp>(b.getType(), e.transpose(a, {0, 2, 1}), dy);
            }};
      })
      .Case(
          [&](tosa::ReshapeOp) { return one([&e, dy, x] { return e.reshape(dy, shapeOf(x())); }); })
      .Case([&](tosa::TransposeOp transpose) -> FailureOr<Gradients> {
        SmallVector<int64_t> perm;
        if (failed(transpose.getConstantPerms(perm)))
          return fail("a transpose with constant perms");
        SmallVector<int32_t> inverse(perm.size());
        for (auto [i, p] : llvm::enumerate(perm))
          inverse[p] = static_cast<int32_t>(i);
        return one([&e, dy, inverse] { return e.transpose(dy, inverse); });
      })
      .Case([&](tosa::ClampOp clamp) { return clampRule(e, clamp, dy); })
      .Case([&](tosa::ExpOp) { return one([&e, dy, y] { return e.mul(dy, y); }); })
      .Case([&](tosa::LogOp) {
        return one([&e, dy, x] { return e.mul(dy, e.unary<tosa::ReciprocalOp>(x())); });
      })
      .Case([&](tosa::ReciprocalOp) {
        return one([&e, dy, y] { return e.unary<tosa::NegateOp>(e.mul(dy, e.mul(y, y))); });
      })
      .Case([&](tosa::RsqrtOp) {
        // d/dx x^(-1/2) = -y^3 / 2.
        return one([&e, dy, y, rank] {
          return e.mul(dy, e.mul(e.scalar(-0.5, rank), e.mul(y, e.mul(y, y))));
        });
      })
      .Case([&](tosa::TanhOp) {
        return one([&e, dy, y, rank] {
          return e.mul(dy, e.binary<tosa::SubOp>(e.scalar(1.0, rank), e.mul(y, y)));
        });
      })
      .Case([&](tosa::SigmoidOp) {
        return one([&e, dy, y, rank] {
          return e.mul(dy, e.mul(y, e.binary<tosa::SubOp>(e.scalar(1.0, rank), y)));
        });
      })
      .Case([&](tosa::ErfOp) {
        // d/dx erf(x) = 2 / sqrt(pi) exp(-x^2) (GELU's part).
        return one([&e, dy, x, rank] {
          Value gauss = e.unary<tosa::ExpOp>(e.unary<tosa::NegateOp>(e.mul(x(), x())));
          return e.mul(dy, e.mul(gauss, e.scalar(2.0 / std::sqrt(M_PI), rank)));
        });
      })
      .Case([&](tosa::AbsOp) {
        // sign(x), +1 at 0 (a subgradient).
        return one([&e, dy, x, rank] {
          return e.select(e.compare<tosa::GreaterEqualOp>(x(), e.scalar(0.0, rank)), dy,
                          e.unary<tosa::NegateOp>(dy));
        });
      })
      .Case([&](tosa::PowOp) {
        // y = a^b: da = dy b a^(b - 1) (a^(b - 1) itself, not y / a, which
        // is 0 / 0 at a = 0), db = dy y log(a).
        Value a = op->getOperand(0), b = op->getOperand(1);
        return elementwise(
            e, op,
            [&e, dy, a, b, rank] {
              Value lower = e.binary<tosa::SubOp>(b, e.scalar(1.0, rank));
              return e.mul(dy, e.mul(b, e.binary<tosa::PowOp>(a, lower)));
            },
            [&e, dy, a, y] { return e.mul(dy, e.mul(y, e.unary<tosa::LogOp>(a))); });
      })
      .Case([&](tosa::MaximumOp max) { return extremumRule(e, max, dy); })
      .Case([&](tosa::MinimumOp min) { return extremumRule(e, min, dy); })
      .Case([&](tosa::SelectOp select) { return selectRule(e, select, dy); })
      .Case([&](tosa::CastOp) -> FailureOr<Gradients> {
        if (!isFloatTensor(x()))
          return fail("a cast from a float type to differentiate");
        return one([&e, dy, x] { return e.make<tosa::CastOp>(x().getType(), dy); });
      })
      .Case([&](tosa::ReduceSumOp sum) {
        Shape multiples(rank, 1);
        multiples[sum.getAxis()] = shapeOf(x())[sum.getAxis()];
        return one([&e, dy, x, multiples] {
          return e.make<tosa::TileOp>(x().getType(), dy, e.b.getDenseI64ArrayAttr(multiples));
        });
      })
      .Case([&](tosa::ReduceMaxOp max) { return extremeReductionRule(e, max, dy); })
      .Case([&](tosa::ReduceMinOp min) { return extremeReductionRule(e, min, dy); })
      .Case([&](tosa::TileOp tile) { return tileRule(e, tile, dy); })
      .Case([&](tosa::ReverseOp reverse) {
        return one([&e, dy, axis = reverse.getAxis()] { return e.reverse(dy, axis); });
      })
      .Case([&](tosa::SliceOp slice) {
        // Zeros around dy.
        Shape start(slice.getStart()), high = shapeOf(x());
        for (size_t i = 0; i < high.size(); ++i)
          high[i] -= start[i] + shapeOf(y)[i];
        return one([&e, dy, start, high] { return e.padOrCrop(dy, start, high); });
      })
      .Case([&](tosa::PadOp pad) -> FailureOr<Gradients> {
        // The part of dy over the input; the padding value is a constant.
        Shape padding = integers(pad.getPadding()), start;
        if (padding.empty())
          return fail("a pad with constant padding");
        for (size_t i = 0; i < padding.size(); i += 2)
          start.push_back(padding[i]);
        return one([&e, dy, start, x] { return e.slice(dy, start, shapeOf(x())); });
      })
      .Case([&](tosa::ConcatOp concat) { return concatRule(e, concat, dy); })
      .Case([&](tosa::GatherOp gather) { return gatherRule(e, gather, dy); })
      .Case([&](tosa::Conv2DOp conv) { return conv2dRule(e, conv, dy); })
      .Case([&](tosa::DepthwiseConv2DOp conv) { return depthwiseConv2dRule(e, conv, dy); })
      .Case([&](tosa::MaxPool2dOp pool) { return maxPool2dRule(e, pool, dy); })
      .Case([&](tosa::AvgPool2dOp pool) { return avgPool2dRule(e, pool, dy); })
      .Default([&](Operation *) -> FailureOr<Gradients> {
        return op->emitError() << "no gradient rule for " << op->getName()
                               << " (it lies between a trainable parameter and the loss)";
      });
}

class Autodiff : public tpu::impl::AutodiffBase<Autodiff> {
public:
  using AutodiffBase::AutodiffBase;

  void runOnOperation() override {
    if (failed(build()))
      signalPassFailure();
  }

private:
  struct Parameter {
    std::string name;
    tosa::ConstOp op;
  };

  LogicalResult build() {
    ModuleOp module = getOperation();
    if (loss != "cross-entropy" && loss != "mse")
      return module.emitError() << "loss must be cross-entropy or mse, got '" << loss << "'";
    if (optimizer != "sgd" && optimizer != "momentum")
      return module.emitError() << "optimizer must be sgd or momentum, got '" << optimizer << "'";
    if (!(lr > 0.0) || !std::isfinite(lr))
      return module.emitError() << "lr must be a positive number, got " << lr;
    if (!(momentum >= 0.0 && momentum < 1.0))
      return module.emitError() << "momentum must be in [0, 1), got " << momentum;
    if (!(weightDecay >= 0.0) || !std::isfinite(weightDecay))
      return module.emitError() << "weight-decay must be 0 or more, got " << weightDecay;

    auto forward = module.lookupSymbol<func::FuncOp>("main");
    if (!forward || forward.isExternal())
      return module.emitError() << "no function @main to train";
    if (forward.getNumResults() != 1)
      return forward.emitError() << "training needs one model output, @main has "
                                 << forward.getNumResults();
    auto output = llvm::dyn_cast<RankedTensorType>(forward.getResultTypes()[0]);
    if (!output || !output.hasStaticShape() || !output.getElementType().isF32())
      return forward.emitError() << "training needs a static f32 output, @main's is "
                                 << forward.getResultTypes()[0];
    bool crossEntropy = loss == "cross-entropy";
    if (crossEntropy && output.getRank() != 2)
      return forward.emitError() << "cross-entropy needs a [batch, classes] output, @main's is "
                                 << output;

    FailureOr<SmallVector<Parameter>> parameters = findParameters(forward);
    if (failed(parameters))
      return failure();
    numParameters = parameters->size();
    bool withMomentum = optimizer == "momentum";

    // The step's signature (see the pass description).
    OpBuilder builder(forward);
    MLIRContext *context = &getContext();
    auto named = [&](StringRef name) {
      return builder.getDictionaryAttr(
          builder.getNamedAttr("tpu.name", builder.getStringAttr(name)));
    };
    SmallVector<Type> inputs(forward.getArgumentTypes());
    SmallVector<Attribute> inputNames;
    for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
      DictionaryAttr attrs = forward.getArgAttrDict(i);
      inputNames.push_back(attrs ? attrs : builder.getDictionaryAttr({}));
    }
    Type labels = crossEntropy
                      ? RankedTensorType::get({output.getDimSize(0)}, IntegerType::get(context, 64))
                      : Type(output);
    inputs.push_back(labels);
    inputNames.push_back(named("labels"));
    SmallVector<Type> results{RankedTensorType::get({1}, builder.getF32Type())};
    SmallVector<Attribute> resultNames{named("loss")};
    if (crossEntropy) {
      results.push_back(RankedTensorType::get({1}, builder.getI32Type()));
      resultNames.push_back(named("correct"));
    }
    for (bool buffers : {false, true}) {
      if (buffers && !withMomentum)
        break;
      for (Parameter &parameter : *parameters) {
        std::string name = buffers ? parameter.name + ".momentum" : parameter.name;
        for (auto [types, names] :
             {std::pair(&inputs, &inputNames), std::pair(&results, &resultNames)}) {
          types->push_back(parameter.op.getType());
          names->push_back(named(name));
        }
      }
    }
    auto step = builder.create<func::FuncOp>(forward.getLoc(), "main",
                                             builder.getFunctionType(inputs, results));
    step.setAllArgAttrs(inputNames);
    step.setAllResultAttrs(resultNames);
    Block *body = step.addEntryBlock();

    // The forward graph, with parameters read from the arguments.
    unsigned forwardInputs = forward.getNumArguments();
    IRMapping mapping;
    for (unsigned i = 0; i < forwardInputs; ++i)
      mapping.map(forward.getArgument(i), body->getArgument(i));
    unsigned firstParameter = forwardInputs + 1;
    SmallVector<Value> parameterValues, bufferValues;
    for (auto [i, parameter] : llvm::enumerate(*parameters)) {
      parameterValues.push_back(body->getArgument(firstParameter + i));
      if (withMomentum)
        bufferValues.push_back(body->getArgument(firstParameter + parameters->size() + i));
      mapping.map(parameter.op.getResult(), parameterValues.back());
    }
    builder.setInsertionPointToStart(body);
    SmallVector<Operation *> ops;
    Value modelOutput;
    for (Operation &op : forward.getBody().front()) {
      if (auto ret = llvm::dyn_cast<func::ReturnOp>(op)) {
        modelOutput = mapping.lookup(ret.getOperand(0));
        continue;
      }
      if (op.getNumResults() == 1 && mapping.contains(op.getResult(0)))
        continue; // a parameter, now an argument
      ops.push_back(builder.clone(op, mapping));
    }

    // Values that depend on a parameter: only their gradients are built.
    DenseSet<Value> active(parameterValues.begin(), parameterValues.end());
    for (Operation *op : ops)
      if (llvm::any_of(op->getOperands(), [&](Value v) { return active.contains(v); }))
        for (Value result : op->getResults())
          if (isFloatTensor(result))
            active.insert(result);

    int64_t count = 0;
    Emitter lossEmitter(builder, NameLoc::get(builder.getStringAttr("loss")), count);
    Value labelsValue = body->getArgument(forwardInputs);
    SmallVector<Value> stepResults;
    Value outputGradient =
        crossEntropy ? buildCrossEntropy(lossEmitter, modelOutput, labelsValue, stepResults)
                     : buildMeanSquaredError(lossEmitter, modelOutput, labelsValue, stepResults);

    DenseMap<Value, Value> gradients;
    auto accumulate = [&](Emitter &e, Value value, Value gradient) {
      auto [it, inserted] = gradients.try_emplace(value, gradient);
      if (!inserted)
        it->second = e.binary<tosa::AddOp>(it->second, gradient);
    };
    if (active.contains(modelOutput))
      gradients[modelOutput] = outputGradient;
    for (Operation *op : llvm::reverse(ops)) {
      if (op->getNumResults() != 1 || !gradients.count(op->getResult(0)))
        continue;
      SmallVector<unsigned> wanted;
      for (auto [index, operand] : llvm::enumerate(op->getOperands()))
        if (active.contains(operand))
          wanted.push_back(index);
      if (wanted.empty())
        continue;
      Emitter e(builder, gradientLocation(op->getLoc()), count);
      FailureOr<Gradients> operandGradients =
          vectorJacobian(e, op, gradients.lookup(op->getResult(0)));
      if (failed(operandGradients))
        return failure();
      for (unsigned index : wanted) {
        if (index >= operandGradients->size() || !(*operandGradients)[index])
          return op->emitError() << "no gradient rule for operand " << index << " of "
                                 << op->getName();
        accumulate(e, op->getOperand(index), (*operandGradients)[index]());
      }
    }

    // The optimizer: parameters first, then their buffers (the signature's order).
    SmallVector<Value> updatedBuffers;
    for (auto [i, parameter] : llvm::enumerate(*parameters)) {
      Value w = parameterValues[i];
      Emitter e(builder, NameLoc::get(builder.getStringAttr(parameter.name + " (update)")), count);
      int64_t rank = static_cast<int64_t>(shapeOf(w).size());
      // A parameter the loss does not depend on has a zero gradient.
      Value g = gradients.lookup(w);
      if (weightDecay != 0.0) {
        Value decay = e.mul(w, e.scalar(weightDecay, rank));
        g = g ? e.binary<tosa::AddOp>(g, decay) : decay;
      }
      if (withMomentum) {
        Value v = e.mul(bufferValues[i], e.scalar(momentum, rank));
        if (g)
          v = e.binary<tosa::AddOp>(v, g);
        updatedBuffers.push_back(v);
        g = v;
      }
      // w + g (-lr): the same bits as w - g lr, with the step's tile on the
      // left, so that it can join the matmul producing g as an epilogue.
      stepResults.push_back(g ? e.binary<tosa::AddOp>(e.mul(g, e.scalar(-lr, rank)), w) : w);
    }
    llvm::append_range(stepResults, updatedBuffers);
    builder.create<func::ReturnOp>(forward.getLoc(), stepResults);
    numGradientOps = count;
    forward.erase();
    return success();
  }

  FailureOr<SmallVector<Parameter>> findParameters(func::FuncOp forward) {
    SmallVector<Parameter> found;
    llvm::StringSet<> wanted;
    for (const std::string &name : trainable)
      wanted.insert(name);
    llvm::StringSet<> seen;
    for (auto op : forward.getOps<tosa::ConstOp>()) {
      auto name = op->getAttrOfType<StringAttr>("tpu.name");
      if (!name || !isFloatTensor(op.getResult()))
        continue;
      seen.insert(name.getValue());
      if (!wanted.empty() && !wanted.contains(name.getValue()))
        continue;
      auto type = llvm::cast<RankedTensorType>(op.getType());
      if (!type.hasStaticShape() || !type.getElementType().isF32())
        return op.emitError() << "parameter '" << name.getValue()
                              << "' must be a static f32 tensor to train, it is " << type;
      found.push_back({name.getValue().str(), op});
    }
    for (const std::string &name : trainable)
      if (!seen.contains(name))
        return forward.emitError() << "no float parameter named '" << name << "' to train";
    if (found.empty())
      return forward.emitError() << "nothing to train: @main has no named float constant";
    return found;
  }

  // Mean softmax cross-entropy of the logits' rows against integer labels:
  // the loss and the correct-prediction count go to `results`; returns the
  // logits' gradient (softmax - onehot) / B.
  static Value buildCrossEntropy(Emitter &e, Value logits, Value labels,
                                 SmallVectorImpl<Value> &results) {
    Shape shape = shapeOf(logits);
    int64_t batch = shape[0], classes = shape[1];
    auto i32 = e.b.getI32Type();
    Value labels32 = e.make<tosa::CastOp>(e.type({batch}, i32), labels);
    SmallVector<int32_t> iota(classes);
    std::iota(iota.begin(), iota.end(), 0);
    auto iotaType = e.type({1, classes}, i32);
    Value classIds =
        e.make<tosa::ConstOp>(iotaType, DenseElementsAttr::get(iotaType, ArrayRef(iota)));
    Value hit = e.make<tosa::EqualOp>(e.type(shape, e.b.getI1Type()),
                                      e.reshape(labels32, {batch, 1}), classIds);
    Value onehot = e.indicator(hit);
    // log(sum(exp(x))) - x[label], with the row's maximum subtracted first
    // so that exp cannot overflow.
    Value shifted = e.binary<tosa::SubOp>(
        logits, e.make<tosa::ReduceMaxOp>(e.type({batch, 1}), logits, e.b.getI32IntegerAttr(1)));
    Value exp = e.unary<tosa::ExpOp>(shifted);
    Value sum = e.reduceSum(exp, 1);
    Value rowLoss =
        e.binary<tosa::SubOp>(e.unary<tosa::LogOp>(sum), e.reduceSum(e.mul(shifted, onehot), 1));
    Value invBatch = e.scalar(1.0 / static_cast<double>(batch), 2);
    results.push_back(e.reshape(e.mul(e.reduceSum(rowLoss, 0), invBatch), {1}));
    Value predicted =
        e.make<tosa::ArgMaxOp>(e.type({batch}, i32), logits, e.b.getI32IntegerAttr(1));
    Value correct = e.make<tosa::CastOp>(
        e.type({batch}, i32),
        e.make<tosa::EqualOp>(e.type({batch}, e.b.getI1Type()), predicted, labels32));
    results.push_back(e.reduceSum(correct, 0));
    Value softmax = e.mul(exp, e.unary<tosa::ReciprocalOp>(sum));
    return e.mul(e.binary<tosa::SubOp>(softmax, onehot), invBatch);
  }

  // Mean over all elements of (output - target)^2; returns its gradient
  // 2 (output - target) / N.
  static Value buildMeanSquaredError(Emitter &e, Value output, Value target,
                                     SmallVectorImpl<Value> &results) {
    Shape shape = shapeOf(output);
    int64_t rank = static_cast<int64_t>(shape.size()), elements = 1;
    for (int64_t d : shape)
      elements *= d;
    Value difference = e.binary<tosa::SubOp>(output, target);
    Value total = e.mul(difference, difference);
    for (int64_t axis = 0; axis < rank; ++axis)
      if (shape[axis] != 1)
        total = e.reduceSum(total, axis);
    double inverse = 1.0 / static_cast<double>(elements);
    results.push_back(e.reshape(e.mul(total, e.scalar(inverse, rank)), {1}));
    return e.mul(difference, e.scalar(2.0 * inverse, rank));
  }
};

} // namespace
