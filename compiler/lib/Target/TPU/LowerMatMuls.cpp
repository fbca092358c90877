// tpu-lower-matmuls: matmuls, batched matmuls and matmul fusion groups (a
// matmul and its epilogue) to the matrix unit's instructions, as tpu-plan-tiles
// tiled them.
//
// Output tiles of tileM rows x up to C columns accumulate over K in steps of
// R. Activations come in blocks of tileM rows x kBlock columns (the whole K
// when it fits, so a block serves every output column), weights in panels of
// kBlock x tileN; both are double-buffered, as are the accumulator tiles, so
// loads, the array and stores overlap. A fused epilogue runs on each output
// tile in the accumulators before its one store.
#include "tpu/Target/TPU/IsaLimits.h"
#include "tpu/Target/TPU/Passes.h"
#include "tpu/Target/TPU/ProgramBuilder.h"
#include "tpu/isa/Error.h"

#include <fmt/format.h>

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

  // A matmul group: the matmul, then its epilogue, a chain in which each
  // member reads the one before it.
  void emitGroup(mlir::tpu::FusedOp fused) {
    auto matmul = llvm::cast<mlir::tpu::MatMulOp>(fused.getHead());
    std::vector<VectorStep> steps;
    mlir::Value chain = matmul.getResult();
    for (mlir::Operation &member : llvm::drop_begin(fused.getMembers())) {
      steps.push_back(elementwiseStep(member, chain));
      chain = member.getResult(0);
    }
    emitMatMul(matrixOf(matmul.getLhs()), matrixOf(matmul.getRhs()), matrixOf(fused.getResult(0)),
               planOf<mlir::tpu::MatMulTilingAttr>(matmul), steps);
  }

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
  using Epilogue = std::vector<VectorStep>;

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
    for (const VectorStep &operand : epilogue) {
      if (operand.source)
        builder.setSource(operand.source);
      else
        builder.setSource(head);
      if (operand.operand.rows == 0) {
        builder.emit(accumulatorOp(*operand.opcode, acc, m, n));
        continue;
      }
      if (operand.spread == Spread::Column)
        throw Error(fmt::format("a column operand cannot be fused into a matmul epilogue"));
      uint64_t address = operands.startFill(builder);
      loadOperand(builder, operand, m0, n0, m, n, address);
      operands.use(builder, operands.endFill(builder));
      builder.emit(accumulatorOp(*operand.opcode, acc, m, n)
                       .set(Field::Src2Space, uint64_t(isa::Space::Scratchpad))
                       .set(Field::Src2Addr, address)
                       .set(Field::Broadcast, uint64_t(broadcastOf(operand.spread))));
      operands.release(builder, address);
    }
    builder.setSource(head);
  }

  // One emitMatMul per batch, on the batch's rows of each row-major tensor.
  void emitBatchMatMul(mlir::tpu::BatchMatMulOp op, const Matrix &y) {
    llvm::ArrayRef<int64_t> lhs = op.getLhs().getType().getShape();
    llvm::ArrayRef<int64_t> rhs = op.getRhs().getType().getShape();
    Matrix a = matrixOf(op.getLhs()), w = matrixOf(op.getRhs());
    auto batchOf = [](const Matrix &all, int64_t batch, int64_t rows, int64_t cols) {
      return Matrix{all.address + uint64_t(batch * rows * cols) * kWordBytes, rows, cols};
    };
    mlir::tpu::MatMulTilingAttr plan = planOf<mlir::tpu::MatMulTilingAttr>(op);
    for (int64_t b = 0; b < lhs[0]; ++b)
      emitMatMul(batchOf(a, b, lhs[1], lhs[2]), batchOf(w, b, rhs[1], rhs[2]),
                 batchOf(y, b, lhs[1], rhs[2]), plan);
  }

private:
  const HardwareConfig &config;
  ProgramBuilder &builder;
};

// The lowerings as patterns, one per operation the matrix unit runs.
template <typename Op> struct LowerWithMatrixUnit : LoweringPattern<Op> {
  using LoweringPattern<Op>::LoweringPattern;
  mlir::LogicalResult matchAndRewrite(Op op, mlir::PatternRewriter &rewriter) const override {
    return lowerInPlace(op, rewriter, [&](ProgramBuilder &builder) {
      MatMulLowering lowering(this->config, builder);
      if constexpr (std::is_same_v<Op, mlir::tpu::MatMulOp>)
        lowering.emitMatMul(matrixOf(op.getLhs()), matrixOf(op.getRhs()), matrixOf(op.getResult()),
                            planOf<mlir::tpu::MatMulTilingAttr>(op));
      else if constexpr (std::is_same_v<Op, mlir::tpu::BatchMatMulOp>)
        lowering.emitBatchMatMul(op, matrixOf(op.getResult()));
      else
        lowering.emitGroup(op);
    });
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
