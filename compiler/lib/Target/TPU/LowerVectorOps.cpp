// tpu-lower-vector-ops: elementwise ops, row reductions and row-local fusion
// groups to the vector unit's instructions, on tiles in the scratchpad.
#include "tpu/Target/TPU/IsaLimits.h"
#include "tpu/Target/TPU/Passes.h"
#include "tpu/Target/TPU/ProgramBuilder.h"
#include "tpu/Target/TPU/VectorPlan.h"
#include "tpu/isa/Error.h"

#include <fmt/format.h>

#include "llvm/ADT/MapVector.h"

#include <map>

namespace mlir::tpu {
#define GEN_PASS_DEF_LOWERVECTOROPS
#include "tpu/Target/TPU/Passes.h.inc"
} // namespace mlir::tpu

namespace tpu::codegen {
namespace {

using isa::Opcode;
using isa::Queue;
using mlir::Value;
using mlir::tpu::Spread;

class VectorLowering {
public:
  VectorLowering(const HardwareConfig &config, ProgramBuilder &builder)
      : config(config), builder(builder) {}

  // A group of row-local ops (elementwise, row reductions) over the same rows,
  // such as a whole softmax or layer normalization: what it loads whole (a
  // row, a scalar) comes in once; then per tile of whole rows, its rows of
  // the operands from outside come in, every op runs on its planned
  // scratchpad buffers, and only the last value is stored. The tiles take
  // the plan's sets of buffers in turn (BufferRing): the next tile is
  // loaded, as soon as the store of the tile before this one has freed its
  // set, while the vector unit works on this one.
  void emitRowGroup(mlir::tpu::FusedOp group, const Matrix &output) {
    auto plan = planOf<mlir::tpu::RowGroupTilingAttr>(group);
    llvm::DenseMap<Value, uint64_t> buffers;
    llvm::SmallVector<Value> inputs;
    for (mlir::Operation &op : group.getMembers())
      for (Value operand : op.getOperands())
        if (operand.getParentRegion() != &group.getBody() && !buffers.count(operand)) {
          buffers[operand] = uint64_t(plan.getInputs()[inputs.size()]);
          inputs.push_back(operand);
        }
    for (auto [op, address] : llvm::zip(group.getMembers(), plan.getResults()))
      buffers[op.getResult(0)] = uint64_t(address);
    auto perRow = [&](Value value) { return loadsPerTileRow(value, output.rows); };
    const int64_t tileRows = plan.getRows();
    // The rows the group repeats (repeatsInRowGroup), each loaded as often
    // as any tile's ops take it.
    llvm::DenseSet<Value> repeated;
    for (Value input : inputs)
      if (repeatsInRowGroup(input, group, int64_t(config.vector.lanes)))
        repeated.insert(input);
    const int64_t lastRows = output.rows % tileRows ? output.rows % tileRows : tileRows;
    auto copiesOf = [&](Value value) {
      const VectorStep step = rowStep(value);
      return std::max(rowCopies(step, tileRows, step.operand.cols, config),
                      rowCopies(step, lastRows, step.operand.cols, config));
    };
    const Value result = group.getBody().front().getTerminator()->getOperand(0);
    // The sets as offsets from the first set's buffers; the store reads a
    // set last and frees it.
    BufferRing sets({0, plan.getSecondSet().value_or(0)}, Queue::Load, Queue::Compute,
                    Queue::Store);
    struct Tile {
      int64_t r0, rows;
      uint64_t set;
      Value filled;
    };
    builder.beforeLoad();
    // What comes in once, a row each, side by side in the scratchpad: a run
    // that is side by side in DRAM too (constants tpu-plan-memory packed
    // for this group) comes in with one transfer.
    std::optional<std::pair<Matrix, uint64_t>> run; // DRAM, scratchpad
    auto loadRun = [&] {
      if (run)
        builder.load(run->first, 0, 0, 1, run->first.cols, isa::Space::Scratchpad, run->second);
    };
    for (Value input : inputs) {
      if (perRow(input))
        continue;
      Matrix source = matrixOf(input);
      uint64_t at = buffers.lookup(input);
      if (repeated.contains(input)) {
        loadRun();
        run.reset();
        builder.repeatRow(source, 0, source.cols, copiesOf(input), at);
        continue;
      }
      if (run && run->first.dtype == source.dtype &&
          run->first.at(0, run->first.cols) == source.address &&
          run->second + uint64_t(run->first.cols) == at &&
          run->first.cols + source.cols <= kMaxCols) {
        run->first.cols += source.cols;
        continue;
      }
      loadRun();
      run = {source, at};
    }
    loadRun();
    auto fill = [&](int64_t r0) {
      Tile tile{r0, std::min(tileRows, output.rows - r0), sets.startFill(builder), {}};
      for (Value input : inputs)
        if (perRow(input))
          builder.load(matrixOf(input), r0, 0, tile.rows, matrixOf(input).cols,
                       isa::Space::Scratchpad, buffers.lookup(input) + tile.set);
      tile.filled = sets.endFill(builder);
      return tile;
    };
    const mlir::Location head = builder.sourceLocation();
    std::optional<Tile> next = fill(0);
    while (next) {
      Tile tile = *next;
      next.reset();
      bool more = tile.r0 + tile.rows < output.rows;
      if (more && sets.nextIsFree())
        next = fill(tile.r0 + tile.rows);
      sets.use(builder, tile.filled);
      auto address = [&](Value value) {
        return buffers.lookup(value) + (perRow(value) ? tile.set : 0);
      };
      for (mlir::Operation &op : group.getMembers()) {
        builder.setSource(&op);
        emitRowLocal(op, tile.rows, address, repeated);
      }
      builder.setSource(head);
      builder.await(builder.signal(Queue::Compute, Queue::Store));
      builder.store(output, tile.r0, 0, tile.rows, output.cols, isa::Space::Scratchpad,
                    address(result));
      sets.release(builder, tile.set);
      if (more && !next)
        next = fill(tile.r0 + tile.rows);
    }
  }

  // The step of an op of a row group whose row operand `row` the group
  // repeats (repeatsInRowGroup): its copies fill the lanes.
  static VectorStep rowStep(Value row, std::optional<Opcode> opcode = std::nullopt) {
    VectorStep step{matrixOf(row), Spread::Row, opcode};
    step.foldsRows = true;
    return step;
  }

  // One row-local op on dense scratchpad buffers of `rows` rows, the rows
  // in `repeated` there as copies.
  template <typename AddressOf>
  void emitRowLocal(mlir::Operation &op, int64_t rows, const AddressOf &address,
                    const llvm::DenseSet<Value> &repeated) {
    Value result = op.getResult(0);
    auto [valueRows, cols] = matrixShape(result);
    if (auto reduce = llvm::dyn_cast<mlir::tpu::RowReduceOp>(op)) {
      Value input = reduce.getInput();
      builder.emit(vectorOp(reduce.getKind() == mlir::tpu::ReduceKind::sum ? Opcode::VRowSum
                                                                           : Opcode::VRowMax,
                            address(result), address(input), rows, matrixShape(input).second));
    } else if (auto binary = llvm::dyn_cast<mlir::tpu::BinaryOp>(op)) {
      auto [rhsRows, rhsCols] = matrixShape(binary.getRhs());
      VectorStep step{{0, rhsRows, rhsCols},
                      *mlir::tpu::spreadOf({valueRows, cols}, {rhsRows, rhsCols}),
                      binaryOpcode(binary.getKind())};
      if (repeated.contains(binary.getRhs()))
        step = rowStep(binary.getRhs(), step.opcode);
      emitStep(builder, step, address(result), address(binary.getLhs()), address(binary.getRhs()),
               rows, cols, config);
    } else if (auto unary = llvm::dyn_cast<mlir::tpu::UnaryOp>(op)) {
      emitStep(builder, {{}, Spread::Same, unaryOpcode(unary.getKind()).value_or(Opcode::VCopy)},
               address(result), address(unary.getInput()), 0, rows, cols, config);
    } else if (auto clamp = llvm::dyn_cast<mlir::tpu::ClampOp>(op)) {
      emitStep(builder, {{0, 1, 2}, Spread::Scalar, Opcode::VClamp}, address(result),
               address(clamp.getInput()), address(clamp.getBounds()), rows, cols, config);
    }
  }

  // Vector unit, one op: tiles of rows x cols in the scratchpad (columns
  // split when a row is longer than the cols field), operated on in place.
  void emitElementwise(const Matrix &input, const Matrix &output, const VectorStep &step,
                       mlir::tpu::VectorTilingAttr plan) {
    const int64_t tileRows = plan.getRows(), tileCols = plan.getCols();
    const bool binary = step.operand.rows > 0;
    const uint64_t tileAddress = uint64_t(plan.getInput());
    const uint64_t operandAddress = uint64_t(plan.getOperand().value_or(0));
    // A copy stores what was loaded.
    const uint64_t resultAddress = step.opcode ? uint64_t(plan.getOutput()) : tileAddress;
    for (int64_t c0 = 0; c0 < output.cols; c0 += tileCols) {
      int64_t cols = std::min(tileCols, output.cols - c0);
      for (int64_t r0 = 0; r0 < output.rows; r0 += tileRows) {
        int64_t rows = std::min(tileRows, output.rows - r0);
        builder.beforeLoad();
        builder.load(input, r0, c0, rows, cols, isa::Space::Scratchpad, tileAddress);
        if (binary)
          loadOperand(builder, step, r0, c0, rows, cols, operandAddress, config);
        if (!step.opcode) {
          builder.dependsOn(Queue::Load, Queue::Store);
        } else {
          builder.beforeCompute();
          emitStep(builder, step, resultAddress, tileAddress, operandAddress, rows, cols, config);
          builder.beforeStore();
        }
        builder.store(output, r0, c0, rows, cols, isa::Space::Scratchpad, resultAddress);
      }
    }
  }

  // Vector unit row reduction (v.rowsum / v.rowmax): whole rows, as many as
  // fit in the scratchpad with their results; the row must fit the cols
  // field, as splitting it would change the order of the sum.
  void emitRowReduce(const Matrix &input, const Matrix &output, Opcode opcode,
                     mlir::tpu::VectorTilingAttr plan) {
    const int64_t tileRows = plan.getRows();
    const uint64_t tileAddress = uint64_t(plan.getInput());
    const uint64_t resultAddress = uint64_t(plan.getOutput());
    for (int64_t r0 = 0; r0 < input.rows; r0 += tileRows) {
      int64_t rows = std::min(tileRows, input.rows - r0);
      builder.beforeLoad();
      builder.load(input, r0, 0, rows, input.cols, isa::Space::Scratchpad, tileAddress);
      builder.beforeCompute();
      builder.emit(vectorOp(opcode, resultAddress, tileAddress, rows, input.cols));
      builder.beforeStore();
      builder.store(output, r0, 0, rows, 1, isa::Space::Scratchpad, resultAddress);
    }
  }

private:
  const HardwareConfig &config;
  ProgramBuilder &builder;
};

bool isRowGroup(mlir::Operation *op) {
  auto fused = llvm::dyn_cast<mlir::tpu::FusedOp>(op);
  return fused && !fused.hasEpilogue();
}

// The lowerings as patterns, one per operation the vector unit runs.
template <typename Op> struct LowerWithVectorUnit : LoweringPattern<Op> {
  using LoweringPattern<Op>::LoweringPattern;
  mlir::LogicalResult matchAndRewrite(Op op, mlir::PatternRewriter &rewriter) const override {
    if constexpr (std::is_same_v<Op, mlir::tpu::FusedOp>)
      if (!isRowGroup(op))
        return mlir::failure();
    return lowerInPlace(op, rewriter, [&](ProgramBuilder &builder) {
      VectorLowering lowering(this->config, builder);
      if constexpr (std::is_same_v<Op, mlir::tpu::RowReduceOp>) {
        lowering.emitRowReduce(matrixOf(op.getInput()), matrixOf(op.getResult()),
                               op.getKind() == mlir::tpu::ReduceKind::sum ? Opcode::VRowSum
                                                                          : Opcode::VRowMax,
                               planOf<mlir::tpu::VectorTilingAttr>(op));
      } else if constexpr (std::is_same_v<Op, mlir::tpu::FusedOp>) {
        lowering.emitRowGroup(op, matrixOf(op.getResult(0)));
      } else {
        VectorStep step = elementwiseStep(*op, op->getOperand(0));
        step.foldsRows = true; // planElementwise leaves room for a row's copies
        lowering.emitElementwise(matrixOf(op->getOperand(0)), matrixOf(op->getResult(0)), step,
                                 planOf<mlir::tpu::VectorTilingAttr>(op));
      }
    });
  }
};

} // namespace
} // namespace tpu::codegen

namespace {

class LowerVectorOps : public mlir::tpu::impl::LowerVectorOpsBase<LowerVectorOps> {
public:
  void runOnOperation() override {
    if (mlir::failed(
            tpu::codegen::lowerOperations<tpu::codegen::LowerWithVectorUnit<mlir::tpu::BinaryOp>,
                                          tpu::codegen::LowerWithVectorUnit<mlir::tpu::UnaryOp>,
                                          tpu::codegen::LowerWithVectorUnit<mlir::tpu::ClampOp>,
                                          tpu::codegen::LowerWithVectorUnit<mlir::tpu::ToIntOp>,
                                          tpu::codegen::LowerWithVectorUnit<mlir::tpu::ToFloatOp>,
                                          tpu::codegen::LowerWithVectorUnit<mlir::tpu::RowReduceOp>,
                                          tpu::codegen::LowerWithVectorUnit<mlir::tpu::FusedOp>>(
                getOperation(), [](mlir::Operation *op) {
                  return llvm::isa<mlir::tpu::BinaryOp, mlir::tpu::UnaryOp, mlir::tpu::ClampOp,
                                   mlir::tpu::ToIntOp, mlir::tpu::ToFloatOp,
                                   mlir::tpu::RowReduceOp>(op) ||
                         tpu::codegen::isRowGroup(op);
                })))
      signalPassFailure();
  }
};

} // namespace
