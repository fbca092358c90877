// How a matmul is tiled for a hardware config: the decision tpu-plan-tiles
// records on each matmul (`tpu.tiling`) and tpu-lower-matmuls follows.
#pragma once

#include "tpu/Target/TPU/IsaLimits.h"
#include "tpu/isa/HardwareConfig.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/MathExtras.h"

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace tpu::codegen {

// A buffer to place in an on-chip memory.
struct Buffer {
  uint64_t words;
  bool shareable = false; // may share a bank with the buffer before it
};

// Buffer addresses, and whether the buffers that alternate (the roles'
// two buffers) have banks of their own.
struct Placement {
  std::vector<uint64_t> addresses;
  bool ownBanks;
};

// Places buffers in a memory of `words` words with `banks` banks: each
// buffer starts a bank of its own when they all fit that way (so that a DMA
// filling one never waits for a unit reading another); else the shareable
// ones share their neighbour's bank; else all are packed. Empty buffers
// take no room.
std::optional<Placement> placeBuffers(const std::vector<Buffer> &buffers, uint64_t words,
                                      uint64_t banks);

// Y[M,N] = A[M,K] * W[K,N]: output tiles of tileM rows x tileN columns (one
// or more C-wide chunks), accumulated over K in steps of tileK, with
// activation blocks of tileM x kBlock and weight panels of panelRows x
// tileN, a block's K in panels one after another (docs/compiler.md). A role
// whose two addresses are equal has one buffer. tpu-plan-tiles records it
// as a #tpu.matmul_tiling.
struct MatMulPlan {
  int64_t tileM = 0, tileN = 0, tileK = 0, kBlock = 0;
  // Word addresses of the two buffers of each role: in the scratchpad,
  // activation blocks (or, for a block of several pieces, each piece's
  // buffer in turn: activationPieceCols) and weight panels; in the
  // accumulators, output tiles. `operands`: the buffer of each operand the
  // fused epilogue loads, in its order; all equal: one buffer, each operand
  // loaded just before its op; all different: each loaded ahead while the
  // array works (a whole tile with the tile's first step, the rest with
  // its last).
  std::vector<int64_t> activations, weights, operands, accumulators;
  double estimatedCycles = 0; // the cost model's, for comparing plans
  int64_t panelRows = 0;      // kBlock, or fewer for a block of the whole K
};

// What an epilogue op loads per output tile: a whole tile (a residual), one
// row (a bias) or one or two scalars (a clamp's bounds).
enum class OperandKind { Tile, Row, Scalar };

// What the fused epilogue does per output tile: its vector ops, and the
// operands they load, in order.
struct EpilogueOperands {
  int64_t ops = 0;
  std::vector<OperandKind> loads;
  // > 1: a convolution's epilogue ends with a pool of windows of
  // poolStride x poolStride outputs that tile the image: bands are whole
  // windows, the vector unit combines each tile's windows
  // (poolStride^2 - 1 ops on a poolStride^2-th of its rows), and a tile
  // stores that part of its rows.
  int64_t poolStride = 1;
  int64_t poolWindow() const { return poolStride * poolStride; }
};

// Bytes of an element of the matmul's tensors in DRAM, as tpu-plan-memory
// stores them (2 for bf16: weights, and what only a bf16 array reads), for
// the cost of their DMA rows; an epilogue's operands are fp32. Activations
// stored NCHW (a folded layout transpose) have `activationPixels`, an
// image's H * W: their blocks load through the DMA's corner turn.
struct ElementBytes {
  int64_t activations = 4, weights = 4, results = 4;
  int64_t activationPixels = 0;
};

// Cycles of one DMA row of `elements` elements of `bytes` each in a long
// transfer: its bus cycles, or the DRAM latency over the requests in flight.
double rowCycles(int64_t elements, int64_t bytes, const HardwareConfig &config);
// Cycles of a transposing transfer's corner turn (docs/simulator.md, DRAM):
// `segments` on-chip rows of `length` words, one run of at most
// max(1, bytes_per_cycle / 4) words a cycle.
double turnCycles(int64_t segments, int64_t length, const HardwareConfig &config);

// The plan the cost model estimates fastest among those that fit the
// config's memories, or nullopt when not even one weight tile and one row
// fit.
std::optional<MatMulPlan> planMatMul(int64_t M, int64_t K, int64_t N,
                                     const EpilogueOperands &epilogue, const HardwareConfig &config,
                                     const ElementBytes &bytes = {});

// Columns of each piece an activation block of tileM x K (a block per row
// band, kBlock >= K) is loaded in: as many K steps of tileK as a whole
// number of scratchpad banks holds, the fewest banks for the block and
// among those the fewest per piece (one, unless pieces of more waste less
// of their last bank). Each piece is a transfer of its own, so that the
// array starts on the first piece while the next ones load, and a piece
// is refilled once the band's last tile is done with it; K (one piece)
// when K is less than two pieces.
int64_t activationPieceCols(int64_t tileM, int64_t K, int64_t tileK, const HardwareConfig &config);

// Words of scratchpad and accumulator the smallest plan needs.
struct MatMulMemoryNeeds {
  uint64_t scratchpadWords, accumulatorWords;
};
MatMulMemoryNeeds minimumMatMulMemory(int64_t K, int64_t N, const EpilogueOperands &epilogue,
                                      const HardwareConfig &config);

// A convolution of an NHWC input with a KH x KW window, as its tpu.im2col
// describes it: the matmul's activation rows are windows of the input.
struct ConvShape {
  int64_t batch = 0, height = 0, width = 0, channels = 0; // the input, N x H x W x C
  std::array<int64_t, 2> kernel{}, stride{}, dilation{};
  std::array<int64_t, 4> pad{}; // top, bottom, left, right
  int64_t outHeight = 0, outWidth = 0, outputs = 0;
  // The input is stored NCHW (a folded layout transpose): each input row
  // is a transposing load of C DRAM rows of W elements.
  bool channelMajor = false;

  // Columns of the input with its left and right padding.
  int64_t paddedWidth() const { return pad[2] + width + pad[3]; }
  // Input rows (with their padding) that `band` output rows of one image
  // read.
  int64_t inputRows(int64_t band) const {
    return (band - 1) * stride[0] + (kernel[0] - 1) * dilation[0] + 1;
  }
  // A band of output rows lies in one image, or is whole images (a multiple
  // of outHeight rows), so that a small image's weights serve the batch:
  // calls f(first, rows) per band of at most `band` rows in order, `first`
  // counting the batch's output rows (image * outHeight + row).
  template <typename F> void forEachBand(int64_t band, F f) const {
    if (band > outHeight) {
      for (int64_t image = 0; image < batch; image += band / outHeight)
        f(image * outHeight, std::min(band / outHeight, batch - image) * outHeight);
      return;
    }
    for (int64_t image = 0; image < batch; ++image)
      for (int64_t row = 0; row < outHeight; row += band)
        f(image * outHeight + row, std::min(band, outHeight - row));
  }
  // Input rows on chip for a band of `rows` output rows: each image's own.
  int64_t bandInputRows(int64_t rows) const {
    return rows > outHeight ? rows / outHeight * inputRows(outHeight) : inputRows(rows);
  }
  // Window taps lie next to one another in an NHWC row: without dilation
  // along the width, a kernel row's KW*C elements are one contiguous run of
  // the weight matrix's rows and of the input; with it, each tap's C.
  int64_t runLength() const { return dilation[1] == 1 ? kernel[1] * channels : channels; }
  // The input row (column) that tap kh (kw) of output row oh (column ow)
  // reads; outside [0, height) ([0, width)) it is padding.
  int64_t inputRow(int64_t oh, int64_t kh) const {
    return oh * stride[0] + kh * dilation[0] - pad[0];
  }
  int64_t inputColumn(int64_t ow, int64_t kw) const {
    return ow * stride[1] + kw * dilation[1] - pad[2];
  }
  bool rowTapReads(int64_t oh, int64_t kh) const {
    int64_t ih = inputRow(oh, kh);
    return ih >= 0 && ih < height;
  }
  bool columnTapReads(int64_t ow, int64_t kw) const {
    int64_t iw = inputColumn(ow, kw);
    return iw >= 0 && iw < width;
  }
  // How many kernel rows (columns) of output row oh (column ow) read the
  // image, not padding.
  int64_t rowTapsReading(int64_t oh) const {
    int64_t taps = 0;
    for (int64_t kh = 0; kh < kernel[0]; ++kh)
      taps += rowTapReads(oh, kh);
    return taps;
  }
  int64_t columnTapsReading(int64_t ow) const {
    int64_t taps = 0;
    for (int64_t kw = 0; kw < kernel[1]; ++kw)
      taps += columnTapReads(ow, kw);
    return taps;
  }
  // Whether every output row (column) has a kernel row (column) that reads
  // the image: then skipping the padding taps leaves none of its outputs
  // unwritten.
  bool everyRowReadsImage() const {
    for (int64_t oh = 0; oh < outHeight; ++oh)
      if (rowTapsReading(oh) == 0)
        return false;
    return true;
  }
  bool everyColumnReadsImage() const {
    for (int64_t ow = 0; ow < outWidth; ++ow)
      if (columnTapsReading(ow) == 0)
        return false;
    return true;
  }
};

// Where a convolution's input band puts its padding. A padding tap adds
// zero, so the array skips it: an mxu.mm streams only the output row's
// windows whose tap reads the image, and none where the tap's input row is
// padding. The band then holds no padding, except padding columns where a
// K step spans taps that differ in which columns they read (a tile of
// several taps' channels: no run of windows skips only some of its rows),
// and padding rows (columns) where some output row (column) reads nothing
// but padding (its accumulators would never be written).
//
// The band's channels may be split into `pieces`, each a band of its own
// of C / pieces channels a pixel: a transfer each, so that the array starts
// on the first piece's K steps (every tap's first channels) while the
// others load.
//
// With `stackedRows` L (one input channel only: canStackRows), a band row
// is the input rows of a group of output rows side by side: each pixel
// holds its column of L input rows (one transposing load per group, DRAM
// row t to word t), the KH rows of the group's first output row and each
// next one's sh further (L = (S - 1) * sh + KH for S output rows; with a
// dilation dh, S is 1 and word kh holds kernel row kh). An output
// position's whole window, KW pixels of L words from its first row's
// word, is then one run of (KW - 1) * L + KH words and one K step where the
// plain layout takes one per kernel row: weight row kw * L + kh holds the
// kernel's (kh, kw), the other rows of the run zeros (S > 1). The weights
// go kernel column by kernel column (tpu-plan-tiles reorders them); the
// padding is zeros in the band (padding rows and columns both).
struct ConvLayout {
  bool padRows = true, padColumns = true;
  int64_t rowPixels = 0; // pixels a band row holds: the image's, with the padding columns if any
  int64_t pieces = 1;
  int64_t stackedRows = 0; // input rows a pixel holds; 0: not stacked
  // Without padding columns, the taps of each kernel row that go a K step
  // each (an NCHW input's, convLayout): the steps of several taps after
  // them read the image with their first.
  int64_t leadingTaps = 0;
  bool stacked() const { return stackedRows > 0; }
  // Output rows per band row.
  int64_t groupRows(const ConvShape &shape) const {
    return stacked() ? (stackedRows - shape.kernel[0]) / shape.stride[0] + 1 : 1;
  }
  int64_t pixelWords(const ConvShape &shape) const {
    return stacked() ? stackedRows * shape.channels : shape.channels / pieces;
  }
  int64_t rowWords(const ConvShape &shape) const { return rowPixels * pixelWords(shape); }
  // Stacked: the words of an output position's window, from its first
  // pixel's first word to its last pixel's KH-th.
  int64_t windowWords(const ConvShape &shape) const {
    return (shape.kernel[1] - 1) * pixelWords(shape) + shape.kernel[0];
  }
  // Band rows for `outRows` output rows (whole images: each image's).
  int64_t bandRows(const ConvShape &shape, int64_t outRows) const {
    if (!stacked())
      return shape.bandInputRows(outRows);
    const int64_t S = groupRows(shape);
    return outRows > shape.outHeight
               ? outRows / shape.outHeight * llvm::divideCeil(shape.outHeight, S)
               : llvm::divideCeil(outRows, S);
  }
  // Where the windows of an image's output row `row` of the band start, in
  // words from the image's first band row.
  int64_t outputRowWords(const ConvShape &shape, int64_t row) const {
    if (!stacked())
      return row * shape.stride[0] * rowWords(shape);
    const int64_t S = groupRows(shape);
    return row / S * rowWords(shape) + row % S * shape.stride[0];
  }
};
ConvLayout convLayout(const ConvShape &shape, int64_t tileK, int64_t pieces = 1,
                      int64_t stackedRows = 0);
// Whether a convolution's band can stack its kernel rows (ConvLayout): one
// input channel, more than one kernel row, no dilation along the width (a
// window's pixels side by side).
bool canStackRows(const ConvShape &shape);
// The rows a convolution's matmul streams through the array per weight row,
// on average: its output positions' taps that read the image (all of them
// where convLayout keeps the padding), over the window's taps. The work
// the roofline bounds (tpu-record-work): padding taps add nothing.
int64_t convStreamedRows(const ConvShape &shape, int64_t tileK);

// The shape of a window op over an NHWC `input` with `kernel`, `stride`,
// `dilation` and `pad` (top, bottom, left, right) to `outputHW` output
// rows and columns of `outputs` channels.
ConvShape convShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> kernel,
                    llvm::ArrayRef<int64_t> stride, llvm::ArrayRef<int64_t> dilation,
                    llvm::ArrayRef<int64_t> pad, llvm::ArrayRef<int64_t> outputHW, int64_t outputs);

// Whether each output position's window is one input pixel (1x1, stride 1,
// no padding): the window rows are the input itself, no im2col.
bool isPointwise(llvm::ArrayRef<int64_t> kernel, llvm::ArrayRef<int64_t> stride,
                 llvm::ArrayRef<int64_t> pad);

// One K step of a convolution: weight rows [row, row + rows) of the
// [KH*KW*C, O] matrix against the activations at word `offset` from an
// output position's window origin in the band's `piece` held on chip (laid
// out as convLayout says; without padding columns the origin is the
// window's first column, which may lie left of the row). Its rows start at
// tap (kh, kw); `oneTap`: they are that tap's channels only. `weightRow`:
// where its rows start in DRAM, `row` but for a band in pieces, whose
// weights tpu-plan-tiles reorders into the steps' order (so that a panel's
// rows stay one transfer). With stacked kernel rows the rows are the
// reordered weights' (kernel column by kernel column) and `row` is
// `weightRow`.
struct ConvKStep {
  int64_t row, weightRow, rows, offset, kh, kw;
  bool oneTap;
  int64_t piece = 0;
};
// The K steps in order: per piece of the band's channels, per run, steps
// of at most tileK rows, in a band laid out as `layout` (convLayout(shape,
// tileK, pieces)) says. With pieces, a run is one tap's channels of the
// piece, so that every step of the first piece comes first.
std::vector<ConvKStep> convKSteps(const ConvShape &shape, int64_t tileK, const ConvLayout &layout);

// How a convolution runs with its input on chip (docs/compiler.md,
// "Convolutions"): output tiles of `band` output rows x tileN columns, K
// steps of at most tileK rows, weight panels of up to kBlock rows (whole K
// steps) x tileN; the buffers' addresses as in MatMulPlan, `inputs` for the
// bands of input rows. tpu-plan-tiles records it as a #tpu.conv_tiling.
struct ConvPlan {
  int64_t band = 0, tileN = 0, tileK = 0, kBlock = 0;
  std::vector<int64_t> inputs, weights, operands, accumulators;
  double estimatedCycles = 0;
  int64_t pieces = 1; // of the band's channels (ConvLayout); `inputs` are their buffers in turn
  int64_t stackedRows = 0; // ConvLayout's
};

// The K steps of each weight panel: consecutive steps of at most kBlock
// rows in all, as [first, end) indices into `steps`.
std::vector<std::pair<size_t, size_t>> convPanels(const std::vector<ConvKStep> &steps,
                                                  int64_t kBlock);

// The fastest plan that fits the config's memories and the ISA's fields, or
// nullopt (the convolution then writes its im2col matrix): none fits, or
// the cost model finds the im2col rows written to DRAM (fp32) and
// multiplied faster. `stored`: the sizes DRAM holds the tensors at, where
// `bytes` are those the model counts. A band in pieces only
// `weightsInStepOrder`: where the caller can reorder the weights as the
// plan's K steps go (a constant).
std::optional<ConvPlan> planConv(const ConvShape &shape, const EpilogueOperands &epilogue,
                                 const HardwareConfig &config, const ElementBytes &bytes = {},
                                 const ElementBytes &stored = {}, bool weightsInStepOrder = false);

} // namespace tpu::codegen
