// What the lowering passes to the ISA level share (tpu-lower-matmuls,
// tpu-lower-vector-ops, tpu-lower-data-movement): tensors in DRAM as
// matrices, a builder that writes instructions and the order between the
// queues into the IR, and the vector unit's steps.
#pragma once

#include "tpu/Dialect/Instructions.h"
#include "tpu/Dialect/TPUDialect.h"
#include "tpu/Dialect/TargetConfig.h"
#include "tpu/Target/TPU/Footprints.h"
#include "tpu/Target/TPU/MatMulPlan.h"
#include "tpu/isa/HardwareConfig.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"

#include <algorithm>
#include <optional>
#include <string>

namespace tpu::codegen {

constexpr uint64_t kWordBytes = 4;

// A tensor in DRAM, seen as a row-major matrix of fp32 (or of int32: the
// words of an integer result), stored as `dtype` (bf16 for what only a bf16
// array reads, dramDType), which DMA widens and narrows.
//
// With `pixels`, the [N*pixels, C] matrix of an NHWC tensor is stored NCHW
// (a layout transpose folded into its reads or its writes): per image, C
// DRAM rows of `pixels` elements (`stride` apart where set: a key head's
// [D, S] weights, S rows of D keys). ProgramBuilder's load and store then
// move its tiles with transposing DMA transfers; `at` does not apply.
struct Matrix {
  uint64_t address = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  isa::DType dtype = isa::DType::F32;
  int64_t pixels = 0;
  // Elements from one DRAM row's start to the next's where not `cols` (a
  // head of an attention tensor, read or written in place).
  int64_t stride = 0;
  int64_t rowStride() const { return stride ? stride : cols; }
  uint64_t at(int64_t row, int64_t col) const {
    return address + uint64_t(row * rowStride() + col) * isa::dtypeBytes(dtype);
  }
};

// The element type DRAM holds `value` as (a view: its input's): bf16 where
// tpu-plan-memory set mlir::tpu::kDramDTypeAttr, else f32, or i32 for an
// integer tensor.
isa::DType dramDType(mlir::Value value);
// The bytes of `value` in DRAM: its elements at dramDType's size.
uint64_t dramBytesOf(mlir::Value value);

// A source op's bytes in tpu.work are those its instructions move
// (docs/simulator.md#roofline): takes `bytes` (per source op, an
// instruction's NameLoc) that a pass spared them off their counts, so that
// the ops' bounds no longer count them.
void unchargeDramBytes(mlir::func::FuncOp function,
                       const llvm::DenseMap<mlir::StringAttr, uint64_t> &bytes);

// Whether tpu-plan-memory stores `value` in the array's dtype on a bf16
// array (with dram-dtype=array): an f32 constant, or an f32 result of the
// matrix or vector unit, that only matrix products read (through views).
bool onlyTheArrayReads(mlir::Value value);
// The bytes of an element of `value` (a view: its input's) in DRAM as
// tpu-plan-memory will store it: 2 where `narrow` (a bf16 array, dram-dtype
// array) and only the array reads it, else 4. For the plans made before.
int64_t plannedElementBytes(mlir::Value value, bool narrow);

std::pair<int64_t, int64_t> matrixShape(mlir::Value value);
llvm::ArrayRef<int64_t> shapeOf(mlir::Value value);

// The uses of `value`, and through views of it, those of the views (not the
// views themselves).
llvm::SmallVector<mlir::OpOperand *> usesThroughViews(mlir::Value value);

// The H * W of the NCHW tensor that holds `value`, the NHWC side of a
// folded layout transpose, in DRAM; 0 for any other value.
int64_t nchwPixelsOf(mlir::Value value);

// A tensor where tpu-plan-memory put it; throws tpu::Error when it has no
// place. The NHWC side of a folded layout transpose (the result of one that
// reads NCHW, or the value one stores as NCHW) is its NCHW tensor, with
// `pixels` set.
Matrix matrixOf(mlir::Value value);

// The folded head transpose (perms [0, 2, 1, 3] between [N, S, H, D] in
// DRAM and the [N, H, S, D] side a batched matmul reads or writes as
// [N*H, S, D]) that `value`, a batched matmul's operand or result, is read
// from or stored through; null if none. Batch n*H + h is then S rows of D
// elements, H*D apart, from element (n*S*H + h)*D of the DRAM tensor.
mlir::tpu::TransposeOp headTransposeOf(mlir::Value value);
// Whether `transpose` (perms [0, 2, 1, 3]) can be folded into its
// neighbours: into the batched matmul that is its input's only writer and
// reader (through views), which then stores its result's layout, else into
// the batched matmuls that are its result's only readers, which load its
// input's layout.
bool headTransposeFolds(mlir::tpu::TransposeOp transpose);
// Whether `transpose` (perms [0, 2, 3, 1], [N, S, H, D] to [N, H, D, S]:
// attention's keys transposed per head) can be folded into its readers:
// batched matmuls that all read its result as their weights, batching its
// heads. They load each head's [D, S] weights with transposing transfers
// of the head's S rows of D elements, H*D apart.
bool keyTransposeFolds(mlir::tpu::TransposeOp transpose);
// Batch `batch` of a batched matmul's operand or result `value` ([B, rows,
// cols]) whose DRAM tensor is `all`: the batches one after another, a head
// of the tensor headTransposeOf(value) folds, or the transposed head of
// the one a folded key transpose (keyTransposeFolds) reads.
Matrix batchOf(mlir::Value value, const Matrix &all, int64_t batch);

// The convolution whose window rows `im2col` gathers, with `outputs`
// output channels.
ConvShape convShapeOf(mlir::tpu::Im2ColOp im2col, int64_t outputs);

// The graph operation `op` came from (a group is named by its first op); an
// operation without a location by its name.
std::string sourceName(mlir::Operation *op);

// Writes instructions (tpu.inst) at the builder's insertion point, each
// located at its source op, and the order between the queues:
// dependsOn(from, to) makes everything issued so far on `from` complete
// before anything issued later on `to` (tpu-schedule-tokens makes tokens of
// it).
class ProgramBuilder {
public:
  explicit ProgramBuilder(mlir::OpBuilder &builder)
      : builder(builder), location(builder.getUnknownLoc()) {}

  // Instructions come from `op` (a group is named by its first op).
  void setSource(mlir::Operation *op);
  void setSource(mlir::Location source) { location = source; }
  mlir::Location sourceLocation() const { return location; }

  void emit(const isa::Instruction &instruction);
  // A token: everything `from` has issued so far has completed (with
  // `weightLoadsOnly`, the compute queue's weight loads).
  mlir::Value signal(isa::Queue from, isa::Queue to, bool weightLoadsOnly = false);
  // Makes everything the token's `to` queue issues from now on wait for it.
  void await(mlir::Value token);
  void dependsOn(isa::Queue from, isa::Queue to);

  // Before a DMA load overwrites the scratchpad: the units reading it are
  // done, and earlier stores to DRAM (which this load may read) have landed.
  void beforeLoad();
  // Before compute: its operands have arrived, and the memory it overwrites
  // has been stored.
  void beforeCompute();
  // Before a store: the result it reads has been computed.
  void beforeStore();

  // A rows x cols tile at (row, col) of the matrix, on chip `sramStride`
  // words a row (0: dense).
  void load(const Matrix &source, int64_t row, int64_t col, int64_t rows, int64_t cols,
            isa::Space space, uint64_t sramAddress, int64_t sramStride = 0);
  // Columns [col, col + cols) of the matrix's first row, `copies` times
  // into consecutive scratchpad rows: one transfer that reads the row
  // `copies` times (DRAM stride 0).
  void repeatRow(const Matrix &source, int64_t col, int64_t cols, int64_t copies,
                 uint64_t sramAddress);
  void store(const Matrix &target, int64_t row, int64_t col, int64_t rows, int64_t cols,
             isa::Space space, uint64_t sramAddress, int64_t sramStride = 0);

  // The span of the on-chip words that the last store before the insertion
  // point reads from `space`, if any store reads it.
  std::optional<Span> lastStoreFrom(isa::Space space) const;

private:
  void transfer(isa::Opcode opcode, const Matrix &dram, int64_t row, int64_t col, int64_t rows,
                int64_t cols, isa::Space space, uint64_t sramAddress, int64_t sramStride);

  mlir::OpBuilder &builder;
  mlir::Location location;
};

// A DMA load of `rows` rows of `cols` elements of `from` into the
// scratchpad, starting at byte `dram` (a DRAM stride of 0 repeats one row:
// a fill row into padding), split into transfers of at most kMaxDmaRows.
void loadRows(ProgramBuilder &builder, const Matrix &from, uint64_t dram, int64_t dramStride,
              uint64_t sram, int64_t sramStride, int64_t rows, int64_t cols);

// Buffers that one queue fills and another drains, used in turn, so that
// the producer fills the next one while the consumer works on this one
// (a plan gives one buffer as two equal addresses: each fill then waits
// for the consumer to release the last).
// Each fill is announced with a token producer -> consumer; the consumer
// (or the queue that reads the buffer last, `releaser`: a row group's store
// after the vector unit) releases a buffer with a token to the producer,
// which the next fill of the same buffer waits for.
class BufferRing {
public:
  BufferRing(llvm::ArrayRef<int64_t> addresses, isa::Queue producer, isa::Queue consumer)
      : BufferRing(addresses, producer, consumer, consumer) {}
  BufferRing(llvm::ArrayRef<int64_t> addresses, isa::Queue producer, isa::Queue consumer,
             isa::Queue releaser)
      : addresses_(addresses.begin(), addresses.end()), producer_(producer), consumer_(consumer),
        releaser_(releaser) {
    addresses_.erase(std::unique(addresses_.begin(), addresses_.end()), addresses_.end());
    releases_.resize(addresses_.size());
    held_.resize(addresses_.size());
  }

  // Before filling: the buffer's previous contents have been released.
  uint64_t startFill(ProgramBuilder &builder) {
    current_ = next_;
    next_ = (next_ + 1) % addresses_.size();
    if (releases_[current_])
      builder.await(releases_[current_]);
    held_[current_] = true;
    return addresses_[current_];
  }
  // After the fill's instructions: announces it; returns the fill's token.
  mlir::Value endFill(ProgramBuilder &builder) { return builder.signal(producer_, consumer_); }
  // Before the consumer first reads a fill.
  void use(ProgramBuilder &builder, mlir::Value fillToken) { builder.await(fillToken); }
  // Where the next fill will go.
  uint64_t nextAddress() const { return addresses_[next_]; }
  // Before the first fill: starts with the first buffer of `words` words
  // that `busy` does not touch, where one does not.
  void startClearOf(const Span &busy, uint64_t words) {
    for (size_t slot = 0; slot < addresses_.size(); ++slot)
      if (!busy.overlaps(Span{busy.space, addresses_[slot], addresses_[slot] + words})) {
        next_ = slot;
        return;
      }
  }
  // Whether the next fill's buffer has been released (or never filled).
  bool nextIsFree() const { return !held_[next_]; }
  // After the releaser's last read of the buffer at `address`
  // (`weightLoadsOnly`: its reads are the matrix unit's weight loads, and
  // the token waits for those only).
  void release(ProgramBuilder &builder, uint64_t address, bool weightLoadsOnly = false) {
    size_t slot = std::find(addresses_.begin(), addresses_.end(), address) - addresses_.begin();
    releases_[slot] = builder.signal(releaser_, producer_, weightLoadsOnly);
    held_[slot] = false;
  }

private:
  std::vector<uint64_t> addresses_;
  std::vector<mlir::Value> releases_; // the tokens that free each buffer, once there is one
  std::vector<bool> held_;            // filled and not yet released
  isa::Queue producer_, consumer_, releaser_;
  size_t next_ = 0, current_ = 0;
};

// A vector op on dense rows x cols tiles in the scratchpad; with a second
// source spread as `broadcast`.
isa::Instruction vectorOp(isa::Opcode opcode, uint64_t dst, uint64_t src, int64_t rows,
                          int64_t cols);
isa::Instruction vectorOp(isa::Opcode opcode, uint64_t dst, uint64_t src, uint64_t src2,
                          isa::Broadcast broadcast, int64_t rows, int64_t cols);

// The vector unit's opcode for an operation of the dialect (a copy has none:
// its DMA round trip is the copy).
isa::Opcode binaryOpcode(mlir::tpu::BinaryKind kind);
std::optional<isa::Opcode> unaryOpcode(mlir::tpu::UnaryKind kind);

// What the vector unit does to each tile for one elementwise op: combine it
// with an operand (a tile, a row, scalars or a column of it), or not.
struct VectorStep {
  Matrix operand;                    // rows == 0: none
  mlir::tpu::Spread spread;          // how `operand` spreads over the tile
  std::optional<isa::Opcode> opcode; // nullopt: a plain copy
  mlir::Operation *source = nullptr; // the op it comes from, when in another's group
  // A row operand loadOperand reads from DRAM into a buffer of at least
  // max(cols, lanes) words: it repeats the row there so that the op takes
  // rowCopies tile rows at once (a narrow row leaves lanes idle).
  bool foldsRows = false;
  // > 1: a pool ending a convolution's epilogue, `opcode` combining each
  // window of poolStride x poolStride outputs of the tile (laid out window
  // tap by window tap: pooledPosition) into the tile's first
  // poolStride^2-th; the steps after it work on that part.
  int64_t poolStride = 1;
};

// Where output (row, column) of a band of `bandRows` x `width` outputs lies
// in its tile when the epilogue pools windows of `poolStride` x
// `poolStride` (whole windows in the band): the band's outputs at window
// tap (row % s, column % s) are a block of their own, in row order of the
// pooled outputs, so that the pool combines whole blocks into the first.
// Row order without a pool.
int64_t pooledPosition(int64_t row, int64_t column, int64_t bandRows, int64_t width,
                       int64_t poolStride);

// The step elementwise `op` applies to `input`, one of its operands (either
// one of a commutative binary op); its operand from DRAM.
VectorStep elementwiseStep(mlir::Operation &op, mlir::Value input);
// The steps of a group's epilogue: each member after its head, a chain in
// which each reads the one before it (views move nothing; a pool ending a
// convolution's epilogue is a pooling step, and its scale a multiply).
std::vector<VectorStep> epilogueSteps(mlir::tpu::FusedOp group);
isa::Broadcast broadcastOf(mlir::tpu::Spread spread);
// The part of the step's operand a rows x cols tile at (r0, c0) combines
// with, into the scratchpad at `address`: a row rowCopies times.
void loadOperand(ProgramBuilder &builder, const VectorStep &step, int64_t r0, int64_t c0,
                 int64_t rows, int64_t cols, uint64_t address, const HardwareConfig &config);
// How many of a dense rows x cols tile's rows `step` takes as one row, its
// row operand (VectorStep::foldsRows) loaded that many times side by side:
// the divisor of rows whose copies fit max(cols, lanes) words that takes
// the fewest groups of lanes, the smallest of those; 1 for any other step,
// or where the groups saved are no more than the DRAM bus cycles of the
// extra copies (each is read from DRAM again).
int64_t rowCopies(const VectorStep &step, int64_t rows, int64_t cols, const HardwareConfig &config);
// The shape in which `step` sees a dense rows x cols tile on the config's
// vector unit: with no row or column operand (which follow the tile's
// rows), denseShape's; with a row operand, rowCopies rows as one; with a
// column operand, rows x cols.
std::pair<int64_t, int64_t> laneShape(const VectorStep &step, int64_t rows, int64_t cols,
                                      const HardwareConfig &config);
// The rows' x cols' (of the same words, within the ISA's fields) in which
// an elementwise vector op on a dense rows x cols block takes the fewest
// groups of `lanes` words (the unit takes `lanes` words of one row a
// cycle): a row narrower than the lanes, or no multiple of them, leaves
// lanes idle. rows x cols where no shape takes fewer groups; else, of the
// shapes with the fewest, the one of fewest columns.
std::pair<int64_t, int64_t> denseShape(int64_t rows, int64_t cols, int64_t lanes);
// The step on dense rows x cols tiles in the scratchpad: `src` (with its
// operand at `operand`) into `dst`, in laneShape's shape.
void emitStep(ProgramBuilder &builder, const VectorStep &step, uint64_t dst, uint64_t src,
              uint64_t operand, int64_t rows, int64_t cols, const HardwareConfig &config);

[[noreturn]] void throwNoPlan();
// The plan tpu-plan-tiles recorded on `op`; throws tpu::Error when it has
// none.
template <typename Plan> Plan planOf(mlir::Operation *op) {
  auto plan = op->getAttrOfType<Plan>(mlir::tpu::kTilingAttr);
  if (!plan)
    throwNoPlan();
  return plan;
}

// Writes `op`'s instructions before it with `lower`, then replaces its
// results by the tensors the program stored where tpu-plan-memory put them.
// A tpu::Error becomes an error on `op`, and `op` stays.
mlir::LogicalResult lowerInPlace(mlir::Operation *op, mlir::PatternRewriter &rewriter,
                                 llvm::function_ref<void(ProgramBuilder &)> lower);

// A lowering of `Op` to instructions for the target's hardware.
template <typename Op> struct LoweringPattern : mlir::OpRewritePattern<Op> {
  LoweringPattern(mlir::MLIRContext *context, const HardwareConfig &config)
      : mlir::OpRewritePattern<Op>(context), config(config) {}
  const HardwareConfig &config;
};

// Applies `patterns` to every operation of `function` that `lowers` selects,
// once each in program order, and nothing else (no folding, no dead-code
// removal); fails when one of them is still there (its error reported).
mlir::LogicalResult applyToEach(mlir::func::FuncOp function,
                                const mlir::FrozenRewritePatternSet &patterns,
                                llvm::function_ref<bool(mlir::Operation *)> lowers);

// Lowers the operations `lowers` selects with the patterns `Patterns`, each
// built for the hardware of the function's target.
template <typename... Patterns>
mlir::LogicalResult lowerOperations(mlir::func::FuncOp function,
                                    llvm::function_ref<bool(mlir::Operation *)> lowers) {
  mlir::FailureOr<mlir::tpu::TargetAttr> target = mlir::tpu::getTarget(function);
  if (mlir::failed(target))
    return mlir::failure();
  HardwareConfig config = mlir::tpu::hardwareConfig(*target);
  mlir::RewritePatternSet patterns(function.getContext());
  patterns.add<Patterns...>(function.getContext(), config);
  return applyToEach(function, std::move(patterns), lowers);
}

} // namespace tpu::codegen
