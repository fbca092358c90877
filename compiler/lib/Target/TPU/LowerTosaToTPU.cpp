// tpu-lower-tosa: TOSA graph operations -> TPU hardware operations.
#include "TosaLowering.h"
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

Value mlir::tpu::viewAs(PatternRewriter &rewriter, Location loc, Value value,
                        RankedTensorType type) {
  if (value.getType() == type)
    return value;
  return rewriter.create<ViewOp>(loc, type, value);
}

Value mlir::tpu::asMatrix(PatternRewriter &rewriter, Location loc, Value value) {
  return viewAs(rewriter, loc, value, matrixType(llvm::cast<RankedTensorType>(value.getType())));
}

Value mlir::tpu::constantMatrix(PatternRewriter &rewriter, Location loc, ArrayRef<int64_t> shape,
                                ArrayRef<float> values) {
  auto type = RankedTensorType::get(shape, rewriter.getF32Type());
  return rewriter.create<arith::ConstantOp>(loc, DenseElementsAttr::get(type, values));
}

Value mlir::tpu::negateMatrix(PatternRewriter &rewriter, Location loc, Value matrix) {
  return rewriter.create<BinaryOp>(loc, matrix.getType(), BinaryKind::mul, matrix,
                                   constantMatrix(rewriter, loc, {1, 1}, {-1.0f}));
}

Value mlir::tpu::fillRow(PatternRewriter &rewriter, Location loc, int64_t length, float value) {
  int64_t cols = std::min(length, ::tpu::codegen::kMaxCols);
  return constantMatrix(rewriter, loc, {1, cols}, SmallVector<float>(cols, value));
}

Value mlir::tpu::rowsAlong(PatternRewriter &rewriter, Location loc, Value input, int64_t axis) {
  auto type = llvm::cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  if (llvm::any_of(type.getShape().drop_front(axis + 1), [](int64_t d) { return d != 1; })) {
    SmallVector<int64_t> perms, shape;
    for (int64_t i = 0; i < rank; ++i)
      if (i != axis)
        perms.push_back(i);
    perms.push_back(axis);
    for (int64_t i : perms)
      shape.push_back(type.getShape()[i]);
    input = rewriter.create<TransposeOp>(loc, RankedTensorType::get(shape, type.getElementType()),
                                         input, rewriter.getDenseI64ArrayAttr(perms));
  }
  int64_t length = type.getShape()[axis];
  return viewAs(
      rewriter, loc, input,
      RankedTensorType::get({type.getNumElements() / length, length}, rewriter.getF32Type()));
}

bool mlir::tpu::isF32Tensor(Type type) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() && tensor.getElementType().isF32();
}

LogicalResult mlir::tpu::checkBroadcast(Operation *op, Value lhs, Value rhs) {
  Value result = op->getResult(0);
  auto shapeOf = [](Value value) {
    return llvm::cast<RankedTensorType>(value.getType()).getShape();
  };
  bool direct = shapeOf(lhs) == shapeOf(result) && spreadOf(result, rhs);
  bool swapped = shapeOf(rhs) == shapeOf(result) && spreadOf(result, lhs);
  if (!direct && !swapped)
    return op->emitOpError("broadcast is not supported by the vector unit: after "
                           "tpu-matrix-broadcast one operand must have the result's shape "
                           "and the other be a row, a column or one element of its 2-D view");
  return success();
}

namespace {

// A constant exponent's one value, through the reshapes that broadcasting
// puts around it.
std::optional<float> scalarConstant(Value value) {
  while (auto reshape = value.getDefiningOp<tosa::ReshapeOp>())
    value = reshape.getInput1();
  DenseElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)) || !attr.isSplat() || !attr.getElementType().isF32())
    return std::nullopt;
  return attr.getSplatValue<float>();
}

// Checks the forms this lowering handles, so that an unsupported model fails
// with an error naming the operation instead of a generic legalization error.
LogicalResult checkSupported(Operation *op) {
  if (!llvm::isa<tosa::TosaDialect>(op->getDialect()))
    return success();
  if (llvm::isa<tosa::ConstOp>(op))
    return success(); // a non-f32 constant is reported where it is used
  if (std::optional<LogicalResult> checked = checkMaskOp(op))
    return *checked;
  if (std::optional<LogicalResult> checked = checkArgMaxOp(op))
    return *checked;
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
  // A broadcast left operand of sub is lowered as -rhs + lhs.
  if (llvm::isa<tosa::AddOp, tosa::SubOp, tosa::MulOp, tosa::MaximumOp, tosa::MinimumOp>(op) &&
      failed(checkBroadcast(op, op->getOperand(0), op->getOperand(1))))
    return failure();
  if (auto pool = llvm::dyn_cast<tosa::AvgPool2dOp>(op); pool && !pool.getAccType().isF32())
    return op->emitOpError("accumulating in other than f32 is not supported by the TPU lowering");
  if (llvm::isa<tosa::ConstOp, tosa::ReshapeOp, tosa::TransposeOp, tosa::Conv2DOp,
                tosa::DepthwiseConv2DOp, tosa::MaxPool2dOp, tosa::AvgPool2dOp, tosa::SliceOp,
                tosa::ConcatOp, tosa::PadOp, tosa::MatMulOp, tosa::AddOp, tosa::SubOp, tosa::MulOp,
                tosa::MaximumOp, tosa::MinimumOp, tosa::ClampOp, tosa::ExpOp, tosa::ReciprocalOp,
                tosa::RsqrtOp, tosa::SigmoidOp, tosa::TanhOp, tosa::LogOp, tosa::ErfOp,
                tosa::ReduceSumOp, tosa::ReduceMaxOp, tosa::ReduceMinOp, tosa::NegateOp,
                tosa::AbsOp, tosa::TileOp, tosa::PowOp>(op))
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

struct LowerMatMul : CountedLowering<tosa::MatMulOp> {
  using CountedLowering::CountedLowering;
  LogicalResult matchAndRewrite(tosa::MatMulOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lhs = asMatrix(rewriter, loc, op.getA());
    Value rhs = asMatrix(rewriter, loc, op.getB());
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    if (resultType.getShape()[0] > 1) {
      replaceWithView(
          rewriter, op,
          rewriter.create<BatchMatMulOp>(loc, resultType, op.getA(), op.getB(), Value()));
      return success();
    }
    replaceWithView(rewriter, op, rewriter.create<MatMulOp>(loc, matrixType(resultType), lhs, rhs));
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
    if (full.getType() != resultType) {
      std::swap(full, other);
      if (kind == BinaryKind::sub) {
        // small - full = (-full) + small: the vector unit broadcasts only
        // its second operand.
        Value negated = negateMatrix(rewriter, loc, asMatrix(rewriter, loc, full));
        this->replaceWithView(rewriter, op,
                              rewriter.create<BinaryOp>(loc, matrixType(resultType),
                                                        BinaryKind::add, negated,
                                                        asMatrix(rewriter, loc, other)));
        return success();
      }
    }
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

// A reduction, which TOSA keeps with size 1: per row along the axis
// (rowsAlong), one result element, in place. min(x) is -max(-x).
template <typename TosaOp, ReduceKind kind, bool negated = false>
struct LowerRowReduce : CountedLowering<TosaOp> {
  using CountedLowering<TosaOp>::CountedLowering;
  LogicalResult matchAndRewrite(TosaOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value matrix = rowsAlong(rewriter, loc, op.getInput(), op.getAxis());
    int64_t rows = llvm::cast<RankedTensorType>(matrix.getType()).getShape()[0];
    if (negated)
      matrix = negateMatrix(rewriter, loc, matrix);
    auto columnType = RankedTensorType::get({rows, 1}, rewriter.getF32Type());
    Value result = rewriter.create<RowReduceOp>(loc, columnType, kind, matrix);
    if (negated)
      result = negateMatrix(rewriter, loc, result);
    this->replaceWithView(rewriter, op, result);
    return success();
  }
};

// -x and |x| = max(x, -x), on the vector unit's multiply and max.
struct LowerNegate : CountedLowering<tosa::NegateOp> {
  using CountedLowering::CountedLowering;
  LogicalResult matchAndRewrite(tosa::NegateOp op, PatternRewriter &rewriter) const override {
    replaceWithView(
        rewriter, op,
        negateMatrix(rewriter, op.getLoc(), asMatrix(rewriter, op.getLoc(), op.getInput1())));
    return success();
  }
};

struct LowerAbs : CountedLowering<tosa::AbsOp> {
  using CountedLowering::CountedLowering;
  LogicalResult matchAndRewrite(tosa::AbsOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = asMatrix(rewriter, loc, op.getInput1());
    replaceWithView(rewriter, op,
                    rewriter.create<BinaryOp>(loc, x.getType(), BinaryKind::max, x,
                                              negateMatrix(rewriter, loc, x)));
    return success();
  }
};

// x^e for a constant e on the vector unit: an integer |e| <= 16 by repeated
// squaring (then a reciprocal when e < 0; e = 0 is x * 0 + 1), e = -0.5 as
// rsqrt and 0.5 as its reciprocal, any other e as exp(e * log(x)), which is
// NaN for x < 0 as numpy's float power is.
struct LowerPow : CountedLowering<tosa::PowOp> {
  using CountedLowering::CountedLowering;
  LogicalResult matchAndRewrite(tosa::PowOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = asMatrix(rewriter, loc, op.getInput1());
    auto type = llvm::cast<RankedTensorType>(x.getType());
    auto binary = [&](BinaryKind kind, Value lhs, Value rhs) -> Value {
      return rewriter.create<BinaryOp>(loc, type, kind, lhs, rhs);
    };
    auto unary = [&](UnaryKind kind, Value input) -> Value {
      return rewriter.create<UnaryOp>(loc, kind, input);
    };
    std::optional<float> exponent = scalarConstant(op.getInput2());
    if (!exponent) {
      // A run-time exponent (a trained one): exp(e * log(x)) as for a
      // non-integer constant, the operand in the result's shape first.
      RankedTensorType matrix = matrixType(llvm::cast<RankedTensorType>(op.getType()));
      Value logX = unary(UnaryKind::log, x), e = asMatrix(rewriter, loc, op.getInput2());
      if (type != matrix)
        std::swap(logX, e);
      replaceWithView(
          rewriter, op,
          unary(UnaryKind::exp, rewriter.create<BinaryOp>(loc, matrix, BinaryKind::mul, logX, e)));
      return success();
    }
    auto scalar = [&](float value) { return constantMatrix(rewriter, loc, {1, 1}, value); };
    float e = *exponent;
    Value result;
    if (e == std::round(e) && std::fabs(e) <= 16) {
      Value power = x;
      for (int64_t n = std::llabs(static_cast<int64_t>(e)); n > 0; n >>= 1) {
        if (n & 1)
          result = result ? binary(BinaryKind::mul, result, power) : power;
        if (n > 1)
          power = binary(BinaryKind::mul, power, power);
      }
      if (!result)
        result = binary(BinaryKind::add, binary(BinaryKind::mul, x, scalar(0.0f)), scalar(1.0f));
      else if (e < 0)
        result = unary(UnaryKind::reciprocal, result);
    } else if (std::fabs(e) == 0.5f) {
      result = unary(UnaryKind::rsqrt, x);
      if (e > 0)
        result = unary(UnaryKind::reciprocal, result);
    } else {
      result = unary(UnaryKind::exp, binary(BinaryKind::mul, unary(UnaryKind::log, x), scalar(e)));
    }
    replaceWithView(rewriter, op, result);
    return success();
  }
};

// tosa.tile as copies: per tiled axis, a concat of `multiple` copies.
struct LowerTile : OpRewritePattern<tosa::TileOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::TileOp op, PatternRewriter &rewriter) const override {
    Value result = op.getInput1();
    SmallVector<int64_t> shape(llvm::cast<RankedTensorType>(result.getType()).getShape());
    for (auto [axis, multiple] : llvm::enumerate(op.getMultiples())) {
      if (multiple == 1)
        continue;
      shape[axis] *= multiple;
      SmallVector<Value> copies(multiple, result);
      result = rewriter.create<ConcatOp>(op.getLoc(),
                                         RankedTensorType::get(shape, rewriter.getF32Type()),
                                         copies, rewriter.getI64IntegerAttr(axis));
    }
    rewriter.replaceOp(op, result);
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

// tosa.reverse of an f32 tensor other than ArgMax's select_last_index (the
// convolution input gradient's flipped kernel, tpu-autodiff) becomes a
// tosa.slice per index of the axis, last first, and a tosa.concat of them:
// one strided copy each, which the lowering below takes.
void lowerReverses(func::FuncOp func) {
  SmallVector<tosa::ReverseOp> reverses;
  func.walk([&](tosa::ReverseOp reverse) {
    if (isF32Tensor(reverse.getType()) && llvm::none_of(reverse->getUsers(), [](Operation *user) {
          return llvm::isa<tosa::ArgMaxOp>(user);
        }))
      reverses.push_back(reverse);
  });
  for (tosa::ReverseOp reverse : reverses) {
    OpBuilder builder(reverse);
    auto type = llvm::cast<RankedTensorType>(reverse.getType());
    int64_t axis = reverse.getAxis();
    SmallVector<int64_t> size(type.getShape());
    size[axis] = 1;
    auto sliceType = RankedTensorType::get(size, type.getElementType());
    SmallVector<Value> pieces;
    for (int64_t index = type.getShape()[axis] - 1; index >= 0; --index) {
      SmallVector<int64_t> start(type.getRank(), 0);
      start[axis] = index;
      pieces.push_back(builder.create<tosa::SliceOp>(
          reverse.getLoc(), sliceType, reverse.getInput(), builder.getDenseI64ArrayAttr(start),
          builder.getDenseI64ArrayAttr(size)));
    }
    Value result = pieces.size() == 1
                       ? pieces.front()
                       : builder.create<tosa::ConcatOp>(reverse.getLoc(), type, pieces,
                                                        builder.getI32IntegerAttr(axis));
    reverse.replaceAllUsesWith(result);
    reverse.erase();
  }
}

struct LowerTosaToTPUPass : mlir::tpu::impl::LowerTosaToTPUBase<LowerTosaToTPUPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (failed(lowerGathers(func)) || failed(lowerIntegerValues(func)))
      return signalPassFailure();
    lowerLogicalMasks(func);
    lowerReverses(func);
    // Outputs are what the program stores: float32 tensors, ArgMax's int64
    // indices as int32 words (checkArgMaxOp checks where they come from) and
    // the int32 words of other integer values (lowerIntegerValues).
    for (auto [index, type] : llvm::enumerate(func.getResultTypes())) {
      auto tensor = llvm::dyn_cast<RankedTensorType>(type);
      Value value = func.getBody().front().getTerminator()->getOperand(index);
      bool indices = tensor && tensor.hasStaticShape() && tensor.getElementType().isInteger(64) &&
                     value.getDefiningOp<tosa::CastOp>();
      bool words = value.getDefiningOp<ViewOp>() || value.getDefiningOp<ToIntOp>();
      if (!isF32Tensor(type) && !indices && !words) {
        func.emitError() << "output " << index << " is " << type
                         << "; the TPU stores float32 tensors and the int64 indices of "
                            "ArgMax and ArgMin only";
        return signalPassFailure();
      }
    }
    if (func.walk([](Operation *op) {
              return failed(checkSupported(op)) ? WalkResult::interrupt() : WalkResult::advance();
            })
            .wasInterrupted())
      return signalPassFailure();

    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns.add<LowerConst, LowerReshape, LowerTranspose, LowerSlice, LowerConcat, LowerPad,
                 LowerTile>(context);
    patterns.add<LowerMatMul>(context, numMatmuls);
    patterns.add<LowerErf>(context, numVectorOps);
    populateWindowLowerings(patterns, numMatmuls, numVectorOps);
    populateMaskLowerings(patterns, numVectorOps);
    populateArgMaxLowerings(patterns, numVectorOps);
    patterns.add<
        LowerBinary<tosa::AddOp, BinaryKind::add>, LowerBinary<tosa::SubOp, BinaryKind::sub>,
        LowerBinary<tosa::MulOp, BinaryKind::mul>, LowerBinary<tosa::MaximumOp, BinaryKind::max>,
        LowerBinary<tosa::MinimumOp, BinaryKind::min>, LowerClamp,
        LowerUnary<tosa::ExpOp, UnaryKind::exp>,
        LowerUnary<tosa::ReciprocalOp, UnaryKind::reciprocal>,
        LowerUnary<tosa::RsqrtOp, UnaryKind::rsqrt>,
        LowerUnary<tosa::SigmoidOp, UnaryKind::sigmoid>, LowerUnary<tosa::TanhOp, UnaryKind::tanh>,
        LowerUnary<tosa::LogOp, UnaryKind::log>, LowerRowReduce<tosa::ReduceSumOp, ReduceKind::sum>,
        LowerRowReduce<tosa::ReduceMaxOp, ReduceKind::max>,
        LowerRowReduce<tosa::ReduceMinOp, ReduceKind::max, /*negated=*/true>, LowerNegate, LowerAbs,
        LowerPow>(context, numVectorOps);
    ConversionTarget target(*context);
    target.addIllegalDialect<tosa::TosaDialect>();
    target.addLegalDialect<TPUDialect, arith::ArithDialect, func::FuncDialect>();
    if (failed(applyPartialConversion(func, target, std::move(patterns))))
      return signalPassFailure();
    // The program stores integer outputs as int32 words: the function
    // returns those, and each such result keeps the model's type for the
    // host.
    FunctionType before = func.getFunctionType();
    auto results = func.getBody().front().getTerminator()->getOperandTypes();
    func.setType(FunctionType::get(context, before.getInputs(), results));
    for (auto [index, type] : llvm::enumerate(before.getResults()))
      if (type != func.getResultTypes()[index])
        func.setResultAttr(index, kHostTypeAttr,
                           TypeAttr::get(llvm::cast<ShapedType>(type).getElementType()));
  }
};

} // namespace
