// tpu-lower-tosa, ArgMax and ArgMin as the importer writes them:
//   [tosa.reverse ->] tosa.argmax [-> tosa.sub from axis length - 1]
//   [-> tosa.reshape] -> tosa.cast to i64 -> graph output
// (ArgMin negates the input first; select_last_index reverses the axis and
// maps the index back). The vector unit has no argmax and no integers but
// its conversion, so per row along the axis, in fp32, where indices are
// exact:
//   m = rowmax(x); mask = (x == m)      1.0 where the maximum is
//   first index: L - rowmax(mask * (L - j))
//   last index:  rowmax(mask * (j + 1)) - 1
// (the weights are 1..L where the mask is set, 0 elsewhere), then
// v.cvt.f2i into the int32 words the program stores; the host widens them
// to the model's int64. The last index of x is L - 1 - the first index of
// reversed x, so a reversed argmax with its sub is lowered as the last
// index of the unreversed input, and the reverse goes.
#include "TosaLowering.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::tpu;

namespace {

struct ArgMaxChain {
  tosa::ArgMaxOp argmax;
  tosa::ReverseOp reverse; // select_last_index: the reverse and the sub
  tosa::SubOp fromEnd;
  SmallVector<tosa::ReshapeOp> reshapes;
  tosa::CastOp cast; // to i64, the graph output
  func::ReturnOp output;
};

// `value`'s one user, if it has exactly one use.
Operation *soleUser(Value value) { return value.hasOneUse() ? *value.getUsers().begin() : nullptr; }

bool isSplat(Value value, int64_t expected) {
  DenseIntElementsAttr attr;
  return matchPattern(value, m_Constant(&attr)) && attr.isSplat() &&
         attr.getSplatValue<APInt>().getSExtValue() == expected;
}

// The chain from `argmax`; on a form it is not, an error on the op where
// the form ends when `report`, else a silent failure.
FailureOr<ArgMaxChain> chainOf(tosa::ArgMaxOp argmax, bool report) {
  auto fail = [&](Operation *op, const Twine &problem) -> FailureOr<ArgMaxChain> {
    if (report)
      op->emitOpError(problem);
    return failure();
  };
  ArgMaxChain chain;
  chain.argmax = argmax;
  int64_t axis = argmax.getAxis();
  int64_t length = argmax.getInput().getType().getShape()[axis];
  chain.reverse = argmax.getInput().getDefiningOp<tosa::ReverseOp>();
  if (chain.reverse && chain.reverse.getAxis() != axis)
    chain.reverse = nullptr;
  Value value = argmax.getResult();
  if (chain.reverse) {
    auto sub = llvm::dyn_cast_or_null<tosa::SubOp>(soleUser(value));
    if (!sub || sub.getInput2() != value || !isSplat(sub.getInput1(), length - 1))
      return fail(argmax, "of a reversed axis is supported by the TPU lowering only as "
                          "ArgMax's select_last_index, subtracted from the axis length - 1");
    chain.fromEnd = sub;
    value = sub.getResult();
  }
  while (auto reshape = llvm::dyn_cast_or_null<tosa::ReshapeOp>(soleUser(value))) {
    chain.reshapes.push_back(reshape);
    value = reshape.getResult();
  }
  chain.cast = llvm::dyn_cast_or_null<tosa::CastOp>(soleUser(value));
  if (!chain.cast || !chain.cast.getType().getElementType().isInteger(64))
    return fail(argmax, "is supported by the TPU lowering only as ArgMax's or ArgMin's int64 "
                        "indices, a graph output of their own");
  chain.output = llvm::dyn_cast_or_null<func::ReturnOp>(soleUser(chain.cast.getResult()));
  if (!chain.output)
    return fail(chain.cast, "of ArgMax's indices is supported by the TPU lowering only as a "
                            "graph output of its own, not used by other operations");
  return chain;
}

// The argmax an op of a chain comes from, walking up its index operand.
tosa::ArgMaxOp rootOf(Operation *op) {
  while (op) {
    if (auto argmax = llvm::dyn_cast<tosa::ArgMaxOp>(op))
      return argmax;
    if (auto sub = llvm::dyn_cast<tosa::SubOp>(op))
      op = sub.getInput2().getDefiningOp();
    else if (llvm::isa<tosa::ReshapeOp, tosa::CastOp>(op))
      op = op->getOperand(0).getDefiningOp();
    else
      return nullptr;
  }
  return nullptr;
}

bool isIntegerTensor(Type type) {
  return llvm::isa<IntegerType>(llvm::cast<ShapedType>(type).getElementType());
}

// The fp32 index along `axis` of each row's first (or, `last`, last)
// maximum of `input`, as a [rows, 1] column.
Value indexColumn(PatternRewriter &rewriter, Location loc, Value input, int64_t axis, bool last) {
  Value rows = rowsAlong(rewriter, loc, input, axis);
  auto rowsType = llvm::cast<RankedTensorType>(rows.getType());
  auto [numRows, length] = std::pair(rowsType.getShape()[0], rowsType.getShape()[1]);
  auto columnType = RankedTensorType::get({numRows, 1}, rewriter.getF32Type());
  auto binary = [&](BinaryKind kind, Value lhs, Value rhs) -> Value {
    return rewriter.create<BinaryOp>(loc, lhs.getType(), kind, lhs, rhs);
  };
  auto scalar = [&](float value) { return constantMatrix(rewriter, loc, {1, 1}, value); };
  Value max = rewriter.create<RowReduceOp>(loc, columnType, ReduceKind::max, rows);
  Value mask = binary(BinaryKind::eq, rows, max);
  SmallVector<float> weights;
  for (int64_t j = 0; j < length; ++j)
    weights.push_back(float(last ? j + 1 : length - j));
  Value best = rewriter.create<RowReduceOp>(
      loc, columnType, ReduceKind::max,
      binary(BinaryKind::mul, mask, constantMatrix(rewriter, loc, {1, length}, weights)));
  return last ? binary(BinaryKind::add, best, scalar(-1.0f))
              : binary(BinaryKind::add, negateMatrix(rewriter, loc, best), scalar(float(length)));
}

struct LowerArgMax : CountedLowering<tosa::ArgMaxOp> {
  using CountedLowering::CountedLowering;
  LogicalResult matchAndRewrite(tosa::ArgMaxOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (op.getType().getElementType().isF32()) {
      // Indices inside the graph (lowerIntegerValues): fp32 values.
      replaceWithView(rewriter, op,
                      indexColumn(rewriter, loc, op.getInput(), op.getAxis(), /*last=*/false));
      return success();
    }
    FailureOr<ArgMaxChain> chain = chainOf(op, /*report=*/false);
    if (failed(chain))
      return failure();
    bool last = bool(chain->reverse);
    Value index = indexColumn(rewriter, loc, last ? chain->reverse.getInput() : op.getInput(),
                              op.getAxis(), last);
    int64_t numRows = llvm::cast<RankedTensorType>(index.getType()).getShape()[0];
    Value words = rewriter.create<ToIntOp>(
        loc, RankedTensorType::get({numRows, 1}, rewriter.getI32Type()), index);
    // The output keeps the model's shape in int32 words; the pass gives the
    // function that result type.
    auto shape = chain->cast.getType().getShape();
    Value result =
        viewAs(rewriter, loc, words, RankedTensorType::get(shape, rewriter.getI32Type()));
    rewriter.modifyOpInPlace(chain->output, [&] {
      chain->output->setOperand(chain->cast.getResult().getUses().begin()->getOperandNumber(),
                                result);
    });
    rewriter.eraseOp(chain->cast);
    for (tosa::ReshapeOp reshape : llvm::reverse(chain->reshapes))
      rewriter.eraseOp(reshape);
    if (chain->fromEnd)
      rewriter.eraseOp(chain->fromEnd);
    rewriter.eraseOp(op);
    ++count;
    return success();
  }
};

// A reverse is lowered with its argmax (checkArgMaxOp saw to it that it has
// one), which reads its input; so it only goes.
struct EraseReverse : OpRewritePattern<tosa::ReverseOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::ReverseOp op, PatternRewriter &rewriter) const override {
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

bool mlir::tpu::isArgMaxOutputChain(tosa::ArgMaxOp argmax) {
  return succeeded(chainOf(argmax, /*report=*/false));
}

std::optional<LogicalResult> mlir::tpu::checkArgMaxOp(Operation *op) {
  if (auto argmax = llvm::dyn_cast<tosa::ArgMaxOp>(op)) {
    if (!isF32Tensor(argmax.getInput().getType()))
      return op->emitOpError("is supported on static-shape f32 tensors only, got ")
             << argmax.getInput().getType();
    if (argmax.getType().getElementType().isF32())
      return success();
    return LogicalResult(chainOf(argmax, /*report=*/true));
  }
  if (auto reverse = llvm::dyn_cast<tosa::ReverseOp>(op)) {
    auto argmax = llvm::dyn_cast_or_null<tosa::ArgMaxOp>(soleUser(reverse.getResult()));
    if (!argmax || argmax.getAxis() != reverse.getAxis())
      return op->emitOpError("feeding an argmax is supported by the TPU lowering only as "
                             "ArgMax's select_last_index, reversing the argmax's axis");
    return success(); // the argmax checks the rest
  }
  // The integer ops after an argmax are lowered with it when they are its
  // chain; anything else integer is left to the f32 checks, which refuse it.
  if (llvm::isa<tosa::SubOp, tosa::ReshapeOp, tosa::CastOp>(op) &&
      isIntegerTensor(op->getOperand(op->getNumOperands() - 1).getType())) {
    tosa::ArgMaxOp argmax = rootOf(op);
    if (!argmax)
      return std::nullopt;
    FailureOr<ArgMaxChain> chain = chainOf(argmax, /*report=*/false);
    if (failed(chain))
      return failure(); // reported on the argmax, which comes first
    return success();
  }
  return std::nullopt;
}

void mlir::tpu::populateArgMaxLowerings(RewritePatternSet &patterns, llvm::Statistic &vectorOps) {
  patterns.add<LowerArgMax>(patterns.getContext(), vectorOps);
  patterns.add<EraseReverse>(patterns.getContext());
}
