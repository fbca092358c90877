// tpu-matrix-broadcast: elementwise broadcasts rewritten as a row, a column
// or a scalar of a 2-D view of the result (see the pass description in
// Passes.td).
#include "tpu/Transforms/Passes.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tpu {
#define GEN_PASS_DEF_MATRIXBROADCAST
#include "tpu/Transforms/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;

namespace {

SmallVector<int64_t> shapeOf(Value value) {
  return SmallVector<int64_t>(llvm::cast<RankedTensorType>(value.getType()).getShape());
}

int64_t product(ArrayRef<int64_t> dims) {
  int64_t count = 1;
  for (int64_t dim : dims)
    count *= dim;
  return count;
}

// Whether `operand` is the result itself, one row, one column or one element
// of the result's [elements / last, last] view.
bool isMatrixSpread(ArrayRef<int64_t> result, ArrayRef<int64_t> operand) {
  int64_t cols = result.empty() ? 1 : result.back(), rows = product(result) / cols;
  int64_t operandCols = operand.empty() ? 1 : operand.back();
  int64_t operandRows = product(operand) / operandCols;
  return (operandRows == rows && operandCols == cols) ||
         (operandRows == 1 && operandCols == cols) || (operandRows == 1 && operandCols == 1) ||
         (operandRows == rows && operandCols == 1);
}

Value reshape(OpBuilder &builder, Location loc, Value value, ArrayRef<int64_t> shape) {
  if (ArrayRef<int64_t>(shapeOf(value)) == shape)
    return value;
  auto type = RankedTensorType::get(shape, getElementTypeOrSelf(value.getType()));
  return builder.create<tosa::ReshapeOp>(loc, type, value, builder.getDenseI64ArrayAttr(shape));
}

// `value` repeated to `shape` (each of its axes is 1 or the same); a
// constant is tiled at compile time.
Value tile(OpBuilder &builder, Location loc, Value value, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> own = shapeOf(value), multiples;
  if (ArrayRef<int64_t>(own) == shape)
    return value;
  for (size_t i = 0; i < shape.size(); ++i)
    multiples.push_back(shape[i] / own[i]);
  auto type = RankedTensorType::get(shape, getElementTypeOrSelf(value.getType()));
  DenseElementsAttr data;
  if (matchPattern(value, m_Constant(&data))) {
    SmallVector<Attribute> source(data.getValues<Attribute>()), tiled;
    int64_t count = product(shape);
    for (int64_t index = 0; index < count; ++index) {
      // The source element of result element `index`: each coordinate
      // taken modulo the source's size on its axis.
      int64_t rest = index, sourceIndex = 0, stride = 1;
      for (int64_t axis = static_cast<int64_t>(shape.size()) - 1; axis >= 0; --axis) {
        sourceIndex += (rest % shape[axis]) % own[axis] * stride;
        rest /= shape[axis];
        stride *= own[axis];
      }
      tiled.push_back(source[sourceIndex]);
    }
    return builder.create<tosa::ConstOp>(loc, type, DenseElementsAttr::get(type, tiled));
  }
  return builder.create<tosa::TileOp>(loc, type, value, builder.getDenseI64ArrayAttr(multiples));
}

// The op on 2-D views, with `small` a row or a column there.
void rewrite(Operation *op) {
  OpBuilder builder(op);
  Location loc = op->getLoc();
  Value result = op->getResult(0);
  SmallVector<int64_t> shape = shapeOf(result);
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  // Both broadcast: the first becomes full-size.
  if (ArrayRef<int64_t>(shapeOf(lhs)) != ArrayRef<int64_t>(shape) &&
      ArrayRef<int64_t>(shapeOf(rhs)) != ArrayRef<int64_t>(shape))
    lhs = tile(builder, loc, lhs, shape);
  bool smallIsLhs = ArrayRef<int64_t>(shapeOf(lhs)) != ArrayRef<int64_t>(shape);
  Value small = smallIsLhs ? lhs : rhs, full = smallIsLhs ? rhs : lhs;
  SmallVector<int64_t> own = shapeOf(small);
  int64_t rank = shape.size();
  // Spanned axes (M: the operand has them whole). Column form: the result
  // splits after the last spanned axis, and the operand is repeated over
  // the unspanned axes before it. Row form: the split is before the first
  // spanned axis, the repeats are after it. The smaller copy wins.
  int64_t firstSpanned = rank, lastSpanned = -1;
  for (int64_t i = 0; i < rank; ++i)
    if (shape[i] != 1 && own[i] == shape[i]) {
      firstSpanned = std::min(firstSpanned, i);
      lastSpanned = i;
    }
  auto tiledShape = [&](int64_t from, int64_t to) {
    SmallVector<int64_t> tiled = own;
    for (int64_t i = from; i < to; ++i)
      tiled[i] = shape[i];
    return tiled;
  };
  SmallVector<int64_t> columnTiled = tiledShape(0, lastSpanned + 1);
  SmallVector<int64_t> rowTiled = tiledShape(firstSpanned, rank);
  bool column = product(columnTiled) <= product(rowTiled);
  int64_t split = column ? lastSpanned + 1 : firstSpanned;
  int64_t rows = product(ArrayRef<int64_t>(shape).take_front(split));
  int64_t cols = product(ArrayRef<int64_t>(shape).drop_front(split));
  small = tile(builder, loc, small, column ? columnTiled : rowTiled);
  small = reshape(builder, loc, small,
                  column ? SmallVector<int64_t>{rows, 1} : SmallVector<int64_t>{1, cols});
  full = reshape(builder, loc, full, {rows, cols});
  auto matrixType = RankedTensorType::get({rows, cols}, getElementTypeOrSelf(result.getType()));
  SmallVector<Value> operands =
      smallIsLhs ? SmallVector<Value>{small, full} : SmallVector<Value>{full, small};
  Operation *matrixOp =
      builder.create(loc, op->getName().getIdentifier(), operands, {matrixType}, op->getAttrs());
  result.replaceAllUsesWith(reshape(builder, loc, matrixOp->getResult(0), shape));
  op->erase();
}

struct MatrixBroadcastPass : tpu::impl::MatrixBroadcastBase<MatrixBroadcastPass> {
  void runOnOperation() override {
    SmallVector<Operation *> broadcasts;
    getOperation().walk([&](Operation *op) {
      if (!llvm::isa<tosa::AddOp, tosa::SubOp, tosa::MulOp, tosa::MaximumOp, tosa::MinimumOp,
                     tosa::PowOp, tosa::EqualOp, tosa::GreaterOp, tosa::GreaterEqualOp>(op))
        return;
      auto resultType = llvm::dyn_cast<RankedTensorType>(op->getResult(0).getType());
      if (!resultType || !resultType.hasStaticShape())
        return;
      ArrayRef<int64_t> shape = resultType.getShape();
      SmallVector<int64_t> lhs = shapeOf(op->getOperand(0)), rhs = shapeOf(op->getOperand(1));
      bool lhsFull = ArrayRef<int64_t>(lhs) == shape, rhsFull = ArrayRef<int64_t>(rhs) == shape;
      if ((lhsFull && isMatrixSpread(shape, rhs)) || (rhsFull && isMatrixSpread(shape, lhs)))
        return;
      broadcasts.push_back(op);
    });
    for (Operation *op : broadcasts)
      rewrite(op);
  }
};

} // namespace
