// tpu-lower-tosa: TOSA graph operations -> TPU hardware operations.
#include "tpu/Transforms/Passes.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

namespace mlir::tpu {
#define GEN_PASS_DEF_LOWERTOSATOTPU
#include "tpu/Transforms/Passes.h.inc"
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

// How the second operand of an elementwise op is spread over the first.
enum class Spread { Same, Row, Scalar, Unsupported };

Spread spreadOf(ArrayRef<int64_t> full, ArrayRef<int64_t> operand) {
  if (full == operand)
    return Spread::Same;
  bool leadingOnes = llvm::all_of(operand.drop_back(), [](int64_t d) { return d == 1; });
  if (leadingOnes && !operand.empty() && operand.back() == 1)
    return Spread::Scalar;
  if (leadingOnes && !operand.empty() && operand.back() == full.back())
    return Spread::Row;
  return Spread::Unsupported;
}

// Checks the forms this lowering handles, so that an unsupported model fails
// with an error naming the operation instead of a generic legalization error.
LogicalResult checkSupported(Operation *op) {
  if (!llvm::isa<tosa::TosaDialect>(op->getDialect()))
    return success();
  if (llvm::isa<tosa::TransposeOp>(op))
    return op->emitOpError("on a non-constant tensor is not supported by the TPU lowering yet");
  SmallVector<Type> types(op->getOperandTypes());
  llvm::append_range(types, op->getResultTypes());
  for (Type type : types)
    if (!isF32Tensor(type))
      return op->emitOpError("is supported on static-shape f32 tensors only, got ") << type;
  if (auto matmul = llvm::dyn_cast<tosa::MatMulOp>(op)) {
    int64_t batch = matmul.getA().getType().getShape()[0];
    if (batch != 1)
      return op->emitOpError() << "with batch " << batch
                               << " is not supported by the TPU lowering yet (batch must be 1)";
  }
  if (auto mul = llvm::dyn_cast<tosa::MulOp>(op); mul && mul.getShift() != 0)
    return op->emitOpError("with a non-zero shift is not supported on f32");
  if (llvm::isa<tosa::AddOp, tosa::SubOp, tosa::MulOp, tosa::MaximumOp, tosa::MinimumOp>(op)) {
    auto result = llvm::cast<RankedTensorType>(op->getResult(0).getType()).getShape();
    auto lhs = llvm::cast<RankedTensorType>(op->getOperand(0).getType()).getShape();
    auto rhs = llvm::cast<RankedTensorType>(op->getOperand(1).getType()).getShape();
    bool commutative = !llvm::isa<tosa::SubOp>(op);
    bool direct = lhs == result && spreadOf(result, rhs) != Spread::Unsupported;
    bool swapped = commutative && rhs == result && spreadOf(result, lhs) != Spread::Unsupported;
    if (!direct && !swapped)
      return op->emitOpError("broadcast is not supported by the vector unit: the smaller "
                             "operand must match in shape, be one row of the last dimension, "
                             "or be one element");
  }
  if (llvm::isa<tosa::ConstOp, tosa::ReshapeOp, tosa::MatMulOp, tosa::AddOp, tosa::SubOp,
                tosa::MulOp, tosa::MaximumOp, tosa::MinimumOp, tosa::ClampOp>(op))
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

struct LowerMatMul : OpRewritePattern<tosa::MatMulOp> {
  LowerMatMul(MLIRContext *context, llvm::Statistic &count)
      : OpRewritePattern(context), count(count) {}
  LogicalResult matchAndRewrite(tosa::MatMulOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lhs = asMatrix(rewriter, loc, op.getA());
    Value rhs = asMatrix(rewriter, loc, op.getB());
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    Value product = rewriter.create<MatMulOp>(loc, matrixType(resultType), lhs, rhs);
    rewriter.replaceOp(op, viewAs(rewriter, loc, product, resultType));
    ++count;
    return success();
  }
  llvm::Statistic &count;
};

template <typename TosaOp, BinaryKind kind> struct LowerBinary : OpRewritePattern<TosaOp> {
  LowerBinary(MLIRContext *context, llvm::Statistic &count)
      : OpRewritePattern<TosaOp>(context), count(count) {}
  LogicalResult matchAndRewrite(TosaOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    Value full = op->getOperand(0);
    Value other = op->getOperand(1);
    if (full.getType() != resultType)
      std::swap(full, other); // checkSupported allowed this only for commutative ops
    ArrayRef<int64_t> otherShape = llvm::cast<RankedTensorType>(other.getType()).getShape();
    RankedTensorType matrix = matrixType(resultType);
    RankedTensorType otherMatrix = matrix;
    if (spreadOf(resultType.getShape(), otherShape) == Spread::Row)
      otherMatrix = RankedTensorType::get({1, matrix.getShape()[1]}, matrix.getElementType());
    else if (spreadOf(resultType.getShape(), otherShape) == Spread::Scalar)
      otherMatrix = RankedTensorType::get({1, 1}, matrix.getElementType());
    Value result = rewriter.create<BinaryOp>(loc, matrix, kind, asMatrix(rewriter, loc, full),
                                             viewAs(rewriter, loc, other, otherMatrix));
    rewriter.replaceOp(op, viewAs(rewriter, loc, result, resultType));
    ++count;
    return success();
  }
  llvm::Statistic &count;
};

struct LowerClamp : OpRewritePattern<tosa::ClampOp> {
  LowerClamp(MLIRContext *context, llvm::Statistic &count)
      : OpRewritePattern(context), count(count) {}
  LogicalResult matchAndRewrite(tosa::ClampOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    float lo = op.getMinFp().convertToFloat();
    float hi = op.getMaxFp().convertToFloat();
    Value input = asMatrix(rewriter, loc, op.getInput());
    Value result;
    if (lo == 0.0f && hi >= std::numeric_limits<float>::max())
      result = rewriter.create<UnaryOp>(loc, UnaryKind::relu, input);
    else
      result = rewriter.create<ClampOp>(loc, input, rewriter.getF32FloatAttr(lo),
                                        rewriter.getF32FloatAttr(hi));
    rewriter.replaceOp(op,
                       viewAs(rewriter, loc, result, llvm::cast<RankedTensorType>(op.getType())));
    ++count;
    return success();
  }
  llvm::Statistic &count;
};

struct LowerTosaToTPUPass : tpu::impl::LowerTosaToTPUBase<LowerTosaToTPUPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.walk([](Operation *op) {
              return failed(checkSupported(op)) ? WalkResult::interrupt() : WalkResult::advance();
            })
            .wasInterrupted())
      return signalPassFailure();

    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns.add<LowerConst, LowerReshape>(context);
    patterns.add<LowerMatMul>(context, numMatmuls);
    patterns.add<
        LowerBinary<tosa::AddOp, BinaryKind::add>, LowerBinary<tosa::SubOp, BinaryKind::sub>,
        LowerBinary<tosa::MulOp, BinaryKind::mul>, LowerBinary<tosa::MaximumOp, BinaryKind::max>,
        LowerBinary<tosa::MinimumOp, BinaryKind::min>, LowerClamp>(context, numVectorOps);
    ConversionTarget target(*context);
    target.addIllegalDialect<tosa::TosaDialect>();
    target.addLegalDialect<TPUDialect, arith::ArithDialect, func::FuncDialect>();
    if (failed(applyPartialConversion(func, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
