// tpu-lower-tosa, the boolean operations: a compare (tosa.greater,
// greater_equal, equal) becomes a 1.0/0.0 mask from v.gt, v.ge or v.eq, the
// vector unit having no boolean type; the compare's users, a select or a
// cast to f32, take the mask. Logical not/and/or of compares (the max-pool
// gradient's first arg-max of each window) become f32 arithmetic on those
// masks first (lowerLogicalMasks).
#include "TosaLowering.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::tpu;

namespace {

std::optional<BinaryKind> compareKind(Operation *op) {
  if (llvm::isa_and_nonnull<tosa::GreaterOp>(op))
    return BinaryKind::gt;
  if (llvm::isa_and_nonnull<tosa::GreaterEqualOp>(op))
    return BinaryKind::ge;
  if (llvm::isa_and_nonnull<tosa::EqualOp>(op))
    return BinaryKind::eq;
  return std::nullopt;
}

// Whether `value` is a constant holding `expected` everywhere.
bool isSplatOf(Value value, float expected) {
  DenseElementsAttr attr;
  return matchPattern(value, m_Constant(&attr)) && attr.isSplat() &&
         attr.getElementType().isF32() && attr.getSplatValue<float>() == expected;
}

bool isF32Cast(Operation *op) {
  auto cast = llvm::dyn_cast<tosa::CastOp>(op);
  return cast && cast.getType().getElementType().isF32();
}

// The mask of `compare` as a [rows, cols] f32 matrix in the shape of
// `result` (the compare's broadcast is the vector unit's, checked before).
Value maskOf(PatternRewriter &rewriter, Operation *compare, RankedTensorType result) {
  Location loc = compare->getLoc();
  auto type = RankedTensorType::get(result.getShape(), rewriter.getF32Type());
  // The vector unit broadcasts its second operand only, so the operand in
  // the result's shape goes first: eq is symmetric (labels [1, 1] against
  // classes [1, 10]); s > x is -x > -s and s >= x is -x >= -s (a clamp's
  // upper bound in its gradient), exact, and false at a NaN as before.
  Value lhs = asMatrix(rewriter, loc, compare->getOperand(0));
  Value rhs = asMatrix(rewriter, loc, compare->getOperand(1));
  if (llvm::cast<RankedTensorType>(compare->getOperand(0).getType()).getShape() !=
      result.getShape()) {
    std::swap(lhs, rhs);
    if (!llvm::isa<tosa::EqualOp>(compare)) {
      lhs = negateMatrix(rewriter, loc, lhs);
      rhs = negateMatrix(rewriter, loc, rhs);
    }
  }
  return rewriter.create<BinaryOp>(loc, matrixType(type), *compareKind(compare), lhs, rhs);
}

// select(c, x, y) = x * c + y * (1 - c) for a mask c of 1.0 and 0.0: exact
// when x and y are finite (x * 1 + 0 = x, 0 + y * 1 = y); an infinity or
// NaN in the branch not taken makes NaN, which the output check reports.
// With y a constant 0 that is x * c, and c itself when x is a constant 1
// (a one-hot row), the same values in fewer vector ops.
struct LowerSelect : CountedLowering<tosa::SelectOp> {
  using CountedLowering::CountedLowering;
  LogicalResult matchAndRewrite(tosa::SelectOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    RankedTensorType matrix = matrixType(resultType);
    Value mask = maskOf(rewriter, op.getPred().getDefiningOp(), resultType);
    auto binary = [&](BinaryKind kind, Value lhs, Value rhs) -> Value {
      return rewriter.create<BinaryOp>(loc, matrix, kind, lhs, rhs);
    };
    auto scalar = [&](float value) { return constantMatrix(rewriter, loc, {1, 1}, value); };
    if (isSplatOf(op.getOnFalse(), 0.0f)) {
      replaceWithView(rewriter, op,
                      isSplatOf(op.getOnTrue(), 1.0f)
                          ? mask
                          : binary(BinaryKind::mul, mask, asMatrix(rewriter, loc, op.getOnTrue())));
      return success();
    }
    Value taken = binary(BinaryKind::mul, mask, asMatrix(rewriter, loc, op.getOnTrue()));
    Value inverse =
        binary(BinaryKind::add, binary(BinaryKind::mul, mask, scalar(-1.0f)), scalar(1.0f));
    Value other = binary(BinaryKind::mul, inverse, asMatrix(rewriter, loc, op.getOnFalse()));
    replaceWithView(rewriter, op, binary(BinaryKind::add, taken, other));
    return success();
  }
};

struct LowerMaskCast : CountedLowering<tosa::CastOp> {
  using CountedLowering::CountedLowering;
  LogicalResult matchAndRewrite(tosa::CastOp op, PatternRewriter &rewriter) const override {
    if (!compareKind(op.getInput().getDefiningOp()))
      return failure();
    replaceWithView(rewriter, op,
                    maskOf(rewriter, op.getInput().getDefiningOp(),
                           llvm::cast<RankedTensorType>(op.getType())));
    return success();
  }
};

// A compare is lowered with each of its users (checkMaskOp saw to it that
// they are selects and casts), so it only goes once they have taken it.
template <typename Compare> struct EraseCompare : OpRewritePattern<Compare> {
  using OpRewritePattern<Compare>::OpRewritePattern;
  LogicalResult matchAndRewrite(Compare op, PatternRewriter &rewriter) const override {
    rewriter.eraseOp(op);
    return success();
  }
};

bool isLogical(Operation *op) {
  return llvm::isa_and_nonnull<tosa::LogicalNotOp, tosa::LogicalAndOp, tosa::LogicalOrOp>(op);
}

} // namespace

void mlir::tpu::lowerLogicalMasks(func::FuncOp func) {
  SmallVector<Operation *> logical;
  func.walk([&](Operation *op) {
    if (isLogical(op))
      logical.push_back(op);
  });
  if (logical.empty())
    return;
  OpBuilder builder(func.getContext());
  auto f32 = [&](Value value) {
    return RankedTensorType::get(llvm::cast<RankedTensorType>(value.getType()).getShape(),
                                 builder.getF32Type());
  };
  auto ones = [&](Location loc, RankedTensorType like) -> Value {
    auto type =
        RankedTensorType::get(SmallVector<int64_t>(like.getRank(), 1), builder.getF32Type());
    return builder.create<tosa::ConstOp>(loc, type, DenseElementsAttr::get(type, 1.0f));
  };
  auto mul = [&](Location loc, RankedTensorType type, Value lhs, Value rhs) -> Value {
    return builder.create<tosa::MulOp>(loc, type, lhs, rhs, builder.getI8IntegerAttr(0));
  };
  // The f32 mask of a boolean value, built once, right after the value; a
  // null Value where the value is neither a compare nor logic on compares.
  llvm::DenseMap<Value, Value> masks;
  std::function<Value(Value)> maskOf = [&](Value value) -> Value {
    if (auto known = masks.find(value); known != masks.end())
      return known->second;
    Operation *op = value.getDefiningOp();
    if (!op || (!compareKind(op) && !isLogical(op)))
      return Value();
    SmallVector<Value> operands;
    if (isLogical(op))
      for (Value operand : op->getOperands())
        if (!(operands.emplace_back(maskOf(operand))))
          return Value();
    builder.setInsertionPointAfter(op);
    Location loc = op->getLoc();
    RankedTensorType type = f32(value);
    Value mask;
    if (compareKind(op))
      mask = builder.create<tosa::CastOp>(loc, type, value);
    else if (llvm::isa<tosa::LogicalNotOp>(op))
      mask = builder.create<tosa::SubOp>(loc, type, ones(loc, type), operands[0]);
    else if (llvm::isa<tosa::LogicalAndOp>(op))
      mask = mul(loc, type, operands[0], operands[1]);
    else
      mask = builder.create<tosa::MaximumOp>(loc, type, operands[0], operands[1]);
    return masks[value] = mask;
  };
  for (Operation *op : logical)
    for (OpOperand &use : llvm::make_early_inc_range(op->getResult(0).getUses())) {
      Operation *user = use.getOwner();
      auto select = llvm::dyn_cast<tosa::SelectOp>(user);
      bool f32Select = select && use.getOperandNumber() == 0 && isF32Tensor(select.getType()) &&
                       isF32Tensor(select.getOnTrue().getType()) &&
                       isF32Tensor(select.getOnFalse().getType());
      if (!f32Select && !isF32Cast(user))
        continue;
      Value mask = maskOf(op->getResult(0));
      if (!mask)
        continue;
      builder.setInsertionPoint(user);
      Location loc = user->getLoc();
      auto type = llvm::cast<RankedTensorType>(user->getResult(0).getType());
      Value replacement = mask;
      if (select &&
          !(isSplatOf(select.getOnTrue(), 1.0f) && isSplatOf(select.getOnFalse(), 0.0f))) {
        replacement = mul(loc, type, select.getOnTrue(), mask);
        if (!isSplatOf(select.getOnFalse(), 0.0f))
          replacement = builder.create<tosa::AddOp>(
              loc, type, replacement,
              mul(loc, type, select.getOnFalse(),
                  builder.create<tosa::SubOp>(loc, f32(mask), ones(loc, type), mask)));
      }
      user->getResult(0).replaceAllUsesWith(replacement);
      user->erase();
    }
  for (Operation *op : llvm::reverse(logical))
    if (op->use_empty())
      op->erase();
}

std::optional<LogicalResult> mlir::tpu::checkMaskOp(Operation *op) {
  if (compareKind(op)) {
    for (Operation *user : op->getUsers()) {
      auto select = llvm::dyn_cast<tosa::SelectOp>(user);
      if (!(select && select.getPred() == op->getResult(0)) && !isF32Cast(user))
        return op->emitOpError("is supported by the TPU lowering as the condition of a select "
                               "or cast to f32 only, not as an operand of '")
               << user->getName() << "'";
    }
    for (Value operand : op->getOperands())
      if (!isF32Tensor(operand.getType()))
        return op->emitOpError("is supported on static-shape f32 tensors only, got ")
               << operand.getType();
    return checkBroadcast(op, op->getOperand(0), op->getOperand(1));
  }
  if (auto select = llvm::dyn_cast<tosa::SelectOp>(op)) {
    if (!compareKind(select.getPred().getDefiningOp()))
      return op->emitOpError("is supported by the TPU lowering with a compare (greater, "
                             "greater_equal, equal) as its condition only");
    Value result = select.getResult();
    for (Value value : {result, Value(select.getOnTrue()), Value(select.getOnFalse())})
      if (!isF32Tensor(value.getType()))
        return op->emitOpError("is supported on static-shape f32 tensors only, got ")
               << value.getType();
    for (Value branch : {Value(select.getOnTrue()), Value(select.getOnFalse())})
      if (!spreadOf(result, branch))
        return op->emitOpError("broadcast is not supported by the vector unit: each branch must "
                               "match the result's shape, be one row of the last dimension, one "
                               "column or one element");
    return success();
  }
  if (auto cast = llvm::dyn_cast<tosa::CastOp>(op);
      cast && compareKind(cast.getInput().getDefiningOp())) {
    if (!isF32Cast(op))
      return op->emitOpError("of a compare is supported by the TPU lowering to f32 only");
    return success();
  }
  return std::nullopt;
}

void mlir::tpu::populateMaskLowerings(RewritePatternSet &patterns, llvm::Statistic &vectorOps) {
  patterns.add<LowerSelect, LowerMaskCast>(patterns.getContext(), vectorOps);
  patterns.add<EraseCompare<tosa::GreaterOp>, EraseCompare<tosa::GreaterEqualOp>,
               EraseCompare<tosa::EqualOp>>(patterns.getContext());
}
