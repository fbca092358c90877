// Forming and dissolving tpu.fused regions: tpu-fuse forms the groups,
// tpu-plan-tiles regroups a row group that does not pay.
#pragma once

#include "tpu/Dialect/TPUDialect.h"

namespace mlir::tpu {

// Moves `members` (operations of one block, in order, each operand from
// outside them available at the first, only the last one's value used after
// them) into a tpu.fused region where the first one was.
FusedOp fuse(ArrayRef<Operation *> members);

// Moves the group's members back where it was, in order, and erases it.
void unfuse(FusedOp group);

} // namespace mlir::tpu
