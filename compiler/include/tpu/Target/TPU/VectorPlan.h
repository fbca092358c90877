// How vector-unit operations and row-local groups are tiled for a hardware
// config: the decisions tpu-plan-tiles records (#tpu.vector_tiling,
// #tpu.row_group_tiling) and tpu-lower-vector-ops follows.
#pragma once

#include "tpu/Dialect/TPUDialect.h"
#include "tpu/isa/HardwareConfig.h"

#include <optional>

namespace tpu::codegen {

// One elementwise op on a rows x cols value whose second operand spreads as
// `operand` (none for a unary op; clamp bounds are a scalar spread): tiles
// of whole columns up to the DMA's limit, as many rows as fit with the
// operand's part; the op runs in place. Throws tpu::Error when one row does
// not fit.
mlir::tpu::VectorTilingAttr planElementwise(mlir::MLIRContext *context, int64_t rows, int64_t cols,
                                            std::optional<mlir::tpu::Spread> operand,
                                            const HardwareConfig &config);

// A row reduction: tiles of whole rows (a row must fit one instruction, as
// splitting it would change the order of the sum) and their column of
// results.
mlir::tpu::VectorTilingAttr planRowReduce(mlir::MLIRContext *context, int64_t rows, int64_t cols,
                                          const HardwareConfig &config);

// The tiling of `op` when the vector unit runs it on its own (an
// elementwise op, a clamp or a row reduction); null for any other op.
// Throws tpu::Error when one row does not fit.
mlir::tpu::VectorTilingAttr planVectorOp(mlir::Operation *op, const HardwareConfig &config);

// A row-local group: tiles of whole rows, every value in a scratchpad buffer
// of its own while it lives.
mlir::tpu::RowGroupTilingAttr planRowGroup(mlir::tpu::FusedOp group, const HardwareConfig &config);

// The cost model for row groups (docs/compiler.md, "Whether a row group
// pays"): whether the group, run on its plan's tiles, is estimated no slower
// than its members run one after the other, each on its own tiles with its
// operands and result in DRAM. False when the group does not fit the
// scratchpad: its members then run on their own.
bool rowGroupPays(mlir::tpu::FusedOp group, const HardwareConfig &config);

// Whether a row group loads `value` from outside once per tile, its rows of
// the tile (else once, whole: a row, a scalar, clamp bounds).
bool loadsPerTileRow(mlir::Value value, int64_t groupRows);

// Whether a row group loads `value` (from outside, whole) as copies side by
// side, so that its ops take several tile rows as one (rowCopies): a row
// narrower than the vector unit's `lanes` that every member reading it
// reads as a row operand. Its fixed place then holds `lanes` words.
bool repeatsInRowGroup(mlir::Value value, mlir::tpu::FusedOp group, int64_t lanes);

// What a row group loads once, before its tiles (its values from outside
// that loadsPerTileRow says are whole), in the order of their fixed
// scratchpad places (side by side), as runs that come in with one transfer
// each: a run of two or more is consecutive f32 constants (arith.constant),
// which tpu-plan-memory packs side by side in DRAM for this group; any
// other value, and one that repeatsInRowGroup, is a run of its own.
llvm::SmallVector<llvm::SmallVector<mlir::Value>> onceLoadRuns(mlir::tpu::FusedOp group,
                                                               int64_t lanes);

} // namespace tpu::codegen
