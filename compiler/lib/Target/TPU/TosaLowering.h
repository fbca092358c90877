// What the TOSA-to-TPU lowering patterns share: views, constants and the
// counted pattern base; the patterns live in LowerTosaToTPU.cpp (elementwise,
// matmul, data movement, the pass), LowerWindowOps.cpp (conv and pool),
// LowerMaskOps.cpp (compares and selects) and LowerArgMax.cpp.
#ifndef TPU_TARGET_TPU_TOSALOWERING_H
#define TPU_TARGET_TPU_TOSALOWERING_H

#include "tpu/Dialect/TPUDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/Statistic.h"

namespace mlir::tpu {

Value viewAs(PatternRewriter &rewriter, Location loc, Value value, RankedTensorType type);
Value asMatrix(PatternRewriter &rewriter, Location loc, Value value);
Value constantMatrix(PatternRewriter &rewriter, Location loc, ArrayRef<int64_t> shape,
                     ArrayRef<float> values);
// What the DMA engine stores into padding: a row of the value, as long as a
// DMA row can be and no longer than `length`.
// -matrix, a multiply by -1 on the vector unit.
Value negateMatrix(PatternRewriter &rewriter, Location loc, Value matrix);
Value fillRow(PatternRewriter &rewriter, Location loc, int64_t length, float value);
// The rows of `input` along `axis`, a [elements / length, length] f32
// matrix: the vector unit reduces rows, so another axis is first moved last
// (a transpose, unless only size-1 axes follow it); the other axes keep
// their order, so row r belongs to element r of the reduced tensor.
Value rowsAlong(PatternRewriter &rewriter, Location loc, Value input, int64_t axis);

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

bool isF32Tensor(Type type);
// The vector unit's broadcast: one operand spreads over the other, which
// has the result's shape (the lowerings put that one first); else an error
// on `op`.
LogicalResult checkBroadcast(Operation *op, Value lhs, Value rhs);

// The checks of the compares, selects and casts of compares
// (LowerMaskOps.cpp); nullopt for other ops.
std::optional<LogicalResult> checkMaskOp(Operation *op);
// Logical not/and/or of compares become f32 arithmetic on the compares'
// 1.0/0.0 masks (not a = 1 - a, a and b = a b, a or b = max(a, b)), and
// a select on such a condition x c + y (1 - c) (x c when y is a constant 0),
// a cast of one to f32 the mask; runs before the lowering patterns.
void lowerLogicalMasks(func::FuncOp func);
void populateMaskLowerings(RewritePatternSet &patterns, llvm::Statistic &vectorOps);

// tosa.gather with indices from a graph input -> tpu.gather, the input
// retyped to the int32 the program reads (LowerGather.cpp); an error on a
// gather with other indices.
LogicalResult lowerGathers(func::FuncOp func);

// Integer tensors from graph inputs and argmax (labels, class ids, correct
// counts) computed in fp32, integer outputs stored as int32 words
// (LowerIntegers.cpp); runs after lowerGathers.
LogicalResult lowerIntegerValues(func::FuncOp func);

// ArgMax as the importer writes ArgMax and ArgMin (LowerArgMax.cpp): the
// check of each op of the chain from tosa.argmax to the int64 graph output
// (nullopt for other ops), and the lowering.
// An argmax whose result was made f32 by lowerIntegerValues is lowered to
// its fp32 indices.
std::optional<LogicalResult> checkArgMaxOp(Operation *op);
bool isArgMaxOutputChain(tosa::ArgMaxOp argmax);
void populateArgMaxLowerings(RewritePatternSet &patterns, llvm::Statistic &vectorOps);

// conv2d, depthwise_conv2d, max_pool2d and avg_pool2d, counting matmuls and
// vector ops.
void populateWindowLowerings(RewritePatternSet &patterns, llvm::Statistic &matmuls,
                             llvm::Statistic &vectorOps);

} // namespace mlir::tpu

#endif // TPU_TARGET_TPU_TOSALOWERING_H
