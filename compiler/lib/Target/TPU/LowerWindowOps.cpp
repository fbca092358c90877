// tpu-lower-tosa, the window operations: convolutions as im2col and a matmul;
// pools and depthwise convolutions as window reductions over their input held
// on chip (tpu.window_reduce), or, where that does not fit, as taps of im2col
// rows on the vector unit.
#include "TosaLowering.h"
#include "tpu/Target/TPU/WindowPlan.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"

#include <limits>

using namespace mlir;
using namespace mlir::tpu;

namespace {

// The [N*OH*OW, KH*KW*C] window rows of an NHWC input (a view of the input
// itself for a 1x1 window with stride 1 and no padding).
Value windowRows(PatternRewriter &rewriter, Location loc, Value input, ArrayRef<int64_t> kernel,
                 ArrayRef<int64_t> stride, ArrayRef<int64_t> dilation, ArrayRef<int64_t> pad,
                 float padValue, RankedTensorType result) {
  int64_t channels = llvm::cast<RankedTensorType>(input.getType()).getShape()[3];
  auto type = RankedTensorType::get(
      {result.getNumElements() / result.getShape()[3], kernel[0] * kernel[1] * channels},
      rewriter.getF32Type());
  if (::tpu::codegen::isPointwise(kernel, stride, pad))
    return viewAs(rewriter, loc, input, type);
  bool padded = llvm::any_of(pad, [](int64_t p) { return p > 0; });
  // One channel: a pixel's KH words, should the band stack its kernel rows
  // (ConvLayout).
  int64_t fillLength = channels == 1 ? kernel[0] : channels;
  return rewriter.create<Im2ColOp>(
      loc, type, input, padded ? fillRow(rewriter, loc, fillLength, padValue) : Value(),
      rewriter.getDenseI64ArrayAttr(kernel), rewriter.getDenseI64ArrayAttr(stride),
      rewriter.getDenseI64ArrayAttr(dilation), rewriter.getDenseI64ArrayAttr(pad));
}

// Tap k of window rows [P, taps*C]: the [P, C] columns k*C ... k*C+C-1.
Value windowTap(PatternRewriter &rewriter, Location loc, Value rows, int64_t tap,
                int64_t channels) {
  auto shape = llvm::cast<RankedTensorType>(rows.getType()).getShape();
  if (shape[1] == channels)
    return rows;
  auto type = RankedTensorType::get({shape[0], channels}, rewriter.getF32Type());
  return rewriter.create<SliceOp>(loc, type, rows,
                                  rewriter.getDenseI64ArrayAttr({0, tap * channels}));
}

// A convolution's bias: one per output channel, or one for all.
Value biasRow(PatternRewriter &rewriter, Location loc, Value bias) {
  int64_t size = llvm::cast<RankedTensorType>(bias.getType()).getNumElements();
  return viewAs(rewriter, loc, bias, RankedTensorType::get({1, size}, rewriter.getF32Type()));
}

// The window reduction of `layout` (onChipLayout) over `input`, padded with
// `padValue`; `weights` and `bias` for a depthwise convolution, `scale` for
// an average.
Value windowReduce(PatternRewriter &rewriter, Location loc,
                   const ::tpu::codegen::WindowLayout &layout, ReduceKind kind, Value input,
                   float padValue, Value weights, Value bias, Value scale,
                   RankedTensorType result) {
  const ::tpu::codegen::ConvShape &shape = layout.shape;
  bool padded = llvm::any_of(shape.pad, [](int64_t p) { return p > 0; });
  return rewriter.create<WindowReduceOp>(
      loc, matrixType(result), kind, input,
      padded ? fillRow(rewriter, loc, shape.channels, padValue) : Value(), weights, bias, scale,
      rewriter.getDenseI64ArrayAttr(shape.kernel), rewriter.getDenseI64ArrayAttr(shape.stride),
      rewriter.getDenseI64ArrayAttr(shape.dilation), rewriter.getDenseI64ArrayAttr(shape.pad));
}

// The [KH*KW*C, O] matrix of OHWI convolution weights: a constant when the
// weights are constants, else the run-time weights (a training step's
// parameters, or the tensors a convolution's gradients correlate) viewed as
// [O, KH*KW*C] and transposed in the program (strided DMA copies).
Value weightMatrix(PatternRewriter &rewriter, Location loc, Value weight) {
  ArrayRef<int64_t> shape = llvm::cast<RankedTensorType>(weight.getType()).getShape();
  int64_t outputs = shape[0];
  int64_t window = shape[1] * shape[2] * shape[3];
  DenseElementsAttr weights;
  if (!matchPattern(weight, m_Constant(&weights))) {
    Value rows = viewAs(rewriter, loc, weight,
                        RankedTensorType::get({outputs, window}, rewriter.getF32Type()));
    return rewriter.create<TransposeOp>(
        loc, RankedTensorType::get({window, outputs}, rewriter.getF32Type()), rows,
        rewriter.getDenseI64ArrayAttr({1, 0}));
  }
  std::vector<float> ohwi(weights.getValues<float>().begin(), weights.getValues<float>().end());
  std::vector<float> byColumn(ohwi.size());
  for (int64_t o = 0; o < outputs; ++o)
    for (int64_t r = 0; r < window; ++r)
      byColumn[r * outputs + o] = ohwi[o * window + r];
  return constantMatrix(rewriter, loc, {window, outputs}, byColumn);
}

// conv2d = im2col, then a matmul with the OHWI weights as [KH*KW*C, O] and
// a bias row.
struct LowerConv2D : CountedLowering<tosa::Conv2DOp> {
  using CountedLowering::CountedLowering;
  LogicalResult matchAndRewrite(tosa::Conv2DOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    ArrayRef<int64_t> weightShape = op.getWeight().getType().getShape(); // O, KH, KW, C
    int64_t outputs = weightShape[0];
    Value rows = windowRows(rewriter, loc, op.getInput(), weightShape.slice(1, 2), op.getStride(),
                            op.getDilation(), op.getPad(), 0.0f, resultType);
    Value weights = weightMatrix(rewriter, loc, op.getWeight());
    auto productType =
        RankedTensorType::get({llvm::cast<RankedTensorType>(rows.getType()).getShape()[0], outputs},
                              rewriter.getF32Type());
    Value product = rewriter.create<MatMulOp>(loc, productType, rows, weights);
    Value bias = biasRow(rewriter, loc, op.getBias());
    replaceWithView(rewriter, op,
                    rewriter.create<BinaryOp>(loc, productType, BinaryKind::add, product, bias));
    return success();
  }
};

// depthwise_conv2d: a window reduction where onChipLayout takes it (no
// channel multiplier, a band fits); else on the vector unit over im2col
// rows: for each channel multiplier m, the sum over the KH*KW taps of each
// tap's [P, C] window columns times that tap's weight row w[kh, kw, :, m];
// output channel c*M + m, so the M sums (each viewed as a [P*C, 1] column)
// are joined as the columns of a [P*C, M] matrix, which is [P, C*M]; then
// the bias row. The weight rows are constants, or rows of the run-time
// weights (a training step's parameters, the flipped kernel of an input
// gradient, the dy its weight gradient correlates): [KH*KW*C, M] column m
// viewed as [KH*KW, C].
struct LowerDepthwiseConv2D : CountedLowering<tosa::DepthwiseConv2DOp> {
  using CountedLowering::CountedLowering;
  LogicalResult matchAndRewrite(tosa::DepthwiseConv2DOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    ArrayRef<int64_t> weightShape = op.getWeight().getType().getShape(); // KH, KW, C, M
    int64_t channels = weightShape[2], multiplier = weightShape[3];
    int64_t taps = weightShape[0] * weightShape[1];
    auto f32 = rewriter.getF32Type();
    DenseElementsAttr constant;
    std::vector<float> hwcm;
    if (matchPattern(op.getWeight(), m_Constant(&constant)))
      hwcm.assign(constant.getValues<float>().begin(), constant.getValues<float>().end());
    if (std::optional<::tpu::codegen::WindowLayout> layout = ::tpu::codegen::onChipLayout(op)) {
      // Without a multiplier, the HWCM weights are the [KH*KW, C] rows.
      auto rowsType = RankedTensorType::get({taps, channels}, f32);
      Value weights = hwcm.empty() ? viewAs(rewriter, loc, op.getWeight(), rowsType)
                                   : constantMatrix(rewriter, loc, {taps, channels}, hwcm);
      replaceWithView(rewriter, op,
                      windowReduce(rewriter, loc, *layout, ReduceKind::sum, op.getInput(), 0.0f,
                                   weights, biasRow(rewriter, loc, op.getBias()), Value(),
                                   resultType));
      return success();
    }
    // Weight row (tap, m): [1, C].
    auto weightRow = [&](Value byMultiplier, int64_t tap, int64_t m) -> Value {
      if (!byMultiplier) {
        std::vector<float> row(channels);
        for (int64_t c = 0; c < channels; ++c)
          row[c] = hwcm[(tap * channels + c) * multiplier + m];
        return constantMatrix(rewriter, loc, {1, channels}, row);
      }
      return rewriter.create<SliceOp>(loc, RankedTensorType::get({1, channels}, f32), byMultiplier,
                                      rewriter.getDenseI64ArrayAttr({tap, 0}));
    };
    Value rows = windowRows(rewriter, loc, op.getInput(), weightShape.take_front(2), op.getStride(),
                            op.getDilation(), op.getPad(), 0.0f, resultType);
    int64_t positions = llvm::cast<RankedTensorType>(rows.getType()).getShape()[0];
    auto sumType = RankedTensorType::get({positions, channels}, f32);
    Value runtimeWeights = hwcm.empty()
                               ? viewAs(rewriter, loc, op.getWeight(),
                                        RankedTensorType::get({taps * channels, multiplier}, f32))
                               : Value();
    SmallVector<Value> sums;
    for (int64_t m = 0; m < multiplier; ++m) {
      Value byMultiplier = runtimeWeights; // [KH*KW, C], the weights of multiplier m
      if (runtimeWeights) {
        if (multiplier > 1)
          byMultiplier =
              rewriter.create<SliceOp>(loc, RankedTensorType::get({taps * channels, 1}, f32),
                                       byMultiplier, rewriter.getDenseI64ArrayAttr({0, m}));
        byMultiplier =
            viewAs(rewriter, loc, byMultiplier, RankedTensorType::get({taps, channels}, f32));
      }
      Value sum;
      for (int64_t tap = 0; tap < taps; ++tap) {
        Value product = rewriter.create<BinaryOp>(loc, sumType, BinaryKind::mul,
                                                  windowTap(rewriter, loc, rows, tap, channels),
                                                  weightRow(byMultiplier, tap, m));
        sum =
            sum ? rewriter.create<BinaryOp>(loc, sumType, BinaryKind::add, sum, product) : product;
      }
      sums.push_back(
          viewAs(rewriter, loc, sum, RankedTensorType::get({positions * channels, 1}, f32)));
    }
    RankedTensorType matrix = matrixType(resultType);
    Value sum = sums.front();
    if (multiplier > 1)
      sum = rewriter.create<ConcatOp>(
          loc, RankedTensorType::get({positions * channels, multiplier}, f32), sums,
          rewriter.getI64IntegerAttr(1));
    Value bias = biasRow(rewriter, loc, op.getBias());
    replaceWithView(rewriter, op,
                    rewriter.create<BinaryOp>(loc, matrix, BinaryKind::add,
                                              viewAs(rewriter, loc, sum, matrix), bias));
    return success();
  }
};

// max_pool2d: a window reduction padded with the lowest float where a band
// fits; else im2col so padded, then the maximum over the taps on the vector
// unit.
struct LowerMaxPool : CountedLowering<tosa::MaxPool2dOp> {
  using CountedLowering::CountedLowering;
  LogicalResult matchAndRewrite(tosa::MaxPool2dOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    int64_t channels = resultType.getShape()[3];
    const float lowest = std::numeric_limits<float>::lowest();
    if (std::optional<::tpu::codegen::WindowLayout> layout = ::tpu::codegen::onChipLayout(op)) {
      replaceWithView(rewriter, op,
                      windowReduce(rewriter, loc, *layout, ReduceKind::max, op.getInput(), lowest,
                                   Value(), Value(), Value(), resultType));
      return success();
    }
    Value rows = windowRows(rewriter, loc, op.getInput(), op.getKernel(), op.getStride(), {1, 1},
                            op.getPad(), lowest, resultType);
    RankedTensorType matrix = matrixType(resultType);
    Value result = windowTap(rewriter, loc, rows, 0, channels);
    for (int64_t tap = 1; tap < op.getKernel()[0] * op.getKernel()[1]; ++tap)
      result = rewriter.create<BinaryOp>(loc, matrix, BinaryKind::max, result,
                                         windowTap(rewriter, loc, rows, tap, channels));
    replaceWithView(rewriter, op, result);
    return success();
  }
};

// avg_pool2d: the sum over the taps, times one over each position's count of
// inputs: one scalar when every count is the same; else, for a window
// reduction, a factor per position and channel, or, for the zero-padded
// im2col rows where no band fits, a column with one value per output row.
struct LowerAvgPool : CountedLowering<tosa::AvgPool2dOp> {
  using CountedLowering::CountedLowering;
  LogicalResult matchAndRewrite(tosa::AvgPool2dOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    ArrayRef<int64_t> shape = resultType.getShape();
    ArrayRef<int64_t> kernel = op.getKernel(), stride = op.getStride(), pad = op.getPad();
    std::vector<float> reciprocals =
        ::tpu::codegen::reciprocalCounts(::tpu::codegen::windowLayoutOf(op)->shape);
    bool uniform = llvm::all_equal(reciprocals);
    if (std::optional<::tpu::codegen::WindowLayout> layout = ::tpu::codegen::onChipLayout(op)) {
      // Per position and channel, the same for every image.
      std::vector<float> perChannel;
      for (float reciprocal : reciprocals)
        perChannel.insert(perChannel.end(), size_t(shape[3]), reciprocal);
      Value scale = uniform ? constantMatrix(rewriter, loc, {1, 1}, reciprocals.front())
                            : constantMatrix(rewriter, loc, {int64_t(reciprocals.size()), shape[3]},
                                             perChannel);
      replaceWithView(rewriter, op,
                      windowReduce(rewriter, loc, *layout, ReduceKind::sum, op.getInput(), 0.0f,
                                   Value(), Value(), scale, resultType));
      return success();
    }
    Value rows =
        windowRows(rewriter, loc, op.getInput(), kernel, stride, {1, 1}, pad, 0.0f, resultType);
    RankedTensorType matrix = matrixType(resultType);
    Value sum = windowTap(rewriter, loc, rows, 0, shape[3]);
    for (int64_t tap = 1; tap < kernel[0] * kernel[1]; ++tap)
      sum = rewriter.create<BinaryOp>(loc, matrix, BinaryKind::add, sum,
                                      windowTap(rewriter, loc, rows, tap, shape[3]));
    // The same for every image.
    std::vector<float> perRow;
    for (int64_t n = 0; n < shape[0]; ++n)
      perRow.insert(perRow.end(), reciprocals.begin(), reciprocals.end());
    Value scale = uniform ? constantMatrix(rewriter, loc, {1, 1}, reciprocals.front())
                          : constantMatrix(rewriter, loc, {matrix.getShape()[0], 1}, perRow);
    replaceWithView(rewriter, op,
                    rewriter.create<BinaryOp>(loc, matrix, BinaryKind::mul, sum, scale));
    return success();
  }
};

} // namespace

void mlir::tpu::populateWindowLowerings(RewritePatternSet &patterns, llvm::Statistic &matmuls,
                                        llvm::Statistic &vectorOps) {
  patterns.add<LowerConv2D>(patterns.getContext(), matmuls);
  patterns.add<LowerDepthwiseConv2D, LowerMaxPool, LowerAvgPool>(patterns.getContext(), vectorOps);
}
