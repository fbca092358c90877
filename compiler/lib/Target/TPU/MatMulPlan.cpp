#include "tpu/Target/TPU/MatMulPlan.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tpu::codegen {
namespace {

// Words of one buffer of each role for output tiles of tileM x tileN,
// activation blocks of kBlock columns and weight panels of panelRows rows.
// The epilogue's operands are one buffer: with `operandsAhead` a part of
// it each, side by side (a bank or two, so that they do not spread the
// group over more banks than it needs), all loaded ahead while the array
// works; else the largest, which each fills in turn just before its op,
// the array waiting.
struct BufferWords {
  uint64_t block, panel, tile;
  bool operandsAhead;
  uint64_t operands = 0;
  std::vector<uint64_t> operandOffsets; // each operand's, in the buffer
};

// A row operand's buffer holds its copies up to the vector unit's lanes
// (rowCopies).
BufferWords bufferWords(int64_t tileM, int64_t tileN, int64_t kBlock, int64_t panelRows,
                        const EpilogueOperands &epilogue, bool operandsAhead,
                        const HardwareConfig &config) {
  auto wordsOf = [&](OperandKind kind) {
    return uint64_t(kind == OperandKind::Tile  ? tileM * tileN
                    : kind == OperandKind::Row ? std::max<int64_t>(tileN, config.vector.lanes)
                                               : 2);
  };
  BufferWords words{uint64_t(tileM * kBlock),
                    uint64_t(panelRows * tileN),
                    uint64_t(tileM * tileN),
                    operandsAhead,
                    0,
                    {}};
  for (OperandKind kind : epilogue.loads) {
    words.operandOffsets.push_back(operandsAhead ? words.operands : 0);
    words.operands =
        operandsAhead ? words.operands + wordsOf(kind) : std::max(words.operands, wordsOf(kind));
  }
  return words;
}

// The ways to hold the epilogue's operands worth trying: loaded ahead (a
// part of the buffer each), and sharing one, which differs only with two
// operands or more.
std::vector<bool> operandModes(const EpilogueOperands &epilogue) {
  if (epilogue.loads.size() < 2)
    return {true};
  return {true, false};
}

// One way to run the matmul: tile sizes and how many buffers each role
// gets (two let the producer fill one while the consumer reads the other).
// An activation block of several pieces (activationPieceCols) has a
// buffer per piece and `extraPieces` more, which the next block's first
// pieces fill while this block is in use: all of them (as many as the
// block has) is a second buffer.
struct Candidate {
  int64_t tileM, tileN, kBlock, panelRows;
  int activationBuffers, weightBuffers, accumulatorBuffers;
  int64_t pieceCols, pieces = 1, extraPieces = 0;
  bool operandsAhead = true; // as bufferWords has it
};

// sum over the tiles of `total` in steps of `tile` of f(size of the tile).
template <typename F> double overTiles(int64_t total, int64_t tile, F f) {
  double sum = double(total / tile) * f(tile);
  if (total % tile)
    sum += f(total % tile);
  return sum;
}

// An epilogue's operands are fp32: the vector unit reads them.
constexpr int64_t kOperandBytes = 4;

// Compute cycles a fused epilogue adds over output tiles of at most tileN
// columns and the row tiles `overRows` sums over (`rowTiles` of them). It
// runs on the compute queue, one vector op over the tile at a time, after
// the tile's last mm has drained (R + C): the next tile's mm waits for it,
// where without an epilogue it streams on (the last tile's drain is in
// both). Its operands' loads are in `withTransfers`. Each op counts the
// tile's own rows, not the shape the lowering gives it (denseShape,
// rowCopies): counting those picked a slower plan for mobilenetv2-block on
// 128x128 (9,221 cycles against 8,961) and changed no other zoo plan.
template <typename OverRows>
double epilogueCycles(OverRows overRows, double rowTiles, int64_t N, int64_t tileN,
                      const EpilogueOperands &epilogue, const HardwareConfig &config) {
  const int64_t poolOps = epilogue.poolWindow() - 1;
  if (epilogue.ops == 0 && poolOps == 0)
    return 0;
  const double drain = double(config.array.rows + config.array.cols);
  const double nTiles = std::ceil(double(N) / double(tileN));
  auto ops = [&](int64_t count, int64_t m, int64_t n) {
    return double(count) * (config.vector.pipeline_latency +
                            double(m) * std::ceil(double(n) / double(config.vector.lanes)));
  };
  return (rowTiles * nTiles - 1) * drain + overRows([&](int64_t m) {
           return overTiles(N, tileN, [&](int64_t n) {
             return ops(epilogue.ops, m, n) + ops(poolOps, m / epilogue.poolWindow(), n);
           });
         });
}

// The estimate from the array's busy time `compute` and the DRAM cycles
// `activations` of the activation loads (`activationsSerialized` of them
// wait for the array): the weights (once per row tile, in `panels`
// transfers), results and epilogue operands added, as the larger of the
// two plus what single buffers serialize. Each load pays the DRAM latency
// before its rows (callers count the activations' in theirs): the DMA
// engine overlaps back-to-back loads, but a role's refill waits for its
// buffer, and counting less chose worse plans (docs/compiler.md, section
// 6); a single buffer's refill waits for its consumer, latency and all.
// The epilogue's operands loaded ahead overlap the tile's K steps; sharing
// one buffer, each waits for the op before it and the array waits for each.
double withTransfers(double compute, double activations, double activationsSerialized,
                     double panels, const Candidate &c, double rowTiles, int64_t M, int64_t K,
                     int64_t N, const EpilogueOperands &epilogue, const ElementBytes &bytes,
                     const HardwareConfig &config) {
  const double drain = double(config.array.rows + config.array.cols);
  const double latency = config.dram.latency_cycles;
  const double nTiles = std::ceil(double(N) / double(c.tileN));
  // One row of every output tile, of elements of `size` bytes.
  auto rowsOfN = [&](int64_t size) {
    return overTiles(N, c.tileN, [&](int64_t n) { return rowCycles(n, size, config); });
  };
  double weights = rowTiles * double(K) * rowsOfN(bytes.weights) + panels * latency;
  double results = double(M / epilogue.poolWindow()) * rowsOfN(bytes.results);
  double operandRows = rowsOfN(kOperandBytes);
  double operands = rowTiles * nTiles * double(epilogue.loads.size()) * latency;
  for (OperandKind kind : epilogue.loads)
    operands += kind == OperandKind::Tile  ? double(M) * operandRows
                : kind == OperandKind::Row ? rowTiles * operandRows
                                           : rowTiles * nTiles;
  double dram = weights + activations + results + operands;
  // One buffer: its producer waits for its consumer, so its transfers add
  // up (a store's latency too).
  double serialized = activationsSerialized;
  if (!c.operandsAhead)
    serialized += operands;
  if (c.weightBuffers == 1)
    serialized += weights;
  if (c.accumulatorBuffers == 1)
    serialized += results + operands + rowTiles * nTiles * (drain + latency);
  return std::max(compute, dram) + serialized;
}

// The cost model (docs/compiler.md, "Choosing the matmul tiling"): cycles
// as the larger of the array's and the DRAM bus's busy time, plus what a
// single buffer serializes.
double estimateCycles(const Candidate &c, int64_t M, int64_t K, int64_t N, int64_t tileK,
                      const EpilogueOperands &epilogue, const ElementBytes &bytes,
                      const HardwareConfig &config) {
  const double R = config.array.rows, C = double(config.array.cols);
  auto row = [&](int64_t elements) { return rowCycles(elements, bytes.activations, config); };
  // An activation block of m rows by k columns; stored NCHW, it is k DRAM
  // rows of m pixels turned into m rows of k words: the bus or the turn,
  // whichever is slower.
  auto block = [&](int64_t m, int64_t k) {
    return bytes.activationPixels ? std::max(double(k) * row(m), turnCycles(m, k, config))
                                  : double(m) * row(k);
  };
  const double mTiles = std::ceil(double(M) / double(c.tileM));
  const double nTiles = std::ceil(double(N) / double(c.tileN));
  // The array: per C-wide chunk of an output tile and K step, an mm of m
  // rows after an ldw of k rows, overlapped: max(m, k) cycles.
  double chunks = overTiles(N, c.tileN, [&](int64_t n) { return std::ceil(double(n) / C); });
  double compute =
      chunks * overTiles(M, c.tileM,
                         [&](int64_t m) {
                           return overTiles(K, tileK, [&](int64_t k) { return std::max(m, k); });
                         }) +
      R + C;
  compute += epilogueCycles([&](auto f) { return overTiles(M, c.tileM, f); }, mTiles, N, c.tileN,
                            epilogue, config);
  // DRAM: row requests of each transfer, and its latency.
  double activationLoads = c.kBlock >= K ? 1.0 : nTiles;
  const int64_t loadCols = std::min(c.kBlock, c.pieceCols);
  double activations =
      activationLoads *
      (overTiles(M, c.tileM,
                 [&](int64_t m) {
                   return overTiles(K, loadCols, [&](int64_t k) { return block(m, k); });
                 }) +
       mTiles * std::ceil(double(K) / double(loadCols)) * config.dram.latency_cycles);
  // A refilled block waits for the array to release its buffer, all of it
  // with one buffer, or the pieces beyond the extra ones.
  bool activationsRefill = c.tileM < M || c.kBlock < K;
  double serialized = c.activationBuffers == 1 && activationsRefill
                          ? activations * double(c.pieces - c.extraPieces) / double(c.pieces)
                          : 0.0;
  const double panels = mTiles * nTiles * std::ceil(double(K) / double(c.panelRows));
  // The array starts once the first weight panel and the first piece of
  // the first block have arrived, one transfer after the other: one panel
  // of the whole K and N waits for all of its rows (where DRAM is the
  // bound, they are in its time). Nothing overlaps the last tile's store:
  // one tile of all of N stores it all after the array is done.
  const double latency = config.dram.latency_cycles;
  const int64_t firstM = std::min(c.tileM, M), firstN = std::min(c.tileN, N);
  compute += 2.0 * latency +
             double(std::min(c.panelRows, K)) * rowCycles(firstN, bytes.weights, config) +
             block(firstM, std::min(loadCols, K));
  return withTransfers(compute, activations, serialized, panels, c, mTiles, M, K, N, epilogue,
                       bytes, config) +
         latency + double(firstM) * rowCycles(firstN, bytes.results, config);
}

// Output tiles of C columns, or several C-wide chunks, so that an
// activation block serves more of them per load; the whole N at most.
std::vector<int64_t> tileWidths(int64_t N, const HardwareConfig &config) {
  std::vector<int64_t> tileNs;
  for (int64_t width = config.array.cols; width < N && width <= kMaxCols; width *= 2)
    tileNs.push_back(width);
  if (N <= kMaxCols)
    tileNs.push_back(N);
  return tileNs;
}

// Output tile heights: the most rows, halved down to 1, each with the
// height three quarters of the way where that is a whole number of the
// array's rows (so that a band of whole K can take most of the
// scratchpad's banks, not just half of them).
std::vector<int64_t> tileHeights(int64_t mostRows, const HardwareConfig &config) {
  std::vector<int64_t> heights;
  for (int64_t rows = mostRows; rows >= 1; rows /= 2) {
    heights.push_back(rows);
    if (rows % 4 == 0 && rows / 4 * 3 % config.array.rows == 0)
      heights.push_back(rows / 4 * 3);
  }
  return heights;
}

// Weight panel heights for blocks of kBlock columns and tiles of tileM
// rows: kBlock, and where a band of the whole K (which stays for every
// column tile) takes more than half the scratchpad, multiples of tileK
// halved down, so that the panels stream along K in the banks it leaves.
std::vector<int64_t> panelHeights(int64_t K, int64_t tileK, int64_t kBlock, int64_t tileM,
                                  const HardwareConfig &config) {
  std::vector<int64_t> heights{kBlock};
  if (kBlock >= K && uint64_t(2 * tileM * K) > config.scratchpad.words())
    for (int64_t rows = K / 2 / tileK * tileK; rows >= tileK; rows = rows / 2 / tileK * tileK)
      heights.push_back(rows);
  return heights;
}

// Blocks of the whole K, else multiples of tileK halved down.
std::vector<int64_t> kBlocks(int64_t K, int64_t tileK) {
  std::vector<int64_t> blocks;
  if (K <= kMaxCols && K <= kMaxDmaRows)
    blocks.push_back(K);
  for (int64_t width = std::min<int64_t>({K, kMaxCols, kMaxDmaRows}) / tileK * tileK;
       width >= tileK; width = width / 2 / tileK * tileK)
    if (width < K)
      blocks.push_back(width);
  return blocks;
}

// A tiling's buffers placed in the memories: the word addresses of each
// role's two buffers (equal for one), and the candidate as the cost model
// sees it (buffers packed into shared banks count as one).
struct Placed {
  Candidate effective;
  std::vector<int64_t> activations, weights, operands, accumulators;
};

// Keeps the plan of `tiles` (rows or band, tileN, tileK, kBlock) in the
// `placed` buffers in `best` when its estimate beats the best so far;
// returns whether it did.
template <typename Plan>
bool keepFastest(std::optional<Plan> &best, const std::array<int64_t, 4> &tiles,
                 const Placed &placed, double cycles) {
  if (best && cycles >= best->estimatedCycles)
    return false;
  best = Plan{tiles[0],
              tiles[1],
              tiles[2],
              tiles[3],
              placed.activations,
              placed.weights,
              placed.operands,
              placed.accumulators,
              cycles};
  return true;
}

// Calls visit(placed) for each way of giving the roles of a tiling one or
// two buffers that fits the memories: activation blocks (or input bands)
// of `pieces` pieces of `pieceWords` each (a second block, or with several
// pieces any number of extra pieces, only when `refills`: there is more
// than one to load), the rest as bufferWords gives them. The pieces of a
// block of several start a bank each, so that a DMA filling one never
// waits for the array reading another. The epilogue's operand buffer
// follows the last weight panel, or with `operandAfterBlocks` the last
// block (a convolution's input band, rarely a whole number of banks), and
// may share the bank of the buffer before it.
template <typename Visit>
void forEachPlacement(int64_t tileM, int64_t tileN, int64_t kBlock, int64_t panelRows,
                      int64_t pieceCols, int64_t pieces, uint64_t pieceWords, bool refills,
                      const BufferWords &words, bool operandAfterBlocks,
                      const HardwareConfig &config, Visit visit) {
  for (int64_t extraPieces = refills ? pieces : 0; extraPieces >= 0; --extraPieces)
    for (int weightBuffers : {2, 1})
      for (int accumulatorBuffers : {2, 1}) {
        // Scratchpad buffers in placement order: the pieces, the panels and
        // the operands (or the operands after the pieces).
        std::vector<Buffer> buffers;
        for (int64_t piece = 0; piece < pieces + extraPieces; ++piece)
          buffers.push_back({pieceWords});
        size_t operand = operandAfterBlocks ? buffers.size() : buffers.size() + 2;
        size_t panel = operandAfterBlocks ? buffers.size() + 1 : buffers.size();
        if (operandAfterBlocks)
          buffers.push_back({words.operands, true});
        buffers.push_back({words.panel});
        buffers.push_back({weightBuffers == 2 ? words.panel : 0});
        if (!operandAfterBlocks)
          buffers.push_back({words.operands, true});
        auto scratchpad = placeBuffers(buffers, config.scratchpad.words(), config.scratchpad.banks);
        auto accumulator = placeBuffers({{words.tile}, {accumulatorBuffers == 2 ? words.tile : 0}},
                                        config.accumulator.words(), config.accumulator.banks);
        if (!scratchpad || !accumulator)
          continue;
        Placed placed;
        placed.effective = {tileM,
                            tileN,
                            kBlock,
                            panelRows,
                            extraPieces == pieces ? 2 : 1,
                            weightBuffers,
                            accumulatorBuffers,
                            pieceCols,
                            pieces,
                            extraPieces,
                            words.operandsAhead};
        // Packed buffers share banks: the unit reading one holds up the
        // DMA filling the other, as if there were one.
        if (!scratchpad->ownBanks) {
          placed.effective.activationBuffers = placed.effective.weightBuffers = 1;
          placed.effective.extraPieces = 0;
        }
        if (!accumulator->ownBanks)
          placed.effective.accumulatorBuffers = 1;
        const std::vector<uint64_t> &sp = scratchpad->addresses, &acc = accumulator->addresses;
        auto pair = [](uint64_t first, uint64_t second, bool two) {
          return std::vector<int64_t>{int64_t(first), int64_t(two ? second : first)};
        };
        // One block: two equal addresses; else the pieces' buffers in turn.
        placed.activations.assign(sp.begin(), sp.begin() + pieces + extraPieces);
        if (placed.activations.size() == 1)
          placed.activations.push_back(placed.activations[0]);
        placed.weights = pair(sp[panel], sp[panel + 1], weightBuffers == 2);
        for (uint64_t offset : words.operandOffsets)
          placed.operands.push_back(int64_t(sp[operand] + offset));
        placed.accumulators = pair(acc[0], acc[1], accumulatorBuffers == 2);
        visit(placed);
      }
}

// The convolution's cost (docs/compiler.md, "Convolutions"): the matmul's
// model with output tiles of `band` output rows (c.tileM) whose K steps
// stream every row of the band through one weight tile, and the input
// bands (with their halo rows) as the activation loads.
double estimateConvCycles(const Candidate &c, const ConvShape &shape, const ConvLayout &layout,
                          const std::vector<ConvKStep> &steps, const EpilogueOperands &epilogue,
                          const ElementBytes &bytes, const ElementBytes &stored,
                          const HardwareConfig &config) {
  const int64_t N = shape.outputs, OW = shape.outWidth;
  const int64_t M = shape.batch * shape.outHeight * OW;
  const double C = double(config.array.cols);
  auto overBands = [&](auto f) {
    double sum = 0;
    shape.forEachBand(c.tileM, [&](int64_t, int64_t rows) { sum += f(rows * OW); });
    return sum;
  };
  const double bands = overBands([](int64_t) { return 1.0; });
  double chunks = overTiles(N, c.tileN, [&](int64_t n) { return std::ceil(double(n) / C); });
  double compute = chunks * overBands([&](int64_t m) {
                     double sum = 0;
                     for (const ConvKStep &step : steps)
                       sum += double(std::max(m, step.rows));
                     return sum;
                   }) +
                   double(config.array.rows) + C;
  compute += epilogueCycles(overBands, bands, N, c.tileN, epilogue, config);
  const double nTiles = std::ceil(double(N) / double(c.tileN));
  const double panels = double(convPanels(steps, c.kBlock).size());
  // An NCHW input row is C DRAM rows of W elements, turned into W pixel
  // rows of C words (of each piece's channels): the bus or the turn,
  // whichever is slower. An NHWC one is a DMA row, or in pieces W rows of
  // a piece's channels each.
  const int64_t W = shape.width, pieces = layout.pieces, pixel = layout.pixelWords(shape);
  const double inputRow =
      layout.stacked() ? std::max(double(pixel) * rowCycles(W, bytes.activations, config),
                                  turnCycles(W, pixel, config))
      : shape.channelMajor
          ? std::max(double(shape.channels) * rowCycles(W, bytes.activations, config),
                     double(pieces) * turnCycles(W, pixel, config))
      : pieces > 1 ? double(pieces * W) * rowCycles(pixel, bytes.activations, config)
                   : rowCycles(W * shape.channels, bytes.activations, config);
  // A band's input rows (each piece's) are a transfer per image, or per row
  // where a row is more than a DMA row can hold or is NCHW between padding
  // columns; each pays the DRAM latency. A band of stacked kernel rows is a
  // transfer per row too, but one short enough that the engine overlaps
  // their latencies (all of them: counting it once per row here made the
  // layout lose to five passes through the array where it is the faster,
  // lenet5 on 32x32); its latency counts once per band.
  const bool rowPerTransfer = (shape.channelMajor && layout.padColumns) ||
                              (!shape.channelMajor && W * shape.channels > kMaxCols);
  double inputs = overBands([&](int64_t m) {
    double rows = double(layout.bandRows(shape, m / OW));
    double transfers = rowPerTransfer ? rows : std::ceil(double(m / OW) / double(shape.outHeight));
    return rows * inputRow + double(pieces) * transfers * config.dram.latency_cycles;
  });
  int64_t K = shape.kernel[0] * shape.kernel[1] * shape.channels;
  // A refilled band waits for the array to release its buffer: the pieces
  // beyond the extra ones.
  double serialized = bands > 1 ? inputs * double(c.pieces - c.extraPieces) / double(c.pieces) : 0;
  auto overlapped = [&](double array, const ElementBytes &sizes) {
    return withTransfers(array, inputs, serialized, bands * nTiles * panels, c, bands, M, K, N,
                         epilogue, sizes, config);
  };
  const double cycles = overlapped(compute, bytes);
  // Nothing overlaps the first band's input and first weight panel, nor the
  // last tile's store: a whole-image band with all of K in one panel waits
  // for every load before the array starts. A band in pieces waits for its
  // first, where the array sets the pace with the weights and results at
  // the sizes DRAM holds them (else the bus is busy anyway).
  const bool arrayBound = overlapped(compute, stored) > overlapped(0, stored);
  int64_t firstBand = std::min(c.tileM, M / OW), firstN = std::min(c.tileN, N);
  double ends =
      double(layout.bandRows(shape, firstBand)) * inputRow / double(arrayBound ? pieces : 1) +
      double(std::min(c.kBlock, K)) * rowCycles(firstN, bytes.weights, config) +
      double(firstBand * OW / epilogue.poolWindow()) * rowCycles(firstN, bytes.results, config);
  return cycles + ends;
}

} // namespace

std::optional<Placement> placeBuffers(const std::vector<Buffer> &buffers, uint64_t words,
                                      uint64_t banks) {
  uint64_t bankWords = words / banks;
  enum class Packing { None, Shareable, All };
  for (Packing packing : {Packing::None, Packing::Shareable, Packing::All}) {
    std::vector<uint64_t> addresses;
    uint64_t next = 0;
    for (const Buffer &buffer : buffers) {
      bool packed = packing == Packing::All || (packing == Packing::Shareable && buffer.shareable);
      if (!packed && buffer.words > 0)
        next = llvm::alignTo(next, bankWords);
      addresses.push_back(next);
      next += buffer.words;
    }
    if (next <= words)
      return Placement{addresses, packing != Packing::All};
  }
  return std::nullopt;
}

// Cycles of one DMA row of `elements` elements of `bytes` each in a long
// transfer: its bus cycles, or with short rows the DRAM latency over the
// requests in flight (max_outstanding rows per latency + bus cycles): a
// bf16 row of 16 elements is 32 bytes, latency-bound where an fp32 one of
// 64 bytes may not be.
double rowCycles(int64_t elements, int64_t bytes, const HardwareConfig &config) {
  double bus = std::ceil(double(bytes * elements) / config.dram.bytes_per_cycle);
  return std::max(bus, (config.dram.latency_cycles + bus) / config.dram.max_outstanding);
}

double turnCycles(int64_t segments, int64_t length, const HardwareConfig &config) {
  const int64_t width = std::max<int64_t>(1, int64_t(config.dram.bytes_per_cycle / 4));
  return double(segments) * std::ceil(double(length) / double(width));
}

std::optional<MatMulPlan> planMatMul(int64_t M, int64_t K, int64_t N,
                                     const EpilogueOperands &epilogue, const HardwareConfig &config,
                                     const ElementBytes &bytes) {
  const int64_t tileK = std::min<int64_t>(K, config.array.rows);
  std::optional<MatMulPlan> best;
  for (int64_t tileN : tileWidths(N, config)) {
    int64_t mostRows = std::min({M, kMaxDmaRows, int64_t(config.accumulator.words()) / tileN});
    for (int64_t tileM : tileHeights(mostRows, config))
      for (int64_t kBlock : kBlocks(K, tileK))
        for (int64_t panelRows : panelHeights(K, tileK, kBlock, tileM, config)) {
          int64_t pieceCols = kBlock >= K ? activationPieceCols(tileM, K, tileK, config) : kBlock;
          int64_t pieces = llvm::divideCeil(std::min(kBlock, K), pieceCols);
          for (bool operandsAhead : operandModes(epilogue))
            forEachPlacement(tileM, tileN, kBlock, panelRows, pieceCols, pieces,
                             uint64_t(tileM * pieceCols), tileM < M || kBlock < K,
                             bufferWords(tileM, tileN, kBlock, panelRows, epilogue, operandsAhead,
                                         config),
                             false, config, [&](const Placed &placed) {
                               if (keepFastest(best, {tileM, tileN, tileK, kBlock}, placed,
                                               estimateCycles(placed.effective, M, K, N, tileK,
                                                              epilogue, bytes, config)))
                                 best->panelRows = panelRows;
                             });
        }
  }
  return best;
}

ConvShape convShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> kernel,
                    llvm::ArrayRef<int64_t> stride, llvm::ArrayRef<int64_t> dilation,
                    llvm::ArrayRef<int64_t> pad, llvm::ArrayRef<int64_t> outputHW,
                    int64_t outputs) {
  ConvShape shape;
  shape.batch = input[0], shape.height = input[1], shape.width = input[2];
  shape.channels = input[3];
  llvm::copy(kernel, shape.kernel.begin());
  llvm::copy(stride, shape.stride.begin());
  llvm::copy(dilation, shape.dilation.begin());
  llvm::copy(pad, shape.pad.begin());
  shape.outHeight = outputHW[0], shape.outWidth = outputHW[1], shape.outputs = outputs;
  return shape;
}

bool isPointwise(llvm::ArrayRef<int64_t> kernel, llvm::ArrayRef<int64_t> stride,
                 llvm::ArrayRef<int64_t> pad) {
  auto ones = [](llvm::ArrayRef<int64_t> values) {
    return llvm::all_of(values, [](int64_t v) { return v == 1; });
  };
  return ones(kernel) && ones(stride) && llvm::all_of(pad, [](int64_t p) { return p == 0; });
}

namespace {

// The K steps with their window offsets in a band (or each of its
// `pieces`) of `rowWords` words a row whose first column is input column
// `firstColumn` (-pad: the padding); a kernel row's first `leadingTaps`
// taps a step each.
std::vector<ConvKStep> kStepsIn(const ConvShape &shape, int64_t tileK, int64_t rowWords,
                                int64_t firstColumn, int64_t pieces, int64_t leadingTaps = 0) {
  const int64_t C = shape.channels, KW = shape.kernel[1], pixel = C / pieces;
  // A run is contiguous in the weights and in a band row: a kernel row's
  // taps or one tap's channels, with pieces the piece's channels of a tap.
  const int64_t run = pieces > 1 ? pixel : shape.runLength();
  const bool tapRuns = pieces > 1 || run == C;
  const int64_t runs = shape.kernel[0] * KW * pixel / run;
  std::vector<ConvKStep> steps;
  int64_t weightRow = 0;
  for (int64_t piece = 0; piece < pieces; ++piece)
    for (int64_t r = 0; r < runs; ++r) {
      // Run r starts at tap (kh, kw) of the window.
      int64_t kh = tapRuns ? r / KW : r, kw = tapRuns ? r % KW : 0;
      int64_t origin = kh * shape.dilation[0] * rowWords +
                       (kw * shape.dilation[1] - shape.pad[2] - firstColumn) * pixel;
      int64_t firstRow = (kh * KW + kw) * C + piece * pixel;
      for (int64_t k0 = 0; k0 < run;) {
        int64_t rows = std::min(k0 < leadingTaps * C ? C : tileK, run - k0);
        steps.push_back({firstRow + k0, weightRow, rows, origin + k0, kh, kw + k0 / C,
                         k0 % C + rows <= C, piece});
        weightRow += rows;
        k0 += rows;
      }
    }
  return steps;
}

} // namespace

bool canStackRows(const ConvShape &shape) {
  return shape.channels == 1 && shape.kernel[0] > 1 && shape.dilation[1] == 1;
}

ConvLayout convLayout(const ConvShape &shape, int64_t tileK, int64_t pieces, int64_t stackedRows) {
  ConvLayout layout;
  layout.pieces = pieces;
  if (stackedRows) {
    layout.stackedRows = stackedRows;
    layout.padColumns = shape.pad[2] > 0 || shape.pad[3] > 0;
    layout.rowPixels = layout.padColumns ? shape.paddedWidth() : shape.width;
    return layout;
  }
  layout.padRows = !shape.everyRowReadsImage();
  const std::vector<ConvKStep> steps = kStepsIn(shape, tileK, 0, 0, pieces);
  bool stepsOfOneTap = llvm::all_of(steps, [](const ConvKStep &step) { return step.oneTap; });
  layout.padColumns =
      (shape.pad[2] > 0 || shape.pad[3] > 0) && (!stepsOfOneTap || !shape.everyColumnReadsImage());
  // An NCHW input reaches padding columns only through a transfer per
  // row. Its steps of several taps need none where the taps that may read
  // the left padding go a step each: the others' first tap then reads the
  // image, and where their last ones read the right padding a product
  // takes fewer rows of the tile (its first ones). Only where that takes no
  // more steps.
  const int64_t C = shape.channels, leading = shape.pad[2];
  if (layout.padColumns && shape.channelMajor && pieces == 1 && shape.dilation[1] == 1 &&
      tileK % C == 0 && shape.everyColumnReadsImage() &&
      kStepsIn(shape, tileK, 0, 0, pieces, leading).size() == steps.size()) {
    layout.padColumns = false;
    layout.leadingTaps = leading;
  }
  layout.rowPixels = layout.padColumns ? shape.paddedWidth() : shape.width;
  return layout;
}

int64_t convStreamedRows(const ConvShape &shape, int64_t tileK) {
  const ConvLayout layout = convLayout(shape, tileK);
  // The (output, tap) pairs along each axis that the array computes.
  int64_t rows = 0, columns = 0;
  for (int64_t oh = 0; oh < shape.outHeight; ++oh)
    rows += layout.padRows ? shape.kernel[0] : shape.rowTapsReading(oh);
  for (int64_t ow = 0; ow < shape.outWidth; ++ow)
    columns += layout.padColumns ? shape.kernel[1] : shape.columnTapsReading(ow);
  return llvm::divideCeil(shape.batch * rows * columns, shape.kernel[0] * shape.kernel[1]);
}

std::vector<ConvKStep> convKSteps(const ConvShape &shape, int64_t tileK, const ConvLayout &layout) {
  if (layout.stacked()) {
    // One run: the window's KW pixels of L words from its first column,
    // the last one's first KH, the weights' rows reordered to match.
    const int64_t pixel = layout.pixelWords(shape), run = layout.windowWords(shape);
    std::vector<ConvKStep> steps;
    for (int64_t k0 = 0; k0 < run; k0 += tileK)
      steps.push_back({k0, k0, std::min(tileK, run - k0), k0, 0, k0 / pixel, false, 0});
    return steps;
  }
  return kStepsIn(shape, tileK, layout.rowWords(shape), layout.padColumns ? -shape.pad[2] : 0,
                  layout.pieces, layout.leadingTaps);
}

std::vector<std::pair<size_t, size_t>> convPanels(const std::vector<ConvKStep> &steps,
                                                  int64_t kBlock) {
  std::vector<std::pair<size_t, size_t>> panels;
  for (size_t first = 0; first < steps.size();) {
    size_t end = first + 1;
    int64_t rows = steps[first].rows;
    while (end < steps.size() && rows + steps[end].rows <= kBlock)
      rows += steps[end++].rows;
    panels.push_back({first, end});
    first = end;
  }
  return panels;
}

// The most pieces a convolution's band is split into: each more is a
// transfer more per band and a run more per weight panel.
constexpr int64_t kMostBandPieces = 4;

// The im2col's rows in DRAM are fp32.
constexpr int64_t kIm2ColBytes = 4;

std::optional<ConvPlan> planConv(const ConvShape &shape, const EpilogueOperands &epilogue,
                                 const HardwareConfig &config, const ElementBytes &bytes,
                                 const ElementBytes &stored, bool weightsInStepOrder) {
  const int64_t C = shape.channels;
  const int64_t K = shape.kernel[0] * shape.kernel[1] * C, N = shape.outputs;
  // A pixel's channels are one DMA row; an output row's windows, sw*C
  // apart, one mm's source stride; and (below) an input row one on-chip
  // stride.
  // A pooled band's mxu.mm streams every poolStride-th window.
  const int64_t pool = epilogue.poolStride;
  if (C > kMaxCols || pool * shape.stride[1] * C > kMaxMatMulStride || shape.outWidth > kMaxDmaRows)
    return std::nullopt;
  std::optional<ConvPlan> best;
  const int64_t outRows = shape.batch * shape.outHeight;
  // K steps as tall as the array (or a kernel row), or for an NCHW input of
  // one tap's channels where that spares the band its padding columns: more
  // passes through the array, but one transfer for the band instead of one
  // per row. (An NHWC band with padding columns is one transfer anyway.)
  const int64_t tallest = std::min<int64_t>(shape.runLength(), config.array.rows);
  llvm::SmallVector<int64_t, 2> tileKs{tallest};
  if (shape.channelMajor && C < tallest && convLayout(shape, tallest).padColumns &&
      !convLayout(shape, C).padColumns)
    tileKs.push_back(C);
  // The band's channels in pieces of whole one-tap K steps (then the
  // layout, and the work the roofline counts, are those of one piece), so
  // that the array starts after the first: worth it where nothing overlaps
  // the first band's load. Only with the weights in DRAM in the steps'
  // order, so that a panel is still one transfer.
  struct LayoutChoice {
    int64_t tileK, pieces, stackedRows;
  };
  llvm::SmallVector<LayoutChoice, 6> layouts;
  for (int64_t tileK : tileKs)
    for (int64_t pieces = 1; pieces <= (weightsInStepOrder ? kMostBandPieces : 1); pieces *= 2)
      if (pieces == 1 || (C % pieces == 0 && C / pieces % tileK == 0))
        layouts.push_back({tileK, pieces, 0});
  // Kernel rows stacked (one input channel): a whole window per K step
  // where it fits the array (an image row is one transposing load). Only
  // with the weights reordered to match. Also the input rows of as many
  // output rows as a window of them still fits the array with (one K
  // step) and a corner turn takes in one run a cycle: a group's load then
  // costs the turn what one output row's did.
  const int64_t KH = shape.kernel[0], KW = shape.kernel[1], R = config.array.rows;
  if (weightsInStepOrder && canStackRows(shape) && shape.width <= kMaxCols) {
    layouts.push_back({std::min<int64_t>(K, R), 1, KH});
    const int64_t turnWords = std::max<int64_t>(1, int64_t(config.dram.bytes_per_cycle / 4));
    const int64_t widest = std::min(KW > 1 ? (R - KH) / (KW - 1) : R, turnWords);
    // The fewest groups an image's rows take, as even as they go (a
    // group's unused words would need zeros).
    const int64_t most = std::min((widest - KH) / shape.stride[0] + 1, shape.outHeight);
    const int64_t group =
        most > 1 ? llvm::divideCeil(shape.outHeight, llvm::divideCeil(shape.outHeight, most)) : 1;
    if (shape.dilation[0] == 1 && group > 1)
      layouts.push_back({R, 1, (group - 1) * shape.stride[0] + KH});
  }
  for (auto [tileK, pieces, stackedRows] : layouts) {
    const ConvLayout layout = convLayout(shape, tileK, pieces, stackedRows);
    const int64_t rowWords = layout.rowWords(shape);
    if (rowWords > kMaxSramStride)
      continue;
    std::vector<ConvKStep> steps = convKSteps(shape, tileK, layout);
    // Weights that load in less than the DRAM latency come in one panel:
    // a refill makes the load queue wait for the array to free a buffer,
    // holding up every load after it (the next operations' weights too),
    // to spare the array at most that latency at the start.
    int64_t panelK = 0; // the weight rows of the K steps (stacked rows: with zeros)
    for (const ConvKStep &step : steps)
      panelK += step.rows;
    std::vector<int64_t> convKBlocks = kBlocks(panelK, tileK);
    if (convKBlocks.front() == panelK &&
        double(K * N * bytes.weights) <= config.dram.latency_cycles * config.dram.bytes_per_cycle)
      convKBlocks.resize(1);
    for (int64_t tileN : tileWidths(N, config)) {
      int64_t mostRows = std::min({outRows, kMaxDmaRows / shape.outWidth,
                                   int64_t(config.accumulator.words()) / tileN / shape.outWidth});
      // Bands of whole images, halved, then of one image's rows, halved
      // (down to whole pool windows).
      std::vector<int64_t> bands;
      for (int64_t images = mostRows / shape.outHeight; images >= 2; images /= 2)
        bands.push_back(images * shape.outHeight);
      for (int64_t band = std::min(mostRows, shape.outHeight); band >= pool; band /= 2)
        if (bands.empty() || bands.back() != band / pool * pool)
          bands.push_back(band / pool * pool);
      for (int64_t band : bands) {
        for (int64_t kBlock : convKBlocks) {
          int64_t m = band * shape.outWidth;
          uint64_t bandWords = uint64_t(layout.bandRows(shape, band) * rowWords);
          bool refills = band < outRows;
          for (bool operandsAhead : operandModes(epilogue)) {
            BufferWords words =
                bufferWords(m, tileN, kBlock, kBlock, epilogue, operandsAhead, config);
            // The operands after the input band, or after the last panel.
            for (bool operandAfterBand : {true, false})
              forEachPlacement(
                  band, tileN, kBlock, kBlock, kBlock, pieces, bandWords, refills, words,
                  operandAfterBand, config, [&](const Placed &placed) {
                    if (keepFastest(best, {band, tileN, tileK, kBlock}, placed,
                                    estimateConvCycles(placed.effective, shape, layout, steps,
                                                       epilogue, bytes, stored, config))) {
                      best->pieces = pieces;
                      best->stackedRows = stackedRows;
                    }
                  });
          }
        }
      }
    }
  }
  // Where the weights are reloaded for each of several bands, writing the
  // im2col rows to DRAM and multiplying them may be faster. The rows'
  // copy: each output position's kernel rows are transfers of their own,
  // each paying the DRAM latency, and the rows' bytes.
  // (A pool in the epilogue needs the bands: the im2col route would run it
  // on its own, through DRAM.)
  const int64_t M = outRows * shape.outWidth;
  if (best && best->band < outRows && pool == 1)
    if (std::optional<MatMulPlan> im2col = planMatMul(M, K, N, epilogue, config, bytes)) {
      double copy = double(M) * (double(shape.kernel[0]) * config.dram.latency_cycles +
                                 rowCycles(K, kIm2ColBytes, config));
      if (im2col->estimatedCycles + copy < best->estimatedCycles)
        return std::nullopt;
    }
  return best;
}

int64_t activationPieceCols(int64_t tileM, int64_t K, int64_t tileK, const HardwareConfig &config) {
  const int64_t bankWords = int64_t(config.scratchpad.words() / config.scratchpad.banks);
  int64_t best = K, fewestBanks = 0;
  for (int64_t banks = 1; banks <= int64_t(config.scratchpad.banks); ++banks) {
    int64_t cols = banks * bankWords / tileM / tileK * tileK;
    if (2 * cols > K)
      break;
    if (cols < tileK)
      continue;
    // Whole pieces of `banks` banks each, the last one's rows in its own.
    int64_t used = K / cols * banks + llvm::divideCeil(K % cols * tileM, bankWords);
    if (best == K || used < fewestBanks)
      best = cols, fewestBanks = used;
  }
  return best;
}

MatMulMemoryNeeds minimumMatMulMemory(int64_t K, int64_t N, const EpilogueOperands &epilogue,
                                      const HardwareConfig &config) {
  // The smallest plan: one row, one weight tile, one buffer of each.
  const int64_t tileK = std::min<int64_t>(K, config.array.rows);
  BufferWords words = bufferWords(1, std::min<int64_t>(N, config.array.cols), tileK, tileK,
                                  epilogue, operandModes(epilogue).back(), config);
  return {words.block + words.panel + words.operands, words.tile};
}

} // namespace tpu::codegen
