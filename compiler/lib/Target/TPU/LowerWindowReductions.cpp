// tpu-lower-window-reductions: pools and depthwise convolutions
// (tpu.window_reduce), alone or with their fused epilogue, to DMA loads of
// their input rows and vector ops on them, as tpu-plan-tiles banded them
// (WindowPlan.h; docs/compiler.md, "Pools and depthwise convolutions").
#include "tpu/Target/TPU/IsaLimits.h"
#include "tpu/Target/TPU/Passes.h"
#include "tpu/Target/TPU/ProgramBuilder.h"
#include "tpu/Target/TPU/WindowPlan.h"
#include "tpu/isa/Error.h"

#include <optional>
#include <set>

namespace mlir::tpu {
#define GEN_PASS_DEF_LOWERWINDOWREDUCTIONS
#include "tpu/Target/TPU/Passes.h.inc"
} // namespace mlir::tpu

namespace tpu::codegen {
namespace {

using isa::Broadcast;
using isa::Opcode;
using isa::Queue;
using mlir::tpu::Spread;

class WindowLowering {
public:
  // `epilogue`: what the vector unit applies to each output band before
  // its store, the ops of the reduction's fusion group, whose result
  // `output` is.
  WindowLowering(ProgramBuilder &builder, mlir::tpu::WindowReduceOp op, const Matrix &output,
                 const HardwareConfig &config, std::vector<VectorStep> epilogue = {})
      : builder(builder), config(config), op(op), layout(windowLayoutOf(op)), shape(layout.shape),
        plan(planOf<mlir::tpu::WindowTilingAttr>(op)), input(matrixOf(op.getInput())),
        output(output), epilogue(std::move(epilogue)) {
    if (op.getFill())
      fill = matrixOf(op.getFill());
    if (op.getScale())
      scale = matrixOf(op.getScale());
  }

  void emit() {
    const int64_t C = shape.channels, OW = shape.outWidth, OH = shape.outHeight;
    BufferRing inputs(plan.getInputs(), Queue::Load, Queue::Compute);
    BufferRing outputs(plan.getOutputs(), Queue::Compute, Queue::Store);
    // The previous op's stores have landed before these loads read DRAM,
    // and its units are done with the scratchpad.
    builder.beforeLoad();
    loadOperands();
    bool first = true;
    // Bands lie within one image (the plan's band is at most OH rows).
    shape.forEachBand(plan.getBand(), [&](int64_t firstRow, int64_t band) {
      const int64_t image = firstRow / OH, oh0 = firstRow % OH;
      uint64_t in = inputs.startFill(builder);
      loadBand(image, oh0, band, in);
      mlir::Value filled = inputs.endFill(builder);
      inputs.use(builder, filled);
      if (first) // the output buffers were the previous op's to store
        builder.dependsOn(Queue::Store, Queue::Compute);
      first = false;
      uint64_t out = outputs.startFill(builder);
      if (layout.global())
        reduceGlobal(in, out);
      else
        reduceBand(oh0, band, in, out);
      applyEpilogue(layout.global() ? 1 : band * OW, out);
      inputs.release(builder, in);
      outputs.use(builder, outputs.endFill(builder));
      const int64_t row0 = firstRow * OW;
      for (int64_t r = 0; r < band * OW; r += kMaxDmaRows)
        builder.store(output, row0 + r, 0, std::min(kMaxDmaRows, band * OW - r), C,
                      isa::Space::Scratchpad, out + uint64_t(r * C));
      outputs.release(builder, out);
    });
  }

private:
  uint64_t operand(int64_t word) const { return uint64_t(plan.getOperands() + word); }

  // What every band reads: the weights and the bias, or a scalar scale;
  // then each epilogue operand (WindowLayout::epilogueWords).
  void loadOperands() {
    const int64_t C = shape.channels;
    if (op.getWeights()) {
      Matrix weights = matrixOf(op.getWeights()), bias = matrixOf(op.getBias());
      loadRows(builder, weights, weights.address, C, operand(layout.weightsWord()), C, weights.rows,
               C);
      builder.load(bias, 0, 0, 1, bias.cols, isa::Space::Scratchpad, operand(layout.biasWord()));
    } else if (scale && !layout.scalePerPosition) {
      builder.load(*scale, 0, 0, 1, 1, isa::Space::Scratchpad, operand(0));
    }
    int64_t word = layout.epilogueWord();
    for (const VectorStep &step : epilogue) {
      if (step.operand.rows == 0)
        continue;
      if (step.spread != Spread::Row && step.spread != Spread::Scalar)
        throw Error("a window reduction's epilogue takes only row and scalar operands");
      epilogueOperands.push_back(operand(word));
      loadOperand(builder, step, 0, 0, 1, C, epilogueOperands.back(), config);
      word += step.operand.rows * step.operand.cols;
    }
  }

  // The epilogue on `rows` output rows at `out`, in place, each op counted
  // to its own source op.
  void applyEpilogue(int64_t rows, uint64_t out) {
    const mlir::Location head = builder.sourceLocation();
    auto operandAt = epilogueOperands.begin();
    for (const VectorStep &step : epilogue) {
      builder.setSource(step.source);
      emitStep(builder, step, out, out, step.operand.rows ? *operandAt++ : 0, rows, shape.channels,
               config);
    }
    builder.setSource(head);
  }

  // Where padded column x of the buffer's first row is.
  uint64_t column(uint64_t buffer, int64_t x) const {
    return buffer + uint64_t(layout.columnWord(x, plan.getBand()));
  }

  // The input rows of `band` output rows from oh0 (padded rows p0...) into
  // `buffer`, by column phase, and the band's scale after them.
  void loadBand(int64_t image, int64_t oh0, int64_t band, uint64_t buffer) {
    const int64_t C = shape.channels, W = shape.width, Wp = shape.paddedWidth();
    const int64_t left = shape.pad[2], rowWords = layout.rowWords();
    const int64_t phases = layout.phases();
    // The left and right padding columns, which no band overwrites.
    if (fill && bordered.insert(buffer).second)
      for (int64_t x = 0; x < Wp; ++x)
        if (x < left || x >= left + W)
          loadRows(builder, *fill, fill->address, 0, column(buffer, x), rowWords,
                   shape.inputRows(plan.getBand()), C);
    // Without side padding, a phase's pixels of consecutive image rows are
    // evenly spaced in DRAM and consecutive in its rows on chip.
    const bool phasesRunOn = Wp == W && W % phases == 0;
    auto pixel = [&](int64_t ih, int64_t x) {
      return input.at((image * shape.height + ih) * W + x, 0);
    };
    const int64_t p0 = oh0 * shape.stride[0], rows = shape.inputRows(band);
    for (int64_t p = p0; p < p0 + rows;) {
      const int64_t ih = p - shape.pad[0];
      const uint64_t row = uint64_t((p - p0) * rowWords);
      const bool padding = ih < 0 || ih >= shape.height;
      if (padding && layout.skipsPaddingRows()) {
        ++p;
        continue;
      }
      const int64_t imageRows = std::min(p0 + rows - p, shape.height - ih);
      if (!padding && phases == 1 && W * C <= kMaxCols) {
        // Consecutive image rows in one transfer, a DMA row each.
        loadRows(builder, input, pixel(ih, 0), W * C, column(buffer, left) + row, rowWords,
                 imageRows, W * C);
        p += imageRows;
      } else if (!padding && phasesRunOn) {
        // Per phase, its pixels of consecutive image rows in one transfer.
        for (int64_t phase = 0; phase < phases; ++phase)
          loadRows(builder, input, pixel(ih, phase), phases * C, column(buffer, phase) + row, C,
                   imageRows * W / phases, C);
        p += imageRows;
      } else {
        // Per phase, its pixels of the image's columns: from the image row,
        // every phases-th pixel, or the fill row's one (DRAM stride 0).
        for (int64_t phase = 0; phase < phases; ++phase) {
          int64_t x = left + ((phase - left % phases) % phases + phases) % phases;
          if (x >= left + W)
            continue;
          int64_t count = (left + W - x + phases - 1) / phases;
          uint64_t sram = column(buffer, x) + row;
          if (padding)
            loadRows(builder, *fill, fill->address, 0, sram, C, count, C);
          else
            loadRows(builder, input, pixel(ih, x - left), phases * C, sram, C, count, C);
        }
        ++p;
      }
    }
    if (layout.scalePerPosition) {
      int64_t first = oh0 * shape.outWidth, count = band * shape.outWidth;
      loadRows(builder, *scale, scale->at(first, 0), C,
               buffer + uint64_t(layout.scaleWord(plan.getBand())), C, count, C);
    }
  }

  // Every tap of each output row of the band (from row oh0 of its image)
  // whose row is combined, then the bias or the scale.
  void reduceBand(int64_t oh0, int64_t band, uint64_t in, uint64_t out) {
    const int64_t C = shape.channels, OW = shape.outWidth, rowWords = layout.rowWords();
    const bool weighted = bool(op.getWeights());
    const Opcode combine = op.getKind() == mlir::tpu::ReduceKind::max ? Opcode::VMax : Opcode::VAdd;
    const int64_t taps = shape.kernel[0] * shape.kernel[1];
    // Output row r's OW windows at a tap: OW consecutive pixels of a phase.
    auto pixelsOf = [&](int64_t r, int64_t tap) {
      int64_t kh = tap / shape.kernel[1], kw = tap % shape.kernel[1];
      return column(in, kw * shape.dilation[1]) +
             uint64_t((r * shape.stride[0] + kh * shape.dilation[0]) * rowWords);
    };
    // The ops without a weight row see an output row's OW x C words in the
    // shape that fills the lanes best.
    const std::pair<int64_t, int64_t> dense = denseShape(OW, C, int64_t(config.vector.lanes));
    for (int64_t r = 0; r < band; ++r) {
      const uint64_t acc = out + uint64_t(r * OW * C);
      llvm::SmallVector<int64_t> combined;
      for (int64_t tap = 0; tap < taps; ++tap)
        if (!layout.skipsPaddingRows() || shape.rowTapReads(oh0 + r, tap / shape.kernel[1]))
          combined.push_back(tap);
      for (size_t i = 0; i < combined.size(); ++i) {
        const int64_t tap = combined[i];
        const uint64_t pixels = pixelsOf(r, tap);
        if (weighted) {
          // acc = the first tap times its weights; then acc += each tap's product.
          uint64_t weights = operand(layout.weightsWord() + tap * C);
          uint64_t product = i == 0 ? acc : operand(layout.productWord());
          builder.emit(vectorOp(Opcode::VMul, product, pixels, weights, Broadcast::Row, OW, C));
          if (i > 0)
            builder.emit(vectorOp(Opcode::VAdd, acc, acc, product, Broadcast::None, dense.first,
                                  dense.second));
        } else if (i == 0) {
          if (combined.size() == 1)
            builder.emit(vectorOp(Opcode::VCopy, acc, pixels, OW, C));
        } else {
          // acc = the first tap <combine> the second, then acc <combine>= each later one.
          builder.emit(vectorOp(combine, acc, i == 1 ? pixelsOf(r, combined[0]) : acc, pixels,
                                Broadcast::None, dense.first, dense.second));
        }
      }
    }
    finish(band * OW, out, in);
  }

  // A global pool: the image's [H*W, C] pixels, halved in place (the last
  // half into the first) until one row is left, which goes to `out`.
  void reduceGlobal(uint64_t in, uint64_t out) {
    const int64_t C = shape.channels;
    const Opcode combine = op.getKind() == mlir::tpu::ReduceKind::max ? Opcode::VMax : Opcode::VAdd;
    const bool scaled = bool(scale);
    int64_t n = shape.height * shape.width;
    if (n == 1 && !scaled)
      builder.emit(vectorOp(Opcode::VCopy, out, in, 1, C));
    for (; n > 1; n -= n / 2) {
      int64_t half = n / 2;
      uint64_t dst = n == 2 && !scaled ? out : in;
      builder.emit(
          vectorOp(combine, dst, in, in + uint64_t((n - half) * C), Broadcast::None, half, C));
    }
    if (scaled)
      builder.emit(vectorOp(Opcode::VMul, out, in, operand(0), Broadcast::Scalar, 1, C));
  }

  // The bias or the scale over the band's `rows` output rows at `out`.
  void finish(int64_t rows, uint64_t out, uint64_t in) {
    const int64_t C = shape.channels;
    if (op.getBias()) {
      bool perChannel = matrixOf(op.getBias()).cols == C;
      builder.emit(vectorOp(Opcode::VAdd, out, out, operand(layout.biasWord()),
                            perChannel ? Broadcast::Row : Broadcast::Scalar, rows, C));
    } else if (scale) {
      uint64_t factors =
          layout.scalePerPosition ? in + uint64_t(layout.scaleWord(plan.getBand())) : operand(0);
      builder.emit(vectorOp(Opcode::VMul, out, out, factors,
                            layout.scalePerPosition ? Broadcast::None : Broadcast::Scalar, rows,
                            C));
    }
  }

  ProgramBuilder &builder;
  const HardwareConfig &config;
  mlir::tpu::WindowReduceOp op;
  const WindowLayout layout;
  const ConvShape &shape;
  const mlir::tpu::WindowTilingAttr plan;
  const Matrix input, output;
  const std::vector<VectorStep> epilogue;
  std::vector<uint64_t> epilogueOperands; // their scratchpad addresses, in order
  std::optional<Matrix> fill, scale;
  std::set<uint64_t> bordered; // input buffers whose side padding is written
};

struct LowerWindowReduce : LoweringPattern<mlir::tpu::WindowReduceOp> {
  using LoweringPattern::LoweringPattern;
  mlir::LogicalResult matchAndRewrite(mlir::tpu::WindowReduceOp op,
                                      mlir::PatternRewriter &rewriter) const override {
    return lowerInPlace(op, rewriter, [&](ProgramBuilder &builder) {
      WindowLowering(builder, op, matrixOf(op.getResult()), config).emit();
    });
  }
};

// A window reduction's group: the reduction, then its epilogue.
struct LowerWindowGroup : LoweringPattern<mlir::tpu::FusedOp> {
  using LoweringPattern::LoweringPattern;
  mlir::LogicalResult matchAndRewrite(mlir::tpu::FusedOp fused,
                                      mlir::PatternRewriter &rewriter) const override {
    auto window = llvm::dyn_cast<mlir::tpu::WindowReduceOp>(fused.getHead());
    if (!window)
      return mlir::failure();
    return lowerInPlace(fused, rewriter, [&](ProgramBuilder &builder) {
      WindowLowering(builder, window, matrixOf(fused.getResult(0)), config, epilogueSteps(fused))
          .emit();
    });
  }
};

bool isWindowGroup(mlir::Operation *op) {
  auto fused = llvm::dyn_cast<mlir::tpu::FusedOp>(op);
  return fused && llvm::isa<mlir::tpu::WindowReduceOp>(fused.getHead());
}

} // namespace
} // namespace tpu::codegen

namespace {

class LowerWindowReductions
    : public mlir::tpu::impl::LowerWindowReductionsBase<LowerWindowReductions> {
public:
  void runOnOperation() override {
    if (mlir::failed(tpu::codegen::lowerOperations<tpu::codegen::LowerWindowReduce,
                                                   tpu::codegen::LowerWindowGroup>(
            getOperation(), [](mlir::Operation *op) {
              return llvm::isa<mlir::tpu::WindowReduceOp>(op) || tpu::codegen::isWindowGroup(op);
            })))
      signalPassFailure();
  }
};

} // namespace
