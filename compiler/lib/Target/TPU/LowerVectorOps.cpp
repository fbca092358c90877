// tpu-lower-vector-ops: elementwise ops, row reductions and row-local fusion
// groups to the vector unit's instructions, on tiles in the scratchpad.
#include "tpu/Dialect/TargetConfig.h"
#include "tpu/Target/TPU/IsaLimits.h"
#include "tpu/Target/TPU/Passes.h"
#include "tpu/Target/TPU/ProgramBuilder.h"
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

  // Word offsets in a row, first fit: what the row-group buffers take of
  // each tile row.
  class FirstFitRows {
  public:
    uint64_t allocate(int64_t words) {
      for (auto it = free_.begin(); it != free_.end(); ++it)
        if (it->second >= words) {
          uint64_t offset = it->first;
          if (it->second > words)
            free_[offset + words] = it->second - words;
          free_.erase(it);
          return offset;
        }
      uint64_t offset = end_;
      end_ += words;
      peak_ = std::max(peak_, int64_t(end_));
      return offset;
    }
    void release(uint64_t offset, int64_t words) {
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
    int64_t peak() const { return peak_; }

  private:
    std::map<uint64_t, int64_t> free_; // offset -> words
    uint64_t end_ = 0;
    int64_t peak_ = 0;
  };

  // A group of row-local ops (elementwise, row reductions) over the same rows,
  // such as a whole softmax or layer normalization: per tile of whole rows,
  // the operands from outside come in once, every op runs on scratchpad
  // buffers (one per value, dense), and only the last value is stored.
  void emitRowGroup(llvm::ArrayRef<mlir::Operation *> members, const Matrix &output) {
    llvm::DenseSet<Value> inside;
    for (mlir::Operation *op : members)
      inside.insert(op->getResult(0));
    // Buffers: values with the group's rows get tileRows x cols words, others
    // (one row, one element, clamp bounds) a fixed place loaded each tile.
    struct Buffer {
      Matrix matrix; // where it comes from in DRAM (outside values)
      int64_t cols = 0;
      bool perRow = true;
      uint64_t offset = 0; // fixed: address; per row: offset in tile-row words
      bool load = false;
    };
    llvm::MapVector<Value, Buffer> buffers;
    // Per-row buffers are reused once their value is dead: each lives from
    // its definition (the tile's loads, for values from outside) to its last
    // reader; the group's value to the store.
    llvm::DenseMap<Value, size_t> lastUse;
    for (auto [index, op] : llvm::enumerate(members))
      for (Value operand : op->getOperands())
        lastUse[operand] = index;
    lastUse[members.back()->getResult(0)] = members.size();
    FirstFitRows perRowWords;
    int64_t fixed = 0;
    // Clamp bounds are two words however many rows the group has.
    auto isBounds = [](mlir::OpOperand &use) {
      return llvm::isa<mlir::tpu::ClampOp>(use.getOwner()) && use.getOperandNumber() == 1;
    };
    auto place = [&](Value value, bool outside) {
      if (buffers.count(value))
        return;
      auto [rows, cols] = matrixShape(value);
      if (cols > kMaxCols)
        throw Error(
            fmt::format("a fused row of {} columns is not supported (at most {})", cols, kMaxCols));
      Buffer buffer{outside ? matrixOf(value) : Matrix{}, cols,
                    rows == output.rows && llvm::none_of(value.getUses(), isBounds), 0, outside};
      if (buffer.perRow) {
        buffer.offset = perRowWords.allocate(cols);
      } else {
        buffer.offset = uint64_t(fixed);
        fixed += rows * cols;
      }
      buffers.insert({value, buffer});
    };
    for (mlir::Operation *op : members)
      for (Value operand : op->getOperands())
        if (!inside.contains(operand))
          place(operand, true);
    for (auto [index, op] : llvm::enumerate(members)) {
      place(op->getResult(0), false);
      for (Value operand : op->getOperands()) {
        const Buffer &buffer = buffers.find(operand)->second;
        if (buffer.perRow && lastUse.lookup(operand) == index)
          perRowWords.release(buffer.offset, buffer.cols);
      }
    }
    int64_t perRow = perRowWords.peak();
    int64_t tileRows =
        std::min({output.rows, kMaxDmaRows, (int64_t(config.scratchpad.words()) - fixed) / perRow});
    if (tileRows < 1)
      throw Error(fmt::format("config '{}' has too little scratchpad for one row of {} words",
                              config.name, perRow));
    auto address = [&](Value value) {
      const Buffer &buffer = buffers.find(value)->second;
      return buffer.perRow ? uint64_t(fixed) + buffer.offset * uint64_t(tileRows) : buffer.offset;
    };
    const mlir::Location head = builder.sourceLocation();
    for (int64_t r0 = 0; r0 < output.rows; r0 += tileRows) {
      int64_t rows = std::min(tileRows, output.rows - r0);
      builder.beforeLoad();
      for (auto &[value, buffer] : buffers)
        if (buffer.load)
          builder.load(buffer.matrix, buffer.perRow ? r0 : 0, 0, buffer.perRow ? rows : 1,
                       buffer.cols, isa::Space::Scratchpad, address(value));
      builder.beforeCompute();
      for (mlir::Operation *op : members) {
        builder.setSource(op);
        emitRowLocal(*op, rows, address);
      }
      builder.setSource(head);
      builder.beforeStore();
      builder.store(output, r0, 0, rows, output.cols, isa::Space::Scratchpad,
                    address(members.back()->getResult(0)));
    }
  }

  // One row-local op on dense scratchpad buffers of `rows` rows.
  template <typename AddressOf>
  void emitRowLocal(mlir::Operation &op, int64_t rows, const AddressOf &address) {
    Value result = op.getResult(0);
    auto [valueRows, cols] = matrixShape(result);
    if (auto reduce = llvm::dyn_cast<mlir::tpu::RowReduceOp>(op)) {
      Value input = reduce.getInput();
      builder.emit(vectorOp(reduce.getKind() == mlir::tpu::ReduceKind::sum ? Opcode::VRowSum
                                                                           : Opcode::VRowMax,
                            address(result), address(input), rows, matrixShape(input).second));
    } else if (auto binary = llvm::dyn_cast<mlir::tpu::BinaryOp>(op)) {
      auto [rhsRows, rhsCols] = matrixShape(binary.getRhs());
      emitStep(builder,
               {{0, rhsRows, rhsCols},
                *mlir::tpu::spreadOf({valueRows, cols}, {rhsRows, rhsCols}),
                binaryOpcode(binary.getKind())},
               address(result), address(binary.getLhs()), address(binary.getRhs()), rows, cols);
    } else if (auto unary = llvm::dyn_cast<mlir::tpu::UnaryOp>(op)) {
      emitStep(builder, {{}, Spread::Same, unaryOpcode(unary.getKind()).value_or(Opcode::VCopy)},
               address(result), address(unary.getInput()), 0, rows, cols);
    } else if (auto clamp = llvm::dyn_cast<mlir::tpu::ClampOp>(op)) {
      emitStep(builder, {{0, 1, 2}, Spread::Scalar, Opcode::VClamp}, address(result),
               address(clamp.getInput()), address(clamp.getBounds()), rows, cols);
    }
  }

  // Vector unit, one op: tiles of rows x cols in the scratchpad (columns
  // split when a row is longer than the cols field), operated on in place.
  void emitElementwise(const Matrix &input, const Matrix &output, const VectorStep &step) {
    int64_t tileCols = std::min<int64_t>(output.cols, kMaxCols);
    bool binary = step.operand.rows > 0;
    // Scratchpad words per tile row, and independent of the tile's rows.
    int64_t perRow = tileCols + (!binary                         ? 0
                                 : step.spread == Spread::Same   ? tileCols
                                 : step.spread == Spread::Column ? 1
                                                                 : 0);
    int64_t fixedWords = !binary                         ? 0
                         : step.spread == Spread::Row    ? tileCols
                         : step.spread == Spread::Scalar ? 2
                                                         : 0;
    int64_t tileRows = std::min(
        {output.rows, kMaxDmaRows, (int64_t(config.scratchpad.words()) - fixedWords) / perRow});
    if (tileRows < 1)
      throw Error(fmt::format("config '{}' has too little scratchpad for one row of {} words",
                              config.name, perRow));
    const uint64_t tileAddress = 0, operandAddress = uint64_t(tileRows * tileCols);
    for (int64_t c0 = 0; c0 < output.cols; c0 += tileCols) {
      int64_t cols = std::min(tileCols, output.cols - c0);
      for (int64_t r0 = 0; r0 < output.rows; r0 += tileRows) {
        int64_t rows = std::min(tileRows, output.rows - r0);
        builder.beforeLoad();
        builder.load(input, r0, c0, rows, cols, isa::Space::Scratchpad, tileAddress);
        if (binary)
          loadOperand(builder, step, r0, c0, rows, cols, operandAddress);
        if (!step.opcode) {
          builder.dependsOn(Queue::Load, Queue::Store); // a copy stores what was loaded
        } else {
          builder.beforeCompute();
          emitStep(builder, step, tileAddress, tileAddress, operandAddress, rows, cols);
          builder.beforeStore();
        }
        builder.store(output, r0, c0, rows, cols, isa::Space::Scratchpad, tileAddress);
      }
    }
  }

  // Vector unit row reduction (v.rowsum / v.rowmax): whole rows, as many as
  // fit in the scratchpad with their results; the row must fit the cols
  // field, as splitting it would change the order of the sum.
  void emitRowReduce(const Matrix &input, const Matrix &output, Opcode opcode) {
    if (input.cols > kMaxCols)
      throw Error(fmt::format("a row reduction over {} columns is not supported (at most {})",
                              input.cols, kMaxCols));
    int64_t tileRows =
        std::min({input.rows, kMaxDmaRows, int64_t(config.scratchpad.words()) / (input.cols + 1)});
    if (tileRows < 1)
      throw Error(fmt::format("config '{}' has too little scratchpad for one row of {} words",
                              config.name, input.cols + 1));
    const uint64_t tileAddress = 0;
    const uint64_t resultAddress = tileRows * input.cols;
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
  return fused && !llvm::isa<mlir::tpu::MatMulOp>(fused.getHead());
}

// The lowerings as patterns, one per operation the vector unit runs.
template <typename Op> struct LowerWithVectorUnit : mlir::OpRewritePattern<Op> {
  LowerWithVectorUnit(mlir::MLIRContext *context, const HardwareConfig &config)
      : mlir::OpRewritePattern<Op>(context), config(config) {}
  mlir::LogicalResult matchAndRewrite(Op op, mlir::PatternRewriter &rewriter) const override {
    if constexpr (std::is_same_v<Op, mlir::tpu::FusedOp>)
      if (!isRowGroup(op))
        return mlir::failure();
    return lowerInPlace(op, rewriter, [&](ProgramBuilder &builder) {
      VectorLowering lowering(config, builder);
      if constexpr (std::is_same_v<Op, mlir::tpu::RowReduceOp>) {
        lowering.emitRowReduce(matrixOf(op.getInput()), matrixOf(op.getResult()),
                               op.getKind() == mlir::tpu::ReduceKind::sum ? Opcode::VRowSum
                                                                          : Opcode::VRowMax);
      } else if constexpr (std::is_same_v<Op, mlir::tpu::FusedOp>) {
        llvm::SmallVector<mlir::Operation *> members;
        for (mlir::Operation &member : op.getMembers())
          members.push_back(&member);
        lowering.emitRowGroup(members, matrixOf(op.getResult(0)));
      } else {
        lowering.emitElementwise(matrixOf(op->getOperand(0)), matrixOf(op->getResult(0)),
                                 elementwiseStep(*op, op->getOperand(0)));
      }
    });
  }
  const HardwareConfig &config;
};

} // namespace
} // namespace tpu::codegen

namespace {

class LowerVectorOps : public mlir::tpu::impl::LowerVectorOpsBase<LowerVectorOps> {
public:
  void runOnOperation() override {
    mlir::FailureOr<mlir::tpu::TargetAttr> target = mlir::tpu::getTarget(getOperation());
    if (mlir::failed(target))
      return signalPassFailure();
    tpu::HardwareConfig config = mlir::tpu::hardwareConfig(*target);
    mlir::RewritePatternSet patterns(&getContext());
    patterns.add<tpu::codegen::LowerWithVectorUnit<mlir::tpu::BinaryOp>,
                 tpu::codegen::LowerWithVectorUnit<mlir::tpu::UnaryOp>,
                 tpu::codegen::LowerWithVectorUnit<mlir::tpu::ClampOp>,
                 tpu::codegen::LowerWithVectorUnit<mlir::tpu::RowReduceOp>,
                 tpu::codegen::LowerWithVectorUnit<mlir::tpu::FusedOp>>(&getContext(), config);
    if (mlir::failed(tpu::codegen::lowerOperations(
            getOperation(), std::move(patterns), [](mlir::Operation *op) {
              return llvm::isa<mlir::tpu::BinaryOp, mlir::tpu::UnaryOp, mlir::tpu::ClampOp,
                               mlir::tpu::RowReduceOp>(op) ||
                     tpu::codegen::isRowGroup(op);
            })))
      signalPassFailure();
  }
};

} // namespace
