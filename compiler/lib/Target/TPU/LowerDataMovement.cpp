// tpu-lower-data-movement: transposes, im2col, slices, concatenations, pads
// and gathers as rewrite patterns to DMA transfers through the scratchpad:
// strided copies, stores of a padding value from a fill row, and dma.gather.
#include "tpu/Target/TPU/IsaLimits.h"
#include "tpu/Target/TPU/Passes.h"
#include "tpu/Target/TPU/ProgramBuilder.h"
#include "tpu/isa/Error.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>

namespace mlir::tpu {
#define GEN_PASS_DEF_LOWERDATAMOVEMENT
#include "tpu/Target/TPU/Passes.h.inc"
} // namespace mlir::tpu

namespace tpu::codegen {
namespace {

using isa::Field;
using isa::Opcode;
using isa::Queue;
using mlir::Value;

class DataMovement {
public:
  DataMovement(const HardwareConfig &config, ProgramBuilder &builder)
      : config(config), builder(builder) {}

  // A strided view of a DRAM tensor: element (i_0, ..., i_n) is the fp32 word
  // at address + 4 * sum(i_d * strides[d]).
  struct StridedView {
    uint64_t address = 0;
    llvm::SmallVector<int64_t, 6> strides;
  };

  static llvm::SmallVector<int64_t, 6> denseStrides(llvm::ArrayRef<int64_t> shape) {
    llvm::SmallVector<int64_t, 6> strides(shape.size(), 1);
    for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * shape[d + 1];
    return strides;
  }

  static llvm::ArrayRef<int64_t> shapeOf(Value value) {
    return llvm::cast<mlir::RankedTensorType>(value.getType()).getShape();
  }

  // One DMA transfer of a copy: `rows` x `cols` elements, `stride` elements
  // between DRAM rows, dense in the scratchpad.
  struct Transfer {
    uint64_t dramAddress;
    int64_t stride;
    int64_t rows;
    int64_t cols;
  };

  isa::Instruction dmaTransfer(Opcode opcode, const Transfer &transfer, uint64_t sramAddress,
                               uint64_t sramStride, bool transpose = false) const {
    if (transfer.rows > 1 && transfer.stride > kMaxDmaStride)
      throw Error(fmt::format("a DRAM stride of {} elements exceeds the DMA's 20-bit field",
                              transfer.stride));
    return isa::makeInstruction(
        opcode, {{Field::DramAddr, transfer.dramAddress},
                 {Field::DramStride, uint64_t(transfer.rows > 1 ? transfer.stride : transfer.cols)},
                 {Field::Space, uint64_t(isa::Space::Scratchpad)},
                 {Field::SramAddr, sramAddress},
                 {Field::SramStride, sramStride},
                 {Field::Rows, uint64_t(transfer.rows)},
                 {Field::Cols, uint64_t(transfer.cols)},
                 {Field::DType, uint64_t(isa::DType::F32)},
                 {Field::Transpose, uint64_t(transpose)}});
  }

  // Collects the transfers of one copy (or fill) and issues them in batches
  // that fill the scratchpad below `scratchWords`: every load of a batch,
  // one token, every store; flush() issues the last batch. A fill stores a row of the fill value
  // kept in the scratchpad at `fillAddress` (sram_stride 0 repeats it).
  class CopyBatcher {
  public:
    CopyBatcher(ProgramBuilder &builder, const DataMovement &movement, int64_t scratchWords)
        : builder(builder), movement(movement), scratchWords(scratchWords) {}
    int64_t capacity() const { return scratchWords; }

    // With `transposeLoad`, the load lands transposed: `load.cols` rows of
    // `load.rows` words, the block the store reads.
    void copy(const Transfer &load, const Transfer &store, bool transposeLoad = false) {
      int64_t words = load.rows * load.cols;
      if (used + words > scratchWords)
        flush();
      loads.push_back(movement.dmaTransfer(Opcode::DmaLoad, load, used,
                                           transposeLoad ? load.rows : load.cols, transposeLoad));
      stores.push_back(movement.dmaTransfer(Opcode::DmaStore, store, used, store.cols));
      used += words;
    }
    void fill(const Transfer &store, uint64_t fillAddress) {
      stores.push_back(movement.dmaTransfer(Opcode::DmaStore, store, fillAddress, 0));
    }
    void flush() {
      if (!loads.empty()) {
        builder.beforeLoad();
        for (const isa::Instruction &load : loads)
          builder.emit(load);
      }
      if (!stores.empty()) {
        builder.dependsOn(Queue::Load, Queue::Store);
        for (const isa::Instruction &store : stores)
          builder.emit(store);
      }
      loads.clear();
      stores.clear();
      used = 0;
    }

  private:
    ProgramBuilder &builder;
    const DataMovement &movement;
    int64_t scratchWords;
    int64_t used = 0;
    std::vector<isa::Instruction> loads, stores;
  };

  // Drops size-1 axes and merges neighbouring axes that are contiguous in
  // every view, so that blocks move in as few, as long transfers as possible.
  static void simplifyAxes(llvm::SmallVector<int64_t, 6> &shape,
                           llvm::SmallVectorImpl<StridedView *> &views) {
    for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
      bool drop = shape[d] == 1 && shape.size() > 1;
      bool merge = d + 1 < int64_t(shape.size()) && llvm::all_of(views, [&](StridedView *view) {
                     return view->strides[d] == view->strides[d + 1] * shape[d + 1];
                   });
      if (merge) {
        shape[d + 1] *= shape[d];
      }
      if (drop || merge) {
        shape.erase(shape.begin() + d);
        for (StridedView *view : views)
          view->strides.erase(view->strides.begin() + d);
      }
    }
  }

  // Calls visit(offset in source, offset in target) for every index of
  // `shape` over the axes not in `skip`, in row-major order.
  template <typename Visit>
  static void forEachIndex(llvm::ArrayRef<int64_t> shape, const StridedView &source,
                           const StridedView &target, std::initializer_list<int64_t> skip,
                           Visit visit) {
    llvm::SmallVector<int64_t, 6> index(shape.size(), 0);
    auto skipped = [&](size_t d) { return std::find(skip.begin(), skip.end(), d) != skip.end(); };
    while (true) {
      int64_t sourceOffset = 0, targetOffset = 0;
      for (size_t d = 0; d < shape.size(); ++d) {
        sourceOffset += index[d] * source.strides[d];
        targetOffset += index[d] * target.strides[d];
      }
      visit(sourceOffset, targetOffset);
      int64_t d = int64_t(shape.size()) - 1;
      for (; d >= 0; --d) {
        if (skipped(d))
          continue;
        if (++index[d] < shape[d])
          break;
        index[d] = 0;
      }
      if (d < 0)
        return;
    }
  }

  // Copies the `shape` elements of `source` to `target` through the
  // scratchpad. When the last axis is contiguous on both sides, each transfer
  // is a block of those runs over the next axis. When the sides are
  // contiguous along different axes, each block of those two axes is loaded
  // transposed (source runs in, target runs on chip) and stored as target
  // runs. Otherwise one run per transfer moves along an axis contiguous on
  // one side, with one element per DRAM row on the other side.
  void emitStridedCopy(llvm::ArrayRef<int64_t> shapeIn, StridedView source, StridedView target,
                       CopyBatcher &batcher) const {
    llvm::SmallVector<int64_t, 6> shape(shapeIn.begin(), shapeIn.end());
    llvm::SmallVector<StridedView *, 2> views{&source, &target};
    simplifyAxes(shape, views);
    int64_t last = int64_t(shape.size()) - 1;
    auto at = [](const StridedView &view, int64_t offset) {
      return view.address + uint64_t(offset) * kWordBytes;
    };
    if (source.strides[last] == 1 && target.strides[last] == 1) {
      // The row axis is the longest other axis (the innermost on a tie), so
      // that the copy is as few transfers as possible: [4, 32, 16] -> [32, 4,
      // 16] moves 4 blocks of 32 rows, not 32 of 4. -1: a single run.
      int64_t rowAxis = last - 1;
      for (int64_t d = last - 2; d >= 0; --d)
        if (shape[d] > shape[rowAxis] && source.strides[d] <= kMaxDmaStride &&
            target.strides[d] <= kMaxDmaStride)
          rowAxis = d;
      int64_t rowCount = rowAxis >= 0 ? shape[rowAxis] : 1;
      int64_t sourceStride = rowAxis >= 0 ? source.strides[rowAxis] : 0;
      int64_t targetStride = rowAxis >= 0 ? target.strides[rowAxis] : 0;
      int64_t tileCols = std::min<int64_t>(shape[last], kMaxCols);
      int64_t tileRows =
          std::max<int64_t>(1, std::min({rowCount, kMaxDmaRows, batcher.capacity() / tileCols}));
      forEachIndex(shape, source, target, {last, rowAxis}, [&](int64_t from, int64_t to) {
        for (int64_t r0 = 0; r0 < rowCount; r0 += tileRows)
          for (int64_t c0 = 0; c0 < shape[last]; c0 += tileCols) {
            int64_t rows = std::min(tileRows, rowCount - r0);
            int64_t cols = std::min(tileCols, shape[last] - c0);
            batcher.copy({at(source, from + r0 * sourceStride + c0), sourceStride, rows, cols},
                         {at(target, to + r0 * targetStride + c0), targetStride, rows, cols});
          }
      });
      return;
    }
    auto contiguousAxis = [&](const StridedView &view) -> int64_t {
      for (int64_t d = 0; d <= last; ++d)
        if (view.strides[d] == 1)
          return d;
      return -1;
    };
    int64_t sourceAxis = contiguousAxis(source), targetAxis = contiguousAxis(target);
    if (sourceAxis >= 0 && targetAxis >= 0 && sourceAxis != targetAxis) {
      // A load of `rows` source runs (along targetAxis) by `cols` (along
      // sourceAxis) lands as `cols` target runs of `rows`. Square-ish blocks
      // keep both sides' runs long within the staging.
      int64_t limit = std::min(kMaxDmaRows, kMaxCols);
      auto side = int64_t(std::sqrt(double(batcher.capacity())));
      int64_t runs = shape[targetAxis], runLength = shape[sourceAxis];
      int64_t tileRows = std::min({runs, limit, std::max(side, batcher.capacity() / runLength)});
      int64_t tileCols =
          std::max<int64_t>(1, std::min({runLength, limit, batcher.capacity() / tileRows}));
      int64_t rowStride = source.strides[targetAxis], targetStride = target.strides[sourceAxis];
      forEachIndex(shape, source, target, {sourceAxis, targetAxis}, [&](int64_t from, int64_t to) {
        for (int64_t r0 = 0; r0 < runs; r0 += tileRows)
          for (int64_t c0 = 0; c0 < runLength; c0 += tileCols) {
            int64_t rows = std::min(tileRows, runs - r0);
            int64_t cols = std::min(tileCols, runLength - c0);
            batcher.copy({at(source, from + r0 * rowStride + c0), rowStride, rows, cols},
                         {at(target, to + c0 * targetStride + r0), targetStride, cols, rows},
                         /*transposeLoad=*/true);
          }
      });
      return;
    }
    // At most one side has a contiguous axis (or both the same one): the run
    // axis is the longest axis contiguous in the source or the target, else
    // the last.
    int64_t runAxis = -1;
    for (int64_t d = 0; d <= last; ++d)
      if ((source.strides[d] == 1 || target.strides[d] == 1) &&
          (runAxis < 0 || shape[d] > shape[runAxis]))
        runAxis = d;
    if (runAxis < 0)
      runAxis = last;
    int64_t sourceStep = source.strides[runAxis], targetStep = target.strides[runAxis];
    int64_t tile = std::min({shape[runAxis], kMaxCols, batcher.capacity()});
    // A run contiguous on a side is one row of `n`; strided, `n` rows of one.
    auto run = [&](uint64_t address, int64_t step, int64_t n) -> Transfer {
      return step == 1 ? Transfer{address, n, 1, n} : Transfer{address, step, n, 1};
    };
    forEachIndex(shape, source, target, {runAxis}, [&](int64_t from, int64_t to) {
      for (int64_t i0 = 0; i0 < shape[runAxis]; i0 += tile) {
        int64_t n = std::min(tile, shape[runAxis] - i0);
        batcher.copy(run(at(source, from + i0 * sourceStep), sourceStep, n),
                     run(at(target, to + i0 * targetStep), targetStep, n));
      }
    });
  }

  void emitTranspose(mlir::tpu::TransposeOp op, const Matrix &output) {
    if (op->hasAttr(mlir::tpu::kLayoutFoldedAttr))
      return; // its readers' (or its producer's) transposing DMA moves it
    llvm::ArrayRef<int64_t> inputShape = shapeOf(op.getInput());
    llvm::SmallVector<int64_t, 6> inputStrides = denseStrides(inputShape);
    StridedView source{matrixOf(op.getInput()).address, {}};
    for (int64_t from : op.getPerms())
      source.strides.push_back(inputStrides[from]);
    llvm::ArrayRef<int64_t> shape = shapeOf(op.getResult());
    CopyBatcher batcher(builder, *this, planOf<mlir::tpu::CopyTilingAttr>(op).getStaging());
    emitStridedCopy(shape, source, {output.address, denseStrides(shape)}, batcher);
    batcher.flush();
  }

  // Stores the fill row at `fillAddress` (`fillCols` words of one value in
  // the scratchpad) into every element of `target` over `shape`; the last
  // axis must be contiguous.
  void emitFill(llvm::ArrayRef<int64_t> shapeIn, StridedView target, uint64_t fillAddress,
                int64_t fillCols, CopyBatcher &batcher) const {
    if (llvm::any_of(shapeIn, [](int64_t size) { return size == 0; }))
      return;
    llvm::SmallVector<int64_t, 6> shape(shapeIn.begin(), shapeIn.end());
    llvm::SmallVector<StridedView *, 1> views{&target};
    simplifyAxes(shape, views);
    // A fill row is contiguous: when the innermost axis left is strided (a
    // single channel, whose size-1 axis was dropped), each element is a row.
    if (target.strides.back() != 1) {
      shape.push_back(1);
      target.strides.push_back(1);
    }
    // A contiguous run longer than the fill row (a whole slab of a pad, a fill
    // row of one channel) is rows of the fill row, many to a transfer, and
    // what is left over.
    if (shape.size() == 1 && shape[0] > fillCols) {
      int64_t rows = shape[0] / fillCols, whole = rows * fillCols;
      if (whole < shape[0])
        fillBlocks({shape[0] - whole}, {target.address + uint64_t(whole) * kWordBytes, {1}},
                   fillAddress, fillCols, batcher);
      shape = {rows, fillCols};
      target.strides = {fillCols, 1};
    }
    fillBlocks(shape, target, fillAddress, fillCols, batcher);
  }

  // emitFill's transfers for a block whose last axis is contiguous: fill rows
  // along the axis before it, `kMaxDmaRows` at a time, for every index of the
  // axes before those.
  void fillBlocks(llvm::ArrayRef<int64_t> shape, const StridedView &target, uint64_t fillAddress,
                  int64_t fillCols, CopyBatcher &batcher) const {
    int64_t last = int64_t(shape.size()) - 1, rowAxis = last - 1;
    int64_t rowCount = rowAxis >= 0 ? shape[rowAxis] : 1;
    int64_t stride = rowAxis >= 0 ? target.strides[rowAxis] : 0;
    forEachIndex(shape, target, target, {last, rowAxis}, [&](int64_t, int64_t to) {
      for (int64_t r0 = 0; r0 < rowCount; r0 += kMaxDmaRows)
        for (int64_t c0 = 0; c0 < shape[last]; c0 += fillCols) {
          uint64_t address = target.address + uint64_t(to + r0 * stride + c0) * kWordBytes;
          batcher.fill({address, stride, std::min(kMaxDmaRows, rowCount - r0),
                        std::min(fillCols, shape[last] - c0)},
                       fillAddress);
        }
    });
  }

  // Per window tap (kh, kw): the output rows whose input position is inside
  // the image are one strided copy of [N, OH', OW', C] runs into the tap's C
  // columns; the rest of those columns get the padding value.
  void emitIm2Col(mlir::tpu::Im2ColOp op, const Matrix &output) {
    llvm::ArrayRef<int64_t> in = shapeOf(op.getInput()); // N, H, W, C
    int64_t outH = op.getOutputHeight(), outW = op.getOutputWidth();
    int64_t channels = in[3];
    int64_t windowCols = op.getKernel()[0] * op.getKernel()[1] * channels;
    auto plan = planOf<mlir::tpu::CopyTilingAttr>(op);
    std::optional<Matrix> padRow;
    if (op.getFill())
      padRow = matrixOf(op.getFill());
    int64_t fillCols = padRow ? padRow->cols : 0;
    uint64_t fillAddress = uint64_t(plan.getFill().value_or(0));
    if (fillCols > 0) {
      builder.beforeLoad();
      builder.load(*padRow, 0, 0, 1, fillCols, isa::Space::Scratchpad, fillAddress);
    }
    CopyBatcher batcher(builder, *this, plan.getStaging());
    const Matrix input = matrixOf(op.getInput());
    llvm::SmallVector<int64_t, 6> targetStrides{outH * outW * windowCols, outW * windowCols,
                                                windowCols, 1};
    // The outputs o in [lo, hi) whose input o*stride + offset is in [0, size).
    auto valid = [](int64_t offset, int64_t stride, int64_t size, int64_t outputs) {
      int64_t lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
      int64_t last = size - 1 - offset;
      int64_t hi = last < 0 ? 0 : std::min(outputs, last / stride + 1);
      return std::pair<int64_t, int64_t>{std::min(lo, outputs), std::max(lo, hi)};
    };
    int64_t strideH = op.getStride()[0], strideW = op.getStride()[1];
    for (int64_t kh = 0; kh < op.getKernel()[0]; ++kh)
      for (int64_t kw = 0; kw < op.getKernel()[1]; ++kw) {
        int64_t rowOffset = kh * op.getDilation()[0] - op.getPad()[0];
        int64_t colOffset = kw * op.getDilation()[1] - op.getPad()[2];
        auto [hLo, hHi] = valid(rowOffset, strideH, in[1], outH);
        auto [wLo, wHi] = valid(colOffset, strideW, in[2], outW);
        int64_t column = (kh * op.getKernel()[1] + kw) * channels;
        auto targetAt = [&](int64_t oh, int64_t ow) {
          return StridedView{output.at(oh * outW + ow, column), targetStrides};
        };
        if (hLo < hHi && wLo < wHi) {
          int64_t ih = hLo * strideH + rowOffset, iw = wLo * strideW + colOffset;
          // An NCHW input (a folded layout transpose) has its channels
          // input.pixels apart.
          int64_t channelStride = input.pixels ? input.pixels : 1;
          int64_t pixelStride = input.pixels ? 1 : channels;
          StridedView source{input.address + uint64_t((ih * in[2] + iw) * pixelStride) * kWordBytes,
                             {in[1] * in[2] * channels, strideH * in[2] * pixelStride,
                              strideW * pixelStride, channelStride}};
          emitStridedCopy({in[0], hHi - hLo, wHi - wLo, channels}, source, targetAt(hLo, wLo),
                          batcher);
        }
        if (fillCols == 0)
          continue;
        emitFill({in[0], hLo, outW, channels}, targetAt(0, 0), fillAddress, fillCols, batcher);
        emitFill({in[0], outH - hHi, outW, channels}, targetAt(hHi, 0), fillAddress, fillCols,
                 batcher);
        emitFill({in[0], hHi - hLo, wLo, channels}, targetAt(hLo, 0), fillAddress, fillCols,
                 batcher);
        emitFill({in[0], hHi - hLo, outW - wHi, channels}, targetAt(hLo, wHi), fillAddress,
                 fillCols, batcher);
      }
    batcher.flush();
  }

  void emitSlice(mlir::tpu::SliceOp op, const Matrix &output) {
    llvm::ArrayRef<int64_t> inputShape = shapeOf(op.getInput());
    StridedView source{matrixOf(op.getInput()).address, denseStrides(inputShape)};
    for (auto [start, stride] : llvm::zip(op.getStart(), source.strides))
      source.address += uint64_t(start * stride) * kWordBytes;
    llvm::ArrayRef<int64_t> shape = shapeOf(op.getResult());
    CopyBatcher batcher(builder, *this, planOf<mlir::tpu::CopyTilingAttr>(op).getStaging());
    emitStridedCopy(shape, source, {output.address, denseStrides(shape)}, batcher);
    batcher.flush();
  }

  // Each input is a strided copy into its span of the result's axis.
  void emitConcat(mlir::tpu::ConcatOp op, const Matrix &output) {
    llvm::ArrayRef<int64_t> shape = shapeOf(op.getResult());
    StridedView target{output.address, denseStrides(shape)};
    CopyBatcher batcher(builder, *this, planOf<mlir::tpu::CopyTilingAttr>(op).getStaging());
    for (Value input : op.getInputs()) {
      llvm::ArrayRef<int64_t> inputShape = shapeOf(input);
      emitStridedCopy(inputShape, {matrixOf(input).address, denseStrides(inputShape)}, target,
                      batcher);
      target.address +=
          uint64_t(inputShape[op.getAxis()] * target.strides[op.getAxis()]) * kWordBytes;
    }
    batcher.flush();
  }

  // The input into its box, and the padding value around it: per axis d, the
  // slabs before and after the box along d, within the box along the axes
  // before d. Every element is stored once.
  void emitPad(mlir::tpu::PadOp op, const Matrix &output) {
    llvm::ArrayRef<int64_t> shape = shapeOf(op.getResult());
    llvm::ArrayRef<int64_t> inputShape = shapeOf(op.getInput());
    const Matrix padRow = matrixOf(op.getFill());
    auto plan = planOf<mlir::tpu::CopyTilingAttr>(op);
    uint64_t fillAddress = uint64_t(*plan.getFill());
    builder.beforeLoad();
    builder.load(padRow, 0, 0, 1, padRow.cols, isa::Space::Scratchpad, fillAddress);
    CopyBatcher batcher(builder, *this, plan.getStaging());
    const llvm::SmallVector<int64_t, 6> strides = denseStrides(shape);
    auto viewAt = [&](llvm::ArrayRef<int64_t> start) {
      StridedView view{output.address, strides};
      for (auto [offset, stride] : llvm::zip(start, strides))
        view.address += uint64_t(offset * stride) * kWordBytes;
      return view;
    };
    llvm::SmallVector<int64_t, 6> start(shape.size(), 0), extent(shape.begin(), shape.end());
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t low = op.getLow()[d], boxEnd = low + inputShape[d];
      for (auto [from, to] : {std::pair{int64_t{0}, low}, std::pair{boxEnd, shape[d]}}) {
        start[d] = from;
        extent[d] = to - from;
        emitFill(extent, viewAt(start), fillAddress, padRow.cols, batcher);
      }
      start[d] = low;
      extent[d] = inputShape[d];
    }
    emitStridedCopy(inputShape, {matrixOf(op.getInput()).address, denseStrides(inputShape)},
                    viewAt(start), batcher);
    batcher.flush();
  }

  // Per batch of rows of one table: the batch's indices into the
  // scratchpad's first words, dma.gather of the rows after them, and
  // stores of the rows (in DMA-wide column blocks) to the result.
  void emitGather(mlir::tpu::GatherOp op, const Matrix &output) {
    llvm::ArrayRef<int64_t> table = shapeOf(op.getValues()); // N, K, C
    llvm::ArrayRef<int64_t> indexShape = shapeOf(op.getIndices());
    int64_t count = indexShape[1], rowWords = table[2];
    const int64_t maxRows = int64_t(isa::fieldMaximum(Opcode::DmaGather, Field::Rows));
    const int64_t maxCols = int64_t(isa::fieldMaximum(Opcode::DmaGather, Field::Cols));
    const int64_t maxBound = int64_t(isa::fieldMaximum(Opcode::DmaGather, Field::Bound));
    if (rowWords > maxCols || table[1] > maxBound)
      throw Error(fmt::format("dma.gather reads tables of at most {} rows of {} elements; this "
                              "one is {} x {}",
                              maxBound, maxCols, table[1], rowWords));
    int64_t staging = planOf<mlir::tpu::CopyTilingAttr>(op).getStaging();
    int64_t batch = std::min({maxRows, count, staging / (rowWords + 1)});
    if (batch < 1)
      throw Error(fmt::format("config '{}' has too little scratchpad for one gathered row of {} "
                              "elements and its index",
                              config.name, rowWords));
    uint64_t tableAddress = matrixOf(op.getValues()).address;
    uint64_t indexAddress = matrixOf(op.getIndices()).address;
    for (int64_t n = 0; n < table[0]; ++n) {
      int64_t indexRow = indexShape[0] == 1 ? 0 : n;
      for (int64_t w0 = 0; w0 < count; w0 += batch) {
        int64_t rows = std::min(batch, count - w0);
        builder.beforeLoad();
        isa::Instruction indexLoad = dmaTransfer(
            Opcode::DmaLoad,
            {indexAddress + uint64_t(indexRow * count + w0) * kWordBytes, rows, 1, rows}, 0, rows);
        indexLoad.set(Field::DType, uint64_t(isa::DType::I32));
        builder.emit(indexLoad);
        builder.emit(isa::makeInstruction(
            Opcode::DmaGather,
            {{Field::DramAddr, tableAddress + uint64_t(n * table[1] * rowWords) * kWordBytes},
             {Field::SramAddr, uint64_t(rows)},
             {Field::SrcAddr, 0},
             {Field::Rows, uint64_t(rows)},
             {Field::Cols, uint64_t(rowWords)},
             {Field::DType, uint64_t(isa::DType::F32)},
             {Field::Bound, uint64_t(table[1])}}));
        builder.dependsOn(Queue::Load, Queue::Store);
        uint64_t target = output.address + uint64_t((n * count + w0) * rowWords) * kWordBytes;
        for (int64_t c0 = 0; c0 < rowWords; c0 += kMaxCols) {
          int64_t cols = std::min(kMaxCols, rowWords - c0);
          builder.emit(dmaTransfer(Opcode::DmaStore,
                                   {target + uint64_t(c0) * kWordBytes, rowWords, rows, cols},
                                   uint64_t(rows + c0), uint64_t(rowWords)));
        }
      }
    }
  }

private:
  const HardwareConfig &config;
  ProgramBuilder &builder;
};

// The lowerings as patterns, one per data-moving operation.
template <typename Op> struct LowerWithDma : LoweringPattern<Op> {
  using LoweringPattern<Op>::LoweringPattern;
  mlir::LogicalResult matchAndRewrite(Op op, mlir::PatternRewriter &rewriter) const override {
    return lowerInPlace(op, rewriter, [&](ProgramBuilder &builder) {
      DataMovement lowering(this->config, builder);
      Matrix output = matrixOf(op.getResult());
      if constexpr (std::is_same_v<Op, mlir::tpu::TransposeOp>)
        lowering.emitTranspose(op, output);
      else if constexpr (std::is_same_v<Op, mlir::tpu::Im2ColOp>)
        lowering.emitIm2Col(op, output);
      else if constexpr (std::is_same_v<Op, mlir::tpu::SliceOp>)
        lowering.emitSlice(op, output);
      else if constexpr (std::is_same_v<Op, mlir::tpu::ConcatOp>)
        lowering.emitConcat(op, output);
      else if constexpr (std::is_same_v<Op, mlir::tpu::GatherOp>)
        lowering.emitGather(op, output);
      else
        lowering.emitPad(op, output);
    });
  }
};

} // namespace
} // namespace tpu::codegen

namespace {

class LowerDataMovement : public mlir::tpu::impl::LowerDataMovementBase<LowerDataMovement> {
public:
  void runOnOperation() override {
    // A folded layout transpose moves nothing, but its readers (an im2col
    // built in DRAM) find the NCHW layout they read through it: it is
    // lowered after them.
    auto folded = [](mlir::Operation *op) { return op->hasAttr(mlir::tpu::kLayoutFoldedAttr); };
    for (bool foldedTransposes : {false, true})
      if (mlir::failed(
              tpu::codegen::lowerOperations<tpu::codegen::LowerWithDma<mlir::tpu::TransposeOp>,
                                            tpu::codegen::LowerWithDma<mlir::tpu::Im2ColOp>,
                                            tpu::codegen::LowerWithDma<mlir::tpu::SliceOp>,
                                            tpu::codegen::LowerWithDma<mlir::tpu::ConcatOp>,
                                            tpu::codegen::LowerWithDma<mlir::tpu::PadOp>,
                                            tpu::codegen::LowerWithDma<mlir::tpu::GatherOp>>(
                  getOperation(), [&](mlir::Operation *op) {
                    return llvm::isa<mlir::tpu::TransposeOp, mlir::tpu::Im2ColOp,
                                     mlir::tpu::SliceOp, mlir::tpu::ConcatOp, mlir::tpu::PadOp,
                                     mlir::tpu::GatherOp>(op) &&
                           folded(op) == foldedTransposes;
                  })))
        return signalPassFailure();
  }
};

} // namespace
