// TOSA ops built with their result types worked out, for the passes that
// rewrite TOSA graphs (tpu-autodiff, tpu-fold-transposes).
#pragma once

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::tpu {

inline SmallVector<int64_t> shapeOf(Value value) {
  return SmallVector<int64_t>(llvm::cast<RankedTensorType>(value.getType()).getShape());
}

// `x` with its axes permuted (result axis i is x's axis perms[i]), the
// permutation a constant.
inline Value createTranspose(OpBuilder &builder, Location loc, Value x, ArrayRef<int32_t> perms) {
  auto type = llvm::cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape;
  for (int32_t axis : perms)
    shape.push_back(type.getDimSize(axis));
  auto permsType = RankedTensorType::get({int64_t(perms.size())}, builder.getI32Type());
  Value permsValue =
      builder.create<tosa::ConstOp>(loc, permsType, DenseElementsAttr::get(permsType, perms));
  return builder.create<tosa::TransposeOp>(loc, type.clone(shape), x, permsValue);
}

inline Value createReshape(OpBuilder &builder, Location loc, Value x, ArrayRef<int64_t> shape) {
  auto type = llvm::cast<RankedTensorType>(x.getType());
  return builder.create<tosa::ReshapeOp>(loc, type.clone(shape), x,
                                         builder.getDenseI64ArrayAttr(shape));
}

} // namespace mlir::tpu
