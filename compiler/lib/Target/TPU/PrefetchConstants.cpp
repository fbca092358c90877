// tpu-prefetch-constants: a group's first loads of data the program never
// writes, issued before the group's wait on the groups before it, so that
// their DRAM latency and traffic overlap the previous group's compute.
#include "tpu/Dialect/Instructions.h"
#include "tpu/Dialect/TargetConfig.h"
#include "tpu/Target/TPU/Passes.h"
#include "tpu/isa/Legality.h"

#include <array>

namespace mlir::tpu {
#define GEN_PASS_DEF_PREFETCHCONSTANTS
#include "tpu/Target/TPU/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;
namespace isa = ::tpu::isa;
using isa::Field;
using isa::Opcode;
using isa::Queue;

namespace {

// The banks an instruction touches in each on-chip memory, over the span of
// each region it reads or writes (first to last word): a superset of the
// words, so disjoint banks are disjoint data, and a transfer into them never
// holds a bank another unit waits for.
struct Banks {
  std::array<uint64_t, 2> perSpace{}; // bit b: bank b of the scratchpad, the accumulator

  bool intersects(const Banks &other) const {
    return (perSpace[0] & other.perSpace[0]) || (perSpace[1] & other.perSpace[1]);
  }
  Banks &operator|=(const Banks &other) {
    perSpace[0] |= other.perSpace[0], perSpace[1] |= other.perSpace[1];
    return *this;
  }
};

class Footprints {
public:
  explicit Footprints(const ::tpu::HardwareConfig &config)
      : bankWords{config.scratchpad.words() / config.scratchpad.banks,
                  config.accumulator.words() / config.accumulator.banks},
        arrayCols(config.array.cols) {}

  Banks of(const isa::Instruction &inst) const {
    Banks banks;
    auto touch = [&](uint64_t space, uint64_t address, uint64_t rows, uint64_t cols,
                     uint64_t stride) {
      if (rows == 0 || cols == 0)
        return;
      uint64_t first = address / bankWords[space];
      uint64_t last = (address + (rows - 1) * stride + cols - 1) / bankWords[space];
      for (uint64_t bank = first; bank <= last && bank < 64; ++bank)
        banks.perSpace[space] |= uint64_t{1} << bank;
    };
    const auto sp = uint64_t(isa::Space::Scratchpad), acc = uint64_t(isa::Space::Accumulator);
    uint64_t rows = inst.get(Field::Rows), cols = inst.get(Field::Cols);
    switch (inst.opcode) {
    case Opcode::DmaLoad:
    case Opcode::DmaStore:
      if (inst.get(Field::Transpose))
        std::swap(rows, cols);
      touch(inst.get(Field::Space), inst.get(Field::SramAddr), rows, cols,
            inst.get(Field::SramStride));
      break;
    case Opcode::DmaGather:
      touch(sp, inst.get(Field::SramAddr), rows, cols, cols);
      touch(sp, inst.get(Field::SrcAddr), 1, rows, rows);
      break;
    case Opcode::LoadWeights:
      touch(sp, inst.get(Field::SrcAddr), rows, cols, inst.get(Field::SrcStride));
      break;
    case Opcode::MatMul: // as wide as the active weight tile: at most the array
      touch(sp, inst.get(Field::SrcAddr), rows, cols, inst.get(Field::SrcStride));
      touch(acc, inst.get(Field::DstAddr), rows, arrayCols, inst.get(Field::DstStride));
      break;
    case Opcode::Nop:
    case Opcode::Halt:
    case Opcode::SyncPush:
    case Opcode::SyncPop:
      break;
    default: { // the vector unit: dense operands
      touch(inst.get(Field::SrcSpace), inst.get(Field::SrcAddr), rows, cols, cols);
      ::tpu::OperandShape dst = ::tpu::vectorDestinationShape(inst);
      touch(inst.get(Field::DstSpace), inst.get(Field::DstAddr), dst.rows, dst.cols, dst.cols);
      if (isa::usesField(isa::opcodeInfo(inst.opcode), Field::Src2Addr)) {
        ::tpu::OperandShape src2 = ::tpu::vectorSecondSourceShape(inst);
        touch(inst.get(Field::Src2Space), inst.get(Field::Src2Addr), src2.rows, src2.cols,
              src2.cols);
      }
    }
    }
    return banks;
  }

private:
  std::array<uint64_t, 2> bankWords;
  uint64_t arrayCols;
};

// The DRAM bytes [begin, end) a transfer reads or writes.
std::pair<uint64_t, uint64_t> dramRange(const isa::Instruction &inst) {
  uint64_t rows = inst.get(Field::Rows), cols = inst.get(Field::Cols);
  uint64_t bytes = isa::dtypeBytes(isa::DType(inst.get(Field::DType)));
  uint64_t begin = inst.get(Field::DramAddr);
  return {begin, begin + ((rows - 1) * inst.get(Field::DramStride) + cols) * bytes};
}

std::optional<isa::Instruction> instruction(Operation *op) {
  if (auto inst = llvm::dyn_cast<mlir::tpu::InstOp>(op))
    return mlir::tpu::instructionOf(inst);
  return std::nullopt;
}

// The queue an await pops from: its token's `to`.
std::optional<Queue> awaitedBy(Operation *op) {
  if (auto await = llvm::dyn_cast<mlir::tpu::AwaitOp>(op))
    if (auto signal = await.getToken().getDefiningOp<mlir::tpu::SignalOp>())
      return mlir::tpu::isaQueue(signal.getTo());
  if (auto depend = llvm::dyn_cast<mlir::tpu::DependOp>(op))
    return mlir::tpu::isaQueue(depend.getTo());
  return std::nullopt;
}

// Whether `op` is in the load queue's order: one of its instructions, a
// token it pushes or one it waits for.
bool inLoadQueue(Operation *op) {
  if (std::optional<isa::Instruction> inst = instruction(op))
    return inst->queue() == Queue::Load;
  if (auto signal = llvm::dyn_cast<mlir::tpu::SignalOp>(op))
    return mlir::tpu::isaQueue(signal.getFrom()) == Queue::Load;
  if (auto depend = llvm::dyn_cast<mlir::tpu::DependOp>(op))
    if (mlir::tpu::isaQueue(depend.getFrom()) == Queue::Load)
      return true;
  return awaitedBy(op) == Queue::Load;
}

// Whether `op` is a matrix unit instruction (a push right before one would
// drain the array's pipeline).
bool isMatrix(Operation *op) {
  std::optional<isa::Instruction> inst = instruction(op);
  return inst && (inst->opcode == Opcode::LoadWeights || inst->opcode == Opcode::MatMul);
}

// What a compute or store instruction may still touch when a load starts.
struct Access {
  Operation *op;
  Banks banks;
  Queue queue;
};

class PrefetchConstants : public mlir::tpu::impl::PrefetchConstantsBase<PrefetchConstants> {
public:
  void runOnOperation() override {
    auto module = getOperation()->getParentOfType<ModuleOp>();
    auto target =
        module ? module->getAttrOfType<mlir::tpu::TargetAttr>(mlir::tpu::kTargetAttr) : nullptr;
    if (!target)
      return; // no banks to tell the buffers apart by
    const Footprints footprints(mlir::tpu::hardwareConfig(target));
    Block &block = getOperation().getBody().front();

    written.clear();
    for (Operation &op : block)
      if (std::optional<isa::Instruction> inst = instruction(&op);
          inst && inst->opcode == Opcode::DmaStore)
        written.push_back(dramRange(*inst));

    // Walking in program order: the compute and store instructions since
    // the load queue last waited for both queues (they may still run when a
    // load after that wait starts), and the load queue's latest op.
    std::vector<Access> window;
    Operation *lastInLoadQueue = nullptr;
    for (Operation *op = &block.front(); op; op = op->getNextNode()) {
      if (std::optional<isa::Instruction> inst = instruction(op)) {
        if (inst->queue() != Queue::Load)
          window.push_back({op, footprints.of(*inst), inst->queue()});
      } else if (llvm::isa<mlir::tpu::DependOp>(op)) {
        // A run of depends waiting for both other queues: the group's
        // boundary. Everything before it completes before a load after it.
        Operation *last = op;
        bool afterCompute = false, afterStore = false;
        for (Operation *d = op; d && llvm::isa<mlir::tpu::DependOp>(d); d = d->getNextNode()) {
          auto depend = llvm::cast<mlir::tpu::DependOp>(d);
          if (mlir::tpu::isaQueue(depend.getTo()) == Queue::Load) {
            afterCompute |= mlir::tpu::isaQueue(depend.getFrom()) == Queue::Compute;
            afterStore |= mlir::tpu::isaQueue(depend.getFrom()) == Queue::Store;
          }
          last = d;
        }
        if (afterCompute && afterStore) {
          hoist(op, last, lastInLoadQueue, window, footprints);
          window.clear();
        }
        for (Operation *d = op; d != last->getNextNode(); d = d->getNextNode())
          if (inLoadQueue(d))
            lastInLoadQueue = d;
        op = last;
        continue;
      }
      if (inLoadQueue(op))
        lastInLoadQueue = op;
    }
  }

private:
  // What the program writes in DRAM: a load of anything else reads the
  // same bytes whenever it runs.
  std::vector<std::pair<uint64_t, uint64_t>> written;

  bool neverWritten(const isa::Instruction &load) const {
    auto [begin, end] = dramRange(load);
    return llvm::none_of(written,
                         [&](auto range) { return begin < range.second && range.first < end; });
  }

  // A token to the load queue that says `access` has completed: the first
  // signal from its queue after it, before the boundary at `first`; from
  // the compute queue, not one the matrix unit's next instruction follows
  // (its push would drain the array; before a vector op it costs a cycle,
  // as that waits for the array anyway).
  static mlir::tpu::SignalOp releaseAfter(const Access &access, Operation *first) {
    for (Operation *op = access.op->getNextNode(); op != first; op = op->getNextNode()) {
      auto signal = llvm::dyn_cast<mlir::tpu::SignalOp>(op);
      if (!signal || mlir::tpu::isaQueue(signal.getFrom()) != access.queue ||
          mlir::tpu::isaQueue(signal.getTo()) != Queue::Load)
        continue;
      if (access.queue == Queue::Compute)
        for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
          if (std::optional<isa::Instruction> inst = instruction(next);
              inst && inst->queue() == Queue::Compute)
            return isMatrix(next) ? nullptr : signal;
      return signal;
    }
    return nullptr;
  }

  // Moves the leading loads after the boundary [first, last] that read what
  // the program never writes to right after `after` (the load queue's op
  // before the boundary; the function's start if none): the load queue's
  // order stays as it was, those loads just stop waiting for the groups
  // before. A load whose banks a compute or store instruction of the groups
  // before that may still run touches waits for its queue's release token
  // after the last such instruction instead (and goes after it); one that
  // has none stays, and so does one whose banks the group's own compute
  // touches first.
  void hoist(Operation *first, Operation *last, Operation *after, std::vector<Access> accesses,
             const Footprints &footprints) {
    llvm::SmallVector<Operation *> hoisted;
    // Per queue (compute, store), the latest token to wait for.
    std::array<mlir::tpu::SignalOp, 2> releases;
    auto slot = [](Queue queue) { return queue == Queue::Compute ? 0 : 1; };
    for (Operation *op = last->getNextNode(); op; op = op->getNextNode()) {
      std::optional<isa::Instruction> inst = instruction(op);
      if (inst && inst->queue() != Queue::Load) {
        accesses.push_back({op, footprints.of(*inst), inst->queue()});
        continue;
      }
      // Any other op of the load queue than such a load: a load that must
      // wait, a wait, or a token (moving a load above it would delay the
      // token's consumer).
      if (!inst || inst->opcode != Opcode::DmaLoad || !neverWritten(*inst))
        if (inLoadQueue(op))
          break;
      if (!inst)
        continue;
      Banks banks = footprints.of(*inst);
      std::array<mlir::tpu::SignalOp, 2> needed = releases;
      bool free = true;
      for (Queue queue : {Queue::Compute, Queue::Store}) {
        auto conflict = std::find_if(accesses.rbegin(), accesses.rend(), [&](const Access &access) {
          return access.queue == queue && access.banks.intersects(banks);
        });
        if (conflict == accesses.rend())
          continue;
        mlir::tpu::SignalOp token;
        if (conflict->op->isBeforeInBlock(first))
          token = releaseAfter(*conflict, first);
        free = free && token;
        mlir::tpu::SignalOp &latest = needed[slot(queue)];
        if (token && (!latest || latest->isBeforeInBlock(token)))
          latest = token;
      }
      if (!free)
        break;
      releases = needed;
      hoisted.push_back(op);
    }
    if (hoisted.empty())
      return;
    for (mlir::tpu::SignalOp release : releases)
      if (release && (!after || after->isBeforeInBlock(release)))
        after = release;
    OpBuilder builder(&getContext());
    if (after)
      builder.setInsertionPointAfter(after);
    else
      builder.setInsertionPointToStart(first->getBlock());
    for (mlir::tpu::SignalOp release : releases)
      if (release)
        builder.create<mlir::tpu::AwaitOp>(hoisted.front()->getLoc(), release.getToken());
    for (Operation *op : hoisted) {
      op->remove();
      builder.insert(op);
    }
    numHoisted += hoisted.size();
  }
};

} // namespace
