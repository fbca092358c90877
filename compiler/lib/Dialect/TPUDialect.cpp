// The TPU dialect: registration, verifiers and folders.
#include "tpu/Dialect/TPUDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::tpu;

#include "tpu/Dialect/TPUOpsDialect.cpp.inc"
#include "tpu/Dialect/TPUOpsEnums.cpp.inc"

void TPUDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tpu/Dialect/TPUOps.cpp.inc"
      >();
}

Operation *TPUDialect::materializeConstant(OpBuilder &builder, Attribute value, Type type,
                                           Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}

#define GET_OP_CLASSES
#include "tpu/Dialect/TPUOps.cpp.inc"

RankedTensorType mlir::tpu::matrixType(RankedTensorType type) {
  int64_t cols = type.getRank() == 0 ? 1 : type.getShape().back();
  return RankedTensorType::get({type.getNumElements() / cols, cols}, type.getElementType());
}

LogicalResult MatMulOp::verify() {
  ArrayRef<int64_t> lhs = getLhs().getType().getShape();
  ArrayRef<int64_t> rhs = getRhs().getType().getShape();
  ArrayRef<int64_t> result = getResult().getType().getShape();
  if (lhs[1] != rhs[0])
    return emitOpError() << "contraction sizes differ: lhs is " << lhs[0] << "x" << lhs[1]
                         << ", rhs is " << rhs[0] << "x" << rhs[1];
  if (result[0] != lhs[0] || result[1] != rhs[1])
    return emitOpError() << "result must be " << lhs[0] << "x" << rhs[1] << ", got " << result[0]
                         << "x" << result[1];
  return success();
}

LogicalResult BatchMatMulOp::verify() {
  ArrayRef<int64_t> lhs = getLhs().getType().getShape();
  ArrayRef<int64_t> rhs = getRhs().getType().getShape();
  ArrayRef<int64_t> result = getResult().getType().getShape();
  if (lhs[0] != rhs[0])
    return emitOpError() << "batch sizes differ: lhs has " << lhs[0] << ", rhs has " << rhs[0];
  if (lhs[2] != rhs[1])
    return emitOpError() << "contraction sizes differ: lhs is " << lhs[1] << "x" << lhs[2]
                         << ", rhs is " << rhs[1] << "x" << rhs[2];
  if (result[0] != lhs[0] || result[1] != lhs[1] || result[2] != rhs[2])
    return emitOpError() << "result must be " << lhs[0] << "x" << lhs[1] << "x" << rhs[2]
                         << ", got " << result[0] << "x" << result[1] << "x" << result[2];
  return success();
}

LogicalResult BinaryOp::verify() {
  ArrayRef<int64_t> lhs = getLhs().getType().getShape();
  ArrayRef<int64_t> rhs = getRhs().getType().getShape();
  if (getResult().getType() != getLhs().getType())
    return emitOpError("result type must equal the lhs type");
  bool sameShape = lhs == rhs;
  bool row = rhs[0] == 1 && rhs[1] == lhs[1];
  bool scalar = rhs[0] == 1 && rhs[1] == 1;
  bool column = rhs[0] == lhs[0] && rhs[1] == 1;
  if (!sameShape && !row && !scalar && !column)
    return emitOpError() << "rhs must be " << lhs[0] << "x" << lhs[1] << ", 1x" << lhs[1] << ", "
                         << lhs[0] << "x1 or 1x1, got " << rhs[0] << "x" << rhs[1];
  return success();
}

LogicalResult RowReduceOp::verify() {
  ArrayRef<int64_t> input = getInput().getType().getShape();
  ArrayRef<int64_t> result = getResult().getType().getShape();
  if (result[0] != input[0] || result[1] != 1)
    return emitOpError() << "result must be " << input[0] << "x1, got " << result[0] << "x"
                         << result[1];
  return success();
}

LogicalResult ClampOp::verify() {
  if (getMin().convertToFloat() > getMax().convertToFloat())
    return emitOpError("min must not exceed max");
  return success();
}

LogicalResult TransposeOp::verify() {
  ArrayRef<int64_t> input = getInput().getType().getShape();
  ArrayRef<int64_t> result = getResult().getType().getShape();
  ArrayRef<int64_t> perms = getPerms();
  if (getInput().getType().getElementType() != getResult().getType().getElementType())
    return emitOpError("element types differ");
  if (perms.size() != input.size() || result.size() != input.size())
    return emitOpError() << "perms, input and result must have one entry per axis, got "
                         << perms.size() << ", " << input.size() << " and " << result.size();
  SmallVector<bool> seen(perms.size(), false);
  for (auto [axis, from] : llvm::enumerate(perms)) {
    if (from < 0 || from >= int64_t(perms.size()) || seen[from])
      return emitOpError("perms must be a permutation of the axes");
    seen[from] = true;
    if (result[axis] != input[from])
      return emitOpError() << "result axis " << axis << " must have size " << input[from]
                           << " (input axis " << from << "), got " << result[axis];
  }
  return success();
}

LogicalResult ViewOp::verify() {
  auto input = getInput().getType();
  auto result = getResult().getType();
  if (input.getElementType() != result.getElementType())
    return emitOpError("element types differ");
  if (input.getNumElements() != result.getNumElements())
    return emitOpError() << "element counts differ: " << input.getNumElements() << " vs "
                         << result.getNumElements();
  return success();
}

OpFoldResult ViewOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getResult().getType())
    return getInput();
  if (auto constant = llvm::dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput()))
    return constant.reshape(getResult().getType());
  if (auto inner = getInput().getDefiningOp<ViewOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return {};
}
