// tpu-preload-weights: a weight tile load (mxu.ldw) queued behind vector
// instructions that do not touch its words moves up to the last product
// before them, so that the array loads the tile while the vector unit works;
// then among the products of the tile before it, to where the plane it
// writes is free, so that it loads while the array streams that tile.
#include "tpu/Dialect/Instructions.h"
#include "tpu/Dialect/TargetConfig.h"
#include "tpu/Target/TPU/Footprints.h"
#include "tpu/Target/TPU/Passes.h"

#include <array>

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

// Whether it orders the load queue after the compute queue.
template <typename Order> bool computeToLoad(Order order) {
  return order && order.getFrom() == mlir::tpu::Queue::compute &&
         order.getTo() == mlir::tpu::Queue::load;
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
    // A program read back at the ISA level has its tokens scheduled, and
    // the ops that held its loads back (depends, stored values) are gone:
    // its order stays.
    if (llvm::any_of(block, [](Operation &op) {
          auto inst = llvm::dyn_cast<mlir::tpu::InstOp>(op);
          if (!inst)
            return false;
          const Opcode opcode = mlir::tpu::instructionOf(inst).opcode;
          return opcode == Opcode::SyncPush || opcode == Opcode::SyncPop;
        }))
      return;
    measure(block);
    traceTileColumns(block);
    for (mlir::tpu::InstOp load : weightLoads)
      if (overlap(load))
        ++numOverlapped;
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
      if (!measuredBefore(signal, op))
        return false;
      if (!lastToken || measuredBefore(lastToken, signal))
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

  // Moves `load` up among the products of the weight tile before it (with
  // the compute queue's awaits of loads and weight releases in between) to
  // right after the first of them by which the products of the tile before that,
  // in the plane `load` writes, have left the array: the load then overlaps
  // the rest of the tile's products instead of starting after them. The
  // products after the first of the tile (its flip) stream back to back,
  // so R + n - 1 rows streamed from that flip on (n: the last product's
  // tile width in the other plane) leave the plane free by the next
  // product's start, and the load waits for nothing there.
  bool overlap(mlir::tpu::InstOp load) {
    // The tile's products, latest first, and the ops between them that
    // move with `load`.
    SmallVector<Operation *> products, between;
    Operation *flip = nullptr;
    for (Operation *op = load->getPrevNode(); op && !flip; op = op->getPrevNode()) {
      if (auto inst = llvm::dyn_cast<mlir::tpu::InstOp>(op)) {
        const isa::Instruction instruction = mlir::tpu::instructionOf(inst);
        if (instruction.queue() != isa::Queue::Compute)
          continue; // another queue's: it stays
        if (instruction.opcode != Opcode::MatMul)
          return false; // vector work or another tile's load
        products.push_back(op);
        if (instruction.get(Field::Flip))
          flip = op;
        continue;
      }
      if (auto await = llvm::dyn_cast<mlir::tpu::AwaitOp>(op)) {
        if (!awaitedByCompute(await))
          continue;
        // Only a load's token is known to arrive in time (arrivesInTime).
        if (!loadToCompute(await.getToken().getDefiningOp<mlir::tpu::SignalOp>()))
          return false;
        between.push_back(op);
        continue;
      }
      auto signal = llvm::dyn_cast<mlir::tpu::SignalOp>(op);
      if (!signal)
        return false; // a depend or a stored value: the order stays
      // A release of weight buffers says nothing of the products.
      if (signal.getFrom() == mlir::tpu::Queue::compute) {
        if (!signal.getWeights())
          return false;
        between.push_back(op);
        continue;
      }
      // Another queue's token: an await of it cannot go above it.
      if (llvm::any_of(signal->getUsers(),
                       [&](Operation *user) { return llvm::is_contained(between, user); }))
        return false;
    }
    if (!flip)
      return false;
    // The plane's last product before the tile, and what it leaves to
    // stream: nothing where vector work (which waits for it) lies between.
    double rowsToFree = 0;
    for (Operation *op = flip->getPrevNode(); op; op = op->getPrevNode()) {
      auto inst = llvm::dyn_cast<mlir::tpu::InstOp>(op);
      if (!inst)
        continue;
      const isa::Instruction instruction = mlir::tpu::instructionOf(inst);
      if (instruction.queue() != isa::Queue::Compute || instruction.opcode == Opcode::LoadWeights)
        continue;
      if (instruction.opcode == Opcode::MatMul)
        rowsToFree = double(config.array.rows + tileColumns.lookup(op) - 1);
      break;
    }
    double streamed = 0;
    for (Operation *product : llvm::reverse(products)) {
      if (product == products.front())
        return false; // the plane frees only after the tile's last product
      streamed +=
          double(mlir::tpu::instructionOf(llvm::cast<mlir::tpu::InstOp>(product)).get(Field::Rows));
      if (streamed >= rowsToFree && moveAfter(load, product, between))
        return true;
    }
    return false;
  }

  // Moves `load` and the ops of `between` (latest first) that lie after
  // `product` to right after it, in their order, where each moved await's
  // token is signalled before `product` and likely there in time.
  bool moveAfter(Operation *load, Operation *product, ArrayRef<Operation *> between) {
    SmallVector<Operation *> moved;
    Operation *lastToken = nullptr;
    // The ops between `product` and `load`, which `between` lists latest
    // first.
    llvm::SmallPtrSet<Operation *, 16> afterProduct;
    for (Operation *op = product->getNextNode(); op && op != load; op = op->getNextNode())
      afterProduct.insert(op);
    for (Operation *op : llvm::reverse(between)) {
      if (!afterProduct.contains(op))
        continue;
      moved.push_back(op);
      auto await = llvm::dyn_cast<mlir::tpu::AwaitOp>(op);
      if (!await)
        continue;
      Operation *signal = await.getToken().getDefiningOp();
      if (!measuredBefore(signal, product))
        return false;
      if (!lastToken || measuredBefore(lastToken, signal))
        lastToken = signal;
    }
    if (lastToken && !arrivesInTime(product, lastToken, /*drains=*/false))
      return false;
    moved.push_back(load);
    Operation *after = product;
    for (Operation *op : moved) {
      op->moveAfter(after);
      after = op;
    }
    return true;
  }

  // The width of the weight tile each mxu.mm multiplies with: the columns
  // of the mxu.ldw that wrote its plane.
  void traceTileColumns(Block &block) {
    tileColumns.clear();
    unsigned active = 0;
    std::array<int64_t, 2> planeColumns{};
    for (Operation &op : block) {
      auto inst = llvm::dyn_cast<mlir::tpu::InstOp>(op);
      if (!inst)
        continue;
      const isa::Instruction instruction = mlir::tpu::instructionOf(inst);
      if (instruction.opcode == Opcode::LoadWeights) {
        planeColumns[active ^ 1] = int64_t(instruction.get(Field::Cols));
      } else if (instruction.opcode == Opcode::MatMul) {
        if (instruction.get(Field::Flip))
          active ^= 1;
        tileColumns[&op] = planeColumns[active];
      }
    }
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
      return loadToCompute(signal) && measuredBefore(writer, signal);
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

  // Whether `first` came before `second` when the block was measured: their
  // order still where neither is an op this pass moves (a weight load, an
  // await, a weight release), as the signals of loads, the products and
  // the transfers it compares are not. (Operation::isBeforeInBlock would
  // renumber the block after moves: ResNet-18 on 8x8 spent 9 s of its
  // compile doing that.)
  bool measuredBefore(Operation *first, Operation *second) const {
    return position.lookup(first) < position.lookup(second);
  }

  // Per op of the block in program order (before any move): the DRAM bytes
  // of the transfers and the rows of the products before it, the latest
  // load the compute queue has waited for at it (the position of the
  // signal it awaited, or of a depend) and since where, and the latest
  // compute token the load queue has waited for (the position of its
  // signal: the load queue's next transfers issue no earlier).
  void measure(Block &block) {
    position.clear();
    bytesBefore.assign(1, 0), rowsBefore.assign(1, 0);
    latestLoad.clear(), waitedSince.clear(), released.clear();
    for (Operation &op : block) {
      const size_t at = position.size();
      position[&op] = at;
      double bytes = 0, rows = 0;
      size_t loaded = at ? latestLoad.back() : 0, since = at ? waitedSince.back() : 0;
      size_t release = at ? released.back() : 0;
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
        auto signal = await.getToken().getDefiningOp<mlir::tpu::SignalOp>();
        if (loadToCompute(signal))
          raise(position.lookup(signal));
        else if (computeToLoad(signal))
          release = std::max(release, position.lookup(signal));
      } else if (auto depend = llvm::dyn_cast<mlir::tpu::DependOp>(op)) {
        if (loadToCompute(depend))
          raise(at);
        else if (computeToLoad(depend))
          release = std::max(release, at);
      }
      bytesBefore.push_back(bytesBefore.back() + bytes);
      rowsBefore.push_back(rowsBefore.back() + rows);
      latestLoad.push_back(loaded);
      waitedSince.push_back(since);
      released.push_back(release);
    }
  }

  // Whether the loads up to the token `lastToken` likely complete before
  // the products up to the mxu.mm `product` do (and, with `drains`, drain):
  // what comes after would otherwise wait for them. After the latest load
  // the compute queue waited for before the product (loads complete in
  // order), the transfers issued since take the bus (both queues share it)
  // after the DRAM latency, while the array streams the rows of the
  // products after that wait, or after the compute token the load queue
  // waited for before them, whichever is later.
  bool arrivesInTime(Operation *product, Operation *lastToken, bool drains = true) const {
    const size_t at = position.lookup(product), token = position.lookup(lastToken);
    const size_t loaded = latestLoad[at];
    if (token <= loaded)
      return true;
    const double bytes = bytesBefore[token] - bytesBefore[loaded + 1];
    const size_t since = std::max(waitedSince[at], released[token]);
    const double streamed = rowsBefore[at + 1] - rowsBefore[std::min(since, at + 1)] +
                            (drains ? double(config.array.rows + config.array.cols) : 0.0);
    return double(config.dram.latency_cycles) + bytes / config.dram.bytes_per_cycle <= streamed;
  }

  ::tpu::HardwareConfig config;
  llvm::DenseMap<Operation *, int64_t> tileColumns;
  llvm::DenseMap<Operation *, size_t> position;
  std::vector<double> bytesBefore, rowsBefore;
  std::vector<size_t> latestLoad, waitedSince, released;
};

} // namespace
