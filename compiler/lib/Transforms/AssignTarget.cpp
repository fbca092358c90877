// tpu-assign-target: the module's `tpu.target`, from a preset or a config
// file; the only pass that reads a hardware config.
#include "tpu/Dialect/TargetConfig.h"
#include "tpu/Transforms/Passes.h"
#include "tpu/isa/Error.h"

namespace mlir::tpu {
#define GEN_PASS_DEF_ASSIGNTARGET
#include "tpu/Transforms/Passes.h.inc"
} // namespace mlir::tpu

using namespace mlir;

namespace {

class AssignTarget : public mlir::tpu::impl::AssignTargetBase<AssignTarget> {
public:
  using AssignTargetBase::AssignTargetBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto current = module->getAttrOfType<mlir::tpu::TargetAttr>(mlir::tpu::kTargetAttr);
    if (current && config.empty())
      return;
    mlir::tpu::TargetAttr target;
    try {
      target = mlir::tpu::targetAttr(
          &getContext(), ::tpu::HardwareConfig::load(config.empty() ? ::tpu::kDefaultPreset
                                                                    : std::string(config)));
    } catch (const ::tpu::Error &error) {
      module.emitError() << error.what();
      return signalPassFailure();
    }
    if (current && current != target) {
      module.emitError() << "the module is compiled for '" << current.getName()
                         << "'; it cannot be compiled for '" << target.getName() << "' too";
      return signalPassFailure();
    }
    module->setAttr(mlir::tpu::kTargetAttr, target);
  }
};

} // namespace
