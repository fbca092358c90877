// Window reductions' band layout and plan (WindowPlan.h).
#include "tpu/Target/TPU/WindowPlan.h"

#include "tpu/Dialect/TPUDialect.h"
#include "tpu/Dialect/TargetConfig.h"
#include "tpu/Target/TPU/IsaLimits.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace tpu::codegen {

int64_t WindowLayout::phases() const { return shape.outWidth > 1 ? shape.stride[1] : 1; }

int64_t WindowLayout::phaseWidth() const { return (shape.paddedWidth() + phases() - 1) / phases(); }

bool WindowLayout::global() const {
  return !weighted && shape.outHeight == 1 && shape.outWidth == 1 &&
         shape.kernel[0] == shape.height && shape.kernel[1] == shape.width &&
         shape.dilation == std::array<int64_t, 2>{1, 1} &&
         llvm::all_of(shape.pad, [](int64_t p) { return p == 0; });
}

int64_t WindowLayout::inputWords(int64_t band) const {
  return scaleWord(band) + (scalePerPosition ? outputWords(band) : 0);
}

namespace {

// How many of the window's positions fall inside an input of `size` for
// output `o` (TOSA's average counts only those).
int64_t windowCount(int64_t o, int64_t stride, int64_t padBefore, int64_t kernel, int64_t size) {
  int64_t first = o * stride - padBefore;
  return std::min(first + kernel, size) - std::max<int64_t>(first, 0);
}

// A window reduction keeps its input's channels.
ConvShape shapeOf(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> kernel,
                  llvm::ArrayRef<int64_t> stride, llvm::ArrayRef<int64_t> dilation,
                  llvm::ArrayRef<int64_t> pad, llvm::ArrayRef<int64_t> output) {
  return convShape(input, kernel, stride, dilation, pad, output, input[3]);
}

} // namespace

std::vector<float> reciprocalCounts(const ConvShape &shape) {
  std::vector<float> reciprocals;
  for (int64_t oh = 0; oh < shape.outHeight; ++oh)
    for (int64_t ow = 0; ow < shape.outWidth; ++ow)
      reciprocals.push_back(
          1.0f /
          float(windowCount(oh, shape.stride[0], shape.pad[0], shape.kernel[0], shape.height) *
                windowCount(ow, shape.stride[1], shape.pad[2], shape.kernel[1], shape.width)));
  return reciprocals;
}

std::optional<WindowLayout> windowLayoutOf(mlir::Operation *op) {
  auto shape = [](mlir::Value value) {
    return llvm::cast<mlir::RankedTensorType>(value.getType()).getShape();
  };
  WindowLayout layout;
  llvm::ArrayRef<int64_t> output = shape(op->getResult(0)).slice(1, 2);
  if (auto pool = llvm::dyn_cast<mlir::tosa::MaxPool2dOp>(op)) {
    layout.shape = shapeOf(shape(pool.getInput()), pool.getKernel(), pool.getStride(), {1, 1},
                           pool.getPad(), output);
  } else if (auto pool = llvm::dyn_cast<mlir::tosa::AvgPool2dOp>(op)) {
    layout.shape = shapeOf(shape(pool.getInput()), pool.getKernel(), pool.getStride(), {1, 1},
                           pool.getPad(), output);
    layout.scalePerPosition = !llvm::all_equal(reciprocalCounts(layout.shape));
  } else if (auto depthwise = llvm::dyn_cast<mlir::tosa::DepthwiseConv2DOp>(op)) {
    llvm::ArrayRef<int64_t> weights = shape(depthwise.getWeight()); // KH, KW, C, M
    if (weights[3] != 1)
      return std::nullopt; // the M sums interleave: im2col and a concat of columns
    layout.shape =
        shapeOf(shape(depthwise.getInput()), weights.take_front(2), depthwise.getStride(),
                depthwise.getDilation(), depthwise.getPad(), output);
    layout.weighted = true;
  } else {
    return std::nullopt;
  }
  return layout;
}

std::optional<WindowLayout> onChipLayout(mlir::Operation *tosaOp) {
  std::optional<WindowLayout> layout = windowLayoutOf(tosaOp);
  mlir::tpu::TargetAttr target = mlir::tpu::targetOf(tosaOp);
  if (!layout || layout->shape.channels > kMaxCols ||
      (target && !planWindow(*layout, mlir::tpu::hardwareConfig(target))))
    return std::nullopt;
  return layout;
}

WindowLayout windowLayoutOf(mlir::tpu::WindowReduceOp op) {
  WindowLayout layout;
  layout.shape =
      shapeOf(op.getInput().getType().getShape(), op.getKernel(), op.getStride(), op.getDilation(),
              op.getPad(), {op.getOutputHeight(), op.getOutputWidth()});
  layout.weighted = bool(op.getWeights());
  layout.scalePerPosition = op.getScale() && op.getScale().getType().getNumElements() > 1;
  // The epilogue loads each operand from outside its group once: a row
  // over the channels, a scalar or a clamp's bounds.
  if (auto fused = llvm::dyn_cast<mlir::tpu::FusedOp>(op->getParentOp()))
    for (mlir::Operation &member : llvm::drop_begin(fused.getMembers()))
      for (mlir::Value operand : member.getOperands())
        if (operand.getParentRegion() != &fused.getBody())
          layout.epilogueWords += llvm::cast<mlir::ShapedType>(operand.getType()).getNumElements();
  return layout;
}

std::optional<WindowPlan> planWindow(const WindowLayout &layout, const HardwareConfig &config) {
  const ConvShape &shape = layout.shape;
  // What the ISA's fields allow: a tap is one vector op of OW rows, a
  // global pool's halving one of up to H*W/2.
  const int64_t maxRows = int64_t(isa::fieldMaximum(isa::Opcode::VAdd, isa::Field::Rows));
  int64_t vectorRows = layout.global() ? shape.height * shape.width / 2 : shape.outWidth;
  // The side padding and consecutive image rows are loaded a buffer row
  // (rowWords) apart.
  if (vectorRows > maxRows || layout.rowWords() > kMaxSramStride ||
      shape.stride[1] * shape.channels >
          int64_t(isa::fieldMaximum(isa::Opcode::DmaLoad, isa::Field::DramStride)))
    return std::nullopt;
  const int64_t preferred = (shape.outHeight + 3) / 4;
  for (int64_t buffers : {2, 1}) {
    for (int64_t band = std::min(preferred, maxRows / shape.outWidth); band >= 1; --band) {
      uint64_t in = uint64_t(layout.inputWords(band)), out = uint64_t(layout.outputWords(band));
      uint64_t second = buffers == 2 ? 1 : 0;
      // Each buffer in a bank of its own where they fit: the DMA filling
      // the next band's input or storing the last output never waits for
      // the vector unit on another buffer's bank.
      std::optional<Placement> placed = placeBuffers(
          {{uint64_t(layout.operandWords())}, {in}, {second * in}, {out}, {second * out}},
          config.scratchpad.words(), config.scratchpad.banks);
      if (!placed)
        continue;
      const std::vector<uint64_t> &at = placed->addresses;
      WindowPlan plan;
      plan.band = band;
      plan.operands = int64_t(at[0]);
      plan.inputs = {int64_t(at[1]), int64_t(at[buffers == 2 ? 2 : 1])};
      plan.outputs = {int64_t(at[3]), int64_t(at[buffers == 2 ? 4 : 3])};
      return plan;
    }
  }
  return std::nullopt;
}

} // namespace tpu::codegen
