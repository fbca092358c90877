// tpu-plan-tiles: the tiling of every matmul for a hardware config,
// recorded as `tpu.tiling` for the program emitter (tpu/Target/TPU/MatMulPlan.h).
#include "tpu/Target/TPU/MatMulPlan.h"
#include "tpu/Dialect/TargetConfig.h"
#include "tpu/Target/TPU/Passes.h"
#include "tpu/isa/Error.h"

namespace mlir::tpu {
#define GEN_PASS_DEF_PLANTILES
#include "tpu/Target/TPU/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;

namespace {

// What the matmul's fused epilogue (the later members of its fusion group)
// loads per output tile.
::tpu::codegen::EpilogueOperands epilogueOf(Operation *matmul) {
  ::tpu::codegen::EpilogueOperands needs;
  auto fused = llvm::dyn_cast<mlir::tpu::FusedOp>(matmul->getParentOp());
  if (!fused)
    return needs;
  for (Operation &member : llvm::drop_begin(fused.getMembers())) {
    Operation *op = &member;
    if (llvm::isa<mlir::tpu::ClampOp>(op))
      needs.scalar = true;
    auto binary = llvm::dyn_cast<mlir::tpu::BinaryOp>(op);
    if (!binary)
      continue;
    // The chain's value is the full-shaped operand (the lhs, or both); the
    // rhs is what the emitter loads, spread as the emitter sees it.
    switch (*mlir::tpu::spreadOf(binary.getLhs(), binary.getRhs())) {
    case mlir::tpu::Spread::Same:
      needs.tile = true;
      break;
    case mlir::tpu::Spread::Row:
      needs.row = true;
      break;
    case mlir::tpu::Spread::Scalar:
    case mlir::tpu::Spread::Column: // never in an epilogue (the target refuses it)
      needs.scalar = true;
      break;
    }
  }
  return needs;
}

class PlanTiles : public mlir::tpu::impl::PlanTilesBase<PlanTiles> {
public:
  void runOnOperation() override {
    FailureOr<mlir::tpu::TargetAttr> target = mlir::tpu::getTarget(getOperation());
    if (failed(target))
      return signalPassFailure();
    const ::tpu::HardwareConfig hardware = mlir::tpu::hardwareConfig(*target);
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
          ::tpu::codegen::planMatMul(M, K, N, epilogueOf(op), hardware);
      if (!plan) {
        op->emitOpError() << "config '" << hardware.name
                          << "' has too little scratchpad or accumulator memory for one "
                          << std::min<int64_t>(K, hardware.array.rows) << "x"
                          << std::min<int64_t>(N, hardware.array.cols)
                          << " weight tile and one row";
        return WalkResult::interrupt();
      }
      op->setAttr(mlir::tpu::kTilingAttr,
                  mlir::tpu::MatMulTilingAttr::get(
                      &getContext(), plan->tileM, plan->tileN, plan->tileK, plan->kBlock,
                      plan->activations, plan->weights, plan->operands, plan->accumulators));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
