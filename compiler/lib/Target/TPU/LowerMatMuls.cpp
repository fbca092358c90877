// tpu-lower-matmuls: matmuls, batched matmuls and matmul fusion groups (a
// matmul and its epilogue) to the matrix unit's instructions, as tpu-plan-tiles
// tiled them.
//
// Output tiles of tileM rows x tileN columns (C-wide chunks, one weight tile
// each) accumulate over K in steps of R. Activations come in blocks of tileM rows x kBlock columns
// (the whole K when it fits, so a block serves every output column), weights in panels of panelRows
// x tileN along each block; both are double-buffered, as are the accumulator tiles, so loads, the
// array and stores overlap. A fused epilogue runs on each output tile in the accumulators before
// its one store.
#include "tpu/Target/TPU/IsaLimits.h"
#include "tpu/Target/TPU/Passes.h"
#include "tpu/Target/TPU/ProgramBuilder.h"
#include "tpu/isa/Error.h"

#include <fmt/format.h>

#include <functional>
#include <optional>
#include <set>

namespace mlir::tpu {
#define GEN_PASS_DEF_LOWERMATMULS
#include "tpu/Target/TPU/Passes.h.inc"
} // namespace mlir::tpu

namespace tpu::codegen {
namespace {

using isa::Field;
using isa::Opcode;
using isa::Queue;
using mlir::Value;
using mlir::tpu::Spread;

// A vector op on a tile in the accumulators, in place.
isa::Instruction accumulatorOp(Opcode opcode, uint64_t address, int64_t rows, int64_t cols) {
  auto acc = uint64_t(isa::Space::Accumulator);
  return isa::makeInstruction(opcode, {{Field::DstSpace, acc},
                                       {Field::DstAddr, address},
                                       {Field::SrcSpace, acc},
                                       {Field::SrcAddr, address},
                                       {Field::Rows, uint64_t(rows)},
                                       {Field::Cols, uint64_t(cols)}});
}

class MatMulLowering {
public:
  MatMulLowering(const HardwareConfig &config, ProgramBuilder &builder)
      : config(config), builder(builder) {}

  // What the vector unit applies to each output tile of a matmul while it is
  // still in the accumulators (a fused epilogue): the ops of its fusion group.
  using Epilogue = std::vector<VectorStep>;

  // The window side of the pool ending a convolution's epilogue; 1: none.
  static int64_t poolStrideOf(const Epilogue &epilogue) {
    int64_t stride = 1;
    for (const VectorStep &step : epilogue)
      stride = std::max(stride, step.poolStride);
    return stride;
  }

  // A matmul group: the matmul, then its epilogue.
  void emitGroup(mlir::tpu::FusedOp fused) {
    Epilogue epilogue = epilogueSteps(fused);
    // The plan's buffer for a row operand has room for its copies (bufferWords).
    for (VectorStep &step : epilogue)
      step.foldsRows = true;
    emit(llvm::cast<mlir::tpu::MatMulOp>(fused.getHead()), matrixOf(fused.getResult(0)), epilogue);
  }

  // A matmul, or a convolution reading its input in place.
  void emit(mlir::tpu::MatMulOp matmul, const Matrix &y, const Epilogue &epilogue = {}) {
    if (auto conv = matmul->getAttrOfType<mlir::tpu::ConvTilingAttr>(mlir::tpu::kTilingAttr))
      emitConv(matmul.getLhs().getDefiningOp<mlir::tpu::Im2ColOp>(), matrixOf(matmul.getRhs()), y,
               conv, epilogue);
    else if (poolStrideOf(epilogue) > 1) // its tiles are rows, not bands of whole windows
      throw Error("a pool in the epilogue of a matmul not planned as a convolution");
    else
      emitMatMul(matrixOf(matmul.getLhs()), matrixOf(matmul.getRhs()), y,
                 planOf<mlir::tpu::MatMulTilingAttr>(matmul), epilogue);
  }

  // One weight panel of one output tile: rows m0.., columns n0.. of the
  // output, K from kb0 (for a convolution, its weight panel `panelIndex`),
  // read against columns block0.. of its activation block; the buffers its
  // fills went to and their tokens: the block's pieces' (Source::pieceCols)
  // and the panel's.
  struct Step {
    int64_t m0 = 0, m = 0, n0 = 0, n = 0, kb0 = 0, kb = 0, block0 = 0, blockCols = 0;
    size_t batch = 0; // of a batched matmul: whose a, w and y
    size_t panelIndex = 0;
    bool newBlock = true;    // loads its activation block (else the band's)
    bool lastOfBand = false; // the band's last output tile
    std::vector<uint64_t> pieces;
    std::vector<Value> pieceTokens;
    uint64_t panel = 0;
    Value panelToken;
  };

  // Around the array's reads of one piece of a step's block: `begin` before
  // the first (it waits for the piece), `end` after the last (it may free
  // the piece for the next block).
  struct PieceHooks {
    std::function<void(size_t piece)> begin, end;
  };

  // What a tiled product does per step: fill a piece of an activation block
  // (or the input band, one piece), run the array on it, and how many
  // compute instructions that is.
  struct Source {
    int64_t pieceCols = 0; // of a block's pieces; 0: one piece
    // How many of the block's first pieces the step reads; none: all.
    std::function<size_t(const Step &)> piecesRead;
    std::function<void(const Step &, size_t piece, uint64_t address)> loadPiece;
    std::function<void(const Step &, uint64_t acc, const PieceHooks &)> compute;
    std::function<int64_t(const Step &)> computeInstructions;
    // The K an output tile accumulates over; the step's weight panel into
    // `panel`; the finished tile (its epilogue done) from `acc` to DRAM.
    int64_t depth = 0;
    std::function<void(const Step &, uint64_t panel)> loadPanel;
    std::function<void(const Step &, uint64_t acc)> storeTile;
  };

  // The array's work of a step: per K step of R rows, per C-wide chunk of
  // the tile, one weight tile and the block's rows through it. A piece of
  // the block holds `pieceCols` of its columns, rows pieceCols apart; a
  // step may start or end within one (the tile's step before, reading the
  // piece's first columns, waited for it).
  void emitStep(const Step &step, uint64_t acc, int64_t tileK, int64_t pieceCols,
                const PieceHooks &hooks) {
    const int64_t arrayCols = config.array.cols;
    for (int64_t k0 = step.kb0; k0 < step.kb0 + step.kb; k0 += tileK) {
      int64_t k = std::min(tileK, step.kb0 + step.kb - k0);
      size_t piece = size_t((k0 - step.block0) / pieceCols);
      int64_t first = int64_t(piece) * pieceCols,
              cols = std::min(pieceCols, step.blockCols - first);
      for (int64_t c0 = 0; c0 < step.n; c0 += arrayCols) {
        int64_t c = std::min(arrayCols, step.n - c0);
        builder.emit(loadWeights(step, k0 - step.kb0, c0, k, c));
        if (k0 - step.block0 == first && c0 == 0)
          hooks.begin(piece);
        builder.emit(isa::makeInstruction(
            Opcode::MatMul,
            {{Field::SrcAddr, step.pieces[piece] + uint64_t(k0 - step.block0 - first)},
             {Field::SrcStride, uint64_t(cols)},
             {Field::DstAddr, acc + uint64_t(c0)},
             {Field::DstStride, uint64_t(step.n)},
             {Field::Rows, uint64_t(step.m)},
             {Field::Cols, uint64_t(k)},
             {Field::DType, uint64_t(config.array.dtype)},
             {Field::Accumulate, k0 > 0 ? 1u : 0u},
             {Field::Flip, 1}}));
      }
      if (k0 + k - step.block0 == first + cols)
        hooks.end(piece);
    }
  }

  // The k x c weight tile at row `row`, column c0 of the step's panel.
  static isa::Instruction loadWeights(const Step &step, int64_t row, int64_t c0, int64_t k,
                                      int64_t c) {
    return isa::makeInstruction(Opcode::LoadWeights,
                                {{Field::SrcAddr, step.panel + uint64_t(row * step.n + c0)},
                                 {Field::SrcStride, uint64_t(step.n)},
                                 {Field::Rows, uint64_t(k)},
                                 {Field::Cols, uint64_t(c)}});
  }

  // Matrix unit. Output tiles of tileM rows x tileN columns (in C-wide
  // chunks) accumulate over K in steps of R. Activations come in blocks of
  // tileM rows x kBlock columns (the whole K when it fits, so a block serves
  // every output column), weights in panels of panelRows x tileN along each
  // block. A batched matmul's products (as[b] x ws[b] -> ys[b], all of one
  // shape) are one pipeline of steps, batch after batch: the next batch's
  // operands load while the array works on this one and its result stores.
  // Batches packed side by side (the plan's `packed`, each group of them a
  // product of `packed` times their K and N): a group's block holds their
  // activation rows next to each other, its panel their weights as the
  // blocks of a block-diagonal matrix whose other words are zeros from
  // `fill` (loaded once per panel buffer), and its tile their results
  // next to each other, each stored to its batch.
  void emitMatMul(llvm::ArrayRef<Matrix> as, llvm::ArrayRef<Matrix> ws, llvm::ArrayRef<Matrix> ys,
                  mlir::tpu::MatMulTilingAttr plan, const Epilogue &epilogue = {},
                  const std::optional<Matrix> &fill = std::nullopt) {
    const int64_t packed = plan.getPacked().value_or(1);
    const int64_t batchK = as.front().cols, batchN = ys.front().cols, M = ys.front().rows;
    const int64_t K = packed * batchK, N = packed * batchN;
    const int64_t tileN = plan.getTileN(), tileM = plan.getTileM(), kBlock = plan.getKBlock();
    const int64_t panelRows = plan.getPanelRows().value_or(kBlock);
    const bool blockPerRowBand = kBlock >= K; // one activation block serves all of N
    if (packed > 1 && (tileN < N || kBlock < K || panelRows < K || !fill))
      throw Error(fmt::format("a plan packing {} batches needs one tile of all their K and N "
                              "and a fill row",
                              packed));

    // The steps in order: per output tile (m0, n0), per activation block
    // kb0, per weight panel kp0.
    std::vector<Step> steps;
    for (size_t batch = 0; batch < as.size() / size_t(packed); ++batch)
      for (int64_t m0 = 0; m0 < M; m0 += tileM)
        for (int64_t n0 = 0; n0 < N; n0 += tileN)
          for (int64_t kb0 = 0; kb0 < K; kb0 += kBlock)
            for (int64_t kp0 = kb0; kp0 < std::min(K, kb0 + kBlock); kp0 += panelRows) {
              Step step;
              step.batch = batch;
              step.m0 = m0, step.m = std::min(tileM, M - m0);
              step.n0 = n0, step.n = std::min(tileN, N - n0);
              step.block0 = kb0, step.blockCols = std::min(kBlock, K - kb0);
              step.kb0 = kp0, step.kb = std::min(panelRows, kb0 + step.blockCols - kp0);
              step.newBlock = kp0 == kb0 && (!blockPerRowBand || n0 == 0);
              step.lastOfBand = n0 + tileN >= N;
              steps.push_back(step);
            }
    // The matrices of a step's group of batches.
    auto groupOf = [&](llvm::ArrayRef<Matrix> all, const Step &step) {
      return all.slice(step.batch * size_t(packed), size_t(packed));
    };
    // A group's matrices as one, where they lie side by side in DRAM (the
    // heads of an attention tensor, read or written in place): one
    // transfer then moves them all.
    auto sideBySide = [&](llvm::ArrayRef<Matrix> group) -> std::optional<Matrix> {
      const Matrix &first = group.front();
      Matrix whole = first;
      whole.cols = packed * first.cols;
      whole.stride = first.rowStride();
      if (first.pixels || whole.cols > whole.stride)
        return std::nullopt;
      for (auto [slot, part] : llvm::enumerate(group))
        if (part.pixels || part.dtype != first.dtype || part.rowStride() != first.rowStride() ||
            part.address != first.at(0, int64_t(slot) * first.cols))
          return std::nullopt;
      return whole;
    };
    // The step's rows of a group's matrices to (or from) their block on
    // chip at `address`, side by side: one transfer where they lie side by
    // side in DRAM too, else one each.
    auto moveGroup = [&](Opcode opcode, llvm::ArrayRef<Matrix> all, const Step &step,
                         isa::Space space, uint64_t address) {
      auto move = [&](const Matrix &matrix, uint64_t at, int64_t sramStride) {
        if (opcode == Opcode::DmaLoad)
          builder.load(matrix, step.m0, 0, step.m, matrix.cols, space, at, sramStride);
        else
          builder.store(matrix, step.m0, 0, step.m, matrix.cols, space, at, sramStride);
      };
      llvm::ArrayRef<Matrix> group = groupOf(all, step);
      if (std::optional<Matrix> whole = sideBySide(group))
        return move(*whole, address, 0);
      const int64_t cols = group.front().cols;
      for (auto [slot, matrix] : llvm::enumerate(group))
        move(matrix, address + uint64_t(int64_t(slot) * cols), packed * cols);
    };
    Source source;
    source.pieceCols = blockPerRowBand && packed == 1
                           ? activationPieceCols(tileM, K, plan.getTileK(), config)
                           : kBlock;
    source.loadPiece = [&](const Step &step, size_t piece, uint64_t address) {
      int64_t first = int64_t(piece) * source.pieceCols;
      if (packed == 1)
        return builder.load(as[step.batch], step.m0, step.block0 + first, step.m,
                            std::min(source.pieceCols, step.blockCols - first),
                            isa::Space::Scratchpad, address);
      moveGroup(Opcode::DmaLoad, as, step, isa::Space::Scratchpad, address);
    };
    source.compute = [&](const Step &step, uint64_t acc, const PieceHooks &hooks) {
      emitStep(step, acc, plan.getTileK(), source.pieceCols, hooks);
    };
    source.computeInstructions = [&](const Step &step) {
      return 2 * llvm::divideCeil(step.kb, plan.getTileK()) *
             llvm::divideCeil(step.n, int64_t(config.array.cols));
    };
    source.depth = K;
    llvm::SmallDenseSet<uint64_t, 2> zeroed; // packed panel buffers
    source.loadPanel = [&](const Step &step, uint64_t panel) {
      if (packed == 1)
        return builder.load(ws[step.batch], step.kb0, step.n0, step.kb, step.n,
                            isa::Space::Scratchpad, panel);
      if (zeroed.insert(panel).second)
        loadRows(builder, *fill, fill->address, 0, panel, N, K, N);
      for (auto [slot, weights] : llvm::enumerate(groupOf(ws, step)))
        builder.load(weights, 0, 0, batchK, batchN, isa::Space::Scratchpad,
                     panel + uint64_t(int64_t(slot) * (batchK * N + batchN)), N);
    };
    source.storeTile = [&](const Step &step, uint64_t acc) {
      if (packed == 1)
        return builder.store(ys[step.batch], step.m0, step.n0, step.m, step.n,
                             isa::Space::Accumulator, acc);
      moveGroup(Opcode::DmaStore, ys, step, isa::Space::Accumulator, acc);
    };
    emitSteps(steps, source, plan.getActivations(), plan.getWeights(), plan.getOperands(),
              plan.getAccumulators(), /*releaseBlockEachStep=*/!blockPerRowBand, epilogue);
  }

  // A convolution on its NHWC input held on chip (docs/compiler.md,
  // "Convolutions"). Per band of output rows, the input rows it reads are
  // loaded once into a buffer of C words a pixel, laid out as convLayout
  // says: without padding where the array skips the padding taps, else
  // with it as zeros (the fill row, read with a DRAM stride of 0): the left
  // and right columns once per buffer, top and bottom rows with the bands
  // that reach them. Per K step (a run of window taps, contiguous in the
  // weights and in an input row) and C-wide chunk, one weight tile serves
  // the whole band: one mxu.mm per output row and run of its windows that
  // read the image streams them stride*C words apart, accumulating over the
  // K steps. A band in pieces is a band per piece of the channels (C/pieces
  // words a pixel), each its own transfer and buffer, the K steps piece by
  // piece. A band of stacked kernel rows (one channel) is a row per output
  // row (loadStackedRows).
  void emitConv(mlir::tpu::Im2ColOp im2col, const Matrix &w, const Matrix &y,
                mlir::tpu::ConvTilingAttr plan, const Epilogue &epilogue = {}) {
    const ConvShape shape = convShapeOf(im2col, y.cols);
    const ConvLayout layout = convLayout(shape, plan.getTileK(), plan.getPieces().value_or(1),
                                         plan.getStackedRows().value_or(0));
    const int64_t C = layout.pixelWords(shape), W = shape.width, OW = shape.outWidth;
    const int64_t OH = shape.outHeight, rowWords = layout.rowWords(shape);
    // Words between the images of a band of whole images.
    const int64_t imageWords = layout.bandRows(shape, OH) * rowWords;
    const int64_t N = y.cols, tileN = plan.getTileN();
    const Matrix input = matrixOf(im2col.getInput());
    std::optional<Matrix> fill;
    if (im2col.getFill())
      fill = matrixOf(im2col.getFill());
    const std::vector<ConvKStep> kSteps = convKSteps(shape, plan.getTileK(), layout);
    const std::vector<std::pair<size_t, size_t>> panels = convPanels(kSteps, plan.getKBlock());

    std::vector<Step> steps;
    shape.forEachBand(plan.getBand(), [&](int64_t first, int64_t rows) {
      for (int64_t n0 = 0; n0 < N; n0 += tileN)
        for (size_t p = 0; p < panels.size(); ++p) {
          Step step;
          step.m0 = first * OW;
          step.m = rows * OW;
          step.n0 = n0, step.n = std::min(tileN, N - n0);
          const ConvKStep &last = kSteps[panels[p].second - 1];
          step.kb0 = kSteps[panels[p].first].weightRow;
          step.kb = last.weightRow + last.rows - step.kb0;
          step.blockCols = shape.channels;
          step.panelIndex = p;
          step.newBlock = n0 == 0 && p == 0;
          step.lastOfBand = n0 + tileN >= N;
          steps.push_back(step);
        }
    });

    llvm::SmallDenseSet<uint64_t, 2> bordered;
    Source source;
    if (layout.pieces > 1) {
      source.pieceCols = C;
      // Steps go piece by piece: a panel's last step reads the last piece.
      source.piecesRead = [&](const Step &step) {
        return size_t(kSteps[panels[step.panelIndex].second - 1].piece + 1);
      };
    }
    source.loadPiece = [&](const Step &step, size_t piece, uint64_t buffer) {
      if (layout.stacked())
        return loadStackedRows(
            shape, layout, input, fill, step.m0 / OW, step.m / OW, buffer,
            bordered.insert(buffer).second ? layout.bandRows(shape, plan.getBand()) : 0);
      const int64_t c0 = int64_t(piece) * C;
      // The left and right padding columns, which no band overwrites.
      if (layout.padColumns && fill && bordered.insert(buffer).second)
        for (int64_t x = 0; x < layout.rowPixels; ++x)
          if (x < shape.pad[2] || x >= shape.pad[2] + W)
            loadRows(builder, *fill, fill->address, 0, buffer + uint64_t(x * C), rowWords,
                     shape.bandInputRows(plan.getBand()), C);
      // Each image's part of the band: its output rows' input rows, one
      // image's input rows apart.
      for (int64_t done = 0; done < step.m / OW; done += OH) {
        int64_t image = (step.m0 / OW + done) / OH, oh0 = (step.m0 / OW + done) % OH;
        int64_t p0 = oh0 * shape.stride[0];
        int64_t rows = shape.inputRows(std::min(step.m / OW - done, OH - oh0));
        uint64_t part = buffer + uint64_t(done / OH * imageWords);
        for (int64_t p = p0; p < p0 + rows;) {
          int64_t ih = p - shape.pad[0];
          uint64_t sram = part + uint64_t((p - p0) * rowWords);
          if (ih < 0 || ih >= shape.height) { // padding rows, up to the image or the band's end
            int64_t end = std::min(p0 + rows, ih < 0 ? shape.pad[0] : p0 + rows);
            if (layout.padRows)
              loadRows(builder, *fill, fill->address, 0, sram, C, (end - p) * layout.rowPixels, C);
            p = end;
            continue;
          }
          int64_t count = std::min(p0 + rows - p, shape.height - ih);
          const int64_t firstPixel = (image * shape.height + ih) * W;
          if (layout.padColumns)
            sram += uint64_t(shape.pad[2] * C);
          if (input.pixels && !layout.padColumns) // NCHW rows back to back: one transposing load
            builder.load(input, firstPixel, c0, count * W, C, isa::Space::Scratchpad, sram);
          else if (input.pixels) // NCHW: a transposing load per row
            for (int64_t r = 0; r < count; ++r)
              builder.load(input, firstPixel + r * W, c0, W, C, isa::Space::Scratchpad,
                           sram + uint64_t(r * rowWords));
          else if (layout.pieces == 1 && W * C <= kMaxCols)
            loadRows(builder, input, input.at(firstPixel, 0), W * C, sram, rowWords, count, W * C);
          else if (layout.pieces > 1 && !layout.padColumns) // a DMA row per pixel's piece
            loadRows(builder, input, input.at(firstPixel, c0), shape.channels, sram, C, count * W,
                     C);
          else
            for (int64_t r = 0; r < count; ++r)
              loadRows(builder, input, input.at(firstPixel + r * W, c0), shape.channels,
                       sram + uint64_t(r * rowWords), C, W, C);
          p += count;
        }
      }
    };
    // The output columns a K step's windows read the image at: those its
    // tap does without padding columns, else all.
    auto columnsOf = [&](const ConvKStep &k) {
      int64_t firstColumn = 0, endColumn = OW;
      if (!layout.padColumns) {
        while (firstColumn < OW && !shape.columnTapReads(firstColumn, k.kw))
          ++firstColumn;
        while (endColumn > firstColumn && !shape.columnTapReads(endColumn - 1, k.kw))
          --endColumn;
      }
      return std::make_pair(firstColumn, endColumn);
    };
    // The K step's rows an output column's window reads: without padding
    // columns, a step of several taps (ConvLayout::leadingTaps) reads those
    // of its taps that lie in the image, its first ones.
    auto rowsRead = [&](const ConvKStep &k, int64_t ow) {
      if (layout.padColumns || layout.stacked() || k.oneTap)
        return k.rows;
      int64_t taps = 0;
      while (taps * C < k.rows && shape.columnTapReads(ow, k.kw + taps))
        ++taps;
      return std::min(k.rows, taps * C);
    };
    // Per output position of the tile, whether an mxu.mm has written its
    // accumulators yet (the first writes, the rest accumulate): reset with
    // each tile's first panel, updated after each K step's chunks.
    std::vector<bool> written;
    // Each piece's last K step: the array is done with the piece after it.
    std::vector<size_t> lastStepOf(size_t(layout.pieces));
    for (size_t i = 0; i < kSteps.size(); ++i)
      lastStepOf[size_t(kSteps[i].piece)] = i;
    // With a pool, each output row's windows go in runs of every pool-th
    // window (one run per window column), each into its block of the tile
    // (pooledPosition).
    const int64_t pool = poolStrideOf(epilogue);
    source.compute = [&](const Step &step, uint64_t acc, const PieceHooks &hooks) {
      const int64_t arrayCols = config.array.cols, bandRows = step.m / OW;
      if (step.panelIndex == 0)
        written.assign(size_t(step.m), false);
      auto [first, end] = panels[step.panelIndex];
      // Each piece is waited for before the panel's first read of it.
      std::vector<bool> begun(size_t(layout.pieces), false);
      auto begin = [&](int64_t piece) {
        if (!begun[size_t(piece)])
          hooks.begin(size_t(piece));
        begun[size_t(piece)] = true;
      };
      for (size_t i = first; i < end; ++i) {
        const ConvKStep &k = kSteps[i];
        auto [firstColumn, endColumn] = columnsOf(k);
        // The band's output rows whose tap row reads the image.
        llvm::SmallVector<int64_t> outputRows;
        for (int64_t j = 0; j < bandRows; ++j)
          if (layout.padRows || shape.rowTapReads((step.m0 / OW + j) % OH, k.kh))
            outputRows.push_back(j);
        if (firstColumn == endColumn)
          outputRows.clear();
        for (int64_t c0 = 0; !outputRows.empty() && c0 < step.n; c0 += arrayCols) {
          builder.emit(loadWeights(step, k.weightRow - step.kb0, c0, k.rows,
                                   std::min(arrayCols, step.n - c0)));
          begin(k.piece);
          bool flip = true;
          for (int64_t j : outputRows)
            // One mxu.mm per run of windows that all write or all accumulate.
            for (int64_t phase = 0; phase < pool; ++phase)
              for (int64_t ow = firstColumn + ((phase - firstColumn) % pool + pool) % pool;
                   ow < endColumn;) {
                bool accumulate = written[size_t(j * OW + ow)];
                const int64_t rows = rowsRead(k, ow);
                int64_t runEnd = ow + pool;
                while (runEnd < endColumn && written[size_t(j * OW + runEnd)] == accumulate &&
                       rowsRead(k, runEnd) == rows)
                  runEnd += pool;
                int64_t window = j / OH * imageWords + layout.outputRowWords(shape, j % OH) +
                                 ow * shape.stride[1] * C + k.offset;
                int64_t position = pooledPosition(j, ow, bandRows, OW, pool);
                builder.emit(isa::makeInstruction(
                    Opcode::MatMul,
                    {{Field::SrcAddr, step.pieces[size_t(k.piece)] + uint64_t(window)},
                     {Field::SrcStride, uint64_t(pool * shape.stride[1] * C)},
                     {Field::DstAddr, acc + uint64_t(position * step.n + c0)},
                     {Field::DstStride, uint64_t(step.n)},
                     {Field::Rows, uint64_t((runEnd - ow) / pool)},
                     {Field::Cols, uint64_t(rows)},
                     {Field::DType, uint64_t(config.array.dtype)},
                     {Field::Accumulate, accumulate ? 1u : 0u},
                     {Field::Flip, flip ? 1u : 0u}}));
                flip = false;
                ow = runEnd;
              }
        }
        for (int64_t j : outputRows)
          for (int64_t ow = firstColumn; ow < endColumn; ++ow)
            written[size_t(j * OW + ow)] = true;
        if (i == lastStepOf[size_t(k.piece)]) {
          begin(k.piece);
          hooks.end(size_t(k.piece));
        }
      }
      // A panel that reads nothing still waits for its first piece.
      if (llvm::none_of(begun, [](bool b) { return b; }))
        begin(kSteps[first].piece);
    };
    source.computeInstructions = [&](const Step &step) {
      auto [first, end] = panels[step.panelIndex];
      return int64_t(end - first) * llvm::divideCeil(step.n, int64_t(config.array.cols)) *
             (1 + pool * step.m / OW);
    };
    source.depth = w.rows;
    // A band row of stacked input rows for several output rows: the
    // weights' kernel columns lie C rows apart in the panel (weight row
    // kw * C + kh), zeros in between (once per panel buffer).
    const int64_t KH = shape.kernel[0];
    const bool spreadColumns = layout.stacked() && C > KH;
    if (spreadColumns && !fill)
      throw Error("a band of grouped stacked rows needs a fill row for its weights' zeros");
    llvm::SmallDenseSet<uint64_t, 2> zeroed;
    source.loadPanel = [&](const Step &step, uint64_t panel) {
      if (!spreadColumns)
        return builder.load(w, step.kb0, step.n0, step.kb, step.n, isa::Space::Scratchpad, panel);
      if (zeroed.insert(panel).second)
        zeroRows(*fill, panel, step.n, step.kb, step.n);
      for (int64_t kw = 0; kw < shape.kernel[1]; ++kw) {
        const int64_t begin = std::max(step.kb0, kw * C),
                      end = std::min(step.kb0 + step.kb, kw * C + KH);
        if (begin < end)
          builder.load(w, kw * KH + begin - kw * C, step.n0, end - begin, step.n,
                       isa::Space::Scratchpad, panel + uint64_t((begin - step.kb0) * step.n));
      }
    };
    // With a pool, the tile's first block: the pooled band.
    source.storeTile = [&](const Step &step, uint64_t acc) {
      const int64_t window = pool * pool;
      builder.store(y, step.m0 / window, step.n0, step.m / window, step.n, isa::Space::Accumulator,
                    acc);
    };
    emitSteps(steps, source, plan.getInputs(), plan.getWeights(), plan.getOperands(),
              plan.getAccumulators(), /*releaseBlockEachStep=*/false, epilogue);
  }

  // A band of stacked input rows (ConvLayout::stackedRows) of `rows`
  // output rows from output row `first` (counting the batch's) into
  // `buffer`: per group of output rows, the L input rows its words hold
  // that lie in the image with one transposing load (DRAM row t to word t
  // of each pixel's L), and zeros (the fill row) in the words that fall in
  // the padding; with `borderRows`, the padding pixels' words of that many
  // rows too, which no band overwrites (once per buffer).
  void loadStackedRows(const ConvShape &shape, const ConvLayout &layout, const Matrix &input,
                       const std::optional<Matrix> &fill, int64_t first, int64_t rows,
                       uint64_t buffer, int64_t borderRows) {
    const int64_t L = layout.pixelWords(shape), W = shape.width, rowWords = layout.rowWords(shape);
    const int64_t S = layout.groupRows(shape), OH = shape.outHeight, dh = shape.dilation[0];
    const int64_t left = layout.padColumns ? shape.pad[2] : 0;
    auto zero = [&](uint64_t at, int64_t stride, int64_t count, int64_t words) {
      if (count > 0 && words > 0)
        zeroRows(*fill, at, stride, count, words);
    };
    if (layout.padColumns)
      for (int64_t x = 0; x < layout.rowPixels; ++x)
        if (x < left || x >= left + W)
          zero(buffer + uint64_t(x * L), rowWords, borderRows, L);
    // Each image's output rows of the band in groups of S, a band row each.
    for (int64_t j = 0, row = 0; j < rows; ++row) {
      const int64_t image = (first + j) / OH, oh = (first + j) % OH;
      const int64_t group = std::min({S, rows - j, OH - oh});
      const uint64_t at = buffer + uint64_t(row * rowWords + left * L);
      // Word t holds input row r0 + t * dh; those in the image are [top, end).
      const int64_t r0 = shape.inputRow(oh, 0),
                    words = (group - 1) * shape.stride[0] + shape.kernel[0];
      int64_t top = 0, end = words;
      while (top < words && r0 + top * dh < 0)
        ++top;
      while (end > top && r0 + (end - 1) * dh >= shape.height)
        --end;
      zero(at, L, W, top);
      zero(at + uint64_t(std::max(top, end)), L, W, L - std::max(top, end));
      j += group;
      if (end == top)
        continue;
      // One channel: NCHW and NHWC are the same elements in DRAM.
      const int64_t element = (image * shape.height + r0 + top * dh) * W;
      builder.emit(isa::makeInstruction(
          Opcode::DmaLoad,
          {{Field::DramAddr, input.address + uint64_t(element) * isa::dtypeBytes(input.dtype)},
           {Field::DramStride, uint64_t(dh * W)},
           {Field::Space, uint64_t(isa::Space::Scratchpad)},
           {Field::SramAddr, at + uint64_t(top)},
           {Field::SramStride, uint64_t(L)},
           {Field::Rows, uint64_t(end - top)},
           {Field::Cols, uint64_t(W)},
           {Field::DType, uint64_t(input.dtype)},
           {Field::Transpose, 1}}));
    }
  }

  // Zeros in `rows` rows of `cols` words, `stride` apart from `sram`: the
  // fill row (zeros) read with a DRAM stride of 0, as many words a transfer
  // as it holds.
  void zeroRows(const Matrix &fill, uint64_t sram, int64_t stride, int64_t rows, int64_t cols) {
    if (stride == cols && rows * cols <= fill.cols) // back to back: one run
      cols *= rows, rows = 1, stride = cols;
    for (int64_t c0 = 0; c0 < cols; c0 += fill.cols)
      loadRows(builder, fill, fill.address, 0, sram + uint64_t(c0), stride, rows,
               std::min(fill.cols, cols - c0));
  }

  // The steps of a tiled product in order, with two buffers for each role
  // (as the plan gives them), so that loads, the array and stores overlap.
  // The program is software-pipelined: the fills of each step are issued
  // before the compute of the step before when that compute outnumbers the
  // compute queue's entries, so that the in-order front end hands them to
  // the load queue while the array works. `pieces` are the buffers of the
  // blocks' pieces, used in turn (two equal ones are one). A piece goes
  // into its buffer as soon as the step reading it before has released it:
  // right after that step's last read of it, or, for a block of several
  // pieces, one piece per step ahead of the step that needs it when its
  // buffer is already free, so that the next band's block loads while the
  // array works on this one. A block is released after its step when the
  // next step of the same output tile (band) needs another, else once per
  // output tile (band); a panel after its step, unless the next step uses
  // it too.
  void emitSteps(std::vector<Step> &steps, const Source &source, llvm::ArrayRef<int64_t> pieces,
                 llvm::ArrayRef<int64_t> panels, llvm::ArrayRef<int64_t> operandBuffers,
                 llvm::ArrayRef<int64_t> tiles, bool releaseBlockEachStep,
                 const Epilogue &epilogue) {
    // Operands from earlier operations: their stores have landed, their
    // buffers are free.
    builder.dependsOn(Queue::Store, Queue::Load);
    builder.dependsOn(Queue::Compute, Queue::Load);
    builder.dependsOn(Queue::Store, Queue::Compute);
    auto piecesOf = [&](const Step &step) {
      return source.pieceCols ? size_t(llvm::divideCeil(step.blockCols, source.pieceCols)) : 1;
    };
    // A step's fills take the pieces it reads; later ones come with the
    // later steps that read them, after those steps' panels.
    auto piecesToFill = [&](const Step &step) {
      return source.piecesRead ? source.piecesRead(step) : piecesOf(step);
    };
    BufferRing activations(pieces, Queue::Load, Queue::Compute);
    BufferRing weights(panels, Queue::Load, Queue::Compute);
    EpilogueBuffers operands(epilogue, operandBuffers);
    BufferRing results(tiles, Queue::Compute, Queue::Store);
    // The first output tile goes where the last store from the
    // accumulators (an earlier group's last tile) does not read, so that
    // its products need not wait for that store.
    if (std::optional<Span> stored = builder.lastStoreFrom(isa::Space::Accumulator)) {
      int64_t tileWords = 0;
      for (const Step &step : steps)
        tileWords = std::max(tileWords, step.m * step.n);
      results.startClearOf(*stored, uint64_t(tileWords));
    }
    // The step's pieces not yet filled, in order: all of them, or up to
    // `most` while their buffers are free.
    auto fillPieces = [&](Step &step, bool all, size_t most = SIZE_MAX) {
      for (size_t filled = 0; step.pieces.size() < piecesToFill(step) && filled < most &&
                              (all || activations.nextIsFree());
           ++filled) {
        step.pieces.push_back(activations.startFill(builder));
        source.loadPiece(step, step.pieces.size() - 1, step.pieces.back());
        step.pieceTokens.push_back(activations.endFill(builder));
      }
    };
    auto fillPanel = [&](Step &step) {
      step.panel = weights.startFill(builder);
      source.loadPanel(step, step.panel);
      step.panelToken = weights.endFill(builder);
    };
    // A step's fills: its panel, then its block's pieces (the array loads
    // its first weight tile while the first piece arrives, then waits for
    // each piece in turn); with `all` false only while their buffers are
    // free.
    auto fillStep = [&](Step &step, bool all) {
      if (!step.panelToken && (all || weights.nextIsFree()))
        fillPanel(step);
      if (step.panelToken)
        fillPieces(step, all);
    };
    // The step's block, from the step before when it shares it.
    auto shareBlock = [](Step &step, const Step &previous) {
      if (!step.newBlock)
        step.pieces = previous.pieces, step.pieceTokens = previous.pieceTokens;
    };
    // A step on the same weights as the step before (one panel holding all
    // of K and N, over row tiles or bands) keeps that panel: it is loaded
    // once and released after the last of them.
    auto samePanel = [](const Step &step, const Step &previous) {
      return step.batch == previous.batch && step.kb0 == previous.kb0 && step.kb == previous.kb &&
             step.n0 == previous.n0 && step.n == previous.n;
    };
    fillStep(steps[0], true);
    uint64_t acc = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
      Step &step = steps[i];
      Step *next = i + 1 < steps.size() ? &steps[i + 1] : nullptr;
      if (next) {
        shareBlock(*next, step);
        if (samePanel(*next, step))
          next->panel = step.panel, next->panelToken = step.panelToken;
      }
      // Only a step whose compute would fill the compute queue holds the
      // next fills back; a short one goes first and its epilogue's operand
      // loads are not queued behind them.
      bool early = next && source.computeInstructions(step) > int64_t(isa::kQueueDepth);
      if (early)
        fillStep(*next, false);
      // A piece of the block after the next step's, where its buffer is
      // free, with the next step's fills: its pieces spread evenly over the
      // steps of the block before it (the bus is busy with the panels and
      // stores meanwhile), the first after the block before has started.
      auto fillAhead = [&] {
        auto ahead = std::find_if(steps.begin() + i + 2, steps.end(),
                                  [](const Step &later) { return later.newBlock; });
        if (ahead == steps.end() || next->pieces.size() < piecesToFill(*next))
          return;
        auto blockBefore = std::find_if(std::make_reverse_iterator(ahead), steps.rend(),
                                        [](const Step &earlier) { return earlier.newBlock; });
        size_t stepsLeft = size_t(ahead - steps.begin()) - i;
        size_t blockSteps = size_t(ahead - (blockBefore.base() - 1));
        size_t aheadPieces = piecesOf(*ahead), unfilled = aheadPieces - ahead->pieces.size();
        if (aheadPieces > 1 && stepsLeft * (aheadPieces + 1) <= blockSteps * unfilled)
          fillPieces(*ahead, false, 1);
      };
      if (early)
        fillAhead();
      const bool lastOfTile = step.kb0 + step.kb >= source.depth;
      if (step.kb0 == 0) {
        acc = results.startFill(builder);
        prefetchOperands(epilogue, operands, step, /*wholeTiles=*/true);
      }
      if (lastOfTile)
        prefetchOperands(epilogue, operands, step, /*wholeTiles=*/false);
      builder.await(step.panelToken);
      bool releasesBlock = releaseBlockEachStep || step.lastOfBand;
      PieceHooks hooks;
      hooks.begin = [&](size_t piece) { builder.await(step.pieceTokens[piece]); };
      // Each must be free before the step after next refills its buffer;
      // the next block's pieces follow, but not the last one's (the
      // epilogue's operand loads go first).
      hooks.end = [&](size_t piece) {
        if (!releasesBlock)
          return;
        activations.release(builder, step.pieces[piece]);
        if (early && piece + 1 < step.pieces.size())
          fillStep(*next, false);
      };
      source.compute(step, acc, hooks);
      // Only the step's weight loads read its panel: its release does not
      // wait for the array to finish.
      if (!(next && samePanel(*next, step)))
        weights.release(builder, step.panel, /*weightLoadsOnly=*/true);
      if (lastOfTile) {
        emitEpilogue(epilogue, operands, acc, step.m0, step.n0, step.m, step.n);
        results.use(builder, results.endFill(builder));
        source.storeTile(step, acc);
        results.release(builder, acc);
      }
      if (next)
        fillStep(*next, true);
      if (next && !early)
        fillAhead();
    }
  }

  // The buffers of the epilogue's operands, an address each (the plan's
  // `operands`). All different: each operand has its own and loads ahead
  // of the epilogue while the array works, a whole tile with the tile's
  // first step (it takes longest), the rest with its last (so that the
  // load queue takes the steps' weights and activations first). All
  // equal: they share one, each loaded just before its op.
  struct EpilogueBuffers {
    EpilogueBuffers(const Epilogue &epilogue, llvm::ArrayRef<int64_t> addresses) {
      const size_t loads = size_t(llvm::count_if(
          epilogue, [](const VectorStep &operand) { return operand.operand.rows != 0; }));
      if (addresses.size() != loads)
        throw Error(fmt::format("the tiling plans {} epilogue operand buffers for {} operands",
                                addresses.size(), loads));
      ahead = std::set<int64_t>(addresses.begin(), addresses.end()).size() == loads;
      for (int64_t address : ahead ? addresses : addresses.take_front(1))
        rings.emplace_back(llvm::ArrayRef<int64_t>(address), Queue::Load, Queue::Compute);
      tokens.resize(loads);
    }
    bool ahead = false;
    std::vector<BufferRing> rings; // one per operand ahead, else the shared one
    std::vector<Value> tokens;     // the fills of operands loaded ahead
  };

  // Loads ahead the epilogue's operands for the output tile of `step` that
  // are whole tiles (or, `wholeTiles` false, the others), each into its
  // buffer.
  void prefetchOperands(const Epilogue &epilogue, EpilogueBuffers &buffers, const Step &step,
                        bool wholeTiles) {
    if (!buffers.ahead)
      return;
    const mlir::Location head = builder.sourceLocation();
    size_t load = 0;
    for (const VectorStep &operand : epilogue) {
      if (operand.operand.rows == 0)
        continue;
      BufferRing &ring = buffers.rings[load];
      Value &token = buffers.tokens[load++];
      if ((operand.spread == Spread::Same) != wholeTiles)
        continue;
      if (operand.source)
        builder.setSource(operand.source);
      else
        builder.setSource(head);
      uint64_t address = ring.startFill(builder);
      loadOperand(builder, operand, step.m0, step.n0, step.m, step.n, address, config);
      token = ring.endFill(builder);
    }
    builder.setSource(head);
  }

  // The fused epilogue of one output tile: each op in turn on the tile in the
  // accumulators, its operand (bias row, residual tile, bounds) in the
  // scratchpad, loaded ahead or just before the op. A pool combines the
  // tile's blocks of window taps into its first block, which the ops after
  // it work on.
  void emitEpilogue(const Epilogue &epilogue, EpilogueBuffers &buffers, uint64_t acc, int64_t m0,
                    int64_t n0, int64_t m, int64_t n) {
    const mlir::Location head = builder.sourceLocation();
    size_t load = 0;
    for (const VectorStep &operand : epilogue) {
      if (operand.source)
        builder.setSource(operand.source);
      else
        builder.setSource(head);
      if (operand.poolStride > 1) {
        const int64_t blocks = operand.poolStride * operand.poolStride;
        m /= blocks;
        auto [rows, cols] = laneShape(operand, m, n, config);
        for (int64_t block = 1; block < blocks; ++block)
          builder.emit(accumulatorOp(*operand.opcode, acc, rows, cols)
                           .set(Field::Src2Space, uint64_t(isa::Space::Accumulator))
                           .set(Field::Src2Addr, acc + uint64_t(block * m * n))
                           .set(Field::Broadcast, uint64_t(isa::Broadcast::None)));
        continue;
      }
      // The tile is dense in the accumulators, n words a row.
      auto [rows, cols] = laneShape(operand, m, n, config);
      if (operand.operand.rows == 0) {
        builder.emit(accumulatorOp(*operand.opcode, acc, rows, cols));
        continue;
      }
      if (operand.spread == Spread::Column)
        throw Error(fmt::format("a column operand cannot be fused into a matmul epilogue"));
      BufferRing &ring = buffers.rings[buffers.ahead ? load : 0];
      uint64_t address = ring.nextAddress();
      if (buffers.ahead) {
        ring.use(builder, buffers.tokens[load]);
      } else {
        ring.startFill(builder);
        loadOperand(builder, operand, m0, n0, m, n, address, config);
        ring.use(builder, ring.endFill(builder));
      }
      ++load;
      builder.emit(accumulatorOp(*operand.opcode, acc, rows, cols)
                       .set(Field::Src2Space, uint64_t(isa::Space::Scratchpad))
                       .set(Field::Src2Addr, address)
                       .set(Field::Broadcast, uint64_t(broadcastOf(operand.spread))));
      ring.release(builder, address);
    }
    builder.setSource(head);
  }

  // The batches' products, on each batch's rows of each tensor.
  void emitBatchMatMul(mlir::tpu::BatchMatMulOp op, const Matrix &y) {
    Matrix a = matrixOf(op.getLhs()), w = matrixOf(op.getRhs());
    std::vector<Matrix> as, ws, ys;
    for (int64_t b = 0; b < op.getLhs().getType().getShape()[0]; ++b) {
      as.push_back(batchOf(op.getLhs(), a, b));
      ws.push_back(batchOf(op.getRhs(), w, b));
      ys.push_back(batchOf(op.getResult(), y, b));
    }
    std::optional<Matrix> fill;
    if (op.getFill())
      fill = matrixOf(op.getFill());
    emitMatMul(as, ws, ys, planOf<mlir::tpu::MatMulTilingAttr>(op), {}, fill);
  }

private:
  const HardwareConfig &config;
  ProgramBuilder &builder;
};

// The lowerings as patterns, one per operation the matrix unit runs.
template <typename Op> struct LowerWithMatrixUnit : LoweringPattern<Op> {
  using LoweringPattern<Op>::LoweringPattern;
  mlir::LogicalResult matchAndRewrite(Op op, mlir::PatternRewriter &rewriter) const override {
    // A convolution reading its input in place reads the im2col's operands.
    mlir::tpu::Im2ColOp im2col;
    if (mlir::tpu::MatMulOp matmul = headOf(op);
        matmul && matmul->hasAttrOfType<mlir::tpu::ConvTilingAttr>(mlir::tpu::kTilingAttr))
      im2col = matmul.getLhs().getDefiningOp<mlir::tpu::Im2ColOp>();
    mlir::LogicalResult lowered = lowerInPlace(op, rewriter, [&](ProgramBuilder &builder) {
      MatMulLowering lowering(this->config, builder);
      if constexpr (std::is_same_v<Op, mlir::tpu::MatMulOp>)
        lowering.emit(op, matrixOf(op.getResult()));
      else if constexpr (std::is_same_v<Op, mlir::tpu::BatchMatMulOp>)
        lowering.emitBatchMatMul(op, matrixOf(op.getResult()));
      else
        lowering.emitGroup(op);
    });
    if (mlir::failed(lowered) || !im2col)
      return lowered;
    // The tpu.stored that replaced the op reads the input and fill instead.
    for (mlir::OpOperand &use : llvm::make_early_inc_range(im2col->getUses())) {
      auto stored = llvm::dyn_cast<mlir::tpu::StoredOp>(use.getOwner());
      if (!stored)
        continue;
      llvm::SetVector<Value> reads;
      for (Value read : stored->getOperands())
        if (read == im2col.getResult())
          reads.insert(im2col->getOperands().begin(), im2col->getOperands().end());
        else
          reads.insert(read);
      rewriter.modifyOpInPlace(stored, [&] { stored->setOperands(reads.getArrayRef()); });
    }
    if (im2col->use_empty())
      rewriter.eraseOp(im2col);
    return mlir::success();
  }

private:
  // The matmul `op` is or heads.
  static mlir::tpu::MatMulOp headOf(Op op) {
    if constexpr (std::is_same_v<Op, mlir::tpu::MatMulOp>)
      return op;
    else if constexpr (std::is_same_v<Op, mlir::tpu::FusedOp>)
      return llvm::dyn_cast<mlir::tpu::MatMulOp>(op.getHead());
    else
      return {};
  }
};

bool isMatMulGroup(mlir::Operation *op) {
  auto fused = llvm::dyn_cast<mlir::tpu::FusedOp>(op);
  return fused && llvm::isa<mlir::tpu::MatMulOp>(fused.getHead());
}

} // namespace
} // namespace tpu::codegen

namespace {

class LowerMatMuls : public mlir::tpu::impl::LowerMatMulsBase<LowerMatMuls> {
public:
  void runOnOperation() override {
    if (mlir::failed(tpu::codegen::lowerOperations<
                     tpu::codegen::LowerWithMatrixUnit<mlir::tpu::MatMulOp>,
                     tpu::codegen::LowerWithMatrixUnit<mlir::tpu::BatchMatMulOp>,
                     tpu::codegen::LowerWithMatrixUnit<mlir::tpu::FusedOp>>(
            getOperation(), [](mlir::Operation *op) {
              return llvm::isa<mlir::tpu::MatMulOp, mlir::tpu::BatchMatMulOp>(op) ||
                     tpu::codegen::isMatMulGroup(op);
            })))
      signalPassFailure();
  }
};

} // namespace
