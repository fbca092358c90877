// tpu-fuse: marks the groups of TPU operations the emitter runs as one
// piece (a matmul with its epilogue, a chain of elementwise ops), so that
// their intermediates never go to DRAM.
#include "tpu/Transforms/Passes.h"

#include "llvm/ADT/DenseMap.h"

namespace mlir::tpu {
#define GEN_PASS_DEF_FUSEOPS
#include "tpu/Transforms/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;

namespace {

bool isElementwise(Operation *op) {
  if (auto unary = llvm::dyn_cast<tpu::UnaryOp>(op))
    return unary.getKind() != tpu::UnaryKind::copy;
  return llvm::isa<tpu::BinaryOp, tpu::ClampOp>(op);
}

bool isCommutative(tpu::BinaryKind kind) { return kind != tpu::BinaryKind::sub; }

class FuseOps : public tpu::impl::FuseOpsBase<FuseOps> {
public:
  using FuseOpsBase::FuseOpsBase;

  void runOnOperation() override {
    if (mode != "epilogue" && mode != "full") {
      getOperation().emitError() << "tpu-fuse: mode must be epilogue or full, got '" << mode << "'";
      return signalPassFailure();
    }
    Block &block = getOperation().getBody().front();
    for (auto [index, op] : llvm::enumerate(block))
      position[&op] = index;
    int64_t group = 0;
    llvm::DenseSet<Operation *> grouped;
    for (Operation &head : block) {
      bool matmul = llvm::isa<tpu::MatMulOp>(head);
      if (grouped.contains(&head) || !(matmul || (mode == "full" && isElementwise(&head))))
        continue;
      SmallVector<Operation *> chain{&head};
      Value value = head.getResult(0);
      while (value.hasOneUse()) {
        Operation *user = *value.getUsers().begin();
        if (!joins(user, value, head, matmul))
          break;
        chain.push_back(user);
        value = user->getResult(0);
      }
      if (chain.size() < 2)
        continue;
      auto attribute = IntegerAttr::get(IntegerType::get(&getContext(), 64), group++);
      for (Operation *member : chain) {
        member->setAttr(kGroupAttr, attribute);
        grouped.insert(member);
      }
      ++numGroups;
      numFused += chain.size() - 1;
    }
  }

private:
  static constexpr llvm::StringLiteral kGroupAttr = "tpu.fusion_group";

  // Whether `user`, which reads `value`, can extend the group headed by `head`.
  bool joins(Operation *user, Value value, Operation &head, bool epilogue) {
    // The chain value must be the full-shaped operand: the tile being worked on.
    if (!isElementwise(user) || user->getResult(0).getType() != value.getType())
      return false;
    auto binary = llvm::dyn_cast<tpu::BinaryOp>(user);
    if (!binary)
      return true;
    if (binary.getLhs() != value && !isCommutative(binary.getKind()))
      return false;
    Value other = binary.getLhs() == value ? binary.getRhs() : binary.getLhs();
    if (other == value)
      return false; // x op x
    if (Operation *producer = other.getDefiningOp())
      if (!producer->hasTrait<OpTrait::ConstantLike>() && position[producer] > position[&head])
        return false; // computed inside the group's span: not available to its head
    auto shape = llvm::cast<RankedTensorType>(other.getType()).getShape();
    auto full = llvm::cast<RankedTensorType>(value.getType()).getShape();
    bool column = shape.size() == 2 && shape[1] == 1 && full.size() == 2 && full[1] != 1;
    return !(epilogue && column);
  }

  llvm::DenseMap<Operation *, size_t> position;
};

} // namespace
