// tpu-plan-tiles: how every operation runs on the array and the on-chip
// memories of the target, recorded as its `tpu.tiling` for the lowering to
// instructions: matmuls (MatMulPlan.h), vector-unit ops and row groups
// (VectorPlan.h), window reductions (WindowPlan.h), and the staging of copies.
#include "tpu/Dialect/FusionRegions.h"
#include "tpu/Dialect/TargetConfig.h"
#include "tpu/Target/TPU/IsaLimits.h"
#include "tpu/Target/TPU/MatMulPlan.h"
#include "tpu/Target/TPU/Passes.h"
#include "tpu/Target/TPU/ProgramBuilder.h"
#include "tpu/Target/TPU/VectorPlan.h"
#include "tpu/Target/TPU/WindowPlan.h"
#include "tpu/isa/Error.h"

#include <fmt/format.h>

namespace mlir::tpu {
#define GEN_PASS_DEF_PLANTILES
#include "tpu/Target/TPU/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;

namespace {

// What the matmul's fused epilogue (the later members of its fusion group)
// loads per output tile.
::tpu::codegen::EpilogueOperands epilogueOf(Operation *matmul) {
  using ::tpu::codegen::OperandKind;
  ::tpu::codegen::EpilogueOperands needs;
  auto fused = llvm::dyn_cast<mlir::tpu::FusedOp>(matmul->getParentOp());
  if (!fused)
    return needs;
  for (Operation &member : llvm::drop_begin(fused.getMembers())) {
    Operation *op = &member;
    if (llvm::isa<mlir::tpu::ViewOp>(op))
      continue;
    if (auto pool = llvm::dyn_cast<mlir::tpu::WindowReduceOp>(op)) {
      needs.poolStride = pool.getStride()[0];
      if (pool.getScale()) { // a multiply by it after the pool
        ++needs.ops;
        needs.loads.push_back(OperandKind::Scalar);
      }
      continue;
    }
    ++needs.ops;
    if (llvm::isa<mlir::tpu::ClampOp>(op))
      needs.loads.push_back(OperandKind::Scalar);
    auto binary = llvm::dyn_cast<mlir::tpu::BinaryOp>(op);
    if (!binary)
      continue;
    // The chain's value is the full-shaped operand (the lhs, or both); the
    // rhs is what the lowering loads, spread as the lowering sees it.
    switch (*mlir::tpu::spreadOf(binary.getLhs(), binary.getRhs())) {
    case mlir::tpu::Spread::Same:
      needs.loads.push_back(OperandKind::Tile);
      break;
    case mlir::tpu::Spread::Row:
      needs.loads.push_back(OperandKind::Row);
      break;
    case mlir::tpu::Spread::Scalar:
    case mlir::tpu::Spread::Column: // never in an epilogue (the target refuses it)
      needs.loads.push_back(OperandKind::Scalar);
      break;
    }
  }
  return needs;
}

// A data-moving op stages its copies in the scratchpad, below the fill row
// it stores into padding (a DMA row of the padding value), if it has one.
mlir::tpu::CopyTilingAttr planCopies(MLIRContext *context, Value fill,
                                     const ::tpu::HardwareConfig &config) {
  int64_t words = int64_t(config.scratchpad.words());
  if (!fill)
    return mlir::tpu::CopyTilingAttr::get(context, words, std::nullopt);
  int64_t fillWords =
      mlir::tpu::matrixType(llvm::cast<RankedTensorType>(fill.getType())).getShape()[1];
  return mlir::tpu::CopyTilingAttr::get(context, words - fillWords, words - fillWords);
}

// im2col copies one run of a pixel's channels at a time.
mlir::tpu::CopyTilingAttr planIm2Col(mlir::tpu::Im2ColOp op, const ::tpu::HardwareConfig &config) {
  int64_t channels = op.getInput().getType().getShape()[3];
  if (channels > ::tpu::codegen::kMaxCols)
    throw ::tpu::Error(fmt::format("im2col of {} channels is not supported (at most {})", channels,
                                   ::tpu::codegen::kMaxCols));
  mlir::tpu::CopyTilingAttr plan = planCopies(op.getContext(), op.getFill(), config);
  if (plan.getStaging() < channels)
    throw ::tpu::Error(fmt::format("config '{}' has too little scratchpad for im2col of {} "
                                   "channels",
                                   config.name, channels));
  return plan;
}

// Whether `use` reads its NHWC tensor in tiles that a transposing load can
// fill from the NCHW tensor: a convolution's input (its band of input rows,
// or its im2col's strided copies), a matmul's activations (a 1x1
// convolution's input), or a whole-tile operand of a matmul's epilogue.
bool readsChannelMajor(OpOperand &use) {
  Operation *user = use.getOwner();
  if (llvm::isa<mlir::tpu::Im2ColOp, mlir::tpu::MatMulOp>(user))
    return use.getOperandNumber() == 0;
  auto fused = llvm::dyn_cast<mlir::tpu::FusedOp>(user->getParentOp());
  auto binary = llvm::dyn_cast<mlir::tpu::BinaryOp>(user);
  return fused && binary && llvm::isa<mlir::tpu::MatMulOp>(fused.getHead()) &&
         binary.getLhs() != binary.getRhs() &&
         mlir::tpu::spreadOf(binary.getLhs(), binary.getRhs()) == mlir::tpu::Spread::Same;
}

// Folds the layout transposes between NCHW and NHWC (docs/compiler.md,
// "Layout transposes") into their neighbours' DMA: one to NHWC whose every
// reader loads its tiles with transposing loads from the NCHW input, and
// one to NCHW of the only result of a matmul group, whose epilogue stores
// its tiles transposed into the NCHW result. Neither then moves data.
void foldLayoutTransposes(func::FuncOp function) {
  function.walk([](mlir::tpu::TransposeOp transpose) {
    ArrayRef<int64_t> perms = transpose.getPerms();
    bool fold = false;
    if (perms == ArrayRef<int64_t>{0, 2, 3, 1}) {
      SmallVector<OpOperand *> uses = ::tpu::codegen::usesThroughViews(transpose.getResult());
      fold = (!uses.empty() &&
              llvm::all_of(uses, [](OpOperand *use) { return readsChannelMajor(*use); })) ||
             ::tpu::codegen::keyTransposeFolds(transpose);
    } else if (::tpu::codegen::headTransposeFolds(transpose)) {
      fold = true;
    } else if (perms == ArrayRef<int64_t>{0, 3, 1, 2}) {
      auto view = transpose.getInput().getDefiningOp<mlir::tpu::ViewOp>();
      auto fused = view ? view.getInput().getDefiningOp<mlir::tpu::FusedOp>() : nullptr;
      fold = view && view->hasOneUse() && fused && fused->getNumResults() == 1 &&
             fused->hasOneUse() && llvm::isa<mlir::tpu::MatMulOp>(fused.getHead());
    }
    if (fold)
      transpose->setAttr(mlir::tpu::kLayoutFoldedAttr, UnitAttr::get(transpose.getContext()));
  });
}

class PlanTiles : public mlir::tpu::impl::PlanTilesBase<PlanTiles> {
public:
  using PlanTilesBase::PlanTilesBase;

  void runOnOperation() override {
    FailureOr<mlir::tpu::TargetAttr> target = mlir::tpu::getTarget(getOperation());
    if (failed(target))
      return signalPassFailure();
    if (dramDType != "array" && dramDType != "f32") {
      getOperation().emitError() << "dram-dtype must be array or f32, got '" << dramDType << "'";
      return signalPassFailure();
    }
    const ::tpu::HardwareConfig hardware = mlir::tpu::hardwareConfig(*target);
    bf16Array = hardware.array.dtype == ::tpu::isa::DType::BF16;
    narrow = dramDType == "array" && bf16Array;
    // A row group runs as one only where the cost model says it is no
    // slower than its members on their own and it fits the scratchpad;
    // otherwise its members form smaller groups that do. A window
    // reduction's epilogue operands take scratchpad from its bands: where
    // no band fits with them, its members run on their own.
    // A pool in a convolution's epilogue needs its bands on chip: where no
    // band fits, the pool runs on its own after the group.
    SmallVector<mlir::tpu::FusedOp> unpaid, unfit, unpooled;
    getOperation().walk([&](mlir::tpu::FusedOp group) {
      if (auto window = llvm::dyn_cast<mlir::tpu::WindowReduceOp>(group.getHead())) {
        if (!::tpu::codegen::planWindow(::tpu::codegen::windowLayoutOf(window), hardware))
          unfit.push_back(group);
      } else if (!group.hasEpilogue() && !::tpu::codegen::rowGroupPays(group, hardware)) {
        unpaid.push_back(group);
      } else if (pools(group) &&
                 !planConv(llvm::cast<mlir::tpu::MatMulOp>(group.getHead()), hardware)) {
        unpooled.push_back(group);
      }
    });
    for (mlir::tpu::FusedOp group : unfit)
      mlir::tpu::unfuse(group);
    for (mlir::tpu::FusedOp group : unpooled)
      dropPool(group);
    for (mlir::tpu::FusedOp group : unpaid)
      regroup(group, hardware);
    foldLayoutTransposes(getOperation());
    WalkResult walk = getOperation().walk([&](Operation *op) {
      try {
        if (Attribute plan = planOf(op, hardware))
          op->setAttr(mlir::tpu::kTilingAttr, plan);
      } catch (const ::tpu::Error &error) {
        op->emitOpError() << error.what();
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }

private:
  // Whether tpu-plan-memory will store what only the array reads as bf16,
  // and whether the array is bf16 (then it does with --dram-dtype=array).
  bool narrow = false, bf16Array = false;

  // The DRAM element sizes of a matmul's activations `lhs` (for a
  // convolution, its input), weights `rhs` and result, and whether `lhs`
  // is stored NCHW; `narrowed`: as tpu-plan-memory stores them where it
  // narrows what only the array reads.
  ::tpu::codegen::ElementBytes bytesOf(Operation *op, Value lhs, Value rhs, bool narrowed) const {
    auto fused = llvm::dyn_cast<mlir::tpu::FusedOp>(op->getParentOp());
    Value result = fused ? fused->getResult(0) : op->getResult(0);
    return {::tpu::codegen::plannedElementBytes(lhs, narrowed),
            ::tpu::codegen::plannedElementBytes(rhs, narrowed),
            ::tpu::codegen::plannedElementBytes(result, narrowed),
            ::tpu::codegen::nchwPixelsOf(lhs)};
  }

  // Whether the group is a convolution whose epilogue ends with a pool.
  static bool pools(mlir::tpu::FusedOp group) {
    return llvm::isa<mlir::tpu::MatMulOp>(group.getHead()) &&
           llvm::isa<mlir::tpu::WindowReduceOp>(
               group.getBody().front().getTerminator()->getPrevNode());
  }

  // Takes the pool (and the view before it) out of a convolution's group.
  static void dropPool(mlir::tpu::FusedOp group) {
    SmallVector<Operation *> members;
    for (Operation &member : group.getMembers())
      members.push_back(&member);
    members.pop_back();
    if (llvm::isa<mlir::tpu::ViewOp>(members.back()))
      members.pop_back();
    mlir::tpu::unfuse(group);
    if (members.size() >= 2)
      mlir::tpu::fuse(members);
  }

  // Splits a row group that does not pay into the longest runs of its
  // members, first to last, that do (a run's values but its last used only
  // inside it); the members of no such run run on their own.
  static void regroup(mlir::tpu::FusedOp unpaid, const ::tpu::HardwareConfig &hardware) {
    SmallVector<Operation *> members;
    for (Operation &member : unpaid.getMembers())
      members.push_back(&member);
    mlir::tpu::unfuse(unpaid);
    for (size_t first = 0; first < members.size();) {
      size_t end = members.size();
      for (; end >= first + 2; --end) {
        ArrayRef<Operation *> run = ArrayRef(members).slice(first, end - first);
        llvm::DenseSet<Operation *> inside(run.begin(), run.end());
        bool oneExit = llvm::all_of(run.drop_back(), [&](Operation *member) {
          return llvm::all_of(member->getUsers(),
                              [&](Operation *user) { return inside.contains(user); });
        });
        if (!oneExit)
          continue;
        mlir::tpu::FusedOp candidate = mlir::tpu::fuse(run);
        if (::tpu::codegen::rowGroupPays(candidate, hardware))
          break;
        mlir::tpu::unfuse(candidate);
      }
      first = end >= first + 2 ? end : first + 1;
    }
  }

  // The plan for `op`, if it is one the target runs as a whole (members of a
  // group run with their group); throws tpu::Error when it cannot fit.
  Attribute planOf(Operation *op, const ::tpu::HardwareConfig &hardware) {
    MLIRContext *context = &getContext();
    auto fused = llvm::dyn_cast<mlir::tpu::FusedOp>(op->getParentOp());
    bool memberOfRowGroup = fused && !fused.hasEpilogue();
    if (memberOfRowGroup)
      return {};
    if (auto group = llvm::dyn_cast<mlir::tpu::FusedOp>(op)) {
      if (group.hasEpilogue())
        return {}; // planned with its head
      return ::tpu::codegen::planRowGroup(group, hardware);
    }
    if (llvm::isa<mlir::tpu::MatMulOp, mlir::tpu::BatchMatMulOp>(op))
      return planMatMul(op, hardware);
    if (auto window = llvm::dyn_cast<mlir::tpu::WindowReduceOp>(op);
        window && (!fused || &fused.getHead() == op))
      return planWindow(window, hardware);
    if (fused)
      return {}; // in an epilogue (a pool too), which runs on its head's tiles
    if (mlir::tpu::VectorTilingAttr plan = ::tpu::codegen::planVectorOp(op, hardware))
      return plan;
    if (auto im2col = llvm::dyn_cast<mlir::tpu::Im2ColOp>(op)) {
      // A convolution's: planned with its matmul, which may read the input
      // in place instead.
      if (llvm::all_of(op->getUsers(), llvm::IsaPred<mlir::tpu::MatMulOp>))
        return {};
      return planIm2Col(im2col, hardware);
    }
    if (auto pad = llvm::dyn_cast<mlir::tpu::PadOp>(op))
      return planCopies(context, pad.getFill(), hardware);
    if (op->hasAttr(mlir::tpu::kLayoutFoldedAttr))
      return {}; // moves no data
    if (llvm::isa<mlir::tpu::TransposeOp, mlir::tpu::SliceOp, mlir::tpu::ConcatOp,
                  mlir::tpu::GatherOp>(op))
      return planCopies(context, Value(), hardware);
    return {};
  }

  // tpu-lower-tosa made a window reduction only where a band fits.
  Attribute planWindow(mlir::tpu::WindowReduceOp op, const ::tpu::HardwareConfig &hardware) {
    std::optional<::tpu::codegen::WindowPlan> plan =
        ::tpu::codegen::planWindow(::tpu::codegen::windowLayoutOf(op), hardware);
    if (!plan)
      throw ::tpu::Error(fmt::format("config '{}' has too little scratchpad for one output row "
                                     "of this window reduction",
                                     hardware.name));
    return mlir::tpu::WindowTilingAttr::get(&getContext(), plan->band, plan->inputs, plan->outputs,
                                            plan->operands);
  }

  // A convolution's band in pieces runs its K steps piece by piece, and one
  // of stacked kernel rows its window kernel column by kernel column: its
  // weight rows become a constant of their own in that order, so that each
  // panel is still consecutive rows.
  static void reorderWeights(mlir::tpu::MatMulOp matmul, arith::ConstantOp weights,
                             const ::tpu::codegen::ConvShape &shape,
                             const ::tpu::codegen::ConvPlan &plan) {
    auto values = llvm::cast<DenseElementsAttr>(weights.getValue());
    const std::vector<float> rows(values.getValues<float>().begin(),
                                  values.getValues<float>().end());
    const int64_t N = shape.outputs;
    std::vector<float> ordered;
    ordered.reserve(rows.size());
    auto append = [&](int64_t row, int64_t count) {
      ordered.insert(ordered.end(), rows.begin() + row * N, rows.begin() + (row + count) * N);
    };
    if (plan.stackedRows) // one channel: weight row kh * KW + kw
      for (int64_t kw = 0; kw < shape.kernel[1]; ++kw)
        for (int64_t kh = 0; kh < shape.kernel[0]; ++kh)
          append(kh * shape.kernel[1] + kw, 1);
    else
      for (const ::tpu::codegen::ConvKStep &step : ::tpu::codegen::convKSteps(
               shape, plan.tileK, ::tpu::codegen::convLayout(shape, plan.tileK, plan.pieces)))
        append(step.row, step.rows);
    OpBuilder builder(weights);
    auto reordered = builder.create<arith::ConstantOp>(
        weights.getLoc(), DenseElementsAttr::get(values.getType(), llvm::ArrayRef<float>(ordered)));
    matmul.getRhsMutable().assign(reordered);
    if (weights.use_empty())
      weights.erase();
  }

  static ::tpu::codegen::ConvShape convShapeOf(mlir::tpu::MatMulOp conv) {
    int64_t outputs = mlir::tpu::matrixType(conv.getRhs().getType()).getShape()[1];
    return ::tpu::codegen::convShapeOf(conv.getLhs().getDefiningOp<mlir::tpu::Im2ColOp>(), outputs);
  }

  // The weights of a convolution as a constant whose rows the plan may
  // reorder, or null.
  static arith::ConstantOp reorderableWeights(mlir::tpu::MatMulOp conv) {
    auto weights = conv.getRhs().getDefiningOp<arith::ConstantOp>();
    if (weights && !llvm::isa<DenseFPElementsAttr>(weights.getValue()))
      return nullptr;
    return weights;
  }

  // The plan of a convolution (a matmul of a tpu.im2col) with its input on
  // chip, if one fits.
  std::optional<::tpu::codegen::ConvPlan> planConv(mlir::tpu::MatMulOp conv,
                                                   const ::tpu::HardwareConfig &hardware) const {
    auto im2col = conv.getLhs().getDefiningOp<mlir::tpu::Im2ColOp>();
    return ::tpu::codegen::planConv(convShapeOf(conv), epilogueOf(conv), hardware, {},
                                    bytesOf(conv, im2col.getInput(), conv.getRhs(), bf16Array),
                                    /*weightsInStepOrder=*/bool(reorderableWeights(conv)));
  }

  Attribute planMatMul(Operation *op, const ::tpu::HardwareConfig &hardware) {
    // A convolution runs on its input held on chip where that fits; else
    // its im2col writes the window rows for a plain matmul. Its rows count
    // as fp32: with bf16 weight rows the model reloads the weights per band
    // where the simulator finds one band faster (docs/compiler.md). Whether
    // its band goes in pieces weighs its tensors at the array's dtype
    // whatever --dram-dtype says: the plan, and so the order of its sums,
    // is the same either way.
    if (auto matmul = llvm::dyn_cast<mlir::tpu::MatMulOp>(op))
      if (auto im2col = matmul.getLhs().getDefiningOp<mlir::tpu::Im2ColOp>()) {
        // A plan with its band in pieces stays (IR read back): its weights
        // are in DRAM in its steps' order.
        if (auto planned = op->getAttrOfType<mlir::tpu::ConvTilingAttr>(mlir::tpu::kTilingAttr);
            planned && (planned.getPieces() || planned.getStackedRows()))
          return planned;
        const ::tpu::codegen::ConvShape shape = convShapeOf(matmul);
        arith::ConstantOp weights = reorderableWeights(matmul);
        if (std::optional<::tpu::codegen::ConvPlan> conv = planConv(matmul, hardware)) {
          if (conv->pieces > 1 || conv->stackedRows)
            reorderWeights(matmul, weights, shape, *conv);
          // A band row of several output rows' input rows spreads the
          // weights' kernel columns apart with zeros in between: a fill
          // row (of zeros, as a convolution's padding is) as long as the
          // weight tile, so that one transfer zeroes it.
          const int64_t tileWords =
              ::tpu::codegen::convLayout(shape, conv->tileK, 1, conv->stackedRows)
                  .windowWords(shape) *
              conv->tileN;
          if (conv->stackedRows > shape.kernel[0] &&
              (!im2col.getFill() ||
               mlir::tpu::matrixType(im2col.getFill().getType()).getShape()[1] < tileWords)) {
            OpBuilder builder(im2col);
            auto zeros = RankedTensorType::get({1, tileWords}, builder.getF32Type());
            Operation *shorter = im2col.getFill() ? im2col.getFill().getDefiningOp() : nullptr;
            im2col.getFillMutable().assign(builder.create<arith::ConstantOp>(
                im2col.getLoc(), DenseElementsAttr::get(zeros, builder.getF32FloatAttr(0.0f))));
            if (shorter && shorter->use_empty())
              shorter->erase();
          }
          return mlir::tpu::ConvTilingAttr::get(
              &getContext(), conv->band, conv->tileN, conv->tileK, conv->kBlock,
              conv->pieces > 1 ? std::optional<int64_t>(conv->pieces) : std::nullopt,
              conv->stackedRows ? std::optional<int64_t>(conv->stackedRows) : std::nullopt,
              conv->inputs, conv->weights, conv->operands, conv->accumulators);
        }
        im2col->setAttr(mlir::tpu::kTilingAttr, planIm2Col(im2col, hardware));
      }
    int64_t M, K, N;
    ::tpu::codegen::ElementBytes bytes;
    if (auto matmul = llvm::dyn_cast<mlir::tpu::MatMulOp>(op)) {
      auto lhs = mlir::tpu::matrixType(matmul.getLhs().getType()).getShape();
      auto rhs = mlir::tpu::matrixType(matmul.getRhs().getType()).getShape();
      M = lhs[0], K = lhs[1], N = rhs[1];
      bytes = bytesOf(op, matmul.getLhs(), matmul.getRhs(), narrow);
    } else {
      auto batched = llvm::cast<mlir::tpu::BatchMatMulOp>(op);
      auto lhs = batched.getLhs().getType().getShape();
      auto rhs = batched.getRhs().getType().getShape();
      M = lhs[1], K = lhs[2], N = rhs[2];
      bytes = bytesOf(op, batched.getLhs(), batched.getRhs(), narrow);
      if (Attribute packed = planPacked(batched, bytes, hardware))
        return packed;
    }
    std::optional<::tpu::codegen::MatMulPlan> plan =
        ::tpu::codegen::planMatMul(M, K, N, epilogueOf(op), hardware, bytes);
    if (!plan) {
      ::tpu::codegen::MatMulMemoryNeeds needs =
          ::tpu::codegen::minimumMatMulMemory(K, N, epilogueOf(op), hardware);
      auto kib = [](uint64_t words) { return (words * 4 + 1023) / 1024; };
      throw ::tpu::Error(fmt::format(
          "config '{}' has too little memory for one {}x{} weight tile and one row: it needs "
          "at least {} KiB of scratchpad (has {}) and {} KiB of accumulator (has {})",
          hardware.name, std::min<int64_t>(K, hardware.array.rows),
          std::min<int64_t>(N, hardware.array.cols), kib(needs.scratchpadWords),
          hardware.scratchpad.bytes / 1024, kib(needs.accumulatorWords),
          hardware.accumulator.bytes / 1024));
    }
    // Panels as tall as the blocks go unsaid.
    std::optional<int64_t> panelRows;
    if (plan->panelRows < plan->kBlock)
      panelRows = plan->panelRows;
    return mlir::tpu::MatMulTilingAttr::get(
        &getContext(), plan->tileM, plan->tileN, plan->tileK, plan->kBlock, panelRows, std::nullopt,
        plan->activations, plan->weights, plan->operands, plan->accumulators);
  }

  // Batches side by side on the array (docs/compiler.md, "Batches side by
  // side"): the most, a divisor of the batch count, whose K and N together
  // fit the array's rows and columns, so that one pass through the array
  // computes them all instead of one pass (and one drain) each. The packed
  // product's plan must take them as one output tile and one K step; the
  // block-diagonal panel's other words come from a row of zeros (`fill`).
  // Null where fewer than two fit.
  Attribute planPacked(mlir::tpu::BatchMatMulOp op, const ::tpu::codegen::ElementBytes &bytes,
                       const ::tpu::HardwareConfig &hardware) {
    auto lhs = op.getLhs().getType().getShape(), rhs = op.getRhs().getType().getShape();
    const int64_t B = lhs[0], M = lhs[1], K = lhs[2], N = rhs[2];
    int64_t packed = 1;
    for (int64_t g = 2; g <= B; ++g)
      if (B % g == 0 && g * K <= int64_t(hardware.array.rows) &&
          g * N <= int64_t(hardware.array.cols))
        packed = g;
    if (packed == 1)
      return {};
    std::optional<::tpu::codegen::MatMulPlan> plan =
        ::tpu::codegen::planMatMul(M, packed * K, packed * N, {}, hardware, bytes);
    if (!plan || plan->tileN < packed * N || plan->tileK < packed * K ||
        plan->kBlock < packed * K || plan->panelRows < plan->kBlock)
      return {};
    if (!op.getFill()) {
      OpBuilder builder(op);
      auto zeros = RankedTensorType::get({1, packed * N}, builder.getF32Type());
      op.getFillMutable().assign(builder.create<arith::ConstantOp>(
          op.getLoc(), DenseElementsAttr::get(zeros, builder.getF32FloatAttr(0.0f))));
    }
    return mlir::tpu::MatMulTilingAttr::get(&getContext(), plan->tileM, plan->tileN, plan->tileK,
                                            plan->kBlock, std::nullopt, packed, plan->activations,
                                            plan->weights, plan->operands, plan->accumulators);
  }
};

} // namespace
