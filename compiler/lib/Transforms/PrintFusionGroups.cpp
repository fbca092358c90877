// tpu-print-fusion-groups: the fusion groups, one line each, on stdout.
#include "tpu/Transforms/Passes.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::tpu {
#define GEN_PASS_DEF_PRINTFUSIONGROUPS
#include "tpu/Transforms/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;

namespace {

class PrintFusionGroups : public tpu::impl::PrintFusionGroupsBase<PrintFusionGroups> {
public:
  using PrintFusionGroupsBase::PrintFusionGroupsBase;

  void runOnOperation() override {
    SmallVector<tpu::FusedOp> groups;
    getOperation().walk([&](tpu::FusedOp fused) { groups.push_back(fused); });
    llvm::raw_ostream &os = llvm::outs();
    os << "fusion " << mode << ": " << groups.size() << " group" << (groups.size() == 1 ? "" : "s")
       << "\n";
    for (auto [number, fused] : llvm::enumerate(groups)) {
      os << "  group " << number << " ("
         << (llvm::isa<tpu::MatMulOp>(fused.getHead()) ? "matmul epilogue in the accumulators"
             : fused.hasEpilogue() ? "window reduction epilogue in the scratchpad"
                                   : "row-local ops in the scratchpad")
         << "): ";
      llvm::interleave(
          fused.getMembers(), os,
          [&](Operation &op) { os << tpu::sourceName(op.getLoc()) << " [" << op.getName() << "]"; },
          " -> ");
      os << "\n";
    }
    os.flush();
    markAllAnalysesPreserved();
  }
};

} // namespace
