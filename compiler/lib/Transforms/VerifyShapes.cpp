// tpu-verify-shapes: every tensor static, every inferable result shape as
// declared. Memory planning needs exact shapes; TOSA's own verifiers accept
// merely compatible ones.
#include "tpu/Transforms/Passes.h"

#include "mlir/Interfaces/InferTypeOpInterface.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mlir::tpu {
#define GEN_PASS_DEF_VERIFYSHAPES
#include "tpu/Transforms/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;

namespace {

std::string typeText(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

class VerifyShapes : public tpu::impl::VerifyShapesBase<VerifyShapes> {
public:
  void runOnOperation() override {
    WalkResult walk = getOperation().walk([&](Operation *op) {
      return succeeded(verifyStatic(op)) && succeeded(verifyInferred(op)) ? WalkResult::advance()
                                                                          : WalkResult::interrupt();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }

private:
  static LogicalResult verifyStatic(Operation *op) {
    SmallVector<Type> types(op->getOperandTypes());
    llvm::append_range(types, op->getResultTypes());
    for (Type type : types) {
      if (!llvm::isa<TensorType>(type))
        continue;
      auto ranked = llvm::dyn_cast<RankedTensorType>(type);
      if (!ranked || !ranked.hasStaticShape())
        return op->emitOpError() << "has a tensor of unknown or dynamic shape (" << type
                                 << "); the TPU compiler needs static shapes";
    }
    return success();
  }

  static LogicalResult verifyInferred(Operation *op) {
    auto inferable = llvm::dyn_cast<InferShapedTypeOpInterface>(op);
    if (!inferable)
      return success();
    SmallVector<ShapedTypeComponents> inferred;
    if (failed(inferable.inferReturnTypeComponents(
            op->getContext(), op->getLoc(), op->getOperands(), op->getAttrDictionary(),
            op->getPropertiesStorage(), op->getRegions(), inferred)))
      return op->emitOpError() << "result shapes cannot be inferred from its operands";
    for (auto [index, components] : llvm::enumerate(inferred)) {
      if (!components.hasRank() || index >= op->getNumResults())
        continue;
      auto declared = llvm::cast<RankedTensorType>(op->getResult(index).getType());
      ArrayRef<int64_t> dims = components.getDims();
      bool matches = declared.getShape().size() == dims.size();
      for (size_t d = 0; matches && d < dims.size(); ++d)
        matches = ShapedType::isDynamic(dims[d]) || dims[d] == declared.getShape()[d];
      if (!matches)
        return op->emitOpError() << "result " << index << " is declared " << typeText(declared)
                                 << " but its operands give "
                                 << fmt::format("{}", fmt::join(dims, "x"));
    }
    return success();
  }
};

} // namespace
