// tpu-lower-tosa: TOSA graph operations -> TPU hardware operations.
#include "tpu/Target/TPU/IsaLimits.h"
#include "tpu/Target/TPU/Passes.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

namespace mlir::tpu {
#define GEN_PASS_DEF_LOWERTOSATOTPU
#include "tpu/Target/TPU/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;
using namespace mlir::tpu;

namespace {

Value viewAs(PatternRewriter &rewriter, Location loc, Value value, RankedTensorType type) {
  if (value.getType() == type)
    return value;
  return rewriter.create<ViewOp>(loc, type, value);
}

Value asMatrix(PatternRewriter &rewriter, Location loc, Value value) {
  return viewAs(rewriter, loc, value, matrixType(llvm::cast<RankedTensorType>(value.getType())));
}

bool isF32Tensor(Type type) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() && tensor.getElementType().isF32();
}

// Checks the forms this lowering handles, so that an unsupported model fails
// with an error naming the operation instead of a generic legalization error.
LogicalResult checkSupported(Operation *op) {
  if (!llvm::isa<tosa::TosaDialect>(op->getDialect()))
    return success();
  if (llvm::isa<tosa::ConstOp>(op))
    return success(); // a non-f32 constant is reported where it is used
  SmallVector<Type> types(op->getOperandTypes());
  llvm::append_range(types, op->getResultTypes());
  if (auto transpose = llvm::dyn_cast<tosa::TransposeOp>(op)) {
    SmallVector<int64_t> perms;
    if (failed(transpose.getConstantPerms(perms)))
      return op->emitOpError("with non-constant perms is not supported by the TPU lowering");
    types = {transpose.getInput1().getType(), transpose.getType()};
  }
  if (auto pad = llvm::dyn_cast<tosa::PadOp>(op)) {
    DenseIntElementsAttr padding;
    DenseElementsAttr value;
    if (!matchPattern(pad.getPadding(), m_Constant(&padding)) ||
        (pad.getPadConst() && !matchPattern(pad.getPadConst(), m_Constant(&value))))
      return op->emitOpError("with non-constant padding is not supported by the TPU lowering");
    types = {pad.getInput1().getType(), pad.getType()};
  }
  for (Type type : types)
    if (!isF32Tensor(type))
      return op->emitOpError("is supported on static-shape f32 tensors only, got ") << type;
  if (auto mul = llvm::dyn_cast<tosa::MulOp>(op); mul && mul.getShift() != 0)
    return op->emitOpError("with a non-zero shift is not supported on f32");
  if (llvm::isa<tosa::AddOp, tosa::SubOp, tosa::MulOp, tosa::MaximumOp, tosa::MinimumOp>(op)) {
    Value result = op->getResult(0), lhs = op->getOperand(0), rhs = op->getOperand(1);
    bool commutative = !llvm::isa<tosa::SubOp>(op);
    bool direct = lhs.getType() == result.getType() && spreadOf(result, rhs);
    bool swapped = commutative && rhs.getType() == result.getType() && spreadOf(result, lhs);
    if (!direct && !swapped)
      return op->emitOpError("broadcast is not supported by the vector unit: the smaller "
                             "operand must match in shape, be one row of the last dimension, "
                             "one column (size 1 in the last dimension only) or one element");
  }
  if (llvm::isa<tosa::ReduceSumOp, tosa::ReduceMaxOp>(op)) {
    auto input = llvm::cast<RankedTensorType>(op->getOperand(0).getType());
    int64_t axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
    if (axis != input.getRank() - 1)
      return op->emitOpError() << "over axis " << axis
                               << " is not supported by the TPU lowering (only the last axis, "
                               << input.getRank() - 1 << ")";
  }
  if (llvm::isa<tosa::Conv2DOp, tosa::DepthwiseConv2DOp>(op)) {
    DenseElementsAttr weights;
    if (!matchPattern(op->getOperand(1), m_Constant(&weights)))
      return op->emitOpError("with non-constant weights is not supported by the TPU lowering");
    auto depthwise = llvm::dyn_cast<tosa::DepthwiseConv2DOp>(op);
    if (depthwise && depthwise.getWeight().getType().getShape()[3] != 1)
      return op->emitOpError("with a channel multiplier other than 1 is not supported by the TPU "
                             "lowering");
  }
  if (auto pool = llvm::dyn_cast<tosa::AvgPool2dOp>(op); pool && !pool.getAccType().isF32())
    return op->emitOpError("accumulating in other than f32 is not supported by the TPU lowering");
  if (llvm::isa<tosa::ConstOp, tosa::ReshapeOp, tosa::TransposeOp, tosa::Conv2DOp,
                tosa::DepthwiseConv2DOp, tosa::MaxPool2dOp, tosa::AvgPool2dOp, tosa::SliceOp,
                tosa::ConcatOp, tosa::PadOp, tosa::MatMulOp, tosa::AddOp, tosa::SubOp, tosa::MulOp,
                tosa::MaximumOp, tosa::MinimumOp, tosa::ClampOp, tosa::ExpOp, tosa::ReciprocalOp,
                tosa::RsqrtOp, tosa::ErfOp, tosa::ReduceSumOp, tosa::ReduceMaxOp>(op))
    return success();
  return op->emitOpError("is not supported by the TPU lowering");
}

struct LowerConst : OpRewritePattern<tosa::ConstOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::ConstOp op, PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, llvm::cast<TypedAttr>(op.getValue()));
    return success();
  }
};

struct LowerReshape : OpRewritePattern<tosa::ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::ReshapeOp op, PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<ViewOp>(op, op.getType(), op.getInput1());
    return success();
  }
};

// Perms are constant (checkSupported); the input keeps its N-D shape.
struct LowerTranspose : OpRewritePattern<tosa::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::TransposeOp op, PatternRewriter &rewriter) const override {
    SmallVector<int64_t> perms;
    if (failed(op.getConstantPerms(perms)))
      return failure();
    rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getType(), op.getInput1(),
                                             rewriter.getDenseI64ArrayAttr(perms));
    return success();
  }
};

// A lowering that counts what it lowers (for the pass statistics) and
// replaces the TOSA op with a view of a 2-D tpu result in the op's type.
template <typename TosaOp> struct CountedLowering : OpRewritePattern<TosaOp> {
  CountedLowering(MLIRContext *context, llvm::Statistic &count)
      : OpRewritePattern<TosaOp>(context), count(count) {}
  void replaceWithView(PatternRewriter &rewriter, TosaOp op, Value result) const {
    rewriter.replaceOp(op, viewAs(rewriter, op.getLoc(), result,
                                  llvm::cast<RankedTensorType>(op->getResult(0).getType())));
    ++count;
  }
  llvm::Statistic &count;
};

struct LowerMatMul : CountedLowering<tosa::MatMulOp> {
  using CountedLowering::CountedLowering;
  LogicalResult matchAndRewrite(tosa::MatMulOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lhs = asMatrix(rewriter, loc, op.getA());
    Value rhs = asMatrix(rewriter, loc, op.getB());
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    if (resultType.getShape()[0] > 1) {
      replaceWithView(rewriter, op,
                      rewriter.create<BatchMatMulOp>(loc, resultType, op.getA(), op.getB()));
      return success();
    }
    replaceWithView(rewriter, op, rewriter.create<MatMulOp>(loc, matrixType(resultType), lhs, rhs));
    return success();
  }
};

Value constantMatrix(PatternRewriter &rewriter, Location loc, ArrayRef<int64_t> shape,
                     ArrayRef<float> values) {
  auto type = RankedTensorType::get(shape, rewriter.getF32Type());
  return rewriter.create<arith::ConstantOp>(loc, DenseElementsAttr::get(type, values));
}

// What the DMA engine stores into padding: a row of the value, as long as a
// DMA row can be and no longer than `length`.
Value fillRow(PatternRewriter &rewriter, Location loc, int64_t length, float value) {
  int64_t cols = std::min(length, ::tpu::codegen::kMaxCols);
  return constantMatrix(rewriter, loc, {1, cols}, SmallVector<float>(cols, value));
}

// The [N*OH*OW, KH*KW*C] window rows of an NHWC input (a view of the input
// itself for a 1x1 window with stride 1 and no padding).
Value windowRows(PatternRewriter &rewriter, Location loc, Value input, ArrayRef<int64_t> kernel,
                 ArrayRef<int64_t> stride, ArrayRef<int64_t> dilation, ArrayRef<int64_t> pad,
                 float padValue, RankedTensorType result) {
  int64_t channels = llvm::cast<RankedTensorType>(input.getType()).getShape()[3];
  auto type = RankedTensorType::get(
      {result.getNumElements() / result.getShape()[3], kernel[0] * kernel[1] * channels},
      rewriter.getF32Type());
  bool identity = llvm::all_of(kernel, [](int64_t k) { return k == 1; }) &&
                  llvm::all_of(stride, [](int64_t s) { return s == 1; }) &&
                  llvm::all_of(pad, [](int64_t p) { return p == 0; });
  if (identity)
    return viewAs(rewriter, loc, input, type);
  bool padded = llvm::any_of(pad, [](int64_t p) { return p > 0; });
  return rewriter.create<Im2ColOp>(
      loc, type, input, padded ? fillRow(rewriter, loc, channels, padValue) : Value(),
      rewriter.getDenseI64ArrayAttr(kernel), rewriter.getDenseI64ArrayAttr(stride),
      rewriter.getDenseI64ArrayAttr(dilation), rewriter.getDenseI64ArrayAttr(pad));
}

// Tap k of window rows [P, taps*C]: the [P, C] columns k*C ... k*C+C-1.
Value windowTap(PatternRewriter &rewriter, Location loc, Value rows, int64_t tap,
                int64_t channels) {
  auto shape = llvm::cast<RankedTensorType>(rows.getType()).getShape();
  if (shape[1] == channels)
    return rows;
  auto type = RankedTensorType::get({shape[0], channels}, rewriter.getF32Type());
  return rewriter.create<SliceOp>(loc, type, rows,
                                  rewriter.getDenseI64ArrayAttr({0, tap * channels}));
}

// A convolution's bias: one per output channel, or one for all.
Value biasRow(PatternRewriter &rewriter, Location loc, Value bias) {
  int64_t size = llvm::cast<RankedTensorType>(bias.getType()).getNumElements();
  return viewAs(rewriter, loc, bias, RankedTensorType::get({1, size}, rewriter.getF32Type()));
}

// conv2d = im2col, then a matmul with the OHWI weights as [KH*KW*C, O] and
// a bias row.
struct LowerConv2D : CountedLowering<tosa::Conv2DOp> {
  using CountedLowering::CountedLowering;
  LogicalResult matchAndRewrite(tosa::Conv2DOp op, PatternRewriter &rewriter) const override {
    DenseElementsAttr weights;
    if (!matchPattern(op.getWeight(), m_Constant(&weights)))
      return failure();
    Location loc = op.getLoc();
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    ArrayRef<int64_t> weightShape = op.getWeight().getType().getShape(); // O, KH, KW, C
    int64_t outputs = weightShape[0];
    int64_t window = weightShape[1] * weightShape[2] * weightShape[3];
    std::vector<float> ohwi(weights.getValues<float>().begin(), weights.getValues<float>().end());
    std::vector<float> byColumn(ohwi.size());
    for (int64_t o = 0; o < outputs; ++o)
      for (int64_t r = 0; r < window; ++r)
        byColumn[r * outputs + o] = ohwi[o * window + r];
    Value rows = windowRows(rewriter, loc, op.getInput(), weightShape.slice(1, 2), op.getStride(),
                            op.getDilation(), op.getPad(), 0.0f, resultType);
    Value weightMatrix = constantMatrix(rewriter, loc, {window, outputs}, byColumn);
    auto productType =
        RankedTensorType::get({llvm::cast<RankedTensorType>(rows.getType()).getShape()[0], outputs},
                              rewriter.getF32Type());
    Value product = rewriter.create<MatMulOp>(loc, productType, rows, weightMatrix);
    Value bias = biasRow(rewriter, loc, op.getBias());
    replaceWithView(rewriter, op,
                    rewriter.create<BinaryOp>(loc, productType, BinaryKind::add, product, bias));
    return success();
  }
};

// depthwise_conv2d (multiplier 1) on the vector unit: the sum over the
// KH*KW taps of each tap's [P, C] window columns times that tap's weight row,
// plus the bias row.
struct LowerDepthwiseConv2D : CountedLowering<tosa::DepthwiseConv2DOp> {
  using CountedLowering::CountedLowering;
  LogicalResult matchAndRewrite(tosa::DepthwiseConv2DOp op,
                                PatternRewriter &rewriter) const override {
    DenseElementsAttr weights;
    if (!matchPattern(op.getWeight(), m_Constant(&weights)))
      return failure();
    Location loc = op.getLoc();
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    ArrayRef<int64_t> weightShape = op.getWeight().getType().getShape(); // KH, KW, C, 1
    int64_t channels = weightShape[2];
    std::vector<float> hwc(weights.getValues<float>().begin(), weights.getValues<float>().end());
    Value rows = windowRows(rewriter, loc, op.getInput(), weightShape.take_front(2), op.getStride(),
                            op.getDilation(), op.getPad(), 0.0f, resultType);
    RankedTensorType matrix = matrixType(resultType);
    Value sum;
    for (int64_t tap = 0; tap < weightShape[0] * weightShape[1]; ++tap) {
      Value weightRow = constantMatrix(rewriter, loc, {1, channels},
                                       ArrayRef<float>(hwc).slice(tap * channels, channels));
      Value product = rewriter.create<BinaryOp>(
          loc, matrix, BinaryKind::mul, windowTap(rewriter, loc, rows, tap, channels), weightRow);
      sum = sum ? rewriter.create<BinaryOp>(loc, matrix, BinaryKind::add, sum, product) : product;
    }
    Value bias = biasRow(rewriter, loc, op.getBias());
    replaceWithView(rewriter, op,
                    rewriter.create<BinaryOp>(loc, matrix, BinaryKind::add, sum, bias));
    return success();
  }
};

// max_pool2d: im2col padded with the lowest float, then the maximum over the
// taps on the vector unit.
struct LowerMaxPool : CountedLowering<tosa::MaxPool2dOp> {
  using CountedLowering::CountedLowering;
  LogicalResult matchAndRewrite(tosa::MaxPool2dOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    int64_t channels = resultType.getShape()[3];
    Value rows = windowRows(rewriter, loc, op.getInput(), op.getKernel(), op.getStride(), {1, 1},
                            op.getPad(), std::numeric_limits<float>::lowest(), resultType);
    RankedTensorType matrix = matrixType(resultType);
    Value result = windowTap(rewriter, loc, rows, 0, channels);
    for (int64_t tap = 1; tap < op.getKernel()[0] * op.getKernel()[1]; ++tap)
      result = rewriter.create<BinaryOp>(loc, matrix, BinaryKind::max, result,
                                         windowTap(rewriter, loc, rows, tap, channels));
    replaceWithView(rewriter, op, result);
    return success();
  }
};

// How many of the window's positions fall inside an input of `size` for
// output `o` (TOSA's average counts only those).
int64_t windowCount(int64_t o, int64_t stride, int64_t padBefore, int64_t kernel, int64_t size) {
  int64_t first = o * stride - padBefore;
  return std::min(first + kernel, size) - std::max<int64_t>(first, 0);
}

// avg_pool2d: the sum over the taps of zero-padded im2col rows, times one
// over each position's count of inputs: one scalar without padding, else a
// column with one value per output row.
struct LowerAvgPool : CountedLowering<tosa::AvgPool2dOp> {
  using CountedLowering::CountedLowering;
  LogicalResult matchAndRewrite(tosa::AvgPool2dOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    ArrayRef<int64_t> shape = resultType.getShape(), in = op.getInput().getType().getShape();
    ArrayRef<int64_t> kernel = op.getKernel(), stride = op.getStride(), pad = op.getPad();
    Value rows =
        windowRows(rewriter, loc, op.getInput(), kernel, stride, {1, 1}, pad, 0.0f, resultType);
    RankedTensorType matrix = matrixType(resultType);
    Value sum = windowTap(rewriter, loc, rows, 0, shape[3]);
    for (int64_t tap = 1; tap < kernel[0] * kernel[1]; ++tap)
      sum = rewriter.create<BinaryOp>(loc, matrix, BinaryKind::add, sum,
                                      windowTap(rewriter, loc, rows, tap, shape[3]));
    std::vector<float> reciprocals;
    for (int64_t n = 0; n < shape[0]; ++n)
      for (int64_t oh = 0; oh < shape[1]; ++oh)
        for (int64_t ow = 0; ow < shape[2]; ++ow)
          reciprocals.push_back(1.0f / float(windowCount(oh, stride[0], pad[0], kernel[0], in[1]) *
                                             windowCount(ow, stride[1], pad[2], kernel[1], in[2])));
    bool uniform = llvm::all_equal(reciprocals);
    Value scale = uniform ? constantMatrix(rewriter, loc, {1, 1}, reciprocals.front())
                          : constantMatrix(rewriter, loc, {matrix.getShape()[0], 1}, reciprocals);
    replaceWithView(rewriter, op,
                    rewriter.create<BinaryOp>(loc, matrix, BinaryKind::mul, sum, scale));
    return success();
  }
};

// erf on the vector unit, which has exp and reciprocal but no erf:
// Abramowitz & Stegun 7.1.26, for x >= 0
//   erf(x) = 1 - t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) exp(-x^2),
//   t = 1 / (1 + p x),
// with |error| <= 1.5e-7 (plus fp32 rounding), extended to x < 0 by
// erf(-x) = -erf(x): the sign is clamp(x * 1e30, -1, 1), which is 0 at 0.
struct LowerErf : CountedLowering<tosa::ErfOp> {
  using CountedLowering::CountedLowering;
  LogicalResult matchAndRewrite(tosa::ErfOp op, PatternRewriter &rewriter) const override {
    constexpr float p = 0.3275911f;
    constexpr float a[] = {0.254829592f, -0.284496736f, 1.421413741f, -1.453152027f, 1.061405429f};
    Location loc = op.getLoc();
    Value x = asMatrix(rewriter, loc, op.getInput());
    auto type = llvm::cast<RankedTensorType>(x.getType());
    auto binary = [&](BinaryKind kind, Value lhs, Value rhs) -> Value {
      return rewriter.create<BinaryOp>(loc, type, kind, lhs, rhs);
    };
    auto scalar = [&](float value) { return constantMatrix(rewriter, loc, {1, 1}, value); };
    Value magnitude = binary(BinaryKind::max, x, binary(BinaryKind::mul, x, scalar(-1.0f)));
    Value t = rewriter.create<UnaryOp>(
        loc, UnaryKind::reciprocal,
        binary(BinaryKind::add, binary(BinaryKind::mul, magnitude, scalar(p)), scalar(1.0f)));
    Value poly = binary(BinaryKind::mul, t, scalar(a[4]));
    for (int i = 3; i >= 0; --i)
      poly = binary(BinaryKind::mul, binary(BinaryKind::add, poly, scalar(a[i])), t);
    Value gauss = rewriter.create<UnaryOp>(
        loc, UnaryKind::exp, binary(BinaryKind::mul, binary(BinaryKind::mul, x, x), scalar(-1.0f)));
    Value erfMagnitude = binary(
        BinaryKind::add,
        binary(BinaryKind::mul, binary(BinaryKind::mul, poly, gauss), scalar(-1.0f)), scalar(1.0f));
    Value sign = rewriter.create<ClampOp>(loc, binary(BinaryKind::mul, x, scalar(1e30f)),
                                          constantMatrix(rewriter, loc, {1, 2}, {-1.0f, 1.0f}));
    replaceWithView(rewriter, op, binary(BinaryKind::mul, erfMagnitude, sign));
    return success();
  }
};

struct LowerSlice : OpRewritePattern<tosa::SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::SliceOp op, PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<SliceOp>(op, op.getType(), op.getInput(),
                                         rewriter.getDenseI64ArrayAttr(op.getStart()));
    return success();
  }
};

struct LowerConcat : OpRewritePattern<tosa::ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::ConcatOp op, PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<ConcatOp>(op, op.getType(), op.getInput1(),
                                          rewriter.getI64IntegerAttr(op.getAxis()));
    return success();
  }
};

// Padding [rank, 2] (low, high per axis) and the value are constants.
struct LowerPad : OpRewritePattern<tosa::PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::PadOp op, PatternRewriter &rewriter) const override {
    DenseIntElementsAttr padding;
    if (!matchPattern(op.getPadding(), m_Constant(&padding)))
      return failure();
    float value = 0.0f;
    DenseElementsAttr padConst;
    if (op.getPadConst()) {
      if (!matchPattern(op.getPadConst(), m_Constant(&padConst)))
        return failure();
      value = *padConst.getValues<float>().begin();
    }
    SmallVector<int64_t> low, high;
    for (auto [index, size] : llvm::enumerate(padding.getValues<APInt>()))
      (index % 2 == 0 ? low : high).push_back(size.getSExtValue());
    rewriter.replaceOpWithNewOp<PadOp>(
        op, op.getType(), op.getInput1(),
        fillRow(rewriter, op.getLoc(), op.getType().getShape().back(), value),
        rewriter.getDenseI64ArrayAttr(low), rewriter.getDenseI64ArrayAttr(high));
    return success();
  }
};

template <typename TosaOp, BinaryKind kind> struct LowerBinary : CountedLowering<TosaOp> {
  using CountedLowering<TosaOp>::CountedLowering;
  LogicalResult matchAndRewrite(TosaOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    Value full = op->getOperand(0);
    Value other = op->getOperand(1);
    if (full.getType() != resultType)
      std::swap(full, other); // checkSupported allowed this only for commutative ops
    // Broadcast as numpy does, the other operand's matrix view is the spread
    // (spreadOf): the same matrix, a row, an element or a column.
    Value result =
        rewriter.create<BinaryOp>(loc, matrixType(resultType), kind, asMatrix(rewriter, loc, full),
                                  asMatrix(rewriter, loc, other));
    this->replaceWithView(rewriter, op, result);
    return success();
  }
};

template <typename TosaOp, UnaryKind kind> struct LowerUnary : CountedLowering<TosaOp> {
  using CountedLowering<TosaOp>::CountedLowering;
  LogicalResult matchAndRewrite(TosaOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    this->replaceWithView(
        rewriter, op,
        rewriter.create<UnaryOp>(loc, kind, asMatrix(rewriter, loc, op->getOperand(0))));
    return success();
  }
};

// A reduction over the last axis (checkSupported allows no other), which
// TOSA keeps with size 1: per row of the matrix view, one result element.
template <typename TosaOp, ReduceKind kind> struct LowerRowReduce : CountedLowering<TosaOp> {
  using CountedLowering<TosaOp>::CountedLowering;
  LogicalResult matchAndRewrite(TosaOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = asMatrix(rewriter, loc, op.getInput());
    auto inputType = llvm::cast<RankedTensorType>(input.getType());
    auto columnType = RankedTensorType::get({inputType.getShape()[0], 1}, rewriter.getF32Type());
    this->replaceWithView(rewriter, op, rewriter.create<RowReduceOp>(loc, columnType, kind, input));
    return success();
  }
};

struct LowerClamp : CountedLowering<tosa::ClampOp> {
  using CountedLowering::CountedLowering;
  LogicalResult matchAndRewrite(tosa::ClampOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    float lo = op.getMinFp().convertToFloat();
    float hi = op.getMaxFp().convertToFloat();
    Value input = asMatrix(rewriter, loc, op.getInput());
    Value result;
    if (lo == 0.0f && hi >= std::numeric_limits<float>::max())
      result = rewriter.create<UnaryOp>(loc, UnaryKind::relu, input);
    else
      result =
          rewriter.create<ClampOp>(loc, input, constantMatrix(rewriter, loc, {1, 2}, {lo, hi}));
    replaceWithView(rewriter, op, result);
    return success();
  }
};

struct LowerTosaToTPUPass : mlir::tpu::impl::LowerTosaToTPUBase<LowerTosaToTPUPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.walk([](Operation *op) {
              return failed(checkSupported(op)) ? WalkResult::interrupt() : WalkResult::advance();
            })
            .wasInterrupted())
      return signalPassFailure();

    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns.add<LowerConst, LowerReshape, LowerTranspose, LowerSlice, LowerConcat, LowerPad>(
        context);
    patterns.add<LowerMatMul, LowerConv2D>(context, numMatmuls);
    patterns.add<LowerDepthwiseConv2D, LowerMaxPool, LowerAvgPool, LowerErf>(context, numVectorOps);
    patterns.add<
        LowerBinary<tosa::AddOp, BinaryKind::add>, LowerBinary<tosa::SubOp, BinaryKind::sub>,
        LowerBinary<tosa::MulOp, BinaryKind::mul>, LowerBinary<tosa::MaximumOp, BinaryKind::max>,
        LowerBinary<tosa::MinimumOp, BinaryKind::min>, LowerClamp,
        LowerUnary<tosa::ExpOp, UnaryKind::exp>,
        LowerUnary<tosa::ReciprocalOp, UnaryKind::reciprocal>,
        LowerUnary<tosa::RsqrtOp, UnaryKind::rsqrt>,
        LowerRowReduce<tosa::ReduceSumOp, ReduceKind::sum>,
        LowerRowReduce<tosa::ReduceMaxOp, ReduceKind::max>>(context, numVectorOps);
    ConversionTarget target(*context);
    target.addIllegalDialect<tosa::TosaDialect>();
    target.addLegalDialect<TPUDialect, arith::ArithDialect, func::FuncDialect>();
    if (failed(applyPartialConversion(func, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
