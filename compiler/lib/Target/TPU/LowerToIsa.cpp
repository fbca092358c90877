// tpu-lower-to-isa: the TPU dialect -> ISA instructions (tpu.inst), in the
// IR, with the order between the queues as tpu.signal / tpu.await /
// tpu.depend for tpu-schedule-tokens.
//
// Every tensor lives in DRAM as fp32 rows, where tpu-plan-memory placed it.
// Each operation is tiled so that one step fits the array and the on-chip
// memories (matmuls as tpu-plan-tiles decided): DMA loads the tiles into the
// scratchpad, the compute queue runs the matrix or vector unit, and DMA
// stores the result. The three queues run decoupled; a queue waits for
// another where the builder says it must.
#include "tpu/Dialect/Instructions.h"
#include "tpu/Dialect/TPUDialect.h"
#include "tpu/Dialect/TargetConfig.h"
#include "tpu/Target/TPU/MatMulPlan.h"
#include "tpu/Target/TPU/Passes.h"
#include "tpu/isa/Error.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/MathExtras.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace mlir::tpu {
#define GEN_PASS_DEF_LOWERTOISA
#include "tpu/Target/TPU/Passes.h.inc"
} // namespace mlir::tpu

namespace tpu::codegen {
namespace {

using isa::Field;
using isa::Opcode;
using isa::Queue;
using mlir::Value;
using mlir::tpu::Spread;

constexpr uint64_t kDramAlignment = 64;
constexpr uint64_t kWordBytes = 4;

// A tensor in DRAM, seen as a row-major matrix of fp32.
struct Matrix {
  uint64_t address = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  uint64_t at(int64_t row, int64_t col) const { return address + (row * cols + col) * kWordBytes; }
};

std::pair<int64_t, int64_t> matrixShape(Value value) {
  auto shape =
      mlir::tpu::matrixType(llvm::cast<mlir::RankedTensorType>(value.getType())).getShape();
  return {shape[0], shape[1]};
}

// The graph operation `op` came from (a group is named by its first op); an
// operation without a location by its name.
std::string sourceName(mlir::Operation *op) {
  if (auto fused = llvm::dyn_cast<mlir::tpu::FusedOp>(op))
    return sourceName(&fused.getHead());
  std::string name = mlir::tpu::sourceName(op->getLoc());
  return name.empty() ? op->getName().getStringRef().str() : name;
}

// Writes instructions (tpu.inst) before the operation being lowered, each
// located at its source op, and the order between the queues:
// dependsOn(from, to) makes everything issued so far on `from` complete
// before anything issued later on `to`.
class ProgramBuilder {
public:
  explicit ProgramBuilder(mlir::OpBuilder &builder)
      : builder(builder), location(builder.getUnknownLoc()) {}

  // Instructions come from `op` (a group is named by its first op).
  void setSource(mlir::Operation *op) {
    if (auto fused = llvm::dyn_cast<mlir::tpu::FusedOp>(op))
      return setSource(&fused.getHead());
    location = llvm::isa<mlir::NameLoc>(op->getLoc())
                   ? op->getLoc()
                   : mlir::NameLoc::get(builder.getStringAttr(sourceName(op)), op->getLoc());
  }
  void setSource(const std::string &name) {
    location = mlir::NameLoc::get(builder.getStringAttr(name));
  }
  void setSource(mlir::Location source) { location = source; }
  mlir::Location sourceLocation() const { return location; }
  std::string source() const { return llvm::cast<mlir::NameLoc>(location).getName().str(); }

  void emit(const isa::Instruction &instruction) {
    mlir::tpu::createInstruction(builder, location, instruction);
  }

  // A token: everything `from` has issued so far has completed.
  Value signal(Queue from, Queue to) {
    return builder.create<mlir::tpu::SignalOp>(location, mlir::tpu::dialectQueue(from),
                                               mlir::tpu::dialectQueue(to));
  }

  // Makes everything the token's `to` queue issues from now on wait for it.
  void await(Value token) { builder.create<mlir::tpu::AwaitOp>(location, token); }

  void dependsOn(Queue from, Queue to) {
    builder.create<mlir::tpu::DependOp>(location, mlir::tpu::dialectQueue(from),
                                        mlir::tpu::dialectQueue(to));
  }

  // Before a DMA load overwrites the scratchpad: the units reading it are done,
  // and earlier stores to DRAM (which this load may read) have landed.
  void beforeLoad() {
    dependsOn(Queue::Compute, Queue::Load);
    dependsOn(Queue::Store, Queue::Load);
  }
  // Before compute: its operands have arrived, and the memory it overwrites
  // has been stored.
  void beforeCompute() {
    dependsOn(Queue::Load, Queue::Compute);
    dependsOn(Queue::Store, Queue::Compute);
  }
  // Before a store: the result it reads has been computed.
  void beforeStore() { dependsOn(Queue::Compute, Queue::Store); }

  void load(const Matrix &source, int64_t row, int64_t col, int64_t rows, int64_t cols,
            isa::Space space, uint64_t sramAddress) {
    emit(dma(Opcode::DmaLoad, source, row, col, rows, cols, space, sramAddress));
  }
  void store(const Matrix &target, int64_t row, int64_t col, int64_t rows, int64_t cols,
             isa::Space space, uint64_t sramAddress) {
    emit(dma(Opcode::DmaStore, target, row, col, rows, cols, space, sramAddress));
  }

private:
  static isa::Instruction dma(Opcode opcode, const Matrix &dram, int64_t row, int64_t col,
                              int64_t rows, int64_t cols, isa::Space space, uint64_t sramAddress) {
    return isa::makeInstruction(opcode, {{Field::DramAddr, dram.at(row, col)},
                                         {Field::DramStride, uint64_t(dram.cols)},
                                         {Field::Space, uint64_t(space)},
                                         {Field::SramAddr, sramAddress},
                                         {Field::SramStride, uint64_t(cols)},
                                         {Field::Rows, uint64_t(rows)},
                                         {Field::Cols, uint64_t(cols)},
                                         {Field::DType, uint64_t(isa::DType::F32)}});
  }

  mlir::OpBuilder &builder;
  mlir::Location location;
};

isa::Instruction vectorOp(Opcode opcode, uint64_t dst, uint64_t src, int64_t rows, int64_t cols) {
  auto sp = uint64_t(isa::Space::Scratchpad);
  return isa::makeInstruction(opcode, {{Field::DstSpace, sp},
                                       {Field::DstAddr, dst},
                                       {Field::SrcSpace, sp},
                                       {Field::SrcAddr, src},
                                       {Field::Rows, uint64_t(rows)},
                                       {Field::Cols, uint64_t(cols)}});
}

isa::Instruction vectorOp(Opcode opcode, uint64_t dst, uint64_t src, uint64_t src2,
                          isa::Broadcast broadcast, int64_t rows, int64_t cols) {
  return vectorOp(opcode, dst, src, rows, cols)
      .set(Field::Src2Space, uint64_t(isa::Space::Scratchpad))
      .set(Field::Src2Addr, src2)
      .set(Field::Broadcast, uint64_t(broadcast));
}

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

Opcode binaryOpcode(mlir::tpu::BinaryKind kind) {
  switch (kind) {
  case mlir::tpu::BinaryKind::add:
    return Opcode::VAdd;
  case mlir::tpu::BinaryKind::sub:
    return Opcode::VSub;
  case mlir::tpu::BinaryKind::mul:
    return Opcode::VMul;
  case mlir::tpu::BinaryKind::max:
    return Opcode::VMax;
  case mlir::tpu::BinaryKind::min:
    return Opcode::VMin;
  }
  llvm_unreachable("unknown binary kind");
}

std::optional<Opcode> unaryOpcode(mlir::tpu::UnaryKind kind) {
  switch (kind) {
  case mlir::tpu::UnaryKind::relu:
    return Opcode::VRelu;
  case mlir::tpu::UnaryKind::exp:
    return Opcode::VExp;
  case mlir::tpu::UnaryKind::reciprocal:
    return Opcode::VRecip;
  case mlir::tpu::UnaryKind::rsqrt:
    return Opcode::VRsqrt;
  case mlir::tpu::UnaryKind::copy:
    return std::nullopt; // the DMA round trip is the copy
  }
  llvm_unreachable("unknown unary kind");
}

class Emitter {
  // How a vector-unit operand spreads over a tile.

  static isa::Broadcast broadcastOf(Spread spread) {
    return spread == Spread::Same  ? isa::Broadcast::None
           : spread == Spread::Row ? isa::Broadcast::Row
                                   : isa::Broadcast::Scalar;
  }

  // What the vector unit combines with each tile, if anything.
  struct Operand {
    Matrix matrix;                     // rows == 0: unary
    Spread spread;                     // how `matrix` spreads over the tile
    std::optional<Opcode> opcode;      // nullopt: plain copy
    mlir::Operation *source = nullptr; // the op it comes from, when fused into another's group
  };

public:
  Emitter(const HardwareConfig &config, mlir::OpBuilder &opBuilder)
      : config(config), opBuilder(opBuilder), builder(opBuilder) {}

  // Lowers every operation of `main` to instructions written before it,
  // then replaces what it computed by the tensors the program stored.
  void run(mlir::func::FuncOp main) {
    if (config.array.dtype != isa::DType::BF16)
      throw Error(fmt::format("config '{}': the compiler supports bf16 arrays so far; int8 "
                              "needs a quantized model",
                              config.name));
    if (main.getBody().getBlocks().size() != 1)
      throw Error("@main must have a single block");
    std::vector<mlir::Operation *> ops;
    for (mlir::Operation &op : main.getBody().front())
      ops.push_back(&op);
    for (mlir::Operation *op : ops) {
      opBuilder.setInsertionPoint(op);
      emitOperation(*op);
    }
    // What each lowered operation computed is now a tensor in DRAM.
    for (mlir::Operation *op : llvm::reverse(ops)) {
      if (!isLowered(*op))
        continue;
      opBuilder.setInsertionPoint(op);
      for (Value result : op->getResults())
        result.replaceAllUsesWith(opBuilder.create<mlir::tpu::StoredOp>(
            op->getLoc(), result.getType(), int64_t(*mlir::tpu::dramAddress(result))));
      op->erase();
    }
  }

private:
  // The operations this pass turns into instructions: the hardware
  // dialect's compute and data movement, and fusion groups.
  static bool isLowered(mlir::Operation &op) {
    return llvm::isa<mlir::tpu::TPUDialect>(op.getDialect()) &&
           !llvm::isa<mlir::tpu::ViewOp, mlir::tpu::DramConstantOp, mlir::tpu::StoredOp,
                      mlir::tpu::InstOp, mlir::tpu::SignalOp, mlir::tpu::AwaitOp,
                      mlir::tpu::DependOp>(op);
  }

  // A tensor in DRAM where tpu-plan-memory put it.
  Matrix matrixOf(Value value, mlir::Operation *user) const {
    std::optional<uint64_t> address = mlir::tpu::dramAddress(value);
    if (!address)
      throw Error(fmt::format("{}: operand has no DRAM place; run tpu-plan-memory first",
                              sourceName(user)));
    auto [rows, cols] = matrixShape(value);
    return {*address, rows, cols};
  }

  void emitOperation(mlir::Operation &op) {
    if (!isLowered(op))
      return;
    builder.setSource(&op);
    if (auto fused = llvm::dyn_cast<mlir::tpu::FusedOp>(op))
      return emitGroup(fused);
    if (auto matmul = llvm::dyn_cast<mlir::tpu::MatMulOp>(op)) {
      emitMatMul(matrixOf(matmul.getLhs(), &op), matrixOf(matmul.getRhs(), &op),
                 placeResult(matmul.getResult()), planOf(op));
    } else if (auto batched = llvm::dyn_cast<mlir::tpu::BatchMatMulOp>(op)) {
      emitBatchMatMul(batched, placeResult(batched.getResult()));
    } else if (auto transpose = llvm::dyn_cast<mlir::tpu::TransposeOp>(op)) {
      emitTranspose(transpose, placeResult(transpose.getResult()));
    } else if (auto im2col = llvm::dyn_cast<mlir::tpu::Im2ColOp>(op)) {
      emitIm2Col(im2col, placeResult(im2col.getResult()));
    } else if (auto slice = llvm::dyn_cast<mlir::tpu::SliceOp>(op)) {
      emitSlice(slice, placeResult(slice.getResult()));
    } else if (auto concat = llvm::dyn_cast<mlir::tpu::ConcatOp>(op)) {
      emitConcat(concat, placeResult(concat.getResult()));
    } else if (auto pad = llvm::dyn_cast<mlir::tpu::PadOp>(op)) {
      emitPad(pad, placeResult(pad.getResult()));
    } else if (auto binary = llvm::dyn_cast<mlir::tpu::BinaryOp>(op)) {
      emitElementwise(matrixOf(binary.getLhs(), &op), placeResult(binary.getResult()),
                      elementwiseStep(op, binary.getLhs()));
    } else if (auto reduce = llvm::dyn_cast<mlir::tpu::RowReduceOp>(op)) {
      emitRowReduce(matrixOf(reduce.getInput(), &op), placeResult(reduce.getResult()),
                    reduce.getKind() == mlir::tpu::ReduceKind::sum ? Opcode::VRowSum
                                                                   : Opcode::VRowMax);
    } else if (llvm::isa<mlir::tpu::UnaryOp, mlir::tpu::ClampOp>(op)) {
      emitElementwise(matrixOf(op.getOperand(0), &op), placeResult(op.getResult(0)),
                      elementwiseStep(op, op.getOperand(0)));
    } else {
      throw Error(fmt::format("{}: operation '{}' cannot be emitted; run the TPU lowering first",
                              sourceName(&op), op.getName().getStringRef().str()));
    }
  }

  // The vector-unit step elementwise `op` applies to `input`, one of its
  // operands (either one of a commutative binary op).
  Operand elementwiseStep(mlir::Operation &op, Value input) {
    if (auto binary = llvm::dyn_cast<mlir::tpu::BinaryOp>(op)) {
      // `input` may be a fused intermediate, which has a shape but no place.
      auto [rows, cols] = matrixShape(input);
      Matrix rhs = matrixOf(binary.getLhs() == input ? binary.getRhs() : binary.getLhs(), &op);
      return {rhs, *mlir::tpu::spreadOf({rows, cols}, {rhs.rows, rhs.cols}),
              binaryOpcode(binary.getKind()), &op};
    }
    if (auto unary = llvm::dyn_cast<mlir::tpu::UnaryOp>(op))
      return {{}, Spread::Same, unaryOpcode(unary.getKind()), &op};
    if (llvm::isa<mlir::tpu::ClampOp>(op))
      return {matrixOf(op.getOperand(1), &op), Spread::Scalar, Opcode::VClamp, &op};
    throw Error(fmt::format("{}: '{}' is not elementwise", sourceName(&op),
                            op.getName().getStringRef().str()));
  }

  // A fusion group (tpu.fused), emitted as one piece; only the value it
  // yields reaches DRAM.
  void emitGroup(mlir::tpu::FusedOp fused) {
    llvm::SmallVector<mlir::Operation *> members;
    for (mlir::Operation &member : fused.getMembers())
      members.push_back(&member);
    Matrix output = placeResult(fused.getResult(0));
    auto matmul = llvm::dyn_cast<mlir::tpu::MatMulOp>(fused.getHead());
    if (!matmul)
      return emitRowGroup(members, output);
    // An epilogue is a chain: each member reads the one before it.
    std::vector<Operand> steps;
    for (size_t i = 1; i < members.size(); ++i)
      steps.push_back(elementwiseStep(*members[i], members[i - 1]->getResult(0)));
    emitMatMul(matrixOf(matmul.getLhs(), matmul), matrixOf(matmul.getRhs(), matmul), output,
               planOf(*matmul), steps);
  }

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
        throw Error(fmt::format("{}: a fused row of {} columns is not supported (at most {})",
                                builder.source(), cols, kMaxCols));
      Buffer buffer{outside ? matrixOf(value, members.front()) : Matrix{}, cols,
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
      throw Error(fmt::format("{}: config '{}' has too little scratchpad for one row of {} words",
                              builder.source(), config.name, perRow));
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
      emitStep({{0, rhsRows, rhsCols},
                *mlir::tpu::spreadOf({valueRows, cols}, {rhsRows, rhsCols}),
                binaryOpcode(binary.getKind())},
               address(result), address(binary.getLhs()), address(binary.getRhs()), rows, cols);
    } else if (auto unary = llvm::dyn_cast<mlir::tpu::UnaryOp>(op)) {
      emitStep({{}, Spread::Same, unaryOpcode(unary.getKind()).value_or(Opcode::VCopy)},
               address(result), address(unary.getInput()), 0, rows, cols);
    } else if (auto clamp = llvm::dyn_cast<mlir::tpu::ClampOp>(op)) {
      emitStep({{0, 1, 2}, Spread::Scalar, Opcode::VClamp}, address(result),
               address(clamp.getInput()), address(clamp.getBounds()), rows, cols);
    }
  }

  // The tiling tpu-plan-tiles chose for a matmul.
  static mlir::tpu::MatMulTilingAttr planOf(mlir::Operation &op) {
    auto plan = op.getAttrOfType<mlir::tpu::MatMulTilingAttr>(mlir::tpu::kTilingAttr);
    if (!plan)
      throw Error(
          fmt::format("{}: matmul has no tiling; run tpu-plan-tiles first", sourceName(&op)));
    return plan;
  }

  // A result's DRAM buffer, where tpu-plan-memory put it.
  Matrix placeResult(Value result) { return matrixOf(result, result.getDefiningOp()); }

  // Buffers that one queue fills and another drains, used in turn, so that
  // the producer fills the next one while the consumer works on this one.
  // Each fill is announced with a token producer -> consumer; the consumer
  // releases a buffer with a token consumer -> producer, which the next fill
  // of the same buffer waits for.
  class BufferRing {
  public:
    BufferRing(llvm::ArrayRef<int64_t> addresses, Queue producer, Queue consumer)
        : addresses_(addresses.begin(), addresses.end()), releases_(addresses_.size()),
          producer_(producer), consumer_(consumer) {}

    // Before filling: the buffer's previous contents have been released.
    uint64_t startFill(ProgramBuilder &builder) {
      current_ = next_;
      next_ = (next_ + 1) % addresses_.size();
      if (releases_[current_])
        builder.await(releases_[current_]);
      return addresses_[current_];
    }
    // After the fill's instructions: announces it; returns the fill's token.
    Value endFill(ProgramBuilder &builder) { return builder.signal(producer_, consumer_); }
    // Before the consumer first reads a fill.
    void use(ProgramBuilder &builder, Value fillToken) { builder.await(fillToken); }
    // After the consumer's last read of the buffer at `address`.
    void release(ProgramBuilder &builder, uint64_t address) {
      size_t slot = std::find(addresses_.begin(), addresses_.end(), address) - addresses_.begin();
      releases_[slot] = builder.signal(consumer_, producer_);
    }

  private:
    std::vector<uint64_t> addresses_;
    std::vector<Value> releases_; // the tokens that free each buffer, once there is one
    Queue producer_, consumer_;
    size_t next_ = 0, current_ = 0;
  };

  // What the vector unit applies to each output tile of a matmul while it is
  // still in the accumulators (a fused epilogue): the ops of its fusion group.
  using Epilogue = std::vector<Operand>;

  // Matrix unit. Output tiles of tileM rows x up to C columns accumulate over
  // K in steps of R. Activations come in blocks of tileM rows x kBlock
  // columns (the whole K when it fits, so a block serves every output
  // column), weights in panels of kBlock x tileN; both are double-buffered, as
  // are the accumulator tiles, so loads, the array and stores overlap.
  void emitMatMul(const Matrix &a, const Matrix &w, const Matrix &y,
                  mlir::tpu::MatMulTilingAttr plan, const Epilogue &epilogue = {}) {
    // Operands from earlier operations: their stores have landed, their
    // buffers are free.
    builder.dependsOn(Queue::Store, Queue::Load);
    builder.dependsOn(Queue::Compute, Queue::Load);
    builder.dependsOn(Queue::Store, Queue::Compute);
    const int64_t K = a.cols, N = y.cols, M = y.rows;
    const int64_t tileK = plan.getTileK(), tileN = plan.getTileN(), tileM = plan.getTileM(),
                  kBlock = plan.getKBlock();
    BufferRing activations(plan.getActivations(), Queue::Load, Queue::Compute);
    BufferRing weights(plan.getWeights(), Queue::Load, Queue::Compute);
    BufferRing operands(plan.getOperands(), Queue::Load, Queue::Compute);
    BufferRing results(plan.getAccumulators(), Queue::Compute, Queue::Store);
    const bool blockPerRowBand = kBlock >= K; // one activation block serves all of N

    for (int64_t m0 = 0; m0 < M; m0 += tileM) {
      int64_t m = std::min(tileM, M - m0);
      std::optional<std::pair<uint64_t, Value>> block; // address, fill token
      for (int64_t n0 = 0; n0 < N; n0 += tileN) {
        int64_t n = std::min(tileN, N - n0);
        uint64_t acc = results.startFill(builder);
        std::vector<uint64_t> panels, blocks; // to release after the epilogue
        for (int64_t kb0 = 0; kb0 < K; kb0 += kBlock) {
          int64_t kb = std::min(kBlock, K - kb0);
          if (!block || !blockPerRowBand) {
            uint64_t address = activations.startFill(builder);
            builder.load(a, m0, kb0, m, kb, isa::Space::Scratchpad, address);
            block = {address, activations.endFill(builder)};
          }
          uint64_t panel = weights.startFill(builder);
          builder.load(w, kb0, n0, kb, n, isa::Space::Scratchpad, panel);
          Value panelToken = weights.endFill(builder);
          activations.use(builder, block->second);
          weights.use(builder, panelToken);
          for (int64_t k0 = kb0; k0 < kb0 + kb; k0 += tileK) {
            int64_t k = std::min(tileK, kb0 + kb - k0);
            builder.emit(isa::makeInstruction(Opcode::LoadWeights,
                                              {{Field::SrcAddr, panel + uint64_t((k0 - kb0) * n)},
                                               {Field::SrcStride, uint64_t(n)},
                                               {Field::Rows, uint64_t(k)},
                                               {Field::Cols, uint64_t(n)}}));
            builder.emit(isa::makeInstruction(Opcode::MatMul,
                                              {{Field::SrcAddr, block->first + uint64_t(k0 - kb0)},
                                               {Field::SrcStride, uint64_t(kb)},
                                               {Field::DstAddr, acc},
                                               {Field::DstStride, uint64_t(n)},
                                               {Field::Rows, uint64_t(m)},
                                               {Field::Cols, uint64_t(k)},
                                               {Field::DType, uint64_t(config.array.dtype)},
                                               {Field::Accumulate, k0 > 0 ? 1u : 0u},
                                               {Field::Flip, 1}}));
          }
          if (blockPerRowBand) {
            panels.push_back(panel);
            if (n0 + tileN >= N)
              blocks.push_back(block->first);
          } else {
            // Several blocks per output tile: each must be free before the
            // block after next refills its buffer, so release it now.
            weights.release(builder, panel);
            activations.release(builder, block->first);
          }
        }
        emitEpilogue(epilogue, operands, acc, m0, n0, m, n);
        // Releasing waits for the array to finish: done once per output tile,
        // where the epilogue and the store wait for it anyway.
        for (uint64_t panel : panels)
          weights.release(builder, panel);
        for (uint64_t address : blocks)
          activations.release(builder, address);
        results.use(builder, results.endFill(builder));
        builder.store(y, m0, n0, m, n, isa::Space::Accumulator, acc);
        results.release(builder, acc);
      }
    }
  }

  // The fused epilogue of one output tile: each op in turn on the tile in the
  // accumulators, its operand (bias row, residual tile, bounds) loaded into
  // the scratchpad.
  void emitEpilogue(const Epilogue &epilogue, BufferRing &operands, uint64_t acc, int64_t m0,
                    int64_t n0, int64_t m, int64_t n) {
    const mlir::Location head = builder.sourceLocation();
    for (const Operand &operand : epilogue) {
      if (operand.source)
        builder.setSource(operand.source);
      else
        builder.setSource(head);
      if (operand.matrix.rows == 0) {
        builder.emit(accumulatorOp(*operand.opcode, acc, m, n));
        continue;
      }
      if (operand.spread == Spread::Column)
        throw Error(fmt::format("{}: a column operand cannot be fused into a matmul epilogue",
                                builder.source()));
      uint64_t address = operands.startFill(builder);
      loadOperand(operand, m0, n0, m, n, address);
      operands.use(builder, operands.endFill(builder));
      builder.emit(accumulatorOp(*operand.opcode, acc, m, n)
                       .set(Field::Src2Space, uint64_t(isa::Space::Scratchpad))
                       .set(Field::Src2Addr, address)
                       .set(Field::Broadcast, uint64_t(broadcastOf(operand.spread))));
      operands.release(builder, address);
    }
    builder.setSource(head);
  }

  // Vector unit, one op: tiles of rows x cols in the scratchpad (columns
  // split when a row is longer than the cols field), operated on in place.
  void emitElementwise(const Matrix &input, const Matrix &output, const Operand &step) {
    int64_t tileCols = std::min<int64_t>(output.cols, kMaxCols);
    bool binary = step.matrix.rows > 0;
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
      throw Error(fmt::format("{}: config '{}' has too little scratchpad for one row of {} words",
                              builder.source(), config.name, perRow));
    const uint64_t tileAddress = 0, operandAddress = uint64_t(tileRows * tileCols);
    for (int64_t c0 = 0; c0 < output.cols; c0 += tileCols) {
      int64_t cols = std::min(tileCols, output.cols - c0);
      for (int64_t r0 = 0; r0 < output.rows; r0 += tileRows) {
        int64_t rows = std::min(tileRows, output.rows - r0);
        builder.beforeLoad();
        builder.load(input, r0, c0, rows, cols, isa::Space::Scratchpad, tileAddress);
        if (binary)
          loadOperand(step, r0, c0, rows, cols, operandAddress);
        if (!step.opcode) {
          builder.dependsOn(Queue::Load, Queue::Store); // a copy stores what was loaded
        } else {
          builder.beforeCompute();
          emitStep(step, tileAddress, tileAddress, operandAddress, rows, cols);
          builder.beforeStore();
        }
        builder.store(output, r0, c0, rows, cols, isa::Space::Scratchpad, tileAddress);
      }
    }
  }

  // The part of `operand` a rows x cols tile at (r0, c0) combines with, into
  // the scratchpad at `address`: the same tile, its columns of the row, the
  // scalar(s), or its rows of the column.
  void loadOperand(const Operand &operand, int64_t r0, int64_t c0, int64_t rows, int64_t cols,
                   uint64_t address) {
    switch (operand.spread) {
    case Spread::Same:
      return builder.load(operand.matrix, r0, c0, rows, cols, isa::Space::Scratchpad, address);
    case Spread::Row:
      return builder.load(operand.matrix, 0, c0, 1, cols, isa::Space::Scratchpad, address);
    case Spread::Scalar:
      return builder.load(operand.matrix, 0, 0, 1, operand.matrix.cols, isa::Space::Scratchpad,
                          address);
    case Spread::Column:
      return builder.load(operand.matrix, r0, 0, rows, 1, isa::Space::Scratchpad, address);
    }
  }

  // One vector-unit step on dense rows x cols tiles in the scratchpad: `src`
  // (with the operand at `operand`, spread as the step says) into `dst`.
  void emitStep(const Operand &step, uint64_t dst, uint64_t src, uint64_t operand, int64_t rows,
                int64_t cols) {
    if (step.matrix.rows == 0) {
      builder.emit(vectorOp(*step.opcode, dst, src, rows, cols));
    } else if (step.spread == Spread::Column) {
      // Row r of the tile (dense, `cols` words apart) with element r.
      for (int64_t r = 0; r < rows; ++r)
        builder.emit(vectorOp(*step.opcode, dst + r * cols, src + r * cols, operand + r,
                              isa::Broadcast::Scalar, 1, cols));
    } else {
      builder.emit(vectorOp(*step.opcode, dst, src, operand, broadcastOf(step.spread), rows, cols));
    }
  }

  // Vector unit row reduction (v.rowsum / v.rowmax): whole rows, as many as
  // fit in the scratchpad with their results; the row must fit the cols
  // field, as splitting it would change the order of the sum.
  void emitRowReduce(const Matrix &input, const Matrix &output, Opcode opcode) {
    if (input.cols > kMaxCols)
      throw Error(fmt::format("{}: a row reduction over {} columns is not supported (at most {})",
                              builder.source(), input.cols, kMaxCols));
    int64_t tileRows =
        std::min({input.rows, kMaxDmaRows, int64_t(config.scratchpad.words()) / (input.cols + 1)});
    if (tileRows < 1)
      throw Error(fmt::format("{}: config '{}' has too little scratchpad for one row of {} words",
                              builder.source(), config.name, input.cols + 1));
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

  // One emitMatMul per batch, on the batch's rows of each row-major tensor.
  void emitBatchMatMul(mlir::tpu::BatchMatMulOp op, const Matrix &y) {
    llvm::ArrayRef<int64_t> lhs = op.getLhs().getType().getShape();
    llvm::ArrayRef<int64_t> rhs = op.getRhs().getType().getShape();
    Matrix a = matrixOf(op.getLhs(), op), w = matrixOf(op.getRhs(), op);
    auto batchOf = [](const Matrix &all, int64_t batch, int64_t rows, int64_t cols) {
      return Matrix{all.address + uint64_t(batch * rows * cols) * kWordBytes, rows, cols};
    };
    mlir::tpu::MatMulTilingAttr plan = planOf(*op);
    for (int64_t b = 0; b < lhs[0]; ++b)
      emitMatMul(batchOf(a, b, lhs[1], lhs[2]), batchOf(w, b, rhs[1], rhs[2]),
                 batchOf(y, b, lhs[1], rhs[2]), plan);
  }

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
                               uint64_t sramStride) const {
    if (transfer.rows > 1 && transfer.stride >= (int64_t(1) << 20))
      throw Error(fmt::format("{}: a DRAM stride of {} elements exceeds the DMA's 20-bit field",
                              builder.source(), transfer.stride));
    return isa::makeInstruction(
        opcode, {{Field::DramAddr, transfer.dramAddress},
                 {Field::DramStride, uint64_t(transfer.rows > 1 ? transfer.stride : transfer.cols)},
                 {Field::Space, uint64_t(isa::Space::Scratchpad)},
                 {Field::SramAddr, sramAddress},
                 {Field::SramStride, sramStride},
                 {Field::Rows, uint64_t(transfer.rows)},
                 {Field::Cols, uint64_t(transfer.cols)},
                 {Field::DType, uint64_t(isa::DType::F32)}});
  }

  // Collects the transfers of one copy (or fill) and issues them in batches
  // that fill the scratchpad below `scratchWords`: every load of a batch,
  // one token, every store; flush() issues the last batch. A fill stores a row of the fill value
  // kept in the scratchpad at `fillAddress` (sram_stride 0 repeats it).
  class CopyBatcher {
  public:
    CopyBatcher(ProgramBuilder &builder, const Emitter &emitter, int64_t scratchWords)
        : builder(builder), emitter(emitter), scratchWords(scratchWords) {}
    int64_t capacity() const { return scratchWords; }

    void copy(const Transfer &load, const Transfer &store) {
      int64_t words = load.rows * load.cols;
      if (used + words > scratchWords)
        flush();
      loads.push_back(emitter.dmaTransfer(Opcode::DmaLoad, load, used, load.cols));
      stores.push_back(emitter.dmaTransfer(Opcode::DmaStore, store, used, store.cols));
      used += words;
    }
    void fill(const Transfer &store, uint64_t fillAddress) {
      stores.push_back(emitter.dmaTransfer(Opcode::DmaStore, store, fillAddress, 0));
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
    const Emitter &emitter;
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
  // is a block of those runs over the next axis. Otherwise the DMA, which
  // cannot transpose, moves one run per transfer along an axis contiguous on
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
      int64_t rowAxis = last - 1; // -1: a single run
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
    // The run axis: the longest axis contiguous in the source or the target,
    // else the last (one element per DRAM row on both sides).
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
    llvm::ArrayRef<int64_t> inputShape = shapeOf(op.getInput());
    llvm::SmallVector<int64_t, 6> inputStrides = denseStrides(inputShape);
    StridedView source{matrixOf(op.getInput(), op).address, {}};
    for (int64_t from : op.getPerms())
      source.strides.push_back(inputStrides[from]);
    llvm::ArrayRef<int64_t> shape = shapeOf(op.getResult());
    CopyBatcher batcher(builder, *this, int64_t(config.scratchpad.words()));
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
    if (channels > kMaxCols)
      throw Error(fmt::format("{}: im2col of {} channels is not supported (at most {})",
                              builder.source(), channels, kMaxCols));
    int64_t windowCols = op.getKernel()[0] * op.getKernel()[1] * channels;
    std::optional<Matrix> padRow;
    if (op.getFill())
      padRow = matrixOf(op.getFill(), op);
    int64_t fillCols = padRow ? padRow->cols : 0;
    int64_t capacity = int64_t(config.scratchpad.words()) - fillCols;
    if (capacity < channels)
      throw Error(fmt::format("{}: config '{}' has too little scratchpad for im2col of {} channels",
                              builder.source(), config.name, channels));
    uint64_t fillAddress = uint64_t(capacity);
    if (fillCols > 0) {
      builder.beforeLoad();
      builder.load(*padRow, 0, 0, 1, fillCols, isa::Space::Scratchpad, fillAddress);
    }
    CopyBatcher batcher(builder, *this, capacity);
    uint64_t inputAddress = matrixOf(op.getInput(), op).address;
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
          StridedView source{
              inputAddress + uint64_t((ih * in[2] + iw) * channels) * kWordBytes,
              {in[1] * in[2] * channels, strideH * in[2] * channels, strideW * channels, 1}};
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
    StridedView source{matrixOf(op.getInput(), op).address, denseStrides(inputShape)};
    for (auto [start, stride] : llvm::zip(op.getStart(), source.strides))
      source.address += uint64_t(start * stride) * kWordBytes;
    llvm::ArrayRef<int64_t> shape = shapeOf(op.getResult());
    CopyBatcher batcher(builder, *this, int64_t(config.scratchpad.words()));
    emitStridedCopy(shape, source, {output.address, denseStrides(shape)}, batcher);
    batcher.flush();
  }

  // Each input is a strided copy into its span of the result's axis.
  void emitConcat(mlir::tpu::ConcatOp op, const Matrix &output) {
    llvm::ArrayRef<int64_t> shape = shapeOf(op.getResult());
    StridedView target{output.address, denseStrides(shape)};
    CopyBatcher batcher(builder, *this, int64_t(config.scratchpad.words()));
    for (Value input : op.getInputs()) {
      llvm::ArrayRef<int64_t> inputShape = shapeOf(input);
      emitStridedCopy(inputShape, {matrixOf(input, op).address, denseStrides(inputShape)}, target,
                      batcher);
      target.address +=
          uint64_t(inputShape[op.getAxis()] * target.strides[op.getAxis()]) * kWordBytes;
    }
    batcher.flush();
  }

  // The value everywhere, then the input into its box (the store queue keeps
  // the order).
  void emitPad(mlir::tpu::PadOp op, const Matrix &output) {
    llvm::ArrayRef<int64_t> shape = shapeOf(op.getResult());
    llvm::ArrayRef<int64_t> inputShape = shapeOf(op.getInput());
    const Matrix padRow = matrixOf(op.getFill(), op);
    int64_t capacity = int64_t(config.scratchpad.words()) - padRow.cols;
    uint64_t fillAddress = uint64_t(capacity);
    builder.beforeLoad();
    builder.load(padRow, 0, 0, 1, padRow.cols, isa::Space::Scratchpad, fillAddress);
    CopyBatcher batcher(builder, *this, capacity);
    StridedView target{output.address, denseStrides(shape)};
    emitFill(shape, target, fillAddress, padRow.cols, batcher);
    for (auto [low, stride] : llvm::zip(op.getLow(), target.strides))
      target.address += uint64_t(low * stride) * kWordBytes;
    emitStridedCopy(inputShape, {matrixOf(op.getInput(), op).address, denseStrides(inputShape)},
                    target, batcher);
    batcher.flush();
  }

  const HardwareConfig config;
  mlir::OpBuilder &opBuilder;
  ProgramBuilder builder;
};

} // namespace

} // namespace tpu::codegen

namespace {

class LowerToIsa : public mlir::tpu::impl::LowerToIsaBase<LowerToIsa> {
public:
  void runOnOperation() override {
    mlir::func::FuncOp main = getOperation();
    mlir::FailureOr<mlir::tpu::TargetAttr> target = mlir::tpu::getTarget(main);
    if (mlir::failed(target))
      return signalPassFailure();
    mlir::OpBuilder builder(&getContext());
    try {
      tpu::codegen::Emitter(mlir::tpu::hardwareConfig(*target), builder).run(main);
    } catch (const tpu::Error &error) {
      main.emitError() << error.what();
      signalPassFailure();
    }
  }
};

} // namespace
