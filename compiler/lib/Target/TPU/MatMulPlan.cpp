#include "tpu/Target/TPU/MatMulPlan.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tpu::codegen {
namespace {

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

// Words of one buffer of each role for output tiles of tileM x tileN and
// activation blocks of kBlock columns; the operand is one fill of the
// epilogue's largest: per tile row, or fixed.
struct BufferWords {
  uint64_t block, panel, operand, tile;
};

BufferWords bufferWords(int64_t tileM, int64_t tileN, int64_t kBlock,
                        const EpilogueOperands &epilogue) {
  int64_t operand = std::max<int64_t>(
      {epilogue.tile ? tileM * tileN : 0, epilogue.row ? tileN : 0, epilogue.scalar ? 2 : 0});
  return {uint64_t(tileM * kBlock), uint64_t(kBlock * tileN), uint64_t(operand),
          uint64_t(tileM * tileN)};
}

// One way to run the matmul: tile sizes and how many buffers each role
// gets (two let the producer fill one while the consumer reads the other).
struct Candidate {
  int64_t tileM, tileN, kBlock;
  int activationBuffers, weightBuffers, accumulatorBuffers;
};

// sum over the tiles of `total` in steps of `tile` of f(size of the tile).
template <typename F> double overTiles(int64_t total, int64_t tile, F f) {
  double sum = double(total / tile) * f(tile);
  if (total % tile)
    sum += f(total % tile);
  return sum;
}

// The cost model (docs/compiler.md, "Choosing the matmul tiling"): cycles
// as the larger of the array's and the DRAM bus's busy time, plus what a
// single buffer serializes.
double estimateCycles(const Candidate &c, int64_t M, int64_t K, int64_t N, int64_t tileK,
                      const EpilogueOperands &epilogue, const HardwareConfig &config) {
  const double R = config.array.rows, C = double(config.array.cols);
  const double bytesPerCycle = config.dram.bytes_per_cycle;
  // Bus cycles of one DMA row of `elements` fp32 words.
  auto row = [&](int64_t elements) { return std::ceil(4.0 * double(elements) / bytesPerCycle); };
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
  // A fused epilogue runs on the compute queue, one vector op over the tile
  // at a time, after the tile's last mm has drained (R + C): the next tile's
  // mm waits for it, where without an epilogue it streams on (the last
  // tile's drain is in both).
  if (epilogue.ops > 0)
    compute += (mTiles * nTiles - 1) * (R + C) + overTiles(M, c.tileM, [&](int64_t m) {
                 return overTiles(N, c.tileN, [&](int64_t n) {
                   return double(epilogue.ops) *
                          (config.vector.pipeline_latency +
                           double(m) * std::ceil(double(n) / double(config.vector.lanes)));
                 });
               });
  // DRAM: row requests of each transfer.
  double rowsOfN = overTiles(N, c.tileN, row); // one row of every output tile
  double weights = mTiles * double(K) * rowsOfN;
  double activationLoads = c.kBlock >= K ? 1.0 : nTiles;
  double activations = activationLoads * double(M) * overTiles(K, c.kBlock, row);
  double results = double(M) * rowsOfN;
  double operands = epilogue.tile ? results : epilogue.row ? mTiles * rowsOfN : 0.0;
  if (epilogue.scalar)
    operands += mTiles * nTiles;
  double dram = weights + activations + results + operands;
  // One buffer: its producer waits for its consumer, so its transfers add up.
  double serialized = 0;
  bool activationsRefill = c.tileM < M || c.kBlock < K;
  if (c.activationBuffers == 1 && activationsRefill)
    serialized += activations;
  if (c.weightBuffers == 1)
    serialized += weights;
  if (c.accumulatorBuffers == 1)
    serialized += results + operands + mTiles * nTiles * (R + C);
  return std::max(compute, dram) + serialized;
}

} // namespace

std::optional<MatMulPlan> planMatMul(int64_t M, int64_t K, int64_t N,
                                     const EpilogueOperands &epilogue,
                                     const HardwareConfig &config) {
  const int64_t tileK = std::min<int64_t>(K, config.array.rows);
  const int64_t C = config.array.cols;
  // Output tiles of C columns, or several C-wide chunks, so that an
  // activation block serves more of them per load; the whole N at most.
  std::vector<int64_t> tileNs;
  for (int64_t width = C; width < N && width <= kMaxCols; width *= 2)
    tileNs.push_back(width);
  if (N <= kMaxCols)
    tileNs.push_back(N);
  // Activation blocks of the whole K, else multiples of tileK.
  std::vector<int64_t> kBlocks;
  if (K <= kMaxCols && K <= kMaxDmaRows)
    kBlocks.push_back(K);
  for (int64_t width = std::min<int64_t>({K, kMaxCols, kMaxDmaRows}) / tileK * tileK;
       width >= tileK; width = width / 2 / tileK * tileK)
    if (width < K)
      kBlocks.push_back(width);

  std::optional<MatMulPlan> best;
  for (int64_t tileN : tileNs) {
    int64_t mostRows = std::min({M, kMaxDmaRows, int64_t(config.accumulator.words()) / tileN});
    for (int64_t tileM = mostRows; tileM >= 1; tileM /= 2)
      for (int64_t kBlock : kBlocks)
        for (int activationBuffers : {2, 1})
          for (int weightBuffers : {2, 1})
            for (int accumulatorBuffers : {2, 1}) {
              Candidate candidate{
                  tileM, tileN, kBlock, activationBuffers, weightBuffers, accumulatorBuffers};
              BufferWords words = bufferWords(tileM, tileN, kBlock, epilogue);
              // A second activation block only when there is a second to load.
              bool refills = tileM < M || kBlock < K;
              uint64_t secondBlock = refills && activationBuffers == 2 ? words.block : 0;
              uint64_t secondPanel = weightBuffers == 2 ? words.panel : 0;
              auto scratchpad = placeBuffers({{words.block},
                                              {secondBlock},
                                              {words.panel},
                                              {secondPanel},
                                              {words.operand, true}},
                                             config.scratchpad.words(), config.scratchpad.banks);
              auto accumulator =
                  placeBuffers({{words.tile}, {accumulatorBuffers == 2 ? words.tile : 0}},
                               config.accumulator.words(), config.accumulator.banks);
              if (!scratchpad || !accumulator)
                continue;
              // Packed buffers share banks: the unit reading one holds up the
              // DMA filling the other, as if there were one.
              Candidate effective = candidate;
              if (!scratchpad->ownBanks)
                effective.activationBuffers = effective.weightBuffers = 1;
              if (!accumulator->ownBanks)
                effective.accumulatorBuffers = 1;
              double cycles = estimateCycles(effective, M, K, N, tileK, epilogue, config);
              if (best && cycles >= best->estimatedCycles)
                continue;
              const std::vector<uint64_t> &sp = scratchpad->addresses,
                                          &acc = accumulator->addresses;
              auto pair = [](uint64_t first, uint64_t second, bool two) {
                return std::array<int64_t, 2>{int64_t(first), int64_t(two ? second : first)};
              };
              MatMulPlan plan;
              plan.tileM = tileM, plan.tileN = tileN, plan.tileK = tileK, plan.kBlock = kBlock;
              plan.activations = pair(sp[0], sp[1], secondBlock > 0);
              plan.weights = pair(sp[2], sp[3], weightBuffers == 2);
              // The epilogue loads its operands just before it uses them, one
              // op after the other: one buffer serves.
              plan.operands = {int64_t(sp[4]), int64_t(sp[4])};
              plan.accumulators = pair(acc[0], acc[1], accumulatorBuffers == 2);
              plan.estimatedCycles = cycles;
              best = plan;
            }
  }
  return best;
}

MatMulMemoryNeeds minimumMatMulMemory(int64_t K, int64_t N, const EpilogueOperands &epilogue,
                                      const HardwareConfig &config) {
  // The smallest plan: one row, one weight tile, one buffer of each.
  BufferWords words = bufferWords(1, std::min<int64_t>(N, config.array.cols),
                                  std::min<int64_t>(K, config.array.rows), epilogue);
  return {words.block + words.panel + words.operand, words.tile};
}

} // namespace tpu::codegen
