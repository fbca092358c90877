// tpu-fuse: forms fusion groups on the graph (TOSA) as tpu.fused regions,
// asking the module's target what its hardware can run together.
#include "tpu/Dialect/FusionRegions.h"
#include "tpu/FusionMode.h"
#include "tpu/Transforms/Passes.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::tpu {
#define GEN_PASS_DEF_FUSEOPS
#include "tpu/Transforms/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;

namespace {

// Whether `op` computes one tensor, as every op a group can hold does.
bool hasOneTensorResult(Operation *op) {
  return op->getNumResults() == 1 && llvm::isa<RankedTensorType>(op->getResult(0).getType());
}

// Rows of the row-major matrix a value is seen as (leading axes collapsed).
int64_t rowsOf(Value value) {
  return mlir::tpu::matrixType(llvm::cast<RankedTensorType>(value.getType())).getShape().front();
}

// A reshape that keeps the row-major matrix view: it moves no data, and a
// group can carry it.
bool isTransparentReshape(Operation *op) {
  auto reshape = llvm::dyn_cast<tosa::ReshapeOp>(op);
  return reshape &&
         mlir::tpu::matrixType(llvm::cast<RankedTensorType>(reshape.getInput1().getType())) ==
             mlir::tpu::matrixType(llvm::cast<RankedTensorType>(reshape.getType()));
}

// A binary elementwise op whose operands can trade places.
bool isCommutative(Operation *op) {
  return llvm::isa<tosa::AddOp, tosa::MulOp, tosa::MaximumOp, tosa::MinimumOp>(op);
}

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
    FailureOr<mlir::tpu::TargetAttr> targetAttr = mlir::tpu::getTarget(getOperation());
    if (failed(targetAttr))
      return signalPassFailure();
    target = llvm::cast<mlir::tpu::FusionTargetInterface>(*targetAttr);

    Block &block = getOperation().getBody().front();
    // Reshapes of graph inputs move no data: they go first (after the
    // constants, where canonicalization puts those), so that a group can take
    // them as operands wherever it starts (a training step's bias, an input
    // reshaped after the matmul it is added to).
    auto isInputReshape = [](Operation &op) {
      return llvm::isa<tosa::ReshapeOp>(op) && llvm::isa<BlockArgument>(op.getOperand(0));
    };
    Operation *first = &block.front();
    while (first->hasTrait<OpTrait::ConstantLike>() || isInputReshape(*first))
      first = first->getNextNode();
    for (Operation *op = first->getNextNode(); op;) {
      Operation *next = op->getNextNode();
      if (isInputReshape(*op))
        op->moveBefore(first);
      op = next;
    }
    for (auto [index, op] : llvm::enumerate(block))
      position[&op] = index;
    SmallVector<SmallVector<Operation *>> groups;
    for (Operation &head : block)
      if (hasOneTensorResult(&head) && target.canHeadEpilogue(&head))
        keep(epilogue(head), groups);
    if (*fusion == ::tpu::FusionMode::Full)
      for (Operation &seed : block)
        if (!grouped.contains(&seed) && hasOneTensorResult(&seed) && !isTransparentReshape(&seed) &&
            target.canJoinRowGroup(&seed, [](Value) { return false; }))
          keep(rowGroup(seed), groups);
    for (ArrayRef<Operation *> members : groups)
      formRegion(members);
  }

private:
  // Available to a group that starts at `first`: a constant, or a value
  // computed before it.
  bool availableBefore(Value value, Operation &first) {
    Operation *producer = value.getDefiningOp();
    return !producer || producer->hasTrait<OpTrait::ConstantLike>() ||
           position[producer] < position[&first];
  }

  // The matrix producer `head` and the chain of single users the target can
  // apply to each of its tiles in place, each reading the one before.
  SmallVector<Operation *> epilogue(Operation &head) {
    SmallVector<Operation *> chain{&head};
    Value value = head.getResult(0);
    while (value.hasOneUse()) {
      Operation *user = *value.getUsers().begin();
      if (!isTransparentReshape(user) && !joinsEpilogue(user, value, head))
        break;
      chain.push_back(user);
      if (!keepsTile(user, value))
        break; // a pool: later ops would see pooled tiles
      value = user->getResult(0);
    }
    return chain;
  }

  // Whether `user` of the chain value keeps the tile's matrix view.
  static bool keepsTile(Operation *user, Value value) {
    return mlir::tpu::matrixType(llvm::cast<RankedTensorType>(user->getResult(0).getType())) ==
           mlir::tpu::matrixType(llvm::cast<RankedTensorType>(value.getType()));
  }

  bool joinsEpilogue(Operation *user, Value value, Operation &head) {
    // The chain value is the tile being worked on: the result keeps its
    // view, but for a unary op that reduces each tile (a pool), which the
    // target may take as the epilogue's last member.
    if (!hasOneTensorResult(user))
      return false;
    if (user->getNumOperands() == 1)
      return target.canJoinEpilogue(user, value, Value(), &head);
    if (!keepsTile(user, value))
      return false;
    if (user->getNumOperands() != 2 || (user->getOperand(0) != value && !isCommutative(user)))
      return false;
    Value other = user->getOperand(0) == value ? user->getOperand(1) : user->getOperand(0);
    // x op x, or an operand computed inside the group's span, is not
    // available to its head.
    return other != value && availableBefore(other, head) &&
           target.canJoinEpilogue(user, value, other, &head);
  }

  // The row-local ops over the same rows that grow from `seed`: each joins
  // when every operand is in the group or available before it, and the
  // target can run it there. Empty unless exactly one value leaves the group
  // and it is the last member's.
  SmallVector<Operation *> rowGroup(Operation &seed) {
    int64_t rows = rowsOf(seed.getResult(0));
    SmallVector<Operation *> members{&seed};
    llvm::DenseSet<Value> inside{seed.getResult(0)};
    auto inGroup = [&](Value v) { return inside.contains(v); };
    for (Operation *op = seed.getNextNode(); op; op = op->getNextNode()) {
      if (grouped.contains(op) || !hasOneTensorResult(op) || rowsOf(op->getResult(0)) != rows ||
          llvm::none_of(op->getOperands(), inGroup) ||
          !llvm::all_of(op->getOperands(),
                        [&](Value v) { return inGroup(v) || availableBefore(v, seed); }))
        continue;
      if (isTransparentReshape(op) || target.canJoinRowGroup(op, inGroup)) {
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

  // Keeps a group worth forming: two ops that compute, or one the target
  // lowers to several. Trailing reshapes stay outside: they move nothing.
  void keep(SmallVector<Operation *> members, SmallVector<SmallVector<Operation *>> &groups) {
    while (!members.empty() && isTransparentReshape(members.back()))
      members.pop_back();
    size_t computing =
        llvm::count_if(members, [](Operation *op) { return !isTransparentReshape(op); });
    if (computing == 0 || (computing == 1 && !target.isGroupOnItsOwn(members.front())))
      return;
    grouped.insert(members.begin(), members.end());
    groups.push_back(std::move(members));
  }

  // Moves the members into a tpu.fused region where the first one was: every
  // operand from outside is available there, and only the last member's
  // value is used after the group.
  void formRegion(ArrayRef<Operation *> members) {
    mlir::tpu::fuse(members);
    ++numGroups;
    numFused += members.size() - 1;
  }

  mlir::tpu::FusionTargetInterface target;
  llvm::DenseMap<Operation *, size_t> position;
  llvm::DenseSet<Operation *> grouped;
};

} // namespace
