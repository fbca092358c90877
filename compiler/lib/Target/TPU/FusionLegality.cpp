// What the systolic target can fuse: its answers to tpu-fuse's questions
// (FusionTargetInterface on #tpu.target). A group becomes a matmul whose
// epilogue the vector unit applies to each output tile in the accumulators,
// or row-local ops the vector unit runs on tiles of whole rows in the
// scratchpad (tpu-lower-tosa turns each TOSA op into these units' ops).
#include "tpu/Dialect/TPUDialect.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"

using namespace mlir;
using namespace mlir::tpu;

namespace {

// Ops the vector unit applies element by element, one instruction each.
bool isVectorElementwise(Operation *op) {
  if (auto mul = llvm::dyn_cast<tosa::MulOp>(op))
    return mul.getShift() == 0;
  return llvm::isa<tosa::AddOp, tosa::SubOp, tosa::MaximumOp, tosa::MinimumOp, tosa::ClampOp,
                   tosa::ExpOp, tosa::ReciprocalOp, tosa::RsqrtOp, tosa::SigmoidOp, tosa::TanhOp,
                   tosa::LogOp>(op);
}

// Reductions the vector unit does along a row (v.rowsum, v.rowmax).
bool isRowReduction(Operation *op) {
  if (!llvm::isa<tosa::ReduceSumOp, tosa::ReduceMaxOp>(op))
    return false;
  auto input = llvm::cast<RankedTensorType>(op->getOperand(0).getType());
  return op->getAttrOfType<IntegerAttr>("axis").getInt() == input.getRank() - 1;
}

// Ops over convolution windows that become vector ops on the rows of their
// window matrix (tpu.im2col, which must read its input from memory).
bool isWindowed(Operation *op) {
  return llvm::isa<tosa::DepthwiseConv2DOp, tosa::MaxPool2dOp, tosa::AvgPool2dOp>(op);
}

} // namespace

bool TargetAttr::canHeadEpilogue(Operation *op) const {
  // A batched matmul runs batch by batch, with no epilogue.
  if (auto matmul = llvm::dyn_cast<tosa::MatMulOp>(op))
    return llvm::cast<RankedTensorType>(matmul.getType()).getShape()[0] == 1;
  return llvm::isa<tosa::Conv2DOp>(op);
}

bool TargetAttr::canJoinEpilogue(Operation *op, Value chain, Value other) const {
  if (!isVectorElementwise(op))
    return false;
  // The accumulators hold whole output tiles: an operand spread over them
  // is the same tile, one row or one element; the vector unit has no column
  // broadcast.
  return !other || spreadOf(chain, other) != Spread::Column;
}

bool TargetAttr::canJoinRowGroup(Operation *op, function_ref<bool(Value)> inGroup) const {
  if (isWindowed(op))
    return !inGroup(op->getOperand(0));
  return isVectorElementwise(op) || isRowReduction(op) || llvm::isa<tosa::ErfOp>(op);
}

bool TargetAttr::isGroupOnItsOwn(Operation *op) const {
  // A convolution adds its bias to the matmul's tiles; erf is a polynomial
  // of vector ops; a windowed op combines its taps.
  return llvm::isa<tosa::Conv2DOp, tosa::ErfOp>(op) || isWindowed(op);
}
