// tpu-plan-memory: where every tensor the program touches lives in DRAM.
#include "tpu/Dialect/TargetConfig.h"
#include "tpu/Target/TPU/Passes.h"
#include "tpu/Target/TPU/ProgramBuilder.h"
#include "tpu/Target/TPU/VectorPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
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

uint64_t bytesOf(Value value) {
  return llvm::alignTo(::tpu::codegen::dramBytesOf(value), kAlignment);
}

// What running `op` reads: its operands, and for a fusion group the values
// its members read from outside.
SmallVector<Value> readsOf(Operation &op) {
  SmallVector<Value> reads(op.getOperands());
  if (auto fused = llvm::dyn_cast<mlir::tpu::FusedOp>(op)) {
    llvm::SetVector<Value> above;
    getUsedValuesDefinedAbove(fused.getBody(), above);
    reads.append(above.begin(), above.end());
  }
  return reads;
}

// A view reads its input's buffer, and so does a convolution reading its
// input in place through an im2col that writes nothing, and a folded layout
// transpose (its producer stores into its input's buffer): the buffer
// belongs to the first value that is none of them.
Value bufferOwner(Value value) {
  while (true) {
    if (auto view = value.getDefiningOp<mlir::tpu::ViewOp>())
      value = view.getInput();
    else if (mlir::tpu::isFoldedLayout(value.getDefiningOp()))
      value = value.getDefiningOp()->getOperand(0);
    else if (auto im2col = value.getDefiningOp<mlir::tpu::Im2ColOp>();
             im2col && mlir::tpu::readInPlace(im2col))
      value = im2col.getInput();
    else
      return value;
  }
}

// Whether `op`'s result gets a buffer: a TPU operation that writes DRAM (a
// fusion group writes only the value it yields); not a view, nor an im2col
// read in place, nor a folded layout transpose.
bool materialized(Operation &op) {
  return llvm::isa<mlir::tpu::TPUDialect>(op.getDialect()) &&
         !llvm::isa<mlir::tpu::ViewOp, mlir::tpu::StoredOp, mlir::tpu::DramConstantOp>(op) &&
         op.getNumResults() == 1 && !mlir::tpu::isFoldedLayout(&op) &&
         !(llvm::isa<mlir::tpu::Im2ColOp>(op) &&
           mlir::tpu::readInPlace(llvm::cast<mlir::tpu::Im2ColOp>(op)));
}

class PlanMemory : public mlir::tpu::impl::PlanMemoryBase<PlanMemory> {
public:
  using PlanMemoryBase::PlanMemoryBase;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (function->hasAttr(mlir::tpu::kDramBytesAttr))
      return; // planned already
    if (!function.getOps<mlir::tpu::InstOp>().empty()) {
      function.emitError() << "holds ISA instructions but no '" << mlir::tpu::kDramBytesAttr
                           << "', the DRAM size its program needs";
      return signalPassFailure();
    }
    if (dramDType != "array" && dramDType != "f32") {
      function.emitError() << "dram-dtype must be array or f32, got '" << dramDType << "'";
      return signalPassFailure();
    }
    Block &block = function.getBody().front();
    OpBuilder builder(&getContext());
    auto address = [&](uint64_t value) { return builder.getI64IntegerAttr(int64_t(value)); };
    FailureOr<mlir::tpu::TargetAttr> target = mlir::tpu::getTarget(function);
    narrow = dramDType == "array" && succeeded(target) &&
             mlir::tpu::hardwareConfig(*target).array.dtype == ::tpu::isa::DType::BF16;

    // The constant segment first, then the inputs, each 64-byte aligned
    // except a packed constant, which follows the one before it.
    // (Without a target no row group repeats a row.)
    const int64_t lanes =
        succeeded(target) ? int64_t(mlir::tpu::hardwareConfig(*target).vector.lanes) : 1;
    const llvm::DenseSet<Operation *> packed = packRowGroupConstants(function, builder, lanes);
    uint64_t end = 0;
    auto allocate = [&](Value value, bool aligned = true) {
      uint64_t at = aligned ? llvm::alignTo(end, kAlignment) : end;
      end = at + ::tpu::codegen::dramBytesOf(value);
      return at;
    };
    function.walk([&](arith::ConstantOp constant) {
      auto type = llvm::dyn_cast<RankedTensorType>(constant.getType());
      if (!type || !type.getElementType().isF32())
        return; // reported by its user's lowering
      const bool follows = packed.contains(constant);
      builder.setInsertionPoint(constant);
      auto placed = builder.create<mlir::tpu::DramConstantOp>(
          constant.getLoc(), type, 0, llvm::cast<ElementsAttr>(constant.getValue()));
      constant.replaceAllUsesWith(placed.getResult());
      constant.erase();
      narrowIfOnlyTheArrayReads(*placed);
      placed.setAddressAttr(address(allocate(placed.getResult(), !follows)));
    });
    for (BlockArgument arg : function.getArguments())
      function.setArgAttr(arg.getArgNumber(), mlir::tpu::kDramAddressAttr, address(allocate(arg)));

    copyOutputsWithoutBufferOfTheirOwn(function, builder);
    placeResults(block, llvm::alignTo(end, kAlignment), end);
    function->setAttr(mlir::tpu::kDramBytesAttr, address(llvm::alignTo(end, kAlignment)));
    recordReductionLengths(function);
  }

private:
  // Each run of constants a row group loads once (onceLoadRuns: its scalars
  // and rows, side by side in the scratchpad) becomes copies of its own,
  // made consecutive here and placed side by side in DRAM, so that
  // tpu-lower-vector-ops loads the run with one transfer: one DRAM latency
  // instead of one per constant (GELU's erf has 11 coefficients and its
  // clamp bounds). Returns the copies that follow the one before them.
  static llvm::DenseSet<Operation *> packRowGroupConstants(func::FuncOp function,
                                                           OpBuilder &builder, int64_t lanes) {
    llvm::DenseSet<Operation *> follows;
    SmallVector<mlir::tpu::FusedOp> groups;
    function.walk([&](mlir::tpu::FusedOp group) {
      if (group->hasAttrOfType<mlir::tpu::RowGroupTilingAttr>(mlir::tpu::kTilingAttr))
        groups.push_back(group);
    });
    for (mlir::tpu::FusedOp group : groups)
      for (const SmallVector<Value> &run : ::tpu::codegen::onceLoadRuns(group, lanes)) {
        if (run.size() < 2)
          continue;
        builder.setInsertionPoint(group);
        for (size_t index = 0; index < run.size(); ++index) {
          Value value = run[index];
          Operation *original = value.getDefiningOp();
          Operation *copy = builder.clone(*original);
          value.replaceUsesWithIf(copy->getResult(0), [&](OpOperand &use) {
            return group->isProperAncestor(use.getOwner());
          });
          if (original->use_empty())
            original->erase();
          if (index > 0)
            follows.insert(copy);
        }
      }
    return follows;
  }

  // On a bf16 array, stores `op`'s f32 result as bf16 when only matrix
  // products read it.
  void narrowIfOnlyTheArrayReads(Operation &op) {
    if (!narrow || !::tpu::codegen::onlyTheArrayReads(op.getResult(0)))
      return;
    op.setAttr(mlir::tpu::kDramDTypeAttr, StringAttr::get(op.getContext(), "bf16"));
    ++numNarrowed;
  }

  bool narrow = false;

  // An output that is an input, a constant or another output's tensor gets
  // a copy of its own, so that every output has its own place in the
  // bundle's tensor map.
  void copyOutputsWithoutBufferOfTheirOwn(func::FuncOp function, OpBuilder &builder) {
    auto ret = llvm::cast<func::ReturnOp>(function.getBody().front().getTerminator());
    llvm::DenseSet<Value> owned;
    for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
      Value owner = bufferOwner(value);
      bool own = !llvm::isa<BlockArgument>(owner) &&
                 !owner.getDefiningOp<mlir::tpu::DramConstantOp>() && owned.insert(owner).second;
      if (own)
        continue;
      builder.setInsertionPoint(ret);
      Location loc = NameLoc::get(builder.getStringAttr("copy to output " + std::to_string(index)));
      auto type = llvm::cast<RankedTensorType>(value.getType());
      Value matrix = value;
      if (mlir::tpu::matrixType(type) != type)
        matrix = builder.create<mlir::tpu::ViewOp>(loc, mlir::tpu::matrixType(type), value);
      auto copyOp = builder.create<mlir::tpu::UnaryOp>(loc, mlir::tpu::UnaryKind::copy, matrix);
      // Made after tpu-plan-tiles ran, so planned here as that pass would.
      if (FailureOr<mlir::tpu::TargetAttr> target = mlir::tpu::getTarget(function);
          succeeded(target)) {
        ArrayRef<int64_t> shape = llvm::cast<RankedTensorType>(matrix.getType()).getShape();
        copyOp->setAttr(mlir::tpu::kTilingAttr,
                        ::tpu::codegen::planElementwise(builder.getContext(), shape[0], shape[1],
                                                        std::nullopt,
                                                        mlir::tpu::hardwareConfig(*target)));
      }
      Value copy = copyOp;
      if (copy.getType() != type)
        copy = builder.create<mlir::tpu::ViewOp>(loc, type, copy);
      ret->setOperand(index, copy);
      owned.insert(bufferOwner(copy));
    }
  }

  // The results' region from `base` on: by liveness, a result's buffer is
  // free once the last operation reading it (or a view of it) has run, and
  // a later result takes the smallest free buffer that fits (the rest of it
  // stays free), else new space at the region's end.
  void placeResults(Block &block, uint64_t base, uint64_t &end) {
    llvm::DenseMap<Value, size_t> lastRead;
    for (auto [index, op] : llvm::enumerate(block))
      for (Value operand : readsOf(op))
        lastRead[bufferOwner(operand)] =
            llvm::isa<func::ReturnOp>(op) ? std::numeric_limits<size_t>::max() : index;

    std::multimap<uint64_t, uint64_t> free;                      // bytes -> offset
    llvm::DenseMap<Value, std::pair<uint64_t, uint64_t>> placed; // offset, bytes
    uint64_t regionEnd = 0;
    for (auto [index, op] : llvm::enumerate(block)) {
      if (materialized(op)) {
        Value result = op.getResult(0);
        narrowIfOnlyTheArrayReads(op);
        uint64_t bytes = bytesOf(result);
        uint64_t offset;
        if (auto reuse = free.lower_bound(bytes); reuse != free.end()) {
          offset = reuse->second;
          if (reuse->first > bytes) // the rest stays free
            free.emplace(reuse->first - bytes, offset + bytes);
          free.erase(reuse);
          ++numReused;
        } else {
          offset = regionEnd;
          regionEnd += bytes;
        }
        op.setAttr(mlir::tpu::kDramAddressAttr,
                   IntegerAttr::get(IntegerType::get(&getContext(), 64), int64_t(base + offset)));
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
    end = base + regionEnd;
  }

  // Per output, the longest chain of reductions (matmul K) feeding it: the
  // bound the output check derives its tolerance from.
  static void recordReductionLengths(func::FuncOp function) {
    llvm::DenseMap<Value, int64_t> longest;
    std::function<void(Operation &)> track = [&](Operation &op) {
      if (auto fused = llvm::dyn_cast<mlir::tpu::FusedOp>(op)) {
        for (Operation &member : fused.getMembers())
          track(member);
        for (auto [result, yielded] :
             llvm::zip(fused.getResults(), fused.getBody().front().getTerminator()->getOperands()))
          longest[result] = longest.lookup(yielded);
        return;
      }
      for (Value result : op.getResults()) {
        int64_t length = 0;
        for (Value operand : op.getOperands())
          length = std::max(length, longest.lookup(operand));
        if (auto matmul = llvm::dyn_cast<mlir::tpu::MatMulOp>(op))
          length += matmul.getLhs().getType().getShape()[1];
        if (auto batched = llvm::dyn_cast<mlir::tpu::BatchMatMulOp>(op))
          length += batched.getLhs().getType().getShape()[2];
        longest[result] = length;
      }
    };
    for (Operation &op : function.getBody().front())
      track(op);
    auto ret = llvm::cast<func::ReturnOp>(function.getBody().front().getTerminator());
    for (auto [index, value] : llvm::enumerate(ret.getOperands()))
      function.setResultAttr(
          index, mlir::tpu::kReductionLengthAttr,
          IntegerAttr::get(IntegerType::get(function.getContext(), 64), longest.lookup(value)));
  }
};

} // namespace
