// Gather with run-time indices (tosa.gather) -> tpu.gather, part of
// tpu-lower-tosa. The importer casts int64 indices to i32 and wraps negative
// ones (select(0 > i, i + K, i)), tiling them over the tables; dma.gather
// wraps negative indices itself, so the indices go to the program as the
// graph input they are: an int32 tensor in DRAM, which the runtime fills
// from the caller's int64 or int32 data.
#include "TosaLowering.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::tpu;

namespace {

// The one integer value of a splat constant, through reshapes.
std::optional<int64_t> splatInteger(Value value) {
  while (auto reshape = value.getDefiningOp<tosa::ReshapeOp>())
    value = reshape.getInput1();
  DenseIntElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)) || !attr.isSplat())
    return std::nullopt;
  return attr.getSplatValue<APInt>().getSExtValue();
}

// `x` when `value` is select(0 > x, x + dim, x): numpy's wrap of negative
// indices, which dma.gather does.
Value unwrapNegativeIndices(Value value, int64_t dim) {
  auto select = value.getDefiningOp<tosa::SelectOp>();
  if (!select)
    return {};
  Value x = select.getOnFalse();
  auto negative = select.getPred().getDefiningOp<tosa::GreaterOp>();
  auto wrapped = select.getOnTrue().getDefiningOp<tosa::AddOp>();
  if (!negative || !wrapped || negative.getInput2() != x || splatInteger(negative.getInput1()) != 0)
    return {};
  Value offset = wrapped.getInput1() == x ? wrapped.getInput2() : wrapped.getInput1();
  if ((wrapped.getInput1() != x && wrapped.getInput2() != x) || splatInteger(offset) != dim)
    return {};
  return x;
}

// The graph input the indices come from, through the importer's casts,
// reshapes, tiles and negative-index wrap; null when they come from elsewhere.
BlockArgument indexInput(Value indices, int64_t dim) {
  while (true) {
    if (auto argument = llvm::dyn_cast<BlockArgument>(indices))
      return llvm::isa<func::FuncOp>(argument.getOwner()->getParentOp()) ? argument
                                                                         : BlockArgument();
    Operation *op = indices.getDefiningOp();
    if (auto cast = llvm::dyn_cast<tosa::CastOp>(op);
        cast && llvm::isa<IntegerType>(getElementTypeOrSelf(cast.getInput())))
      indices = cast.getInput();
    else if (auto reshape = llvm::dyn_cast<tosa::ReshapeOp>(op))
      indices = reshape.getInput1();
    else if (auto tile = llvm::dyn_cast<tosa::TileOp>(op))
      indices = tile.getInput1();
    else if (Value unwrapped = unwrapNegativeIndices(indices, dim))
      indices = unwrapped;
    else
      return {};
  }
}

// Erases `op` and then every TOSA op that fed only it.
void eraseWithDeadOperands(Operation *op) {
  SmallVector<Operation *> dead{op};
  while (!dead.empty()) {
    Operation *next = dead.pop_back_val();
    llvm::SetVector<Operation *> producers;
    for (Value operand : next->getOperands())
      if (Operation *producer = operand.getDefiningOp())
        producers.insert(producer);
    next->erase();
    for (Operation *producer : producers)
      if (llvm::isa<tosa::TosaDialect>(producer->getDialect()) && producer->use_empty())
        dead.push_back(producer);
  }
}

} // namespace

LogicalResult mlir::tpu::lowerGathers(func::FuncOp func) {
  SmallVector<tosa::GatherOp> gathers;
  func.walk([&](tosa::GatherOp gather) { gathers.push_back(gather); });
  for (tosa::GatherOp gather : gathers) {
    auto values = llvm::cast<RankedTensorType>(gather.getValues().getType());
    if (!isF32Tensor(values))
      return gather.emitOpError("is supported on static-shape f32 tables only, got ") << values;
    int64_t tables = values.getShape()[0], rows = values.getShape()[1];
    int64_t count = llvm::cast<RankedTensorType>(gather.getIndices().getType()).getShape()[1];
    BlockArgument input = indexInput(gather.getIndices(), rows);
    auto inputType = input ? llvm::dyn_cast<RankedTensorType>(input.getType()) : nullptr;
    if (!inputType || !inputType.hasStaticShape() ||
        !llvm::isa<IntegerType>(inputType.getElementType()) ||
        inputType.getElementTypeBitWidth() > 64 ||
        (inputType.getNumElements() != count && inputType.getNumElements() != tables * count))
      return gather.emitOpError("takes its indices from a computation; the TPU gathers with "
                                "indices that are a graph input (int64 or int32)");
    // The runtime stores the indices as int32 (out-of-range values are its
    // one-line error).
    auto int32Type =
        RankedTensorType::get(inputType.getShape(), IntegerType::get(func.getContext(), 32));
    input.setType(int32Type);
    func.setFunctionType(FunctionType::get(func.getContext(), func.getBody().getArgumentTypes(),
                                           func.getResultTypes()));
    OpBuilder builder(gather);
    auto indexType = RankedTensorType::get({inputType.getNumElements() / count, count},
                                           int32Type.getElementType());
    Value indices = input;
    if (indexType != int32Type)
      indices = builder.create<ViewOp>(gather.getLoc(), indexType, input);
    Value result =
        builder.create<GatherOp>(gather.getLoc(), gather.getType(), gather.getValues(), indices);
    gather.replaceAllUsesWith(result);
    eraseWithDeadOperands(gather);
  }
  return success();
}
