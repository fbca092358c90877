// tpu-fold-flatten-transpose: read a flattened feature map in its own
// layout and permute the constant weights' rows instead (see the pass
// description).
#include "TosaBuilders.h"
#include "tpu/Transforms/Passes.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <algorithm>
#include <vector>

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
    auto type = llvm::cast<RankedTensorType>(weights.getType());
    if (rows.size() != 3 || rows[0] != 1 || rows[1] != x[0] || w[0] != 1 ||
        !type.getElementType().isIntOrFloat() || type.getElementTypeBitWidth() % 8 != 0)
      return failure();
    // Weight row j goes with element j of an x row (its trailing axes,
    // row-major), which the transposed row held where its own axis a is
    // x's axis perms[a]. A splat's rows are all alike.
    DenseElementsAttr permuted = weights;
    if (!weights.isSplat()) {
      const ArrayRef<int64_t> trailing = ArrayRef<int64_t>(x).drop_front();
      SmallVector<int64_t> trailingPerms;
      for (int64_t axis : ArrayRef<int64_t>(perms).drop_front())
        trailingPerms.push_back(axis - 1);
      const SmallVector<int64_t> rowStrides = computeStrides(trailing);
      const SmallVector<int64_t> transposedStrides =
          computeStrides(applyPermutation(trailing, trailingPerms));
      const size_t rowBytes = size_t(w[2] * type.getElementTypeBitWidth() / 8);
      const ArrayRef<char> raw = weights.getRawData();
      std::vector<char> bytes(raw.size());
      for (int64_t j = 0; j < rows[2]; ++j) {
        int64_t at = linearize(applyPermutation(delinearize(j, rowStrides), trailingPerms),
                               transposedStrides);
        std::copy_n(raw.begin() + at * rowBytes, rowBytes, bytes.begin() + j * rowBytes);
      }
      permuted = DenseElementsAttr::getFromRawBuffer(type, bytes);
    }
    Location loc = matmul.getLoc();
    Value permutedWeights = rewriter.create<tosa::ConstOp>(loc, type, permuted);
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
