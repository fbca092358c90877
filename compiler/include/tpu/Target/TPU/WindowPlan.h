// How a pool or a depthwise convolution runs as a window reduction over its
// input held on chip (tpu.window_reduce, #tpu.window_tiling; docs/compiler.md,
// "Pools and depthwise convolutions"): the layout of a band of input rows in
// the scratchpad and the choice of the band.
#pragma once

#include "tpu/Target/TPU/MatMulPlan.h"
#include "tpu/isa/HardwareConfig.h"

#include <array>
#include <optional>
#include <vector>

namespace mlir {
class Operation;
namespace tpu {
class WindowReduceOp;
} // namespace tpu
} // namespace mlir

namespace tpu::codegen {

// The words of one band. Each padded input row is split into its column
// phases (padded column x is pixel x / phases() of phase x % phases()), so
// that the OW windows of one tap in one output row are OW consecutive
// pixels of one phase: a dense [OW, C] operand for the vector unit, which
// has no strided operands. A band's buffer holds the rows of each phase in
// turn, so that without side padding a phase's pixels of consecutive image
// rows are one strided transfer.
struct WindowLayout {
  ConvShape shape;               // outputs == channels
  bool weighted = false;         // a depthwise convolution: weights, bias, a product row
  bool scalePerPosition = false; // an average's [OH*OW, C] reciprocal counts, per band
  int64_t epilogueWords = 0;     // the fused epilogue's operands (rows, scalars, bounds)

  // The stride along the width, or 1 when there is one output column.
  int64_t phases() const;
  // Pixels of a phase.
  int64_t phaseWidth() const;
  // Words from one padded row of a phase to the next.
  int64_t rowWords() const { return phaseWidth() * shape.channels; }
  // The rows of one phase in a buffer for bands of `band` output rows.
  int64_t phaseWords(int64_t band) const { return shape.inputRows(band) * rowWords(); }
  // Where padded column x of the first row starts in such a buffer.
  int64_t columnWord(int64_t x, int64_t band) const {
    return x % phases() * phaseWords(band) + x / phases() * shape.channels;
  }
  // Where the band's part of the scale starts, after every phase's rows.
  int64_t scaleWord(int64_t band) const { return phases() * phaseWords(band); }
  // One window over the whole unpadded image (a global pool) without
  // weights: the band is then the image's [H*W, C] pixels, reduced by halving.
  bool global() const;
  // Whether the vector unit skips the taps of padding rows (they add
  // nothing to a sum and lose every max), so that no padding row is
  // loaded: unless a whole output row reads nothing but padding.
  bool skipsPaddingRows() const { return !global() && shape.everyRowReadsImage(); }
  // The kernel rows output row oh combines: those that read the image, or
  // all of them.
  int64_t rowTaps(int64_t oh) const {
    return skipsPaddingRows() ? shape.rowTapsReading(oh) : shape.kernel[0];
  }
  // An input buffer: the band's input rows, then its part of the scale.
  int64_t inputWords(int64_t band) const;
  int64_t outputWords(int64_t band) const { return band * shape.outWidth * shape.channels; }
  // What is loaded once: the weights, then the bias; then the product row
  // (else one word for a scalar scale); then the epilogue's operands.
  int64_t weightsWord() const { return 0; }
  int64_t biasWord() const { return shape.kernel[0] * shape.kernel[1] * shape.channels; }
  int64_t productWord() const { return biasWord() + shape.channels; }
  int64_t epilogueWord() const {
    return weighted ? productWord() + shape.outWidth * shape.channels : 1;
  }
  int64_t operandWords() const { return epilogueWord() + epilogueWords; }
};

// Band rows and word addresses (two equal addresses: one buffer).
struct WindowPlan {
  int64_t band = 0;
  std::array<int64_t, 2> inputs{}, outputs{};
  int64_t operands = 0;
};

// The layout of a tosa.max_pool2d, avg_pool2d or depthwise_conv2d, or
// nullopt for one the window reduction does not take (a channel
// multiplier).
std::optional<WindowLayout> windowLayoutOf(mlir::Operation *tosaOp);
// The layout of a window reduction, with its fusion group's epilogue.
WindowLayout windowLayoutOf(mlir::tpu::WindowReduceOp op);
// The layout of a TOSA window op that tpu-lower-tosa makes a window
// reduction: one it takes, with at most a vector op's columns of channels,
// and, on the module's target (if it has one yet),
// one band of which fits the scratchpad; nullopt for the others, which
// write their im2col matrix.
std::optional<WindowLayout> onChipLayout(mlir::Operation *tosaOp);

// One over each output position's count of inputs inside the image, per
// (oh, ow): TOSA's average divisor.
std::vector<float> reciprocalCounts(const ConvShape &shape);

// Double-buffered bands of about a quarter of the output rows, as many as
// fit, else single buffers; nullopt when not one output row fits or the
// ISA's fields cannot hold its rows (the op then writes its im2col matrix
// instead).
std::optional<WindowPlan> planWindow(const WindowLayout &layout, const HardwareConfig &config);

} // namespace tpu::codegen
