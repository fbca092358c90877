#include "tpu/Target/TPU/VectorPlan.h"

#include "tpu/Target/TPU/IsaLimits.h"
#include "tpu/Target/TPU/MatMulPlan.h"
#include "tpu/Target/TPU/ProgramBuilder.h"
#include "tpu/isa/Error.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/DenseSet.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

namespace tpu::codegen {
namespace {

using mlir::tpu::Spread;

std::pair<int64_t, int64_t> shapeAsMatrix(mlir::Value value) {
  auto shape =
      mlir::tpu::matrixType(llvm::cast<mlir::RankedTensorType>(value.getType())).getShape();
  return {shape[0], shape[1]};
}

[[noreturn]] void noRoomForOneRow(const HardwareConfig &config, int64_t words) {
  throw Error(fmt::format("config '{}' has too little scratchpad for one row of {} words",
                          config.name, words));
}

// Word offsets in a row, first fit: what the row-group buffers take of each
// tile row.
class FirstFitRows {
public:
  int64_t allocate(int64_t words) {
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->second >= words) {
        int64_t offset = it->first;
        if (it->second > words)
          free_[offset + words] = it->second - words;
        free_.erase(it);
        return offset;
      }
    int64_t offset = end_;
    end_ += words;
    return offset;
  }
  void release(int64_t offset, int64_t words) {
    auto it = free_.emplace(offset, words).first;
    if (auto next = std::next(it); next != free_.end() && it->first + it->second == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin())
      if (auto previous = std::prev(it); previous->first + previous->second == it->first) {
        previous->second += it->second;
        free_.erase(it);
      }
  }
  int64_t peak() const { return end_; }

private:
  std::map<int64_t, int64_t> free_; // offset -> words
  int64_t end_ = 0;
};

// A vector op's work on a tile: the columns it covers in each row and the
// cycles of each group of lanes.
struct OpWork {
  int64_t cols;
  double groupCycles;
};

// A pass of the vector unit over a value of `rows` rows, in tiles of
// `tileRows` rows (and `columnTiles` tiles across) that alternate between
// `sets` sets of buffers: what each tile loads, computes and stores.
struct TiledWork {
  int64_t rows = 0, tileRows = 0, columnTiles = 1, sets = 1;
  llvm::SmallVector<int64_t> rowLoads;   // columns, loaded a row per tile row
  llvm::SmallVector<int64_t> wholeLoads; // columns, loaded one row each tile
  llvm::SmallVector<int64_t> onceLoads;  // columns, loaded one row before the tiles
  llvm::SmallVector<OpWork> ops;
  int64_t storeColumns = 0;
};

// Cycles of one DMA transfer of `n` rows of `cols` fp32 words on an idle bus
// (docs/simulator.md, "DRAM").
double transferCycles(int64_t n, int64_t cols, const HardwareConfig &config) {
  const double L = config.dram.latency_cycles;
  const int64_t O = config.dram.max_outstanding;
  const double b = std::ceil(4.0 * double(cols) / config.dram.bytes_per_cycle);
  if (double(O) * b >= L + b)
    return L + double(n) * b;
  return double((n - 1) / O) * (L + b) + L + double((n - 1) % O + 1) * b;
}

// With one set of buffers a tile's loads, vector ops and store follow one
// another and the tiles add up. With two, the vector unit works on tile i
// while the DMA stores tile i-1 and then loads tile i+1 into the set that
// store frees: tile i costs the longer of the two, plus the first tile's
// loads and the last one's store.
double estimateCycles(const TiledWork &work, const HardwareConfig &config) {
  const int64_t tiles = (work.rows + work.tileRows - 1) / work.tileRows;
  auto rowsOf = [&](int64_t i) {
    return i < 0 || i >= tiles ? 0 : std::min(work.tileRows, work.rows - i * work.tileRows);
  };
  auto load = [&](int64_t t) {
    double cycles = 0;
    for (int64_t cols : work.rowLoads)
      cycles += transferCycles(t, cols, config);
    for (int64_t cols : work.wholeLoads)
      cycles += transferCycles(1, cols, config);
    return t ? cycles : 0.0;
  };
  auto compute = [&](int64_t t) {
    double cycles = 0;
    for (const OpWork &op : work.ops) {
      double groups = op.groupCycles * std::ceil(double(op.cols) / double(config.vector.lanes));
      cycles += config.vector.pipeline_latency + double(t) * groups;
    }
    return cycles;
  };
  auto store = [&](int64_t t) { return t ? transferCycles(t, work.storeColumns, config) : 0.0; };
  auto tile = [&](int64_t i) {
    int64_t t = rowsOf(i);
    if (work.sets == 1)
      return load(t) + compute(t) + store(t);
    return std::max(compute(t), store(rowsOf(i - 1)) + load(rowsOf(i + 1)));
  };
  double cycles = work.sets == 1 ? 0.0 : load(rowsOf(0)) + store(rowsOf(tiles - 1));
  for (int64_t cols : work.onceLoads)
    cycles += transferCycles(1, cols, config);
  // Tiles 1 to tiles-3 have whole tiles on both sides: one estimate for all.
  const int64_t alike = std::max<int64_t>(0, tiles - 3);
  for (int64_t i = 0; i < tiles; i = i == 0 && alike ? tiles - 2 : i + 1)
    cycles += tile(i);
  cycles += double(alike) * tile(1);
  return double(work.columnTiles) * cycles;
}

// Columns a vector op covers in each row (its result's, or its input's for
// a reduction) and the cycles of a group of lanes (more for a
// transcendental).
OpWork opWork(mlir::Operation *op, const HardwareConfig &config) {
  auto unary = llvm::dyn_cast<mlir::tpu::UnaryOp>(op);
  std::optional<isa::Opcode> opcode = unary ? unaryOpcode(unary.getKind()) : std::nullopt;
  return {std::max(shapeAsMatrix(op->getOperand(0)).second, shapeAsMatrix(op->getResult(0)).second),
          opcode && isa::isTranscendental(*opcode)
              ? double(config.vector.transcendental_cycles_per_group)
              : 1.0};
}

bool isVectorOp(mlir::Operation *op) {
  return llvm::isa<mlir::tpu::BinaryOp, mlir::tpu::UnaryOp, mlir::tpu::ToIntOp,
                   mlir::tpu::ToFloatOp, mlir::tpu::ClampOp, mlir::tpu::RowReduceOp>(op);
}

// What `op` costs run on its own, on the tiles of `plan`.
double estimateAlone(mlir::Operation *op, mlir::tpu::VectorTilingAttr plan,
                     const HardwareConfig &config) {
  auto [rows, cols] = shapeAsMatrix(op->getResult(0));
  TiledWork work;
  work.rows = rows;
  work.tileRows = plan.getRows();
  // A reduction's tile covers whole rows; an elementwise op's tiles split
  // wide rows.
  bool reduces = llvm::isa<mlir::tpu::RowReduceOp>(op);
  if (!reduces)
    work.columnTiles = (cols + plan.getCols() - 1) / plan.getCols();
  auto across = [&](int64_t c) { return reduces ? c : std::min(c, plan.getCols()); };
  OpWork opWorkAlone = opWork(op, config);
  opWorkAlone.cols = across(opWorkAlone.cols);
  work.ops = {opWorkAlone};
  work.storeColumns = across(cols);
  for (mlir::Value operand : op->getOperands()) {
    int64_t operandCols = shapeAsMatrix(operand).second;
    if (loadsPerTileRow(operand, rows))
      work.rowLoads.push_back(across(operandCols));
    else
      work.wholeLoads.push_back(across(operandCols));
  }
  return estimateCycles(work, config);
}

// The words of a value a row group loads once (a row, a scalar).
int64_t onceWords(mlir::Value value) {
  auto [rows, cols] = shapeAsMatrix(value);
  return rows * cols;
}

// A row group's pass (without its tiles): its values from outside loaded,
// those with the group's rows a row per tile row, the others once, a
// transfer per run; every member a vector op; its value stored.
TiledWork groupWork(mlir::tpu::FusedOp group, const HardwareConfig &config) {
  TiledWork work;
  std::tie(work.rows, work.storeColumns) = shapeAsMatrix(group.getResult(0));
  llvm::DenseSet<mlir::Value> inside, loaded;
  for (mlir::Operation &op : group.getMembers()) {
    for (mlir::Value operand : op.getOperands())
      if (!inside.contains(operand) && loaded.insert(operand).second &&
          loadsPerTileRow(operand, work.rows))
        work.rowLoads.push_back(shapeAsMatrix(operand).second);
    inside.insert(op.getResult(0));
    if (isVectorOp(&op))
      work.ops.push_back(opWork(&op, config));
  }
  for (const llvm::SmallVector<mlir::Value> &run :
       onceLoadRuns(group, int64_t(config.vector.lanes))) {
    int64_t words = 0;
    for (mlir::Value value : run)
      words += onceWords(value);
    work.onceLoads.push_back(words);
  }
  return work;
}

} // namespace

mlir::tpu::VectorTilingAttr planVectorOp(mlir::Operation *op, const HardwareConfig &config) {
  if (!isVectorOp(op))
    return {};
  mlir::MLIRContext *context = op->getContext();
  auto [rows, cols] = shapeAsMatrix(op->getResult(0));
  if (auto binary = llvm::dyn_cast<mlir::tpu::BinaryOp>(op))
    return planElementwise(context, rows, cols,
                           mlir::tpu::spreadOf(binary.getLhs(), binary.getRhs()), config);
  if (llvm::isa<mlir::tpu::UnaryOp, mlir::tpu::ToIntOp, mlir::tpu::ToFloatOp>(op))
    return planElementwise(context, rows, cols, std::nullopt, config);
  if (llvm::isa<mlir::tpu::ClampOp>(op))
    return planElementwise(context, rows, cols, Spread::Scalar, config);
  auto input = shapeAsMatrix(llvm::cast<mlir::tpu::RowReduceOp>(op).getInput());
  return planRowReduce(context, input.first, input.second, config);
}

bool rowGroupPays(mlir::tpu::FusedOp group, const HardwareConfig &config) {
  mlir::tpu::RowGroupTilingAttr plan;
  try {
    plan = planRowGroup(group, config);
  } catch (const Error &) {
    return false;
  }
  TiledWork fused = groupWork(group, config);
  fused.tileRows = plan.getRows();
  fused.sets = plan.getSecondSet() ? 2 : 1;
  double alone = 0;
  for (mlir::Operation &op : group.getMembers()) {
    if (!isVectorOp(&op))
      continue;
    mlir::tpu::VectorTilingAttr own;
    try {
      own = planVectorOp(&op, config);
    } catch (const Error &) {
      return true; // the group fits where its member alone does not
    }
    alone += estimateAlone(&op, own, config);
  }
  return estimateCycles(fused, config) <= alone;
}

mlir::tpu::VectorTilingAttr planElementwise(mlir::MLIRContext *context, int64_t rows, int64_t cols,
                                            std::optional<Spread> operand,
                                            const HardwareConfig &config) {
  int64_t tileCols = std::min(cols, kMaxCols);
  // Scratchpad words per tile row, and independent of the tile's rows.
  int64_t perRow = tileCols + (!operand                     ? 0
                               : *operand == Spread::Same   ? tileCols
                               : *operand == Spread::Column ? 1
                                                            : 0);
  // A row operand is repeated up to the lanes (rowCopies).
  int64_t fixedWords = !operand                  ? 0
                       : *operand == Spread::Row ? std::max<int64_t>(tileCols, config.vector.lanes)
                       : *operand == Spread::Scalar ? 2 // clamp bounds take two
                                                    : 0;
  int64_t tileRows =
      std::min({rows, kMaxDmaRows, (int64_t(config.scratchpad.words()) - fixedWords) / perRow});
  if (tileRows < 1)
    noRoomForOneRow(config, perRow);
  std::optional<int64_t> operandAddress;
  if (operand)
    operandAddress = tileRows * tileCols;
  return mlir::tpu::VectorTilingAttr::get(context, tileRows, tileCols, 0, operandAddress, 0);
}

mlir::tpu::VectorTilingAttr planRowReduce(mlir::MLIRContext *context, int64_t rows, int64_t cols,
                                          const HardwareConfig &config) {
  if (cols > kMaxCols)
    throw Error(fmt::format("a row reduction over {} columns is not supported (at most {})", cols,
                            kMaxCols));
  int64_t tileRows = std::min({rows, kMaxDmaRows, int64_t(config.scratchpad.words()) / (cols + 1)});
  if (tileRows < 1)
    noRoomForOneRow(config, cols + 1);
  return mlir::tpu::VectorTilingAttr::get(context, tileRows, cols, 0, std::nullopt,
                                          tileRows * cols);
}

bool loadsPerTileRow(mlir::Value value, int64_t groupRows) {
  // Clamp bounds are two words however many rows the group has.
  auto isBounds = [](mlir::OpOperand &use) {
    return llvm::isa<mlir::tpu::ClampOp>(use.getOwner()) && use.getOperandNumber() == 1;
  };
  return shapeAsMatrix(value).first == groupRows && llvm::none_of(value.getUses(), isBounds);
}

bool repeatsInRowGroup(mlir::Value value, mlir::tpu::FusedOp group, int64_t lanes) {
  auto [rows, cols] = shapeAsMatrix(value);
  const int64_t groupRows = shapeAsMatrix(group.getResult(0)).first;
  if (rows != 1 || cols >= lanes || groupRows < 2 || value.getParentRegion() == &group.getBody())
    return false;
  bool read = false;
  for (mlir::OpOperand &use : value.getUses()) {
    if (!group->isProperAncestor(use.getOwner()))
      continue;
    auto binary = llvm::dyn_cast<mlir::tpu::BinaryOp>(use.getOwner());
    if (!binary || use.getOperandNumber() != 1 ||
        mlir::tpu::spreadOf(binary.getResult(), value) != Spread::Row)
      return false;
    read = true;
  }
  return read;
}

llvm::SmallVector<llvm::SmallVector<mlir::Value>> onceLoadRuns(mlir::tpu::FusedOp group,
                                                               int64_t lanes) {
  const int64_t groupRows = shapeAsMatrix(group.getResult(0)).first;
  auto packable = [&](mlir::Value value) {
    auto type = llvm::dyn_cast<mlir::RankedTensorType>(value.getType());
    return value.getDefiningOp<mlir::arith::ConstantOp>() && type &&
           type.getElementType().isF32() && !repeatsInRowGroup(value, group, lanes);
  };
  llvm::SmallVector<llvm::SmallVector<mlir::Value>> runs;
  llvm::DenseSet<mlir::Value> seen;
  int64_t runWords = 0;
  for (mlir::Operation &op : group.getMembers())
    for (mlir::Value operand : op.getOperands()) {
      if (operand.getParentRegion() == &group.getBody() || !seen.insert(operand).second ||
          loadsPerTileRow(operand, groupRows))
        continue;
      // One transfer's row holds at most kMaxCols elements.
      int64_t words = onceWords(operand);
      if (packable(operand) && !runs.empty() && packable(runs.back().back()) &&
          runWords + words <= kMaxCols) {
        runs.back().push_back(operand);
        runWords += words;
      } else {
        runs.push_back({operand});
        runWords = words;
      }
    }
  return runs;
}

mlir::tpu::RowGroupTilingAttr planRowGroup(mlir::tpu::FusedOp group, const HardwareConfig &config) {
  llvm::SmallVector<mlir::Operation *> members;
  llvm::DenseSet<mlir::Value> inside;
  for (mlir::Operation &op : group.getMembers()) {
    members.push_back(&op);
    inside.insert(op.getResult(0));
  }
  const int64_t groupRows = shapeAsMatrix(group.getResult(0)).first;
  // Values with the group's rows get tileRows x cols words, at an offset in
  // words of a tile row; the others a fixed place, loaded each tile.
  struct Slot {
    bool perRow;
    int64_t offset;
  };
  llvm::DenseMap<mlir::Value, Slot> buffers;
  llvm::SmallVector<mlir::Value> inputs, results;
  // A per-row buffer is reused once its value is dead: each lives from its
  // definition (the tile's loads, for values from outside) to its last
  // reader; the group's value to the store.
  llvm::DenseMap<mlir::Value, size_t> lastUse;
  for (auto [index, op] : llvm::enumerate(members))
    for (mlir::Value operand : op->getOperands())
      lastUse[operand] = index;
  lastUse[members.back()->getResult(0)] = members.size();
  FirstFitRows perRowWords;
  int64_t fixed = 0;
  auto place = [&](mlir::Value value) {
    auto [rows, cols] = shapeAsMatrix(value);
    if (cols > kMaxCols)
      throw Error(
          fmt::format("a fused row of {} columns is not supported (at most {})", cols, kMaxCols));
    bool perRow = loadsPerTileRow(value, groupRows);
    buffers[value] = {perRow, perRow ? perRowWords.allocate(cols) : fixed};
    if (!perRow)
      fixed += repeatsInRowGroup(value, group, int64_t(config.vector.lanes))
                   ? int64_t(config.vector.lanes)
                   : rows * cols;
  };
  for (mlir::Operation *op : members)
    for (mlir::Value operand : op->getOperands())
      if (!inside.contains(operand) && !buffers.count(operand)) {
        place(operand);
        inputs.push_back(operand);
      }
  for (auto [index, op] : llvm::enumerate(members)) {
    place(op->getResult(0));
    results.push_back(op->getResult(0));
    for (mlir::Value operand : op->getOperands()) {
      const Slot &buffer = buffers.find(operand)->second;
      if (buffer.perRow && lastUse.lookup(operand) == index)
        perRowWords.release(buffer.offset, shapeAsMatrix(operand).second);
    }
  }
  const int64_t perRow = perRowWords.peak();
  // The tile rows and buffer sets the cost model estimates fastest. Fixed
  // places first, then one set of per-row buffers right after them, or two
  // sets, each and the fixed places in banks of their own: the DMA filling
  // or storing one set then never waits for the vector unit on the other.
  struct Choice {
    int64_t rows;
    uint64_t first;                   // the first set's address
    std::optional<int64_t> secondSet; // words from the first set to the second
    double cycles;
  };
  std::optional<Choice> best;
  TiledWork work = groupWork(group, config);
  const uint64_t words = config.scratchpad.words();
  for (int64_t sets : {1, 2})
    for (int64_t rows = std::min(groupRows, kMaxDmaRows); rows >= 1; --rows) {
      uint64_t setWords = uint64_t(perRow * rows);
      std::optional<Placement> placed;
      if (sets == 1 && uint64_t(fixed) + setWords <= words)
        placed = Placement{{0, uint64_t(fixed)}, false};
      else if (sets == 2)
        placed = placeBuffers({{uint64_t(fixed)}, {setWords}, {setWords}}, words,
                              config.scratchpad.banks);
      if (!placed || (sets == 2 && !placed->ownBanks))
        continue;
      work.tileRows = rows;
      work.sets = sets;
      double cycles = estimateCycles(work, config);
      if (best && cycles >= best->cycles)
        continue;
      best = Choice{rows, placed->addresses[1], std::nullopt, cycles};
      if (sets == 2)
        best->secondSet = int64_t(placed->addresses[2] - placed->addresses[1]);
    }
  if (!best)
    noRoomForOneRow(config, perRow);
  auto addresses = [&](llvm::ArrayRef<mlir::Value> values) {
    llvm::SmallVector<int64_t> at;
    for (mlir::Value value : values) {
      const Slot &buffer = buffers.find(value)->second;
      at.push_back(buffer.perRow ? int64_t(best->first) + buffer.offset * best->rows
                                 : buffer.offset);
    }
    return at;
  };
  return mlir::tpu::RowGroupTilingAttr::get(group.getContext(), best->rows, addresses(inputs),
                                            addresses(results), best->secondSet);
}

} // namespace tpu::codegen
