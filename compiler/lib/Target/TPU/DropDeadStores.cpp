// tpu-drop-dead-stores: a store whose bytes nothing reads again, and which no
// result of the program holds, is no instruction: the value stayed on chip.
#include "tpu/Dialect/Instructions.h"
#include "tpu/Target/TPU/Footprints.h"
#include "tpu/Target/TPU/Passes.h"
#include "tpu/Target/TPU/ProgramBuilder.h"

namespace mlir::tpu {
#define GEN_PASS_DEF_DROPDEADSTORES
#include "tpu/Target/TPU/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;
namespace isa = ::tpu::isa;
using isa::Opcode;
using ::tpu::codegen::DramBlock;

namespace {

// The store queue's side of an order: a wait for another queue (an await
// of a token to it, or a depend), an instruction of its own, or neither. Its
// signals to others count as neither: each says that the stores before it
// have completed, which needs no wait for another queue.
enum class StoreQueueRole { Wait, Instruction, None };

StoreQueueRole storeQueueRole(Operation &op) {
  using mlir::tpu::Queue;
  if (auto await = llvm::dyn_cast<mlir::tpu::AwaitOp>(op)) {
    auto signal = await.getToken().getDefiningOp<mlir::tpu::SignalOp>();
    return signal && signal.getTo() == Queue::store ? StoreQueueRole::Wait : StoreQueueRole::None;
  }
  if (auto depend = llvm::dyn_cast<mlir::tpu::DependOp>(op))
    return depend.getTo() == Queue::store ? StoreQueueRole::Wait : StoreQueueRole::None;
  if (auto inst = llvm::dyn_cast<mlir::tpu::InstOp>(op))
    return mlir::tpu::instructionOf(inst).queue() == isa::Queue::Store ? StoreQueueRole::Instruction
                                                                       : StoreQueueRole::None;
  return StoreQueueRole::None;
}

class DropDeadStores : public mlir::tpu::impl::DropDeadStoresBase<DropDeadStores> {
public:
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    Block &block = function.getBody().front();
    // The DRAM the program's results occupy, begin and end.
    SmallVector<std::pair<uint64_t, uint64_t>> results;
    for (Value result : block.getTerminator()->getOperands()) {
      std::optional<uint64_t> address = mlir::tpu::dramAddress(result);
      if (!address)
        return; // not placed: nothing is known dead
      results.push_back({*address, *address + ::tpu::codegen::dramBytesOf(result)});
    }
    // Backwards, the loads after each store; a gather reads rows its
    // indices pick, so any byte of DRAM.
    SmallVector<DramBlock> readLater;
    bool gatherLater = false;
    SmallVector<mlir::tpu::InstOp> dead;
    for (Operation &op : llvm::reverse(block)) {
      auto inst = llvm::dyn_cast<mlir::tpu::InstOp>(op);
      if (!inst)
        continue;
      const isa::Instruction instruction = mlir::tpu::instructionOf(inst);
      if (instruction.opcode == Opcode::DmaLoad) {
        readLater.push_back(DramBlock(instruction));
      } else if (instruction.opcode == Opcode::DmaGather) {
        gatherLater = true;
      } else if (instruction.opcode == Opcode::DmaStore && !gatherLater) {
        const DramBlock stored(instruction);
        // Nearest loads first: a stored result is mostly read soon after.
        bool read = llvm::any_of(llvm::reverse(readLater),
                                 [&](const DramBlock &load) { return load.overlaps(stored); }) ||
                    llvm::any_of(results, [&](auto result) {
                      return stored.begin < result.second && result.first < stored.end;
                    });
        if (!read)
          dead.push_back(inst);
      }
    }
    llvm::DenseMap<StringAttr, uint64_t> sparedBytes;
    for (mlir::tpu::InstOp store : dead) {
      dropWaitOf(store);
      if (auto name = llvm::dyn_cast<NameLoc>(store.getLoc()))
        sparedBytes[name.getName()] += DramBlock(mlir::tpu::instructionOf(store)).bytes();
      store.erase();
      ++numDropped;
    }
    ::tpu::codegen::unchargeDramBytes(function, sparedBytes);
  }

private:
  // The store queue's wait right before `store`, where no store-queue
  // instruction after `store` relies on it (the next thing the queue does
  // is wait again, or nothing): its token then orders nothing, and a
  // compute-queue signal costs the array a drain. The signal goes with its
  // last await.
  void dropWaitOf(mlir::tpu::InstOp store) {
    Operation *wait = store->getPrevNode();
    while (wait && storeQueueRole(*wait) == StoreQueueRole::None)
      wait = wait->getPrevNode();
    if (!wait || storeQueueRole(*wait) != StoreQueueRole::Wait)
      return;
    for (Operation *next = store->getNextNode(); next; next = next->getNextNode()) {
      StoreQueueRole role = storeQueueRole(*next);
      if (role == StoreQueueRole::Instruction)
        return;
      if (role == StoreQueueRole::Wait)
        break;
    }
    if (auto await = llvm::dyn_cast<mlir::tpu::AwaitOp>(wait)) {
      Value token = await.getToken();
      await->erase();
      if (token.use_empty())
        token.getDefiningOp()->erase();
    } else {
      wait->erase();
    }
  }
};

} // namespace
