// What the systolic target can fuse: its answers to tpu-fuse's questions
// (FusionTargetInterface on #tpu.target), with the matmul cost model where
// fusing could cost cycles. A group becomes a matmul whose
// epilogue the vector unit applies to each output tile in the accumulators,
// or row-local ops the vector unit runs on tiles of whole rows in the
// scratchpad (tpu-lower-tosa turns each TOSA op into these units' ops).
#include "tpu/Dialect/TPUDialect.h"
#include "tpu/Dialect/TargetConfig.h"
#include "tpu/Target/TPU/MatMulPlan.h"
#include "tpu/Target/TPU/WindowPlan.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tpu;

namespace {

// Ops the vector unit applies element by element, one instruction each.
bool isVectorElementwise(Operation *op) {
  if (auto mul = llvm::dyn_cast<tosa::MulOp>(op))
    return mul.getShift() == 0;
  return llvm::isa<tosa::AddOp, tosa::SubOp, tosa::MaximumOp, tosa::MinimumOp, tosa::ClampOp,
                   tosa::ExpOp, tosa::ReciprocalOp, tosa::RsqrtOp, tosa::SigmoidOp, tosa::TanhOp,
                   tosa::LogOp>(op);
}

// Reductions the vector unit does along a row (v.rowsum, v.rowmax).
bool isRowReduction(Operation *op) {
  if (!llvm::isa<tosa::ReduceSumOp, tosa::ReduceMaxOp>(op))
    return false;
  auto input = llvm::cast<RankedTensorType>(op->getOperand(0).getType());
  return op->getAttrOfType<IntegerAttr>("axis").getInt() == input.getRank() - 1;
}

// Ops over convolution windows that become vector ops on the rows of their
// window matrix (tpu.im2col, which must read its input from memory): those
// that do not run as a window reduction over their input on chip (which
// loads its own bands and stays alone). A depthwise convolution with a
// channel multiplier interleaves its M sums with a concat of columns,
// which is not row-local: it stays alone.
bool isWindowed(Operation *op) {
  if (!llvm::isa<tosa::DepthwiseConv2DOp, tosa::MaxPool2dOp, tosa::AvgPool2dOp>(op) ||
      ::tpu::codegen::onChipLayout(op))
    return false;
  if (auto depthwise = llvm::dyn_cast<tosa::DepthwiseConv2DOp>(op))
    return depthwise.getWeight().getType().getShape()[3] == 1;
  return true;
}

// M, K and N of the matmul a head runs as.
std::optional<std::array<int64_t, 3>> matmulShape(Operation *head) {
  auto shape = [](Value value) { return llvm::cast<RankedTensorType>(value.getType()).getShape(); };
  if (auto matmul = llvm::dyn_cast<tosa::MatMulOp>(head))
    return std::array<int64_t, 3>{shape(matmul.getA())[1], shape(matmul.getA())[2],
                                  shape(matmul.getB())[2]};
  if (auto conv = llvm::dyn_cast<tosa::Conv2DOp>(head)) {
    ArrayRef<int64_t> output = shape(conv.getResult()), weights = shape(conv.getWeight());
    return std::array<int64_t, 3>{output[0] * output[1] * output[2],
                                  weights[1] * weights[2] * weights[3], output[3]};
  }
  return std::nullopt;
}

// A whole-tile operand (a residual) in the epilogue takes scratchpad the
// tiling would otherwise use. It pays when the cost model's estimate of the
// fused matmul is no more than the plain matmul's plus what the separate op
// adds: its DRAM round trip (two operands read after the matmul's result
// has landed, the result written: two latencies and the bytes) and its pass
// through the vector unit.
bool tileOperandPays(Operation *head, TargetAttr target) {
  std::optional<std::array<int64_t, 3>> mkn = matmulShape(head);
  if (!mkn)
    return false;
  auto [M, K, N] = *mkn;
  ::tpu::HardwareConfig config = hardwareConfig(target);
  std::optional<::tpu::codegen::MatMulPlan> fused =
      ::tpu::codegen::planMatMul(M, K, N, {1, true, false, false}, config);
  std::optional<::tpu::codegen::MatMulPlan> plain = ::tpu::codegen::planMatMul(M, K, N, {}, config);
  if (!fused || !plain)
    return false;
  double separateOp = 2.0 * config.dram.latency_cycles +
                      3.0 * 4.0 * double(M * N) / config.dram.bytes_per_cycle +
                      config.vector.pipeline_latency +
                      double(M) * std::ceil(double(N) / double(config.vector.lanes));
  return fused->estimatedCycles <= plain->estimatedCycles + separateOp;
}

} // namespace

bool TargetAttr::canHeadEpilogue(Operation *op) const {
  // A batched matmul runs batch by batch, with no epilogue.
  if (auto matmul = llvm::dyn_cast<tosa::MatMulOp>(op))
    return llvm::cast<RankedTensorType>(matmul.getType()).getShape()[0] == 1;
  return llvm::isa<tosa::Conv2DOp>(op);
}

bool TargetAttr::canJoinEpilogue(Operation *op, Value chain, Value other, Operation *head) const {
  if (!isVectorElementwise(op))
    return false;
  // The accumulators hold whole output tiles: an operand spread over them
  // is the same tile, one row or one element; the vector unit has no column
  // broadcast.
  if (!other)
    return true;
  std::optional<Spread> spread = spreadOf(chain, other);
  if (spread == Spread::Column)
    return false;
  return spread != Spread::Same || tileOperandPays(head, *this);
}

bool TargetAttr::canJoinRowGroup(Operation *op, function_ref<bool(Value)> inGroup) const {
  if (isWindowed(op))
    return !inGroup(op->getOperand(0));
  return isVectorElementwise(op) || isRowReduction(op) || llvm::isa<tosa::ErfOp>(op);
}

bool TargetAttr::isGroupOnItsOwn(Operation *op) const {
  // A convolution adds its bias to the matmul's tiles; erf is a polynomial
  // of vector ops; a windowed op combines its taps.
  return llvm::isa<tosa::Conv2DOp, tosa::ErfOp>(op) || isWindowed(op);
}
