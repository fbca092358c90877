// tpu-schedule-tokens: the order between the queues (tpu.signal, tpu.await,
// tpu.depend) as the ISA's tokens, sync.push and sync.pop.
#include "tpu/Dialect/Instructions.h"
#include "tpu/Dialect/TargetConfig.h"
#include "tpu/Target/TPU/Footprints.h"
#include "tpu/Target/TPU/Passes.h"

#include "llvm/ADT/DenseSet.h"

#include <array>

namespace mlir::tpu {
#define GEN_PASS_DEF_SCHEDULETOKENS
#include "tpu/Target/TPU/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;
namespace isa = ::tpu::isa;

namespace {

// The channels' state in program order: what each queue has issued, and
// per channel from -> to the tokens pushed and popped so far.
class TokenScheduler {
public:
  explicit TokenScheduler(OpBuilder &builder) : builder(builder) {}

  void issued(mlir::tpu::InstOp inst) { ++issuedOn[index(mlir::tpu::instructionOf(inst).queue())]; }

  // A sync.push on `from`, which completes once everything `from` has issued
  // so far has (with `weightLoadsOnly`, its weight loads: the token then
  // says nothing of the rest); returns the token's number on the channel.
  uint64_t push(Location loc, isa::Queue from, isa::Queue to, bool weightLoadsOnly = false) {
    emit(loc, isa::Opcode::SyncPush, from, to, weightLoadsOnly);
    if (!weightLoadsOnly)
      synced[index(from)][index(to)] = issuedOn[index(from)];
    return pushed[index(from)][index(to)]++;
  }

  // Pops the channel's tokens up to `token` (tokens are taken in order, so
  // waiting for one waits for all before it).
  void popUpTo(Location loc, isa::Queue from, isa::Queue to, uint64_t token) {
    while (popped[index(from)][index(to)] <= token) {
      emit(loc, isa::Opcode::SyncPop, from, to);
      ++popped[index(from)][index(to)];
    }
  }

  // Makes `to` wait for everything `from` has issued so far: a new token
  // where `from` issued anything since its last one, else the last token,
  // if `to` has not taken it yet; nothing where it has.
  void depend(Location loc, isa::Queue from, isa::Queue to) {
    if (synced[index(from)][index(to)] != issuedOn[index(from)])
      popUpTo(loc, from, to, push(loc, from, to));
    else if (popped[index(from)][index(to)] < pushed[index(from)][index(to)])
      popUpTo(loc, from, to, pushed[index(from)][index(to)] - 1);
  }

private:
  static unsigned index(isa::Queue queue) { return static_cast<unsigned>(queue); }

  void emit(Location loc, isa::Opcode opcode, isa::Queue from, isa::Queue to,
            bool weightLoadsOnly = false) {
    isa::Instruction sync = isa::makeInstruction(
        opcode, {{isa::Field::From, uint64_t(from)}, {isa::Field::To, uint64_t(to)}});
    if (weightLoadsOnly)
      sync.set(isa::Field::Weights, 1);
    mlir::tpu::createInstruction(builder, loc, sync);
    ++issuedOn[index(opcode == isa::Opcode::SyncPush ? from : to)];
  }

  using PerChannel = std::array<std::array<uint64_t, isa::kNumQueues>, isa::kNumQueues>;
  OpBuilder &builder;
  std::array<uint64_t, isa::kNumQueues> issuedOn{};
  PerChannel synced{}; // issuedOn[from] when the latest token from -> to was pushed
  PerChannel pushed{}, popped{};
};

using ::tpu::codegen::Span;

// The spans of the on-chip regions `inst` reads or writes (`written`: only
// those it writes).
llvm::SmallVector<Span, 3> spansOf(const isa::Instruction &inst, uint64_t arrayCols,
                                   bool written = false) {
  llvm::SmallVector<Span, 3> spans;
  ::tpu::codegen::forEachSpan(inst, arrayCols, [&](isa::Field address, const Span &span) {
    if (!written || ::tpu::codegen::writesRegion(inst, address))
      spans.push_back(span);
  });
  return spans;
}

// Per instruction that must wait for a store, the last store before it
// that it conflicts with (the store queue runs in order: waiting for one
// waits for those before).
using StoreWaits = llvm::DenseMap<Operation *, Operation *>;

// Calls visit(op, instruction) for each instruction of `body` in order but
// the tokens. The tokens from the store queue to `waiting` a program
// already has (read back after this pass) move `unwaited`, the first store
// nothing waits for yet, past the stores each pop waits for: those before
// its push.
template <typename Visit>
void forEachInstruction(Block &body, isa::Queue waiting, size_t &unwaited, Visit visit) {
  std::vector<size_t> pushedAfter; // per push, the stores before it
  size_t popped = 0, stores = 0;
  for (Operation &op : body) {
    auto inst = llvm::dyn_cast<mlir::tpu::InstOp>(op);
    if (!inst)
      continue;
    const isa::Instruction instruction = mlir::tpu::instructionOf(inst);
    const isa::Opcode opcode = instruction.opcode;
    if (opcode == isa::Opcode::SyncPush || opcode == isa::Opcode::SyncPop) {
      if (isa::Queue(instruction.get(isa::Field::From)) == isa::Queue::Store &&
          isa::Queue(instruction.get(isa::Field::To)) == waiting) {
        if (opcode == isa::Opcode::SyncPush)
          pushedAfter.push_back(stores);
        else if (popped < pushedAfter.size())
          unwaited = std::max(unwaited, pushedAfter[popped++]);
      }
      continue;
    }
    stores += opcode == isa::Opcode::DmaStore;
    visit(op, instruction);
  }
}

// Loads wait for the stores they conflict with: a store of DRAM they read
// (the previous group's results), or of on-chip words they overwrite (a
// staging buffer). Where tpu.depend from the store queue to the load queue
// stands, it asks for no more. A gather waits for every store before it.
StoreWaits loadsWaitFor(Block &body) {
  StoreWaits waits;
  struct Store {
    Operation *op;
    ::tpu::codegen::DramBlock dram;
    Span sram;
  };
  std::vector<Store> stores;
  size_t unwaited = 0;
  forEachInstruction(
      body, isa::Queue::Load, unwaited, [&](Operation &op, const isa::Instruction &instruction) {
        if (instruction.opcode == isa::Opcode::DmaStore) {
          stores.push_back(
              {&op, ::tpu::codegen::DramBlock(instruction), spansOf(instruction, 0)[0]});
        } else if (instruction.opcode == isa::Opcode::DmaGather && stores.size() > unwaited) {
          waits[&op] = stores.back().op;
          unwaited = stores.size();
        } else if (instruction.opcode == isa::Opcode::DmaLoad) {
          const ::tpu::codegen::DramBlock dram(instruction);
          const Span sram = spansOf(instruction, 0)[0];
          for (size_t store = stores.size(); store-- > unwaited;)
            if (stores[store].dram.overlaps(dram) || stores[store].sram.overlaps(sram)) {
              waits[&op] = stores[store].op;
              unwaited = store + 1;
              break;
            }
        }
      });
  return waits;
}

// Compute instructions wait for the stores still reading on-chip words
// they write (the previous group's last tile, in accumulators the next
// group writes). Where tpu.depend from the store queue to the compute
// queue stands, it asks for no more. The stores are found by the banks
// they read.
StoreWaits computeWaitsFor(Block &body, const ::tpu::HardwareConfig &config) {
  StoreWaits waits;
  const ::tpu::codegen::BankLayout banks(config);
  std::vector<std::pair<Operation *, Span>> stores;
  // Per memory and bank, the stores reading it, in order.
  std::array<std::vector<std::vector<size_t>>, 2> storesOfBank{
      std::vector<std::vector<size_t>>(config.scratchpad.banks),
      std::vector<std::vector<size_t>>(config.accumulator.banks)};
  auto forEachBank = [&](const Span &span, auto f) {
    for (uint64_t bank = banks.firstBank(span);
         bank <= banks.lastBank(span) && bank < storesOfBank[span.space].size(); ++bank)
      f(storesOfBank[span.space][bank]);
  };
  size_t unwaited = 0;
  forEachInstruction(
      body, isa::Queue::Compute, unwaited, [&](Operation &op, const isa::Instruction &instruction) {
        if (instruction.opcode == isa::Opcode::DmaStore) {
          const Span read = spansOf(instruction, 0)[0];
          forEachBank(read, [&](std::vector<size_t> &list) { list.push_back(stores.size()); });
          stores.push_back({&op, read});
        } else if (instruction.queue() == isa::Queue::Compute) {
          std::optional<size_t> latest;
          for (const Span &span : spansOf(instruction, config.array.cols, /*written=*/true))
            forEachBank(span, [&](std::vector<size_t> &list) {
              for (size_t store : llvm::reverse(list)) {
                if (store < unwaited || (latest && store <= *latest))
                  break;
                if (stores[store].second.overlaps(span)) {
                  latest = store;
                  break;
                }
              }
            });
          if (latest) {
            waits[&op] = stores[*latest].first;
            unwaited = *latest + 1;
          }
        }
      });
  return waits;
}

class ScheduleTokens : public mlir::tpu::impl::ScheduleTokensBase<ScheduleTokens> {
public:
  void runOnOperation() override {
    OpBuilder builder(&getContext());
    TokenScheduler scheduler(builder);
    Block &body = getOperation().getBody().front();
    // Stores to loads and to compute, as each instruction needs it
    // (loadsWaitFor, computeWaitsFor): a token after each store something
    // waits for, popped before what waits. Without a target (no banks),
    // compute waits where tpu.depend says.
    mlir::tpu::TargetAttr target = mlir::tpu::targetOf(getOperation());
    llvm::SmallVector<std::pair<isa::Queue, StoreWaits>, 2> channels;
    channels.push_back({isa::Queue::Load, loadsWaitFor(body)});
    if (target)
      channels.push_back(
          {isa::Queue::Compute, computeWaitsFor(body, mlir::tpu::hardwareConfig(target))});
    // Per channel, each awaited store's token.
    llvm::SmallVector<llvm::DenseMap<Operation *, uint64_t>, 2> storeTokens(channels.size());
    llvm::SmallVector<llvm::DenseSet<Operation *>, 2> awaitedStores(channels.size());
    for (size_t channel = 0; channel < channels.size(); ++channel)
      for (auto [waiting, store] : channels[channel].second)
        awaitedStores[channel].insert(store);
    // The channel and number of each signal's token.
    llvm::DenseMap<Value, std::tuple<isa::Queue, isa::Queue, uint64_t>> tokens;
    SmallVector<Operation *> scheduled;
    for (Operation &op : llvm::make_early_inc_range(body)) {
      builder.setInsertionPoint(&op);
      if (auto inst = llvm::dyn_cast<mlir::tpu::InstOp>(op)) {
        for (size_t channel = 0; channel < channels.size(); ++channel)
          if (Operation *store = channels[channel].second.lookup(&op))
            scheduler.popUpTo(op.getLoc(), isa::Queue::Store, channels[channel].first,
                              storeTokens[channel].lookup(store));
        scheduler.issued(inst);
        builder.setInsertionPointAfter(&op);
        for (size_t channel = 0; channel < channels.size(); ++channel)
          if (awaitedStores[channel].contains(&op))
            storeTokens[channel][&op] =
                scheduler.push(op.getLoc(), isa::Queue::Store, channels[channel].first);
      } else if (auto signal = llvm::dyn_cast<mlir::tpu::SignalOp>(op)) {
        // A token nobody waits for is no instruction: a push on a queue
        // holds it until all that queue issued before has completed.
        isa::Queue from = mlir::tpu::isaQueue(signal.getFrom()),
                   to = mlir::tpu::isaQueue(signal.getTo());
        if (!signal.getToken().use_empty())
          tokens[signal.getToken()] = {from, to,
                                       scheduler.push(op.getLoc(), from, to, signal.getWeights())};
      } else if (auto await = llvm::dyn_cast<mlir::tpu::AwaitOp>(op)) {
        auto [from, to, token] = tokens.lookup(await.getToken());
        scheduler.popUpTo(op.getLoc(), from, to, token);
      } else if (auto depend = llvm::dyn_cast<mlir::tpu::DependOp>(op)) {
        isa::Queue from = mlir::tpu::isaQueue(depend.getFrom()),
                   to = mlir::tpu::isaQueue(depend.getTo());
        // From the store queue: per instruction, above.
        bool perInstruction =
            from == isa::Queue::Store &&
            llvm::any_of(channels, [&](auto &channel) { return channel.first == to; });
        if (!perInstruction)
          scheduler.depend(op.getLoc(), from, to);
      } else {
        continue;
      }
      if (!llvm::isa<mlir::tpu::InstOp>(op))
        scheduled.push_back(&op);
    }
    // Awaits go before the signals whose tokens they use.
    for (Operation *op : llvm::reverse(scheduled))
      op->erase();
  }
};

} // namespace
