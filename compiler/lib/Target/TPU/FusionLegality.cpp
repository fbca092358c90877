// What the systolic target can fuse: its answers to tpu-fuse's questions
// (FusionTargetInterface on #tpu.target), with the matmul cost model where
// fusing could cost cycles. A group becomes a matmul whose
// epilogue the vector unit applies to each output tile in the accumulators,
// a window reduction whose epilogue it applies to each output band in the
// scratchpad, or row-local ops the vector unit runs on tiles of whole rows
// in the scratchpad (tpu-lower-tosa turns each TOSA op into these units'
// ops).
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

// A pool or depthwise convolution that runs as a window reduction over its
// input held on chip (the others are windowed: isWindowed).
bool isWindowReduction(Operation *op) {
  return llvm::isa<tosa::DepthwiseConv2DOp, tosa::MaxPool2dOp, tosa::AvgPool2dOp>(op) &&
         ::tpu::codegen::onChipLayout(op);
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

// The cost model's estimate of `head` run with `epilogue`, as tpu-plan-tiles
// plans it: a convolution (not a 1x1 one, a plain matmul) on its input held
// on chip where a plan fits, else the matmul, whose constant weights count
// as bf16 on a bf16 array (tpuc's default --dram-dtype=array).
std::optional<double> estimateCycles(Operation *head,
                                     const ::tpu::codegen::EpilogueOperands &epilogue,
                                     const ::tpu::HardwareConfig &config) {
  std::optional<std::array<int64_t, 3>> mkn = matmulShape(head);
  if (!mkn)
    return std::nullopt;
  auto [M, K, N] = *mkn;
  ::tpu::codegen::ElementBytes bytes;
  Value weights = head->getOperand(1);
  if (config.array.dtype == ::tpu::isa::DType::BF16 && weights.getDefiningOp<tosa::ConstOp>())
    bytes.weights = 2;
  if (auto conv = llvm::dyn_cast<tosa::Conv2DOp>(head)) {
    ArrayRef<int64_t> kernel = conv.getWeight().getType().getShape().slice(1, 2); // O, KH, KW, C
    ArrayRef<int64_t> outputHW =
        llvm::cast<RankedTensorType>(conv.getType()).getShape().slice(1, 2);
    ::tpu::codegen::ConvShape shape =
        ::tpu::codegen::convShape(conv.getInput().getType().getShape(), kernel, conv.getStride(),
                                  conv.getDilation(), conv.getPad(), outputHW, N);
    if (!::tpu::codegen::isPointwise(kernel, conv.getStride(), conv.getPad()))
      if (std::optional<::tpu::codegen::ConvPlan> plan =
              ::tpu::codegen::planConv(shape, epilogue, config))
        return plan->estimatedCycles;
  }
  if (std::optional<::tpu::codegen::MatMulPlan> plan =
          ::tpu::codegen::planMatMul(M, K, N, epilogue, config, bytes))
    return plan->estimatedCycles;
  return std::nullopt;
}

// An operand in the epilogue (a bias row, a residual tile) takes scratchpad
// the tiling would otherwise use. It pays when the cost model's estimate of
// the fused matmul is no more than the plain matmul's plus what the
// separate op adds: its DRAM round trip (`tiles` M x N tensors moved: the
// matmul's result and a residual read after the result has landed, the
// result written: two latencies and M DMA rows each, bound by the latency
// where N is small) and its pass through the vector unit.
bool operandPays(Operation *head, const ::tpu::codegen::EpilogueOperands &fused, double tiles,
                 TargetAttr target) {
  std::optional<std::array<int64_t, 3>> mkn = matmulShape(head);
  if (!mkn)
    return false;
  auto [M, K, N] = *mkn;
  ::tpu::HardwareConfig config = hardwareConfig(target);
  std::optional<double> withOperand = estimateCycles(head, fused, config);
  std::optional<double> plain = estimateCycles(head, {}, config);
  if (!withOperand || !plain)
    return false;
  double separateOp = 2.0 * config.dram.latency_cycles +
                      tiles * double(M) * ::tpu::codegen::rowCycles(N, 4, config) +
                      config.vector.pipeline_latency +
                      double(M) * std::ceil(double(N) / double(config.vector.lanes));
  return *withOperand <= *plain + separateOp;
}

// A bias row: the result read and written.
bool rowOperandPays(Operation *head, TargetAttr target) {
  return operandPays(head, {1, {::tpu::codegen::OperandKind::Row}}, 2.0, target);
}

// Whether pool `op` of the convolution `head`'s epilogue value `chain` can
// end that epilogue: its windows tile the image (kernel = stride, no
// padding), so that each output band of whole windows holds its windows'
// outputs and the vector unit combines them in the accumulators
// (docs/compiler.md, "Pools in a convolution's epilogue"). The members
// before it must not read a whole tile (the products of a pooled tile lie
// window tap by window tap, not in row order), and the convolution must
// not be a 1x1 one (a plain matmul, whose tiles are rows, not bands).
bool poolsTiles(Operation *op, Value chain, Operation *head) {
  // (One the lowering makes a window reduction, not taps over an im2col.)
  auto conv = llvm::dyn_cast<tosa::Conv2DOp>(head);
  if (!conv || !::tpu::codegen::onChipLayout(op))
    return false;
  ArrayRef<int64_t> kernel = op->getAttrOfType<DenseI64ArrayAttr>("kernel").asArrayRef();
  ArrayRef<int64_t> stride = op->getAttrOfType<DenseI64ArrayAttr>("stride").asArrayRef();
  ArrayRef<int64_t> pad = op->getAttrOfType<DenseI64ArrayAttr>("pad").asArrayRef();
  ArrayRef<int64_t> output = llvm::cast<RankedTensorType>(conv.getType()).getShape();
  if (kernel != stride || llvm::any_of(pad, [](int64_t p) { return p != 0; }) ||
      output[1] % stride[0] != 0 || output[2] % stride[1] != 0 || stride[0] != stride[1] ||
      ::tpu::codegen::isPointwise(conv.getWeight().getType().getShape().slice(1, 2),
                                  conv.getStride(), conv.getPad()))
    return false;
  // The epilogue's values each have one user, the next member.
  for (Value value = head->getResult(0); value != chain;) {
    Operation *member = *value.getUsers().begin();
    if (member->getNumOperands() == 2 &&
        spreadOf(member->getOperand(0), member->getOperand(1)) == Spread::Same)
      return false;
    value = member->getResult(0);
  }
  return true;
}

} // namespace

bool TargetAttr::canHeadEpilogue(Operation *op) const {
  // A window reduction's output band is in the scratchpad until its store:
  // the epilogue saves its DRAM round trip and adds no vector work.
  if (isWindowReduction(op))
    return true;
  // A batched matmul runs batch by batch, with no epilogue.
  if (auto matmul = llvm::dyn_cast<tosa::MatMulOp>(op))
    return llvm::cast<RankedTensorType>(matmul.getType()).getShape()[0] == 1;
  // A convolution's epilogue starts with its own bias.
  return llvm::isa<tosa::Conv2DOp>(op) && rowOperandPays(op, *this);
}

bool TargetAttr::canJoinEpilogue(Operation *op, Value chain, Value other, Operation *head) const {
  if (llvm::isa<tosa::MaxPool2dOp, tosa::AvgPool2dOp>(op))
    return poolsTiles(op, chain, head);
  if (!isVectorElementwise(op))
    return false;
  // The accumulators hold whole output tiles: an operand spread over them
  // is the same tile, one row or one element (the epilogue's operand
  // buffers are planned for those; a column is not).
  if (!other)
    return true;
  std::optional<Spread> spread = spreadOf(chain, other);
  if (spread == Spread::Column)
    return false;
  // A window reduction loads its epilogue's operands once, for every band.
  if (isWindowReduction(head))
    return spread == Spread::Row || spread == Spread::Scalar;
  if (spread == Spread::Row)
    return rowOperandPays(head, *this);
  return spread != Spread::Same ||
         operandPays(head, {1, {::tpu::codegen::OperandKind::Tile}}, 3.0, *this);
}

bool TargetAttr::canJoinRowGroup(Operation *op, function_ref<bool(Value)> inGroup) const {
  if (isWindowed(op))
    return !inGroup(op->getOperand(0));
  return isVectorElementwise(op) || isRowReduction(op) || llvm::isa<tosa::ErfOp>(op);
}

bool TargetAttr::isGroupOnItsOwn(Operation *op) const {
  // A convolution adds its bias to the matmul's tiles; erf is a polynomial
  // of vector ops; a windowed op combines its taps.
  if (llvm::isa<tosa::Conv2DOp>(op))
    return rowOperandPays(op, *this);
  return llvm::isa<tosa::ErfOp>(op) || isWindowed(op);
}
