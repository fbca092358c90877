// tpu-fold-transposes: cancel the transposes that a training step's
// gradients stack up (see the pass description).
#include "TosaBuilders.h"
#include "tpu/Transforms/Passes.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tpu {
#define GEN_PASS_DEF_FOLDTRANSPOSES
#include "tpu/Transforms/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;

namespace {

using Shape = SmallVector<int64_t>;
using tpu::createReshape;
using tpu::createTranspose;
using tpu::shapeOf;

bool hasPerms(tosa::TransposeOp op, ArrayRef<int64_t> expected) {
  SmallVector<int64_t> perms;
  return succeeded(op.getConstantPerms(perms)) && ArrayRef<int64_t>(perms) == expected;
}

// transpose[0,2,1](reshape [a, b] -> [1, a, b]) = reshape(transpose[1,0]) to
// [1, b, a], and transpose[1,0](reshape [1, a, b] -> [a, b]) =
// reshape(transpose[0,2,1]) to [b, a]: the transpose crosses the reshape.
struct TransposeAcrossReshape : OpRewritePattern<tosa::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::TransposeOp op, PatternRewriter &rewriter) const override {
    auto reshapeOp = op.getInput1().getDefiningOp<tosa::ReshapeOp>();
    if (!reshapeOp)
      return failure();
    Value x = reshapeOp.getInput1();
    Shape from = shapeOf(x), to = shapeOf(reshapeOp.getResult());
    Location loc = op.getLoc();
    if (from.size() == 2 && to == Shape{1, from[0], from[1]} && hasPerms(op, {0, 2, 1})) {
      rewriter.replaceOp(op, createReshape(rewriter, loc, createTranspose(rewriter, loc, x, {1, 0}),
                                           {1, from[1], from[0]}));
      return success();
    }
    if (from.size() == 3 && from[0] == 1 && to == Shape{from[1], from[2]} && hasPerms(op, {1, 0})) {
      rewriter.replaceOp(op,
                         createReshape(rewriter, loc, createTranspose(rewriter, loc, x, {0, 2, 1}),
                                       {from[2], from[1]}));
      return success();
    }
    return failure();
  }
};

// (A B)^T = B^T A^T for a batch-1 matmul whose operand A or B is a
// transpose: that one cancels, so there are fewer transposes (two before,
// the other operand's one after, or none).
struct TransposedMatMul : OpRewritePattern<tosa::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::TransposeOp op, PatternRewriter &rewriter) const override {
    auto matmul = op.getInput1().getDefiningOp<tosa::MatMulOp>();
    if (!matmul || !matmul->hasOneUse() || !hasPerms(op, {0, 2, 1}))
      return failure();
    Value a = matmul.getA(), b = matmul.getB();
    // A transpose, or the [1, a, b] reshape of a 2-D one (which
    // TransposeAcrossReshape makes of it).
    auto isTranspose = [](Value v) {
      if (auto reshapeOp = v.getDefiningOp<tosa::ReshapeOp>();
          reshapeOp && shapeOf(reshapeOp.getInput1()).size() == 2 && shapeOf(v)[0] == 1)
        if (auto t = reshapeOp.getInput1().getDefiningOp<tosa::TransposeOp>())
          return hasPerms(t, {1, 0});
      auto t = v.getDefiningOp<tosa::TransposeOp>();
      return t && hasPerms(t, {0, 2, 1});
    };
    if (!isTranspose(a) && !isTranspose(b))
      return failure();
    Location loc = op.getLoc();
    Value bt = createTranspose(rewriter, loc, b, {0, 2, 1});
    Value at = createTranspose(rewriter, loc, a, {0, 2, 1});
    rewriter.replaceOpWithNewOp<tosa::MatMulOp>(op, op.getType(), bt, at);
    return success();
  }
};

struct FoldTransposesPass : tpu::impl::FoldTransposesBase<FoldTransposesPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns.add<TransposeAcrossReshape, TransposedMatMul>(context);
    tosa::TransposeOp::getCanonicalizationPatterns(patterns, context);
    tosa::ReshapeOp::getCanonicalizationPatterns(patterns, context);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
