// tpu-fold-flatten-transpose: read a flattened feature map in its own
// layout and permute the constant weights' rows instead (see the pass
// description).
#include "TosaBuilders.h"
#include "tpu/Transforms/Passes.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tpu {
#define GEN_PASS_DEF_FOLDFLATTENTRANSPOSE
#include "tpu/Transforms/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;

namespace {

using tpu::createReshape;
using tpu::shapeOf;

// matmul(reshape(transpose(x)), W) with W constant, batch 1, the reshape
// [1, M, K] with M = x's first axis, which the transpose keeps.
struct FlattenedTransposeIntoWeights : OpRewritePattern<tosa::MatMulOp> {
  FlattenedTransposeIntoWeights(MLIRContext *context, llvm::Statistic &folded)
      : OpRewritePattern(context), folded(folded) {}

  LogicalResult matchAndRewrite(tosa::MatMulOp matmul, PatternRewriter &rewriter) const override {
    auto reshape = matmul.getA().getDefiningOp<tosa::ReshapeOp>();
    auto transpose = reshape ? reshape.getInput1().getDefiningOp<tosa::TransposeOp>() : nullptr;
    DenseElementsAttr weights;
    SmallVector<int64_t> perms;
    if (!transpose || !matchPattern(matmul.getB(), m_Constant(&weights)) ||
        failed(transpose.getConstantPerms(perms)) || perms.empty() || perms[0] != 0)
      return failure();
    const SmallVector<int64_t> x = shapeOf(transpose.getInput1()), rows = shapeOf(reshape);
    const SmallVector<int64_t> w = shapeOf(matmul.getB());
    if (rows.size() != 3 || rows[0] != 1 || rows[1] != x[0] || w[0] != 1)
      return failure();
    // Element j of an x row (its trailing axes, row-major) sits at
    // `transposed[j]` in the transposed row.
    const int64_t K = rows[2], N = w[2], axes = int64_t(x.size());
    SmallVector<int64_t> transposedStrides(axes, 1);
    for (int64_t a = axes - 2; a >= 1; --a)
      transposedStrides[a] = transposedStrides[a + 1] * x[perms[a + 1]];
    SmallVector<int64_t> strideOfXAxis(axes, 0);
    for (int64_t a = 1; a < axes; ++a)
      strideOfXAxis[perms[a]] = transposedStrides[a];
    const auto values = llvm::to_vector(weights.getValues<Attribute>());
    SmallVector<Attribute> permuted;
    permuted.reserve(values.size());
    for (int64_t j = 0; j < K; ++j) {
      int64_t rest = j, at = 0;
      for (int64_t a = axes - 1; a >= 1; --a) {
        at += rest % x[a] * strideOfXAxis[a];
        rest /= x[a];
      }
      llvm::append_range(permuted, llvm::ArrayRef(values).slice(at * N, N));
    }
    Location loc = matmul.getLoc();
    auto type = llvm::cast<RankedTensorType>(weights.getType());
    Value permutedWeights =
        rewriter.create<tosa::ConstOp>(loc, type, DenseElementsAttr::get(type, permuted));
    Value flat = createReshape(rewriter, reshape.getLoc(), transpose.getInput1(), rows);
    rewriter.replaceOpWithNewOp<tosa::MatMulOp>(matmul, matmul.getType(), flat, permutedWeights);
    ++folded;
    return success();
  }

  llvm::Statistic &folded;
};

struct FoldFlattenTransposePass : tpu::impl::FoldFlattenTransposeBase<FoldFlattenTransposePass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns.add<FlattenedTransposeIntoWeights>(context, foldedTransposes);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
