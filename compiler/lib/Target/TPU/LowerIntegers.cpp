// Integer values inside the graph, part of tpu-lower-tosa. The vector unit
// computes in fp32 only; integers below 2^24 are exact there, which is all a
// training step needs of its integers: class labels, the one-hot compare
// against class ids, the argmax of the logits and the count of correct rows.
// So the integer tensors that derive from a graph input or from an argmax
// (other than ArgMax's own int64 output chain, which LowerArgMax.cpp lowers)
// become f32:
//   * an int64 graph input becomes an f32 input marked tpu.host_type = i64:
//     the runtime converts the caller's integers to fp32 (exact below 2^24,
//     a one-line error above);
//   * a Gather's indices stay int32 words in DRAM for dma.gather
//     (lowerGathers); their other integer users (the one-hot compare of the
//     Gather's gradient) take them converted on the vector unit
//     (tpu.to_float, v.cvt.i2f);
//   * casts between integer types, and from integers to f32, go; a cast of a
//     compare to an integer becomes the compare's f32 mask;
//   * reshape, tile, reduce_sum, add, sub, select and argmax take f32 types,
//     their integer constants (and those compared with them) f32 values;
//   * an integer graph output is stored as int32 words (tpu.to_int,
//     v.cvt.f2i), marked with the model's type where that is not i32.
#include "TosaLowering.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::tpu;

namespace {

bool isIntegerTensor(Type type) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() && tensor.getElementType().isSignlessInteger() &&
         !tensor.getElementType().isInteger(1);
}

RankedTensorType asF32(Type type) {
  auto tensor = llvm::cast<RankedTensorType>(type);
  return RankedTensorType::get(tensor.getShape(), Float32Type::get(type.getContext()));
}

// The ops whose integer results carry values (not shapes or perms) that the
// vector unit can compute in fp32.
bool carriesValues(Operation *op) {
  return llvm::isa<tosa::CastOp, tosa::ReshapeOp, tosa::TileOp, tosa::ReduceSumOp, tosa::AddOp,
                   tosa::SubOp, tosa::SelectOp, tosa::ArgMaxOp, tosa::EqualOp, tosa::GreaterOp,
                   tosa::GreaterEqualOp>(op);
}

// An integer constant operand of an op that became f32, as an f32 constant.
void convertConstantOperand(OpOperand &operand) {
  DenseIntElementsAttr values;
  if (!isIntegerTensor(operand.get().getType()) ||
      !matchPattern(operand.get(), m_Constant(&values)))
    return;
  SmallVector<float> converted;
  for (const APInt &value : values.getValues<APInt>())
    converted.push_back(static_cast<float>(value.getSExtValue()));
  Operation *owner = operand.getOwner();
  OpBuilder builder(owner);
  auto type = asF32(operand.get().getType());
  operand.set(builder.create<tosa::ConstOp>(owner->getLoc(), type,
                                            DenseElementsAttr::get(type, ArrayRef(converted))));
}

// An argmax of a reversed axis or whose indices (through reshapes) are cast
// to int64: ArgMax's output chain, well formed or not.
bool looksLikeOutputChain(tosa::ArgMaxOp argmax) {
  if (argmax.getInput().getDefiningOp<tosa::ReverseOp>())
    return true;
  SmallVector<Value> values{argmax.getResult()};
  while (!values.empty()) {
    Value value = values.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (auto cast = llvm::dyn_cast<tosa::CastOp>(user);
          cast && cast.getType().getElementType().isInteger(64))
        return true;
      if (llvm::isa<tosa::ReshapeOp, tosa::SubOp>(user))
        values.push_back(user->getResult(0));
    }
  }
  return false;
}

// Whether `value` (an int32 graph input) is the indices of a tpu.gather,
// directly or through a view (lowerGathers): values below the table's
// row count, so exact in fp32.
bool feedsGather(Value value) {
  return llvm::any_of(value.getUsers(), [](Operation *user) {
    if (llvm::isa<GatherOp>(user))
      return true;
    auto view = llvm::dyn_cast<ViewOp>(user);
    return view && llvm::any_of(view->getUsers(), [](Operation *u) { return isa<GatherOp>(u); });
  });
}

} // namespace

LogicalResult mlir::tpu::lowerIntegerValues(func::FuncOp func) {
  MLIRContext *context = func.getContext();
  DenseSet<Value> converted; // integer values now f32
  Block &body = func.getBody().front();
  for (BlockArgument argument : body.getArguments()) {
    auto type = llvm::dyn_cast<RankedTensorType>(argument.getType());
    if (isIntegerTensor(type) && type.getElementType().isInteger(32) && feedsGather(argument)) {
      // A Gather's int32 indices (lowerGathers): an fp32 copy for the
      // integer computations on them.
      SmallVector<OpOperand *> valueUses;
      for (OpOperand &use : argument.getUses())
        if (llvm::isa<tosa::TosaDialect>(use.getOwner()->getDialect()) &&
            carriesValues(use.getOwner()))
          valueUses.push_back(&use);
      if (valueUses.empty())
        continue;
      OpBuilder builder = OpBuilder::atBlockBegin(&body);
      Location loc = argument.getLoc();
      RankedTensorType words = matrixType(type);
      Value matrix = words == type ? Value(argument)
                                   : builder.create<ViewOp>(loc, words, argument).getResult();
      Value converted32 = builder.create<ToFloatOp>(loc, asF32(words), matrix);
      Value copy = words == type
                       ? converted32
                       : builder.create<ViewOp>(loc, asF32(type), converted32).getResult();
      for (OpOperand *use : valueUses)
        use->set(copy);
      converted.insert(copy);
      continue;
    }
    // int64 inputs (class labels).
    if (!isIntegerTensor(argument.getType()) ||
        !llvm::cast<RankedTensorType>(argument.getType()).getElementType().isInteger(64) ||
        llvm::any_of(argument.getUsers(), [](Operation *user) {
          return !llvm::isa<tosa::TosaDialect>(user->getDialect());
        }))
      continue;
    Type element = llvm::cast<RankedTensorType>(argument.getType()).getElementType();
    argument.setType(asF32(argument.getType()));
    func.setArgAttr(argument.getArgNumber(), kHostTypeAttr, TypeAttr::get(element));
    converted.insert(argument);
  }
  SmallVector<Operation *> dead;
  for (Operation &op : body.without_terminator()) {
    bool fromConverted =
        llvm::any_of(op.getOperands(), [&](Value v) { return converted.count(v); });
    auto argmax = llvm::dyn_cast<tosa::ArgMaxOp>(op);
    // ArgMax's own int64 output chain, and what tries to be one (a reversed
    // input, a cast to int64), stay for LowerArgMax.cpp, which lowers or
    // reports them.
    bool freeArgMax = argmax && !isArgMaxOutputChain(argmax) && !looksLikeOutputChain(argmax);
    auto cast = llvm::dyn_cast<tosa::CastOp>(op);
    bool maskCast = cast && isIntegerTensor(cast.getType()) &&
                    getElementTypeOrSelf(cast.getInput().getType()).isInteger(1);
    if (!(fromConverted && carriesValues(&op)) && !freeArgMax && !maskCast)
      continue;
    if (cast && converted.count(cast.getInput())) {
      // int -> int or int -> f32: the value is already f32.
      cast.getResult().replaceAllUsesWith(cast.getInput());
      dead.push_back(cast);
      continue;
    }
    for (OpOperand &operand : op.getOpOperands())
      if (!llvm::isa<tosa::ReshapeOp, tosa::TileOp>(op) || operand.getOperandNumber() == 0)
        convertConstantOperand(operand);
    for (Value result : op.getResults())
      if (isIntegerTensor(result.getType())) {
        result.setType(asF32(result.getType()));
        converted.insert(result);
      }
  }
  for (Operation *op : llvm::reverse(dead))
    op->erase();
  // Integer outputs: int32 words converted on the vector unit.
  Operation *terminator = body.getTerminator();
  for (OpOperand &operand : terminator->getOpOperands()) {
    if (!converted.count(operand.get()))
      continue;
    OpBuilder builder(terminator);
    Location loc = operand.get().getLoc();
    auto type = llvm::cast<RankedTensorType>(operand.get().getType());
    RankedTensorType matrix = matrixType(type);
    Value input = operand.get();
    if (matrix != type)
      input = builder.create<ViewOp>(loc, matrix, input);
    Value words = builder.create<ToIntOp>(
        loc, RankedTensorType::get(matrix.getShape(), IntegerType::get(context, 32)), input);
    operand.set(builder.create<ViewOp>(
        loc, RankedTensorType::get(type.getShape(), IntegerType::get(context, 32)), words));
  }
  func.setFunctionType(
      FunctionType::get(context, body.getArgumentTypes(), func.getFunctionType().getResults()));
  return success();
}
