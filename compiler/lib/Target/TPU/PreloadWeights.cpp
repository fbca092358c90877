// tpu-preload-weights: a weight tile load (mxu.ldw) queued behind vector
// instructions that do not touch its words moves up to the last product
// before them, so that the array loads the tile while the vector unit works.
#include "tpu/Dialect/Instructions.h"
#include "tpu/Dialect/TargetConfig.h"
#include "tpu/Target/TPU/Footprints.h"
#include "tpu/Target/TPU/Passes.h"

namespace mlir::tpu {
#define GEN_PASS_DEF_PRELOADWEIGHTS
#include "tpu/Target/TPU/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;
namespace isa = ::tpu::isa;
using isa::Field;
using isa::Opcode;
using ::tpu::codegen::Span;

namespace {

bool awaitedByCompute(mlir::tpu::AwaitOp await) {
  auto signal = await.getToken().getDefiningOp<mlir::tpu::SignalOp>();
  return signal && signal.getTo() == mlir::tpu::Queue::compute;
}

// Whether a tpu.signal or tpu.depend orders the compute queue after the
// load queue.
template <typename Order> bool loadToCompute(Order order) {
  return order && order.getFrom() == mlir::tpu::Queue::load &&
         order.getTo() == mlir::tpu::Queue::compute;
}

class PreloadWeights : public mlir::tpu::impl::PreloadWeightsBase<PreloadWeights> {
public:
  void runOnOperation() override {
    mlir::tpu::TargetAttr target = mlir::tpu::targetOf(getOperation());
    if (!target)
      return;
    config = mlir::tpu::hardwareConfig(target);
    Block &block = getOperation().getBody().front();
    measure(block);
    SmallVector<mlir::tpu::InstOp> weightLoads;
    for (Operation &op : block)
      if (auto inst = llvm::dyn_cast<mlir::tpu::InstOp>(op);
          inst && mlir::tpu::instructionOf(inst).opcode == Opcode::LoadWeights)
        weightLoads.push_back(inst);
    for (mlir::tpu::InstOp load : weightLoads)
      if (preload(load))
        ++numPreloaded;
  }

private:
  // Moves `load` and the awaits right before it (its tile's tokens) to
  // just after the last mxu.mm before it (and the signals that follow
  // it), where only vector work and other queues' instructions lie in
  // between, none writing the tile's words, the awaited tokens are
  // signalled before that mxu.mm (so that waiting earlier cannot wait for
  // what comes later) and likely there before its products are
  // (arrivesInTime).
  bool preload(mlir::tpu::InstOp load) {
    Span tile{};
    ::tpu::codegen::forEachSpan(mlir::tpu::instructionOf(load), config.array.cols,
                                [&](Field, const Span &span) { tile = span; });
    SmallVector<mlir::tpu::AwaitOp> awaits;
    Operation *op = load->getPrevNode();
    for (; op; op = op->getPrevNode()) {
      auto await = llvm::dyn_cast<mlir::tpu::AwaitOp>(op);
      if (!await || !awaitedByCompute(await))
        break;
      awaits.push_back(await);
    }
    bool vectorWork = false;
    for (; op; op = op->getPrevNode()) {
      if (auto depend = llvm::dyn_cast<mlir::tpu::DependOp>(op)) {
        // Loads the tile may need, ordered by the depend alone.
        if (loadToCompute(depend))
          return false;
        continue;
      }
      // Signals and the awaits of the vector work stay where they are; a
      // tpu.stored is no instruction.
      auto inst = llvm::dyn_cast<mlir::tpu::InstOp>(op);
      if (!inst)
        continue;
      const isa::Instruction instruction = mlir::tpu::instructionOf(inst);
      if (instruction.opcode == Opcode::MatMul)
        break;
      // Tokens already scheduled (a program read back at the ISA level)
      // stay as they are.
      if (isa::opcodeInfo(instruction.opcode).unit == isa::Unit::Matrix ||
          instruction.opcode == Opcode::SyncPush || instruction.opcode == Opcode::SyncPop)
        return false;
      if (::tpu::codegen::writesInto(instruction, config.array.cols, tile))
        return false;
      vectorWork |= instruction.queue() == isa::Queue::Compute;
    }
    if (!op || !vectorWork)
      return false;
    Operation *lastToken = nullptr;
    for (mlir::tpu::AwaitOp await : awaits) {
      Operation *signal = await.getToken().getDefiningOp();
      if (!signal->isBeforeInBlock(op))
        return false;
      if (!lastToken || lastToken->isBeforeInBlock(signal))
        lastToken = signal;
    }
    if (!tileAwaited(load, op, tile, awaits) || (lastToken && !arrivesInTime(op, lastToken)))
      return false;
    Operation *after = op;
    while (llvm::isa_and_nonnull<mlir::tpu::SignalOp>(after->getNextNode()))
      after = after->getNextNode();
    for (mlir::tpu::AwaitOp await : llvm::reverse(awaits)) {
      await->moveAfter(after);
      after = await;
    }
    load->moveAfter(after);
    return true;
  }

  // Whether the compute queue, with `load` moved up to the mxu.mm
  // `product`, still waits for the last load before it that writes the
  // tile's words: an await before the product, or one of the moved
  // `awaits`, of a token signalled after that load (loads complete in
  // order), or a depend after it. An await between the product and the
  // weight load that is not moved would no longer cover it.
  bool tileAwaited(Operation *load, Operation *product, const Span &tile,
                   ArrayRef<mlir::tpu::AwaitOp> awaits) const {
    Operation *writer = load->getPrevNode();
    for (; writer; writer = writer->getPrevNode()) {
      auto inst = llvm::dyn_cast<mlir::tpu::InstOp>(writer);
      if (!inst)
        continue;
      const isa::Instruction instruction = mlir::tpu::instructionOf(inst);
      if (instruction.queue() == isa::Queue::Load &&
          ::tpu::codegen::writesInto(instruction, config.array.cols, tile))
        break;
    }
    if (!writer)
      return true;
    auto covers = [&](mlir::tpu::AwaitOp await) {
      auto signal = await.getToken().getDefiningOp<mlir::tpu::SignalOp>();
      return loadToCompute(signal) && writer->isBeforeInBlock(signal);
    };
    if (llvm::any_of(awaits, covers))
      return true;
    for (Operation *op = product; op && op != writer; op = op->getPrevNode()) {
      if (auto await = llvm::dyn_cast<mlir::tpu::AwaitOp>(op); await && covers(await))
        return true;
      if (loadToCompute(llvm::dyn_cast<mlir::tpu::DependOp>(op)))
        return true;
    }
    return false;
  }

  // Per op of the block in program order (before any move): the DRAM bytes
  // of the transfers and the rows of the products before it, and the
  // latest load the compute queue has waited for at it (the position of
  // the signal it awaited, or of a depend) and since where.
  void measure(Block &block) {
    position.clear();
    bytesBefore.assign(1, 0), rowsBefore.assign(1, 0);
    latestLoad.clear(), waitedSince.clear();
    for (Operation &op : block) {
      const size_t at = position.size();
      position[&op] = at;
      double bytes = 0, rows = 0;
      size_t loaded = at ? latestLoad.back() : 0, since = at ? waitedSince.back() : 0;
      auto raise = [&](size_t signal) {
        if (signal >= loaded)
          loaded = signal, since = at;
      };
      if (auto inst = llvm::dyn_cast<mlir::tpu::InstOp>(op)) {
        const isa::Instruction instruction = mlir::tpu::instructionOf(inst);
        if (instruction.opcode == Opcode::DmaLoad || instruction.opcode == Opcode::DmaStore)
          bytes = double(::tpu::codegen::DramBlock(instruction).bytes());
        else if (instruction.opcode == Opcode::MatMul)
          rows = double(instruction.get(Field::Rows));
      } else if (auto await = llvm::dyn_cast<mlir::tpu::AwaitOp>(op)) {
        if (auto signal = await.getToken().getDefiningOp<mlir::tpu::SignalOp>();
            loadToCompute(signal))
          raise(position.lookup(signal));
      } else if (loadToCompute(llvm::dyn_cast<mlir::tpu::DependOp>(op))) {
        raise(at);
      }
      bytesBefore.push_back(bytesBefore.back() + bytes);
      rowsBefore.push_back(rowsBefore.back() + rows);
      latestLoad.push_back(loaded);
      waitedSince.push_back(since);
    }
  }

  // Whether the loads up to the token `lastToken` likely complete before
  // the products up to the mxu.mm `product` do: the vector work after the
  // product would otherwise wait for them too. After the latest load the
  // compute queue waited for before the product (loads complete in order),
  // the transfers issued since take the bus (both queues share it) after
  // the DRAM latency, while the array streams the rows of the products
  // after that wait, then drains.
  bool arrivesInTime(Operation *product, Operation *lastToken) const {
    const size_t at = position.lookup(product), token = position.lookup(lastToken);
    const size_t loaded = latestLoad[at];
    if (token <= loaded)
      return true;
    const double bytes = bytesBefore[token] - bytesBefore[loaded + 1];
    const double streamed = rowsBefore[at + 1] - rowsBefore[waitedSince[at]] +
                            double(config.array.rows + config.array.cols);
    return double(config.dram.latency_cycles) + bytes / config.dram.bytes_per_cycle <= streamed;
  }

  ::tpu::HardwareConfig config;
  llvm::DenseMap<Operation *, size_t> position;
  std::vector<double> bytesBefore, rowsBefore;
  std::vector<size_t> latestLoad, waitedSince;
};

} // namespace
