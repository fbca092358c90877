// tpu-plan-memory: DRAM placement of the TPU operations' results by
// liveness, recorded as attributes that the program emitter follows.
#include "tpu/Transforms/Passes.h"

#include <map>

namespace mlir::tpu {
#define GEN_PASS_DEF_PLANMEMORY
#include "tpu/Transforms/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;

namespace {

constexpr uint64_t kAlignment = 64;
constexpr uint64_t kWordBytes = 4;

uint64_t alignUp(uint64_t value) { return (value + kAlignment - 1) / kAlignment * kAlignment; }

// A view reads its input's buffer: the buffer belongs to the first non-view.
Value bufferOwner(Value value) {
  while (auto view = value.getDefiningOp<tpu::ViewOp>())
    value = view.getInput();
  return value;
}

class PlanMemory : public tpu::impl::PlanMemoryBase<PlanMemory> {
public:
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    Block &block = function.getBody().front();
    llvm::DenseMap<Value, size_t> lastRead;
    for (auto [index, op] : llvm::enumerate(block))
      for (Value operand : op.getOperands())
        lastRead[bufferOwner(operand)] =
            llvm::isa<func::ReturnOp>(op) ? std::numeric_limits<size_t>::max() : index;

    std::multimap<uint64_t, uint64_t> free;                      // bytes -> offset
    llvm::DenseMap<Value, std::pair<uint64_t, uint64_t>> placed; // offset, bytes
    llvm::DenseSet<Attribute> startedGroups;
    uint64_t end = 0;
    for (auto [index, op] : llvm::enumerate(block)) {
      if (Operation *producer = materializedAt(op, startedGroups)) {
        Value result = producer->getResult(0);
        auto type = llvm::cast<ShapedType>(result.getType());
        uint64_t bytes = alignUp(uint64_t(type.getNumElements()) * kWordBytes);
        uint64_t offset;
        if (auto reuse = free.lower_bound(bytes); reuse != free.end()) {
          offset = reuse->second;
          if (reuse->first > bytes) // the rest stays free
            free.emplace(reuse->first - bytes, offset + bytes);
          free.erase(reuse);
          ++numReused;
        } else {
          offset = end;
          end += bytes;
        }
        producer->setAttr(tpu::kDramOffsetAttr,
                          IntegerAttr::get(IntegerType::get(&getContext(), 64), offset));
        placed[result] = {offset, bytes};
        ++numPlaced;
      }
      for (Value operand : op.getOperands()) {
        Value owner = bufferOwner(operand);
        auto it = placed.find(owner);
        if (it != placed.end() && lastRead.lookup(owner) == index) {
          free.emplace(it->second.second, it->second.first);
          placed.erase(it);
        }
      }
    }
    function->setAttr(tpu::kDramResultBytesAttr,
                      IntegerAttr::get(IntegerType::get(&getContext(), 64), end));
  }

private:
  // The operation whose result gets a buffer when `op` is emitted: its own
  // for a TPU operation that writes DRAM; for the first member of a fusion
  // group, the group's last member; none for views, later group members and
  // everything else.
  static Operation *materializedAt(Operation &op, llvm::DenseSet<Attribute> &startedGroups) {
    if (!llvm::isa<tpu::TPUDialect>(op.getDialect()) || llvm::isa<tpu::ViewOp>(op) ||
        op.getNumResults() != 1)
      return nullptr;
    Attribute group = op.getAttr(tpu::kFusionGroupAttr);
    if (group && !startedGroups.insert(group).second)
      return nullptr;
    return tpu::fusionGroupFrom(&op).back();
  }
};

} // namespace
