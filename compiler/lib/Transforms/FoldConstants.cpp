// tpu-fold-constants: elementwise TOSA ops whose operands are all f32
// constants evaluated now, on the host, into one constant.
//
// A graph computes such subgraphs when an exporter spells out an attribute
// as ops (ONNX Gemm's `beta * C`, a scale times a constant) or when other
// folds leave two constants meeting. Run on the device, each is a vector op
// and a DRAM round trip; worse, a value computed at run time is not a
// constant to the fusion pass, so the epilogue that would take `C` as a bias
// stops before it.
#include "tpu/Transforms/Passes.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <functional>
#include <optional>

namespace mlir::tpu {
#define GEN_PASS_DEF_FOLDCONSTANTS
#include "tpu/Transforms/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;

namespace {

using Unary = std::function<float(float)>;
using Binary = std::function<float(float, float)>;

std::optional<Unary> unaryFunction(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<Unary>>(op)
      .Case([](tosa::NegateOp) { return Unary([](float x) { return -x; }); })
      .Case([](tosa::AbsOp) { return Unary([](float x) { return std::fabs(x); }); })
      .Case([](tosa::ExpOp) { return Unary([](float x) { return std::exp(x); }); })
      .Case([](tosa::LogOp) { return Unary([](float x) { return std::log(x); }); })
      .Case([](tosa::ReciprocalOp) { return Unary([](float x) { return 1.0f / x; }); })
      .Case([](tosa::RsqrtOp) { return Unary([](float x) { return 1.0f / std::sqrt(x); }); })
      .Case([](tosa::TanhOp) { return Unary([](float x) { return std::tanh(x); }); })
      .Case([](tosa::SigmoidOp) {
        return Unary([](float x) { return 1.0f / (1.0f + std::exp(-x)); });
      })
      .Case([](tosa::FloorOp) { return Unary([](float x) { return std::floor(x); }); })
      .Case([](tosa::CeilOp) { return Unary([](float x) { return std::ceil(x); }); })
      .Case([](tosa::ClampOp clamp) {
        float lo = clamp.getMinFp().convertToFloat(), hi = clamp.getMaxFp().convertToFloat();
        // NaN passes through, as on the vector unit.
        return Unary([lo, hi](float x) { return x < lo ? lo : (x > hi ? hi : x); });
      })
      .Default([](Operation *) { return std::nullopt; });
}

std::optional<Binary> binaryFunction(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<Binary>>(op)
      .Case([](tosa::AddOp) { return Binary([](float a, float b) { return a + b; }); })
      .Case([](tosa::SubOp) { return Binary([](float a, float b) { return a - b; }); })
      .Case([](tosa::MulOp) { return Binary([](float a, float b) { return a * b; }); })
      // NaN propagates, as TOSA and the vector unit have it.
      .Case([](tosa::MaximumOp) {
        return Binary([](float a, float b) { return std::isnan(b) || a < b ? b : a; });
      })
      .Case([](tosa::MinimumOp) {
        return Binary([](float a, float b) { return std::isnan(b) || b < a ? b : a; });
      })
      .Case([](tosa::PowOp) { return Binary([](float a, float b) { return std::pow(a, b); }); })
      .Default([](Operation *) { return std::nullopt; });
}

// `attr`'s values at every index of `shape`, its size-1 axes broadcast (TOSA
// broadcasting: equal ranks, each axis equal or 1).
std::vector<float> broadcastTo(DenseFPElementsAttr attr, llvm::ArrayRef<int64_t> shape) {
  llvm::ArrayRef<int64_t> from = attr.getType().getShape();
  std::vector<float> values(attr.getValues<float>().begin(), attr.getValues<float>().end());
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  if (static_cast<int64_t>(values.size()) == count)
    return values;
  std::vector<float> result(count);
  for (int64_t index = 0; index < count; ++index) {
    int64_t rest = index, source = 0, sourceStride = 1;
    for (int64_t axis = static_cast<int64_t>(shape.size()) - 1; axis >= 0; --axis) {
      int64_t position = rest % shape[axis];
      rest /= shape[axis];
      if (from[axis] != 1)
        source += position * sourceStride;
      sourceStride *= from[axis];
    }
    result[index] = values[source];
  }
  return result;
}

struct FoldConstantElementwise : RewritePattern {
  explicit FoldConstantElementwise(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context) {}

  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    std::optional<Unary> unary = unaryFunction(op);
    std::optional<Binary> binary = unary ? std::nullopt : binaryFunction(op);
    if (!unary && !binary)
      return rewriter.notifyMatchFailure(op, "not a foldable elementwise op");
    auto resultType = llvm::dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!resultType || !resultType.hasStaticShape() || !resultType.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "not a static f32 result");
    llvm::SmallVector<DenseFPElementsAttr, 2> operands;
    int64_t operandElements = 0;
    for (Value operand : op->getOperands()) {
      DenseFPElementsAttr attr;
      if (!matchPattern(operand, m_Constant(&attr)) || !attr.getElementType().isF32() ||
          attr.getType().getRank() != resultType.getRank())
        return rewriter.notifyMatchFailure(op, "an operand is not an f32 constant of its rank");
      operands.push_back(attr);
      operandElements += attr.getNumElements();
    }
    // A broadcast that multiplies the data (a row plus a column) stays a
    // run-time op: the program's constants do not grow.
    if (resultType.getNumElements() > operandElements)
      return rewriter.notifyMatchFailure(op, "the result is larger than its operands");

    std::vector<float> values = broadcastTo(operands[0], resultType.getShape());
    if (unary) {
      for (float &value : values)
        value = (*unary)(value);
    } else {
      std::vector<float> rhs = broadcastTo(operands[1], resultType.getShape());
      for (size_t i = 0; i < values.size(); ++i)
        values[i] = (*binary)(values[i], rhs[i]);
    }
    auto folded = DenseElementsAttr::get(resultType, llvm::ArrayRef<float>(values));
    rewriter.replaceOpWithNewOp<tosa::ConstOp>(op, resultType, folded);
    return success();
  }
};

struct FoldConstantsPass : tpu::impl::FoldConstantsBase<FoldConstantsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldConstantElementwise>(&getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
