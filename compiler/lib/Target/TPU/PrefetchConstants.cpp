// tpu-prefetch-constants: a group's first loads of data the program never
// writes, or wrote before the previous group, issued before the group's wait
// on the groups before it, so that their DRAM latency and traffic overlap
// the previous group's compute.
#include "tpu/Dialect/Instructions.h"
#include "tpu/Dialect/TargetConfig.h"
#include "tpu/Target/TPU/Footprints.h"
#include "tpu/Target/TPU/Passes.h"

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
using ::tpu::codegen::DramBlock;
using ::tpu::codegen::forEachRegion;
using ::tpu::codegen::forEachSpan;
using ::tpu::codegen::Span;

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
      : layout(config), arrayCols(config.array.cols) {}

  // `shift`: as if its scratchpad regions were that many words higher.
  Banks of(const isa::Instruction &inst, uint64_t shift = 0) const {
    Banks banks;
    forEachSpan(inst, arrayCols, [&](Field, Span span) {
      if (span.space == uint64_t(isa::Space::Scratchpad))
        span.begin += shift, span.end += shift;
      for (uint64_t bank = layout.firstBank(span); bank <= layout.lastBank(span) && bank < 64;
           ++bank)
        banks.perSpace[span.space] |= uint64_t{1} << bank;
    });
    return banks;
  }

  // The scratchpad words past the last one `inst` touches.
  uint64_t scratchpadEnd(const isa::Instruction &inst) const {
    uint64_t end = 0;
    forEachSpan(inst, arrayCols, [&](Field, const Span &span) {
      if (span.space == uint64_t(isa::Space::Scratchpad))
        end = std::max(end, span.end);
    });
    return end;
  }

  uint64_t arrayColumns() const { return arrayCols; }
  uint64_t scratchpadBankWords() const {
    return layout.bankWords[uint64_t(isa::Space::Scratchpad)];
  }

private:
  ::tpu::codegen::BankLayout layout;
  uint64_t arrayCols;
};

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

// Whether `op` is a token the load queue pushes: it says the loads before
// it are done, so it may move up with them.
bool isLoadSignal(Operation *op) {
  auto signal = llvm::dyn_cast<mlir::tpu::SignalOp>(op);
  return signal && mlir::tpu::isaQueue(signal.getFrom()) == Queue::Load;
}

bool isWeightLoad(Operation *op) {
  std::optional<isa::Instruction> inst = instruction(op);
  return inst && inst->opcode == Opcode::LoadWeights;
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
    mlir::tpu::TargetAttr target = mlir::tpu::targetOf(getOperation());
    if (!target)
      return; // no banks to tell the buffers apart by
    const ::tpu::HardwareConfig config = mlir::tpu::hardwareConfig(target);
    const Footprints footprints(config);
    scratchpadWords = config.scratchpad.words();
    bankWords = footprints.scratchpadBankWords();
    Block &block = getOperation().getBody().front();

    stores.clear();
    for (Operation &op : block)
      if (std::optional<isa::Instruction> inst = instruction(&op);
          inst && inst->opcode == Opcode::DmaStore)
        stores.push_back({&op, DramBlock(*inst)});
    settledStores = 0;
    size_t storesSeen = 0; // the pass moves no store: they stay in this order

    // Walking in program order: the compute and store instructions since
    // the load queue last waited for both queues (they may still run when a
    // load after that wait starts), and the load queue's latest op.
    std::vector<Access> window;
    Operation *lastInLoadQueue = nullptr;
    for (Operation *op = &block.front(); op; op = op->getNextNode()) {
      if (std::optional<isa::Instruction> inst = instruction(op)) {
        if (inst->queue() != Queue::Load)
          window.push_back({op, footprints.of(*inst), inst->queue()});
        storesSeen += inst->opcode == Opcode::DmaStore;
      } else if (llvm::isa<mlir::tpu::DependOp>(op)) {
        // A run of depends waiting for both other queues: the group's
        // boundary. Everything before it completes before a load after it.
        Operation *last = op;
        if (isBoundary(op, last)) {
          groupStores = storesSeen;
          relocate(last, window, footprints);
          hoist(op, last, lastInLoadQueue, window, footprints);
          window.clear();
          settledStores = storesSeen;
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
  // Whether the run of tpu.depend from `op` waits in the load queue for
  // both other queues (a group's boundary); `last` is the run's last op.
  static bool isBoundary(Operation *op, Operation *&last) {
    bool afterCompute = false, afterStore = false;
    for (Operation *d = op; d && llvm::isa<mlir::tpu::DependOp>(d); d = d->getNextNode()) {
      auto depend = llvm::cast<mlir::tpu::DependOp>(d);
      if (mlir::tpu::isaQueue(depend.getTo()) == Queue::Load) {
        afterCompute |= mlir::tpu::isaQueue(depend.getFrom()) == Queue::Compute;
        afterStore |= mlir::tpu::isaQueue(depend.getFrom()) == Queue::Store;
      }
      last = d;
    }
    return afterCompute && afterStore;
  }

  // How many of the group's leading loads (after the boundary ending at
  // `last`) read DRAM no later group writes (storeToFollow) into banks that
  // no compute or store instruction of `accesses` touches, with the
  // group's scratchpad regions `shift` words higher.
  size_t freeLeadingLoads(Operation *last, const std::vector<Access> &accesses,
                          const Footprints &footprints, uint64_t shift) const {
    size_t free = 0;
    for (Operation *op = last->getNextNode(); op; op = op->getNextNode()) {
      std::optional<isa::Instruction> inst = instruction(op);
      if ((inst && inst->queue() != Queue::Load) || (isLoadSignal(op) && free > 0))
        continue;
      if (!inst || inst->opcode != Opcode::DmaLoad || !storeToFollow(*inst)) {
        if (inLoadQueue(op))
          break;
        continue;
      }
      Banks banks = footprints.of(*inst, shift);
      if (llvm::any_of(accesses,
                       [&](const Access &access) { return access.banks.intersects(banks); }))
        break;
      ++free;
    }
    return free;
  }

  // Moves the group after the boundary ending at `last` (up to the next
  // boundary) up by a whole number of banks, every scratchpad address of
  // its instructions alike, where it fits there and more of its leading
  // loads then may go ahead of the boundary: groups pass their values
  // through DRAM, so a group's buffers may lie anywhere. Half the
  // scratchpad first, then the other shifts from the largest down; the
  // first that frees the most loads wins.
  void relocate(Operation *last, const std::vector<Access> &accesses,
                const Footprints &footprints) {
    uint64_t end = 0;
    Operation *groupEnd = nullptr;
    for (Operation *op = last->getNextNode(); op; op = op->getNextNode()) {
      Operation *runEnd = op;
      if (llvm::isa<mlir::tpu::DependOp>(op) && isBoundary(op, runEnd)) {
        groupEnd = op;
        break;
      }
      if (std::optional<isa::Instruction> inst = instruction(op))
        end = std::max(end, footprints.scratchpadEnd(*inst));
    }
    const uint64_t half = scratchpadWords / 2 / bankWords * bankWords;
    llvm::SmallVector<uint64_t> shifts{half};
    for (uint64_t shift = scratchpadWords - bankWords; shift >= bankWords; shift -= bankWords)
      if (shift != half)
        shifts.push_back(shift);
    uint64_t best = 0;
    size_t mostFree = freeLeadingLoads(last, accesses, footprints, 0);
    for (uint64_t shift : shifts) {
      if (shift == 0 || end + shift > scratchpadWords)
        continue;
      if (size_t free = freeLeadingLoads(last, accesses, footprints, shift); free > mostFree)
        best = shift, mostFree = free;
    }
    if (best == 0)
      return;
    for (Operation *op = last->getNextNode(); op != groupEnd; op = op->getNextNode()) {
      auto inst = llvm::dyn_cast<mlir::tpu::InstOp>(op);
      if (!inst)
        continue;
      isa::Instruction moved = mlir::tpu::instructionOf(inst);
      forEachRegion(moved, footprints.arrayColumns(),
                    [&](uint64_t space, Field address, uint64_t, uint64_t, uint64_t) {
                      if (space == uint64_t(isa::Space::Scratchpad))
                        moved.set(address, moved.get(address) + best);
                    });
      inst.setFields(mlir::tpu::instructionFields(moved));
    }
    ++numRelocated;
  }

  // Each dma.st of the program and the DRAM bytes it writes, in program
  // order.
  std::vector<std::pair<Operation *, DramBlock>> stores;
  // How many of them come before the previous group boundary (those have
  // completed before the load queue passes it), and before this one.
  size_t settledStores = 0, groupStores = 0;
  uint64_t scratchpadWords = 0, bankWords = 0;

  // Where `load` may go ahead of the group boundary: anywhere after the
  // previous boundary where it reads data the program never writes
  // (weights, constants, inputs) or wrote groups ago (nullptr); after the
  // last store of the group before that writes what it reads (the
  // previous group's first output tiles), where tpu-schedule-tokens has
  // it wait for that store; nowhere (nullopt) where a later store writes
  // it.
  std::optional<Operation *> storeToFollow(const isa::Instruction &load) const {
    const DramBlock read(load);
    Operation *latest = nullptr;
    for (size_t store = settledStores; store < stores.size(); ++store)
      if (stores[store].second.overlaps(read)) {
        if (store >= groupStores)
          return std::nullopt;
        latest = stores[store].first;
      }
    return latest;
  }

  // A token to the load queue that says `access` has completed: the first
  // signal from its queue after it, before the boundary at `first` (one
  // that says only weight loads are done, only for a weight load); from
  // the compute queue, the first not one the matrix unit's next
  // instruction follows (its push would drain the array; before a vector
  // op it costs a cycle, as that waits for the array anyway), unless it
  // waits for weight loads only.
  static mlir::tpu::SignalOp releaseAfter(const Access &access, Operation *first) {
    for (Operation *op = access.op->getNextNode(); op != first; op = op->getNextNode()) {
      auto signal = llvm::dyn_cast<mlir::tpu::SignalOp>(op);
      if (!signal || mlir::tpu::isaQueue(signal.getFrom()) != access.queue ||
          mlir::tpu::isaQueue(signal.getTo()) != Queue::Load)
        continue;
      if (signal.getWeights() && !isWeightLoad(access.op))
        continue;
      if (access.queue == Queue::Compute && !signal.getWeights() && followedByMatrix(op))
        continue; // a later one says as much
      return signal;
    }
    return nullptr;
  }

  // Whether the compute queue's next instruction after `op` is the matrix
  // unit's.
  static bool followedByMatrix(Operation *op) {
    for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
      if (std::optional<isa::Instruction> inst = instruction(next);
          inst && inst->queue() == Queue::Compute)
        return isMatrix(next);
    return false;
  }

  // Moves the leading loads after the boundary [first, last] that may go
  // ahead of it (storeToFollow) up to right after `after` (the load
  // queue's op before the boundary; the function's start if none), each
  // no earlier than the store it follows: the load queue's order stays as
  // it was, those loads just stop waiting for the groups before. A load
  // whose banks a compute or store instruction of the groups before that
  // may still run touches waits for its queue's release token after the
  // last such instruction instead (and goes after that token, the loads
  // after it too); one that has none stays, and so does one whose banks
  // the group's own compute touches first.
  void hoist(Operation *first, Operation *last, Operation *after, std::vector<Access> accesses,
             const Footprints &footprints) {
    // Per queue (compute, store), the latest token to wait for.
    using Releases = std::array<mlir::tpu::SignalOp, 2>;
    // The hoisted ops in order, each with the op it goes after at the
    // earliest (nullptr: the function's start) and the tokens it waits for.
    struct Hoisted {
      Operation *op, *earliest;
      Releases releases;
    };
    llvm::SmallVector<Hoisted> hoisted;
    Releases releases;
    auto slot = [](Queue queue) { return queue == Queue::Compute ? 0 : 1; };
    auto later = [](Operation *a, Operation *b) {
      return !a || (b && a->isBeforeInBlock(b)) ? b : a;
    };
    for (Operation *op = last->getNextNode(); op; op = op->getNextNode()) {
      std::optional<isa::Instruction> inst = instruction(op);
      if (inst && inst->queue() != Queue::Load) {
        accesses.push_back({op, footprints.of(*inst), inst->queue()});
        continue;
      }
      // The load queue's token after such loads moves up with them (its
      // consumer waits for the same loads, no later).
      if (isLoadSignal(op) && !hoisted.empty()) {
        hoisted.push_back({op, hoisted.back().earliest, releases});
        continue;
      }
      // Any other op of the load queue than such a load: a load that must
      // wait, a wait, or a token before them (moving a load above it would
      // delay the token's consumer).
      std::optional<Operation *> store;
      if (inst && inst->opcode == Opcode::DmaLoad)
        store = storeToFollow(*inst);
      if (!store && inLoadQueue(op))
        break;
      if (!inst)
        continue;
      Banks banks = footprints.of(*inst);
      Releases needed = releases;
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
      Operation *earliest = later(hoisted.empty() ? after : hoisted.back().earliest, *store);
      for (mlir::tpu::SignalOp release : releases)
        earliest = later(earliest, release);
      hoisted.push_back({op, earliest, releases});
    }
    OpBuilder builder(&getContext());
    Releases awaited;
    Operation *previous = nullptr;
    for (const Hoisted &hoist : hoisted) {
      if (Operation *point = later(previous, hoist.earliest))
        builder.setInsertionPointAfter(point);
      else
        builder.setInsertionPointToStart(first->getBlock());
      for (size_t queue = 0; queue < awaited.size(); ++queue)
        if (mlir::tpu::SignalOp release = hoist.releases[queue]; release != awaited[queue]) {
          builder.create<mlir::tpu::AwaitOp>(hoist.op->getLoc(), release.getToken());
          awaited[queue] = release;
        }
      hoist.op->remove();
      builder.insert(hoist.op);
      previous = hoist.op;
    }
    numHoisted += llvm::count_if(
        hoisted, [](const Hoisted &hoist) { return instruction(hoist.op).has_value(); });
  }
};

} // namespace
