// tpu.fused: its verifier and the canonical form of a group on the hardware
// dialect (what stays inside is what the group computes on chip).
#include "tpu/Dialect/FusionRegions.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::tpu;

LogicalResult FusedOp::verify() {
  Block &body = getBody().front();
  auto yield = llvm::dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("must end with tpu.yield");
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yields ") << yield.getValues().getTypes() << " but returns "
                                  << getResultTypes();
  if (getMembers().empty())
    return emitOpError("has no operations");
  return success();
}

bool FusedOp::hasEpilogue() { return llvm::isa<MatMulOp, WindowReduceOp>(getHead()); }

namespace {

bool definedOutside(Value value, FusedOp fused) {
  return !fused->isAncestor(value.getParentRegion()->getParentOp());
}

// Data movement and views of values from outside run before the group, not
// in it: the group computes; a copy or a gather of its inputs goes through
// memory either way (tpu-lower-tosa creates them where the TOSA op was).
struct HoistDataMovement : OpRewritePattern<FusedOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FusedOp fused, PatternRewriter &rewriter) const override {
    bool moved = false;
    for (Operation &op : llvm::make_early_inc_range(fused.getMembers())) {
      bool movesData = llvm::isa<Im2ColOp, SliceOp, ConcatOp, PadOp, TransposeOp, ViewOp>(op) ||
                       op.hasTrait<OpTrait::ConstantLike>();
      if (movesData &&
          llvm::all_of(op.getOperands(), [&](Value v) { return definedOutside(v, fused); })) {
        rewriter.modifyOpInPlace(fused, [&] { op.moveBefore(fused); });
        moved = true;
      }
    }
    return success(moved);
  }
};

// The group's value leaves in the shape the hardware computes it: a view of
// it is taken after the group.
struct YieldWithoutView : OpRewritePattern<FusedOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FusedOp fused, PatternRewriter &rewriter) const override {
    auto yield = llvm::cast<YieldOp>(fused.getBody().front().getTerminator());
    if (yield.getValues().size() != 1)
      return failure();
    auto view = yield.getValues()[0].getDefiningOp<ViewOp>();
    if (!view || definedOutside(view.getInput(), fused))
      return failure();
    Value inner = view.getInput();
    rewriter.setInsertionPoint(fused);
    auto replacement = rewriter.create<FusedOp>(fused.getLoc(), inner.getType());
    rewriter.inlineRegionBefore(fused.getBody(), replacement.getBody(),
                                replacement.getBody().end());
    rewriter.modifyOpInPlace(yield, [&] { yield->setOperand(0, inner); });
    if (view->use_empty())
      rewriter.eraseOp(view);
    rewriter.setInsertionPointAfter(replacement);
    rewriter.replaceOpWithNewOp<ViewOp>(fused, fused.getResult(0).getType(),
                                        replacement.getResult(0));
    return success();
  }
};

// A group that lowered to one operation of the hardware dialect is that
// operation.
struct InlineSingleOperation : OpRewritePattern<FusedOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FusedOp fused, PatternRewriter &rewriter) const override {
    Block &body = fused.getBody().front();
    if (!llvm::hasSingleElement(fused.getMembers()) ||
        !llvm::isa<TPUDialect>(fused.getHead().getDialect()))
      return failure();
    Operation &only = fused.getHead();
    auto yield = llvm::cast<YieldOp>(body.getTerminator());
    SmallVector<Value> results(yield.getValues());
    rewriter.modifyOpInPlace(fused, [&] { only.moveBefore(fused); });
    rewriter.replaceOp(fused, results);
    return success();
  }
};

} // namespace

void FusedOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *context) {
  results.add<HoistDataMovement, YieldWithoutView, InlineSingleOperation>(context);
}

FusedOp mlir::tpu::fuse(ArrayRef<Operation *> members) {
  Operation *last = members.back();
  OpBuilder builder(members.front());
  auto fused = builder.create<FusedOp>(members.front()->getLoc(), last->getResultTypes());
  Block *body = builder.createBlock(&fused.getBody());
  for (Operation *member : members)
    member->moveBefore(body, body->end());
  builder.setInsertionPointToEnd(body);
  builder.create<YieldOp>(last->getLoc(), last->getResults());
  last->getResult(0).replaceUsesWithIf(
      fused.getResult(0), [&](OpOperand &use) { return use.getOwner()->getParentOp() != fused; });
  return fused;
}

void mlir::tpu::unfuse(FusedOp group) {
  for (Operation &member : llvm::make_early_inc_range(group.getMembers()))
    member.moveBefore(group);
  group->replaceAllUsesWith(group.getBody().front().getTerminator()->getOperands());
  group->erase();
}
