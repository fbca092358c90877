// What an instruction touches, for the passes that order or move
// instructions (tpu-prefetch-constants, tpu-schedule-tokens): its on-chip
// regions and a transfer's DRAM block.
#pragma once

#include "tpu/isa/HardwareConfig.h"
#include "tpu/isa/Isa.h"
#include "tpu/isa/Legality.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace tpu::codegen {

// Calls region(space, addressField, rows, cols, stride) for each on-chip
// region `inst` reads or writes, a mxu.mm's accumulator rows as wide as
// the active weight tile (at most `arrayCols`).
template <typename Region>
void forEachRegion(const isa::Instruction &inst, uint64_t arrayCols, Region region) {
  using isa::Field;
  using isa::Opcode;
  const auto sp = uint64_t(isa::Space::Scratchpad), acc = uint64_t(isa::Space::Accumulator);
  uint64_t rows = inst.get(Field::Rows), cols = inst.get(Field::Cols);
  switch (inst.opcode) {
  case Opcode::DmaLoad:
  case Opcode::DmaStore:
    if (inst.get(Field::Transpose))
      std::swap(rows, cols);
    region(inst.get(Field::Space), Field::SramAddr, rows, cols, inst.get(Field::SramStride));
    break;
  case Opcode::DmaGather:
    region(sp, Field::SramAddr, rows, cols, cols);
    region(sp, Field::SrcAddr, 1, rows, rows);
    break;
  case Opcode::LoadWeights:
    region(sp, Field::SrcAddr, rows, cols, inst.get(Field::SrcStride));
    break;
  case Opcode::MatMul:
    region(sp, Field::SrcAddr, rows, cols, inst.get(Field::SrcStride));
    region(acc, Field::DstAddr, rows, arrayCols, inst.get(Field::DstStride));
    break;
  case Opcode::Nop:
  case Opcode::Halt:
  case Opcode::SyncPush:
  case Opcode::SyncPop:
    break;
  default: { // the vector unit: dense operands
    region(inst.get(Field::SrcSpace), Field::SrcAddr, rows, cols, cols);
    OperandShape dst = vectorDestinationShape(inst);
    region(inst.get(Field::DstSpace), Field::DstAddr, dst.rows, dst.cols, dst.cols);
    if (isa::usesField(isa::opcodeInfo(inst.opcode), Field::Src2Addr)) {
      OperandShape src2 = vectorSecondSourceShape(inst);
      region(inst.get(Field::Src2Space), Field::Src2Addr, src2.rows, src2.cols, src2.cols);
    }
  }
  }
}

// Whether the region forEachRegion passes with `address` is one `inst`
// writes (a transfer in's SramAddr, any other's DstAddr) rather than reads.
inline bool writesRegion(const isa::Instruction &inst, isa::Field address) {
  const bool transferIn =
      inst.opcode == isa::Opcode::DmaLoad || inst.opcode == isa::Opcode::DmaGather;
  return address == (transferIn ? isa::Field::SramAddr : isa::Field::DstAddr);
}

// An on-chip region's span: words [begin, end) of `space`, its first word
// to its last (a superset of a strided region's words).
struct Span {
  uint64_t space, begin, end;
  bool overlaps(const Span &other) const {
    return space == other.space && begin < other.end && other.begin < end;
  }
};

// Calls span(addressField, Span) for each on-chip region `inst` reads or
// writes that holds a word (forEachRegion).
template <typename SpanOf>
void forEachSpan(const isa::Instruction &inst, uint64_t arrayCols, SpanOf span) {
  forEachRegion(
      inst, arrayCols,
      [&](uint64_t space, isa::Field address, uint64_t rows, uint64_t cols, uint64_t stride) {
        if (rows && cols)
          span(address,
               Span{space, inst.get(address), inst.get(address) + (rows - 1) * stride + cols});
      });
}

// Calls row(addressField, Span) for each row of each on-chip region `inst`
// reads or writes (forEachRegion): a strided region's words row by row,
// not the span of its first word to its last.
template <typename RowOf>
void forEachRow(const isa::Instruction &inst, uint64_t arrayCols, RowOf row) {
  forEachRegion(
      inst, arrayCols,
      [&](uint64_t space, isa::Field address, uint64_t rows, uint64_t cols, uint64_t stride) {
        for (uint64_t r = 0; r < rows; ++r)
          row(address,
              Span{space, inst.get(address) + r * stride, inst.get(address) + r * stride + cols});
      });
}

// Whether a region `inst` writes spans a word of `span` (by spans, not
// row by row).
inline bool writesInto(const isa::Instruction &inst, uint64_t arrayCols, const Span &span) {
  bool writes = false;
  forEachSpan(inst, arrayCols, [&](isa::Field address, const Span &region) {
    writes |= writesRegion(inst, address) && region.overlaps(span);
  });
  return writes;
}

// The on-chip memories' banks: bank b of a space holds its words
// [b * words, (b + 1) * words).
struct BankLayout {
  std::array<uint64_t, 2> bankWords; // indexed by isa::Space

  explicit BankLayout(const HardwareConfig &config)
      : bankWords{config.scratchpad.words() / config.scratchpad.banks,
                  config.accumulator.words() / config.accumulator.banks} {}
  // The first and last bank `span` touches.
  uint64_t firstBank(const Span &span) const { return span.begin / bankWords[span.space]; }
  uint64_t lastBank(const Span &span) const { return (span.end - 1) / bankWords[span.space]; }
};

// The DRAM bytes a dma.ld or dma.st moves: `rows` runs of `width` bytes,
// `stride` apart from `begin`, within [begin, end).
struct DramBlock {
  uint64_t rows, width, stride, begin, end;

  explicit DramBlock(const isa::Instruction &dma) {
    using isa::Field;
    const uint64_t bytes = isa::dtypeBytes(isa::DType(dma.get(Field::DType)));
    rows = dma.get(Field::Rows), width = dma.get(Field::Cols) * bytes;
    stride = dma.get(Field::DramStride) * bytes, begin = dma.get(Field::DramAddr);
    end = begin + (rows - 1) * stride + width;
  }

  // The bytes it moves.
  uint64_t bytes() const { return rows * width; }

  // Whether the two share a byte. Within overlapping spans, runs of one
  // stride (a matrix's column tiles, side by side in its rows) share none
  // unless their columns meet; other strides count as sharing.
  bool overlaps(const DramBlock &other) const {
    if (end <= other.begin || other.end <= begin)
      return false;
    const uint64_t period = rows > 1 ? stride : other.stride;
    auto fits = [&](const DramBlock &block) {
      return (block.rows == 1 || block.stride == period) && block.width <= period;
    };
    if (period == 0 || !fits(*this) || !fits(other))
      return true;
    const uint64_t offset = (other.begin % period + period - begin % period) % period;
    return offset < width || offset + other.width > period;
  }
};

} // namespace tpu::codegen
