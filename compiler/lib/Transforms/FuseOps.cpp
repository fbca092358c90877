// tpu-fuse: marks the groups of TPU operations the emitter runs as one
// piece (a matmul with its epilogue; row-local ops such as a softmax), so
// that their intermediates never go to DRAM.
#include "tpu/FusionMode.h"
#include "tpu/Transforms/Passes.h"

#include "llvm/ADT/DenseMap.h"

namespace mlir::tpu {
#define GEN_PASS_DEF_FUSEOPS
#include "tpu/Transforms/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;

namespace {

bool isElementwise(Operation *op) {
  if (auto unary = llvm::dyn_cast<mlir::tpu::UnaryOp>(op))
    return unary.getKind() != mlir::tpu::UnaryKind::copy;
  return llvm::isa<mlir::tpu::BinaryOp, mlir::tpu::ClampOp>(op);
}

bool isCommutative(mlir::tpu::BinaryKind kind) { return kind != mlir::tpu::BinaryKind::sub; }

class FuseOps : public mlir::tpu::impl::FuseOpsBase<FuseOps> {
public:
  using FuseOpsBase::FuseOpsBase;

  void runOnOperation() override {
    std::optional<::tpu::FusionMode> fusion = ::tpu::parseFusionMode(mode);
    if (!fusion) {
      getOperation().emitError() << "tpu-fuse: mode must be none, epilogue or full, got '" << mode
                                 << "'";
      return signalPassFailure();
    }
    if (*fusion == ::tpu::FusionMode::None)
      return;
    Block &block = getOperation().getBody().front();
    // Per function: groups are numbered from 0 in each.
    position.clear();
    grouped.clear();
    nextGroup = 0;
    for (auto [index, op] : llvm::enumerate(block))
      position[&op] = index;
    for (Operation &head : block) {
      if (!llvm::isa<mlir::tpu::MatMulOp>(head))
        continue;
      SmallVector<Operation *> chain{&head};
      Value value = head.getResult(0);
      while (value.hasOneUse()) {
        Operation *user = *value.getUsers().begin();
        if (!joins(user, value, head))
          break;
        chain.push_back(user);
        value = user->getResult(0);
      }
      markGroup(chain);
    }
    if (*fusion == ::tpu::FusionMode::Full)
      for (Operation &seed : block)
        if (!grouped.contains(&seed) && isRowLocal(&seed))
          markGroup(rowGroup(seed));
  }

private:
  static bool isRowLocal(Operation *op) {
    return isElementwise(op) || llvm::isa<mlir::tpu::RowReduceOp>(op);
  }

  // Rows of the row-major matrix the emitter sees.
  static int64_t rowsOf(Value value) {
    return mlir::tpu::matrixType(llvm::cast<RankedTensorType>(value.getType())).getShape().front();
  }

  // Available to a group that starts at `first`: a constant, or a value
  // computed before it.
  bool availableBefore(Value value, Operation &first) {
    Operation *producer = value.getDefiningOp();
    return !producer || producer->hasTrait<OpTrait::ConstantLike>() ||
           position[producer] < position[&first];
  }

  // The row-local ops (elementwise, row reductions) over the same rows that
  // grow from `seed`: each joins when every operand is in the group or
  // available before it. Empty unless exactly one value leaves the group and
  // it is the last member's (the emitter stores that one only).
  SmallVector<Operation *> rowGroup(Operation &seed) {
    int64_t rows = rowsOf(seed.getResult(0));
    SmallVector<Operation *> members{&seed};
    llvm::DenseSet<Value> inside{seed.getResult(0)};
    for (Operation *op = seed.getNextNode(); op; op = op->getNextNode()) {
      if (grouped.contains(op) || !isRowLocal(op) || rowsOf(op->getResult(0)) != rows ||
          llvm::none_of(op->getOperands(), [&](Value v) { return inside.contains(v); }))
        continue;
      if (llvm::all_of(op->getOperands(),
                       [&](Value v) { return inside.contains(v) || availableBefore(v, seed); })) {
        members.push_back(op);
        inside.insert(op->getResult(0));
      }
    }
    llvm::DenseSet<Operation *> memberSet(members.begin(), members.end());
    for (Operation *member : members)
      for (Operation *user : member->getResult(0).getUsers())
        if (!memberSet.contains(user) && member != members.back())
          return {};
    return members;
  }

  void markGroup(ArrayRef<Operation *> members) {
    if (members.size() < 2)
      return;
    auto attribute = IntegerAttr::get(IntegerType::get(&getContext(), 64), nextGroup++);
    for (Operation *member : members) {
      member->setAttr(mlir::tpu::kFusionGroupAttr, attribute);
      grouped.insert(member);
    }
    ++numGroups;
    numFused += members.size() - 1;
  }

private:
  // Whether `user`, which reads `value`, can extend the epilogue of matmul `head`.
  bool joins(Operation *user, Value value, Operation &head) {
    // The chain value must be the full-shaped operand: the tile being worked on.
    if (!isElementwise(user) || user->getResult(0).getType() != value.getType())
      return false;
    auto binary = llvm::dyn_cast<mlir::tpu::BinaryOp>(user);
    if (!binary)
      return true;
    if (binary.getLhs() != value && !isCommutative(binary.getKind()))
      return false;
    Value other = binary.getLhs() == value ? binary.getRhs() : binary.getLhs();
    if (other == value)
      return false; // x op x
    if (!availableBefore(other, head))
      return false; // computed inside the group's span: not available to its head
    auto shape = llvm::cast<RankedTensorType>(other.getType()).getShape();
    auto full = llvm::cast<RankedTensorType>(value.getType()).getShape();
    bool column = shape.size() == 2 && shape[1] == 1 && full.size() == 2 && full[1] != 1;
    return !column;
  }

  llvm::DenseMap<Operation *, size_t> position;
  llvm::DenseSet<Operation *> grouped;
  int64_t nextGroup = 0;
};

} // namespace
