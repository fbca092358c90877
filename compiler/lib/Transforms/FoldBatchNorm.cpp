// tpu-fold-batchnorm: a per-channel multiply and add after a layer with
// constant weights (what BatchNormalization becomes on import) folded into
// that layer's weights and bias.
//
// The fold is two independent rewrites, so that a lone scale or a lone shift
// folds too:
//   mul(layer(x, W, b), s) -> layer(x, W * s, b * s)
//   add(layer(x, W, b), t) -> layer(x, W, b + t)
// Each is exact per element up to the rounding of the new constants: output
// channel c of the layer is a sum over W[c, ...] plus b[c], and s[c] scales
// every term of that sum.
#include "tpu/Transforms/Passes.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <functional>
#include <optional>

namespace mlir::tpu {
#define GEN_PASS_DEF_FOLDBATCHNORM
#include "tpu/Transforms/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;

namespace {

// A layer whose output channels (the result's last axis) each depend on
// their own slice of a constant weight tensor and their own bias element.
struct Layer {
  Operation *op = nullptr;
  unsigned weightOperand = 0;
  std::optional<unsigned> biasOperand; // tosa.matmul has no bias
  int64_t channels = 0;
  // The output channel weight element `index` (row-major) contributes to.
  std::function<int64_t(int64_t index)> channelOf;
};

// `value`'s producer when it is a conv2d, depthwise_conv2d, fully_connected
// or matmul with constant f32 weights (and bias) that nothing else reads.
std::optional<Layer> layerProducing(Value value) {
  Operation *op = value.getDefiningOp();
  if (!op || !op->hasOneUse())
    return std::nullopt;
  auto result = llvm::dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!result || !result.hasStaticShape() || !result.getElementType().isF32())
    return std::nullopt;
  Layer layer;
  layer.op = op;
  layer.channels = result.getShape().back();
  if (llvm::isa<tosa::Conv2DOp, tosa::FullyConnectedOp>(op)) {
    // OHWI / [O, I] weights: the output channel is the outermost axis.
    layer.weightOperand = 1;
    layer.biasOperand = 2;
    int64_t perChannel =
        llvm::cast<ShapedType>(op->getOperand(1).getType()).getNumElements() / layer.channels;
    layer.channelOf = [perChannel](int64_t index) { return index / perChannel; };
  } else if (llvm::isa<tosa::DepthwiseConv2DOp, tosa::MatMulOp>(op)) {
    // Depthwise [KH, KW, C, M] weights feed output channel c * M + m, the
    // last two axes flattened; matmul [B, K, N] weights feed column n. Either
    // way the channel is the index modulo the channel count.
    layer.weightOperand = 1;
    if (llvm::isa<tosa::DepthwiseConv2DOp>(op))
      layer.biasOperand = 2;
    int64_t channels = layer.channels;
    layer.channelOf = [channels](int64_t index) { return index % channels; };
  } else {
    return std::nullopt;
  }
  auto isConstantF32 = [&](unsigned operand) {
    DenseFPElementsAttr attr;
    return matchPattern(op->getOperand(operand), m_Constant(&attr)) &&
           attr.getElementType().isF32();
  };
  if (!isConstantF32(layer.weightOperand) ||
      (layer.biasOperand && !isConstantF32(*layer.biasOperand)))
    return std::nullopt;
  return layer;
}

DenseFPElementsAttr constantOf(Value value) {
  DenseFPElementsAttr attr;
  return matchPattern(value, m_Constant(&attr)) && attr.getElementType().isF32()
             ? attr
             : DenseFPElementsAttr();
}

// The per-channel values of a constant broadcast over the last axis of a
// `channels`-wide result: shape [1, ..., 1, channels] or all ones (one value
// for every channel). Anything else, e.g. a per-row or full-shape constant,
// does not commute with the layer.
std::optional<std::vector<float>> perChannelValues(Value value, RankedTensorType result) {
  DenseFPElementsAttr attr = constantOf(value);
  if (!attr)
    return std::nullopt;
  ArrayRef<int64_t> shape = attr.getType().getShape();
  int64_t channels = result.getShape().back();
  if (shape.size() != static_cast<size_t>(result.getRank()) ||
      !llvm::all_of(shape.drop_back(), [](int64_t d) { return d == 1; }) ||
      (shape.back() != channels && shape.back() != 1))
    return std::nullopt;
  std::vector<float> values(attr.getValues<float>().begin(), attr.getValues<float>().end());
  if (values.size() == 1)
    values.assign(channels, values[0]);
  return values;
}

// The layer's bias as one value per channel (a one-element bias spreads).
std::vector<float> biasValues(const Layer &layer) {
  DenseFPElementsAttr attr = constantOf(layer.op->getOperand(*layer.biasOperand));
  std::vector<float> values(attr.getValues<float>().begin(), attr.getValues<float>().end());
  if (values.size() == 1)
    values.assign(layer.channels, values[0]);
  return values;
}

Value newConstant(PatternRewriter &rewriter, Location loc, ArrayRef<int64_t> shape,
                  ArrayRef<float> values) {
  auto type = RankedTensorType::get(shape, rewriter.getF32Type());
  return rewriter.create<tosa::ConstOp>(loc, type, DenseElementsAttr::get(type, values));
}

// The operands of a commutative elementwise op as (layer, per-channel values).
std::optional<std::pair<Layer, std::vector<float>>> matchLayerAndConstant(Operation *op) {
  auto result = llvm::cast<RankedTensorType>(op->getResult(0).getType());
  if (result.getRank() == 0)
    return std::nullopt; // a scalar has no channel axis
  for (unsigned i = 0; i < 2; ++i) {
    Value input = op->getOperand(i), other = op->getOperand(1 - i);
    if (input.getType() != result)
      continue; // the layer's output must not itself be broadcast
    std::optional<Layer> layer = layerProducing(input);
    std::optional<std::vector<float>> values = perChannelValues(other, result);
    if (layer && values && static_cast<int64_t>(values->size()) == layer->channels)
      return std::make_pair(*layer, *values);
  }
  return std::nullopt;
}

struct FoldScale : OpRewritePattern<tosa::MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::MulOp mul, PatternRewriter &rewriter) const override {
    if (mul.getShift() != 0)
      return failure();
    auto match = matchLayerAndConstant(mul);
    if (!match)
      return rewriter.notifyMatchFailure(mul, "not a per-channel scale of a foldable layer");
    auto &[layer, scale] = *match;
    Location loc = layer.op->getLoc();

    Value weight = layer.op->getOperand(layer.weightOperand);
    DenseFPElementsAttr weights = constantOf(weight);
    std::vector<float> scaled(weights.getValues<float>().begin(), weights.getValues<float>().end());
    for (size_t i = 0; i < scaled.size(); ++i)
      scaled[i] *= scale[layer.channelOf(static_cast<int64_t>(i))];
    Value newWeight = newConstant(rewriter, loc, weights.getType().getShape(), scaled);

    Value newBias;
    if (layer.biasOperand) {
      std::vector<float> bias = biasValues(layer);
      for (int64_t c = 0; c < layer.channels; ++c)
        bias[c] *= scale[c];
      newBias = newConstant(rewriter, loc, {layer.channels}, bias);
    }
    rewriter.modifyOpInPlace(layer.op, [&] {
      layer.op->setOperand(layer.weightOperand, newWeight);
      if (newBias)
        layer.op->setOperand(*layer.biasOperand, newBias);
    });
    rewriter.replaceOp(mul, layer.op->getResult(0));
    return success();
  }
};

struct FoldShift : OpRewritePattern<tosa::AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tosa::AddOp add, PatternRewriter &rewriter) const override {
    auto match = matchLayerAndConstant(add);
    if (!match || !match->first.biasOperand)
      return rewriter.notifyMatchFailure(add, "not a per-channel shift of a layer with a bias");
    auto &[layer, shift] = *match;
    std::vector<float> bias = biasValues(layer);
    for (int64_t c = 0; c < layer.channels; ++c)
      bias[c] += shift[c];
    Value newBias = newConstant(rewriter, layer.op->getLoc(), {layer.channels}, bias);
    rewriter.modifyOpInPlace(layer.op, [&] { layer.op->setOperand(*layer.biasOperand, newBias); });
    rewriter.replaceOp(add, layer.op->getResult(0));
    return success();
  }
};

struct FoldBatchNormPass : tpu::impl::FoldBatchNormBase<FoldBatchNormPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldScale, FoldShift>(&getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
