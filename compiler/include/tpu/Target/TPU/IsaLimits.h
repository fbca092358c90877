// The most one instruction moves or computes, from the ISA's field widths:
// what tiling and lowering for the systolic target must stay within.
#pragma once

#include "tpu/isa/Isa.h"

#include <cstdint>

namespace tpu::codegen {

// Rows of one DMA transfer (dma.ld / dma.st).
inline const int64_t kMaxDmaRows =
    int64_t(isa::fieldMaximum(isa::Opcode::DmaLoad, isa::Field::Rows));
// Columns of one DMA transfer or vector op.
inline const int64_t kMaxCols = int64_t(isa::fieldMaximum(isa::Opcode::DmaLoad, isa::Field::Cols));
// Elements between the DRAM rows of one DMA transfer.
inline const int64_t kMaxDmaStride =
    int64_t(isa::fieldMaximum(isa::Opcode::DmaLoad, isa::Field::DramStride));
// Words between the on-chip rows of one DMA transfer, and between the
// activation rows of one mxu.mm.
inline const int64_t kMaxSramStride =
    int64_t(isa::fieldMaximum(isa::Opcode::DmaLoad, isa::Field::SramStride));
inline const int64_t kMaxMatMulStride =
    int64_t(isa::fieldMaximum(isa::Opcode::MatMul, isa::Field::SrcStride));

} // namespace tpu::codegen
