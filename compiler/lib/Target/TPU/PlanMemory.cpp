// tpu-plan-memory: DRAM placement of the TPU operations' results by
// liveness, recorded as attributes that the program emitter follows.
#include "tpu/Target/TPU/Passes.h"

#include "mlir/Transforms/RegionUtils.h"
#include "llvm/Support/MathExtras.h"

#include <map>

namespace mlir::tpu {
#define GEN_PASS_DEF_PLANMEMORY
#include "tpu/Target/TPU/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;

namespace {

constexpr uint64_t kAlignment = 64;
constexpr uint64_t kWordBytes = 4;

// What running `op` reads: its operands, and for a fusion group the values
// its members read from outside.
SmallVector<Value> readsOf(Operation &op) {
  SmallVector<Value> reads(op.getOperands());
  if (auto fused = llvm::dyn_cast<tpu::FusedOp>(op)) {
    llvm::SetVector<Value> above;
    getUsedValuesDefinedAbove(fused.getBody(), above);
    reads.append(above.begin(), above.end());
  }
  return reads;
}

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
      for (Value operand : readsOf(op))
        lastRead[bufferOwner(operand)] =
            llvm::isa<func::ReturnOp>(op) ? std::numeric_limits<size_t>::max() : index;

    std::multimap<uint64_t, uint64_t> free;                      // bytes -> offset
    llvm::DenseMap<Value, std::pair<uint64_t, uint64_t>> placed; // offset, bytes
    uint64_t end = 0;
    for (auto [index, op] : llvm::enumerate(block)) {
      if (materialized(op)) {
        Operation *producer = &op;
        Value result = producer->getResult(0);
        auto type = llvm::cast<ShapedType>(result.getType());
        uint64_t bytes = llvm::alignTo(uint64_t(type.getNumElements()) * kWordBytes, kAlignment);
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
      for (Value operand : readsOf(op)) {
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
  // Whether `op`'s result gets a buffer: a TPU operation that writes DRAM (a
  // fusion group writes only the value it yields); not a view.
  static bool materialized(Operation &op) {
    return llvm::isa<tpu::TPUDialect>(op.getDialect()) &&
           !llvm::isa<tpu::ViewOp, tpu::StoredOp>(op) && op.getNumResults() == 1;
  }
};

} // namespace
