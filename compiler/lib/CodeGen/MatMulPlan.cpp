#include "tpu/CodeGen/MatMulPlan.h"

#include "mlir/IR/Builders.h"

#include <algorithm>
#include <vector>

namespace tpu::codegen {
namespace {

uint64_t alignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

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
        next = alignUp(next, bankWords);
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
    std::copy(scratchpad->begin(), scratchpad->end(), plan.scratchpad.begin());
    std::copy(accumulator->begin(), accumulator->end(), plan.accumulator.begin());
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

mlir::DictionaryAttr MatMulPlan::toAttr(mlir::MLIRContext *context) const {
  mlir::Builder builder(context);
  auto array = [&](auto words) {
    return builder.getDenseI64ArrayAttr(std::vector<int64_t>(words.begin(), words.end()));
  };
  return builder.getDictionaryAttr({
      builder.getNamedAttr("tile_m", builder.getI64IntegerAttr(tileM)),
      builder.getNamedAttr("tile_n", builder.getI64IntegerAttr(tileN)),
      builder.getNamedAttr("tile_k", builder.getI64IntegerAttr(tileK)),
      builder.getNamedAttr("k_block", builder.getI64IntegerAttr(kBlock)),
      builder.getNamedAttr("scratchpad", array(scratchpad)),
      builder.getNamedAttr("accumulator", array(accumulator)),
  });
}

std::optional<MatMulPlan> MatMulPlan::fromAttr(mlir::DictionaryAttr attr) {
  if (!attr)
    return std::nullopt;
  auto integer = [&](const char *name) -> std::optional<int64_t> {
    if (auto value = attr.getAs<mlir::IntegerAttr>(name))
      return value.getInt();
    return std::nullopt;
  };
  auto scratchpad = attr.getAs<mlir::DenseI64ArrayAttr>("scratchpad");
  auto accumulator = attr.getAs<mlir::DenseI64ArrayAttr>("accumulator");
  auto tileM = integer("tile_m"), tileN = integer("tile_n"), tileK = integer("tile_k"),
       kBlock = integer("k_block");
  if (!tileM || !tileN || !tileK || !kBlock || !scratchpad || scratchpad.size() != 6 ||
      !accumulator || accumulator.size() != 2)
    return std::nullopt;
  MatMulPlan plan;
  plan.tileM = *tileM;
  plan.tileN = *tileN;
  plan.tileK = *tileK;
  plan.kBlock = *kBlock;
  std::copy(scratchpad.asArrayRef().begin(), scratchpad.asArrayRef().end(),
            plan.scratchpad.begin());
  std::copy(accumulator.asArrayRef().begin(), accumulator.asArrayRef().end(),
            plan.accumulator.begin());
  return plan;
}

} // namespace tpu::codegen
