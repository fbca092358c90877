// tpu-schedule-tokens: the order between the queues (tpu.signal, tpu.await,
// tpu.depend) as the ISA's tokens, sync.push and sync.pop.
#include "tpu/Dialect/Instructions.h"
#include "tpu/Target/TPU/Passes.h"

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
  // so far has; returns the token's number on the channel.
  uint64_t push(Location loc, isa::Queue from, isa::Queue to) {
    emit(loc, isa::Opcode::SyncPush, from, to);
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

  // Whether `from` has issued anything since its last token to `to`.
  bool hasNews(isa::Queue from, isa::Queue to) const {
    return synced[index(from)][index(to)] != issuedOn[index(from)];
  }

private:
  static unsigned index(isa::Queue queue) { return static_cast<unsigned>(queue); }

  void emit(Location loc, isa::Opcode opcode, isa::Queue from, isa::Queue to) {
    mlir::tpu::createInstruction(builder, loc,
                                 isa::makeInstruction(opcode, {{isa::Field::From, uint64_t(from)},
                                                               {isa::Field::To, uint64_t(to)}}));
    ++issuedOn[index(opcode == isa::Opcode::SyncPush ? from : to)];
  }

  using PerChannel = std::array<std::array<uint64_t, isa::kNumQueues>, isa::kNumQueues>;
  OpBuilder &builder;
  std::array<uint64_t, isa::kNumQueues> issuedOn{};
  PerChannel synced{}; // issuedOn[from] when the latest token from -> to was pushed
  PerChannel pushed{}, popped{};
};

class ScheduleTokens : public mlir::tpu::impl::ScheduleTokensBase<ScheduleTokens> {
public:
  void runOnOperation() override {
    OpBuilder builder(&getContext());
    TokenScheduler scheduler(builder);
    // The channel and number of each signal's token.
    llvm::DenseMap<Value, std::tuple<isa::Queue, isa::Queue, uint64_t>> tokens;
    SmallVector<Operation *> scheduled;
    for (Operation &op : llvm::make_early_inc_range(getOperation().getBody().front())) {
      builder.setInsertionPoint(&op);
      if (auto inst = llvm::dyn_cast<mlir::tpu::InstOp>(op)) {
        scheduler.issued(inst);
      } else if (auto signal = llvm::dyn_cast<mlir::tpu::SignalOp>(op)) {
        // A token nobody waits for is no instruction: a push on a queue
        // holds it until all that queue issued before has completed.
        isa::Queue from = mlir::tpu::isaQueue(signal.getFrom()),
                   to = mlir::tpu::isaQueue(signal.getTo());
        if (!signal.getToken().use_empty())
          tokens[signal.getToken()] = {from, to, scheduler.push(op.getLoc(), from, to)};
      } else if (auto await = llvm::dyn_cast<mlir::tpu::AwaitOp>(op)) {
        auto [from, to, token] = tokens.lookup(await.getToken());
        scheduler.popUpTo(op.getLoc(), from, to, token);
      } else if (auto depend = llvm::dyn_cast<mlir::tpu::DependOp>(op)) {
        isa::Queue from = mlir::tpu::isaQueue(depend.getFrom()),
                   to = mlir::tpu::isaQueue(depend.getTo());
        if (scheduler.hasNews(from, to))
          scheduler.popUpTo(op.getLoc(), from, to, scheduler.push(op.getLoc(), from, to));
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
