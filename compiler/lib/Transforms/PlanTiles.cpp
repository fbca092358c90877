// tpu-plan-tiles: the tiling of every matmul for a hardware config,
// recorded as `tpu.tiling` for the program emitter (tpu/CodeGen/MatMulPlan.h).
#include "tpu/CodeGen/MatMulPlan.h"
#include "tpu/Transforms/Passes.h"
#include "tpu/isa/Error.h"

namespace mlir::tpu {
#define GEN_PASS_DEF_PLANTILES
#include "tpu/Transforms/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;

namespace {

// What the matmul's fused epilogue (the later members of its fusion group)
// loads per output tile.
::tpu::codegen::EpilogueOperands epilogueOf(Operation *matmul, int64_t rows) {
  ::tpu::codegen::EpilogueOperands needs;
  Attribute group = matmul->getAttr("tpu.fusion_group");
  if (!group)
    return needs;
  for (Operation *op = matmul->getNextNode(); op; op = op->getNextNode()) {
    if (op->getAttr("tpu.fusion_group") != group)
      continue;
    if (llvm::isa<mlir::tpu::ClampOp>(op))
      needs.scalar = true;
    auto binary = llvm::dyn_cast<mlir::tpu::BinaryOp>(op);
    if (!binary)
      continue;
    // The operand that is not the chain's value: the smaller one, or either.
    auto shape = mlir::tpu::matrixType(binary.getRhs().getType()).getShape();
    auto lhs = mlir::tpu::matrixType(binary.getLhs().getType()).getShape();
    if (shape == lhs && shape[0] == rows)
      needs.tile = true;
    else if (shape[0] == 1 && shape[1] > 1)
      needs.row = true;
    else
      needs.scalar = true;
  }
  return needs;
}

class PlanTiles : public mlir::tpu::impl::PlanTilesBase<PlanTiles> {
public:
  using PlanTilesBase::PlanTilesBase;

  LogicalResult initialize(MLIRContext *) override {
    try {
      hardware = ::tpu::HardwareConfig::fromFile(config.empty() ? ::tpu::defaultConfigPath()
                                                                : std::string(config));
    } catch (const ::tpu::Error &error) {
      loadError = error.what();
    }
    return success();
  }

  void runOnOperation() override {
    if (!loadError.empty()) {
      getOperation().emitError() << "tpu-plan-tiles: " << loadError;
      return signalPassFailure();
    }
    WalkResult walk = getOperation().walk([&](Operation *op) {
      int64_t M, K, N;
      if (auto matmul = llvm::dyn_cast<mlir::tpu::MatMulOp>(op)) {
        auto lhs = mlir::tpu::matrixType(matmul.getLhs().getType()).getShape();
        auto rhs = mlir::tpu::matrixType(matmul.getRhs().getType()).getShape();
        M = lhs[0], K = lhs[1], N = rhs[1];
      } else if (auto batched = llvm::dyn_cast<mlir::tpu::BatchMatMulOp>(op)) {
        auto lhs = batched.getLhs().getType().getShape();
        auto rhs = batched.getRhs().getType().getShape();
        M = lhs[1], K = lhs[2], N = rhs[2];
      } else {
        return WalkResult::advance();
      }
      std::optional<::tpu::codegen::MatMulPlan> plan =
          ::tpu::codegen::planMatMul(M, K, N, epilogueOf(op, M), hardware);
      if (!plan) {
        op->emitOpError() << "config '" << hardware.name
                          << "' has too little scratchpad or accumulator memory for one "
                          << std::min<int64_t>(K, hardware.array.rows) << "x"
                          << std::min<int64_t>(N, hardware.array.cols)
                          << " weight tile and one row";
        return WalkResult::interrupt();
      }
      op->setAttr(::tpu::codegen::kTilingAttr, plan->toAttr(&getContext()));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }

private:
  ::tpu::HardwareConfig hardware;
  std::string loadError;
};

} // namespace
