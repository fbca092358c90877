// The #tpu.target attribute and the isa library's HardwareConfig, converted
// both ways. Kept out of TPUDialect.h: the isa's `::tpu` namespace would
// clash with `tpu::` in files that use namespace mlir.
#pragma once

#include "tpu/Dialect/TPUDialect.h"
#include "tpu/isa/HardwareConfig.h"

namespace mlir::tpu {

::tpu::HardwareConfig hardwareConfig(TargetAttr target);
// The #tpu.target of `op`'s module (or of `op`, a module); null where it
// has none (getTarget reports that as an error).
TargetAttr targetOf(Operation *op);
TargetAttr targetAttr(MLIRContext *context, const ::tpu::HardwareConfig &config);

} // namespace mlir::tpu
