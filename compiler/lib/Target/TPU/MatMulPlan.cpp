#include "tpu/Target/TPU/MatMulPlan.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <vector>

namespace tpu::codegen {
namespace {

struct Buffer {
  uint64_t words;
  bool shared = false; // may share a bank with the buffer before it
};

// Places buffers in a memory of `words` words with `banks` banks: each
// buffer that is not `shared` with the one before it starts a bank of its
// own when they all fit that way (so that a DMA filling one never waits for
// a unit reading another), else they are packed. Empty buffers take no room.
std::optional<std::vector<uint64_t>> placeBuffers(const std::vector<Buffer> &buffers,
                                                  uint64_t words, uint64_t banks) {
  uint64_t bankWords = words / banks;
  for (bool aligned : {true, false}) {
    std::vector<uint64_t> addresses;
    uint64_t next = 0;
    for (const Buffer &buffer : buffers) {
      if (aligned && !buffer.shared && buffer.words > 0)
        next = llvm::alignTo(next, bankWords);
      addresses.push_back(next);
      next += buffer.words;
    }
    if (next <= words)
      return addresses;
  }
  return std::nullopt;
}

} // namespace

std::optional<MatMulPlan> planMatMul(int64_t M, int64_t K, int64_t N,
                                     const EpilogueOperands &epilogue,
                                     const HardwareConfig &config) {
  MatMulPlan plan;
  plan.tileK = std::min<int64_t>(K, config.array.rows);
  plan.tileN = std::min<int64_t>(N, config.array.cols);
  const int64_t tileN = plan.tileN;
  // One fill of the largest epilogue operand: per tile row, or fixed.
  int64_t operandWords = epilogue.tile ? tileN : 0;
  int64_t operandFixed = std::max<int64_t>(epilogue.row ? tileN : 0, epilogue.scalar ? 2 : 0);

  // Buffers for tiles of tileM rows and activation blocks of kBlock columns.
  auto place = [&](int64_t tileM, int64_t kBlock) {
    if (kBlock > kMaxDmaRows || kBlock > kMaxCols)
      return false;
    uint64_t operandSize = uint64_t(std::max(tileM * operandWords, operandFixed));
    uint64_t block = uint64_t(tileM * kBlock), panel = uint64_t(kBlock * tileN);
    // A second activation block only when there is a second to load.
    bool refills = tileM < M || kBlock < K;
    auto scratchpad = placeBuffers(
        {{block}, {refills ? block : 0}, {panel}, {panel}, {operandSize}, {operandSize, true}},
        config.scratchpad.words(), config.scratchpad.banks);
    auto accumulator = placeBuffers({{uint64_t(tileM * tileN)}, {uint64_t(tileM * tileN)}},
                                    config.accumulator.words(), config.accumulator.banks);
    if (!scratchpad || !accumulator)
      return false;
    plan.tileM = tileM;
    plan.kBlock = kBlock;
    const std::vector<uint64_t> &sp = *scratchpad, &acc = *accumulator;
    plan.activations = {int64_t(sp[0]), int64_t(sp[1])};
    plan.weights = {int64_t(sp[2]), int64_t(sp[3])};
    plan.operands = {int64_t(sp[4]), int64_t(sp[5])};
    plan.accumulators = {int64_t(acc[0]), int64_t(acc[1])};
    return true;
  };
  // Preferably the whole K per block, with enough rows per tile to keep the
  // array streaming (R); else the most rows, with the widest block.
  const int64_t mostRows =
      std::min({M, kMaxDmaRows, int64_t(config.accumulator.words()) / (2 * tileN)});
  const int64_t streamingRows = std::min<int64_t>(mostRows, config.array.rows);
  for (int64_t tileM = mostRows; tileM >= streamingRows && tileM >= 1; tileM /= 2)
    if (place(tileM, K))
      return plan;
  for (int64_t tileM = mostRows; tileM >= 1; tileM /= 2)
    for (int64_t kBlock = std::min<int64_t>(K, kMaxCols) / plan.tileK * plan.tileK;
         kBlock >= plan.tileK; kBlock -= plan.tileK)
      if (place(tileM, kBlock))
        return plan;
  return std::nullopt;
}

} // namespace tpu::codegen
