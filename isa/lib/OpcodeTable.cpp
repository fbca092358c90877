// The opcode table: the one place where the instruction set is defined.
// Encoder, decoder, assembler, disassembler and docs/isa.md derive from it.
#include "tpu/isa/Isa.h"

namespace tpu::isa {
namespace {

using F = Field;

// Field widths shared by several opcodes.
constexpr uint8_t kSramAddrBits = 22; // 4 Mi words = 16 MiB per on-chip memory
constexpr uint8_t kStrideBits = 16;
constexpr uint8_t kColsBits = 12;
constexpr uint8_t kRowsBits = 16;

std::vector<FieldInfo> dmaFields() {
  return {{F::DramAddr, 32},
          {F::DramStride, 20},
          {F::Space, 1},
          {F::SramAddr, kSramAddrBits},
          {F::SramStride, kStrideBits},
          {F::Rows, 12},
          {F::Cols, kColsBits},
          {F::DType, 2},
          {F::Transpose, 1}};
}

std::vector<FieldInfo> vectorUnaryFields() {
  return {{F::DstSpace, 1},     {F::DstAddr, kSramAddrBits},
          {F::SrcSpace, 1},     {F::SrcAddr, kSramAddrBits},
          {F::Rows, kRowsBits}, {F::Cols, kColsBits}};
}

std::vector<FieldInfo> vectorBinaryFields() {
  std::vector<FieldInfo> fields = vectorUnaryFields();
  fields.push_back({F::Src2Space, 1});
  fields.push_back({F::Src2Addr, kSramAddrBits});
  fields.push_back({F::Broadcast, 2});
  return fields;
}

std::vector<OpcodeInfo> buildTable() {
  const std::vector<FieldInfo> sync = {{F::From, 2}, {F::To, 2}};
  return {
      {Opcode::Nop, "nop", Queue::Control, Unit::Controller, {}, "Does nothing."},
      {Opcode::Halt,
       "halt",
       Queue::Control,
       Unit::Controller,
       {},
       "Ends the program once every queue has drained; must be the last instruction."},
      {Opcode::SyncPush,
       "sync.push",
       Queue::Control,
       Unit::Controller,
       {{F::From, 2}, {F::To, 2}, {F::Weights, 1}},
       "Runs on queue `from`; adds one token to the channel from -> to once the queue's earlier "
       "instructions have completed (with weights=1, its earlier mxu.ldw). The compute queue "
       "waits for them; the load and store queues go on, their DMA engine delivers the token."},
      {Opcode::SyncPop, "sync.pop", Queue::Control, Unit::Controller, sync,
       "Runs on queue `to`; waits until the channel from -> to holds a token, then takes it."},
      {Opcode::DmaLoad, "dma.ld", Queue::Load, Unit::Dma, dmaFields(),
       "For r < rows, c < cols: space[sram_addr + r*sram_stride + c] (with transpose: "
       "space[sram_addr + c*sram_stride + r]) = widen(DRAM element at dram_addr + (r*dram_stride "
       "+ c)*size(dtype)); bf16 widens exactly, i8 sign-extends."},
      {Opcode::DmaStore, "dma.st", Queue::Store, Unit::Dma, dmaFields(),
       "For r < rows, c < cols: the DRAM element at dram_addr + (r*dram_stride + c)*size(dtype) = "
       "narrow(space[sram_addr + r*sram_stride + c]) (with transpose: space[sram_addr + "
       "c*sram_stride + r]); f32->bf16 rounds to nearest even, i32->i8 saturates."},
      {Opcode::DmaGather,
       "dma.gather",
       Queue::Load,
       Unit::Dma,
       {{F::DramAddr, 32},
        {F::SramAddr, kSramAddrBits},
        {F::SrcAddr, kSramAddrBits},
        {F::Rows, 10},
        {F::Cols, 16},
        {F::DType, 2},
        {F::Bound, 16}},
       "For r < rows: i = scratchpad[src_addr + r] read as int32, which must lie in [-bound, "
       "bound) (else the program stops), k = i < 0 ? i + bound : i; for c < cols: "
       "scratchpad[sram_addr + r*cols + c] = widen(DRAM element at dram_addr + (k*cols + "
       "c)*size(dtype)). An embedding lookup: row k of a bound x cols table."},
      {Opcode::LoadWeights,
       "mxu.ldw",
       Queue::Compute,
       Unit::Matrix,
       {{F::SrcAddr, kSramAddrBits}, {F::SrcStride, kStrideBits}, {F::Rows, 12}, {F::Cols, 12}},
       "Loads the rows x cols weight tile W[r][c] = scratchpad[src_addr + r*src_stride + c] into "
       "the shadow buffer (rows <= R, cols <= C); the active weights keep computing."},
      {Opcode::MatMul,
       "mxu.mm",
       Queue::Compute,
       Unit::Matrix,
       {{F::SrcAddr, kSramAddrBits},
        {F::SrcStride, kStrideBits},
        {F::DstAddr, kSramAddrBits},
        {F::DstStride, kStrideBits},
        {F::Rows, kRowsBits},
        {F::Cols, kColsBits},
        {F::DType, 2},
        {F::Accumulate, 1},
        {F::Flip, 1}},
       "If flip, the shadow weights become active. Streams `rows` activation rows of `cols` (at "
       "most the active tile's rows) elements from scratchpad[src_addr + i*src_stride] through the "
       "array: sum_j = sum over r < cols in order of a[r]*W[r][j] (bf16 operands, fp32 sum; or i8 "
       "operands, i32 sum), then accumulator[dst_addr + i*dst_stride + j] = sum_j, or += when "
       "accumulate. With fewer `cols` than the tile has rows, the array's other rows see zeros: "
       "the product uses the tile's first `cols` rows."},
      {Opcode::VAdd, "v.add", Queue::Compute, Unit::Vector, vectorBinaryFields(),
       "dst = src + src2 (fp32)."},
      {Opcode::VSub, "v.sub", Queue::Compute, Unit::Vector, vectorBinaryFields(),
       "dst = src - src2 (fp32)."},
      {Opcode::VMul, "v.mul", Queue::Compute, Unit::Vector, vectorBinaryFields(),
       "dst = src * src2 (fp32)."},
      {Opcode::VMax, "v.max", Queue::Compute, Unit::Vector, vectorBinaryFields(),
       "dst = max(src, src2) (fp32)."},
      {Opcode::VMin, "v.min", Queue::Compute, Unit::Vector, vectorBinaryFields(),
       "dst = min(src, src2) (fp32)."},
      {Opcode::VClamp, "v.clamp", Queue::Compute, Unit::Vector, vectorBinaryFields(),
       "dst = min(max(src, lo), hi) with lo = src2[0], hi = src2[1] (broadcast must be scalar)."},
      {Opcode::VGreater, "v.gt", Queue::Compute, Unit::Vector, vectorBinaryFields(),
       "dst = src > src2 ? 1.0 : 0.0 (fp32 compare; NaN compares false)."},
      {Opcode::VGreaterEqual, "v.ge", Queue::Compute, Unit::Vector, vectorBinaryFields(),
       "dst = src >= src2 ? 1.0 : 0.0 (fp32 compare; NaN compares false)."},
      {Opcode::VEqual, "v.eq", Queue::Compute, Unit::Vector, vectorBinaryFields(),
       "dst = src == src2 ? 1.0 : 0.0 (fp32 compare: -0 equals +0, NaN equals nothing)."},
      {Opcode::VCopy, "v.copy", Queue::Compute, Unit::Vector, vectorUnaryFields(),
       "dst = src, bit for bit (moves data between scratchpad and accumulators)."},
      {Opcode::VRelu, "v.relu", Queue::Compute, Unit::Vector, vectorUnaryFields(),
       "dst = src > 0 ? src : 0 (fp32)."},
      {Opcode::VExp, "v.exp", Queue::Compute, Unit::Vector, vectorUnaryFields(),
       "dst = exp(src) (fp32)."},
      {Opcode::VRecip, "v.recip", Queue::Compute, Unit::Vector, vectorUnaryFields(),
       "dst = 1 / src (fp32)."},
      {Opcode::VRsqrt, "v.rsqrt", Queue::Compute, Unit::Vector, vectorUnaryFields(),
       "dst = 1 / sqrt(src) (fp32)."},
      {Opcode::VSigmoid, "v.sigmoid", Queue::Compute, Unit::Vector, vectorUnaryFields(),
       "dst = 1 / (1 + exp(-src)), as fp32 exp, add and divide (docs/isa.md gives its error)."},
      {Opcode::VTanh, "v.tanh", Queue::Compute, Unit::Vector, vectorUnaryFields(),
       "dst = tanh(src) (fp32; docs/isa.md gives its error)."},
      {Opcode::VLog, "v.log", Queue::Compute, Unit::Vector, vectorUnaryFields(),
       "dst = log(src), the natural logarithm (fp32; log(0) = -inf, log of a negative is NaN)."},
      {Opcode::VRowSum, "v.rowsum", Queue::Compute, Unit::Vector, vectorUnaryFields(),
       "dst[r] = src[r][0] + ... + src[r][cols-1], summed in order (fp32); dst is rows x 1."},
      {Opcode::VRowMax, "v.rowmax", Queue::Compute, Unit::Vector, vectorUnaryFields(),
       "dst[r] = max over c of src[r][c] (fp32); dst is rows x 1."},
      {Opcode::VCvtI2F, "v.cvt.i2f", Queue::Compute, Unit::Vector, vectorUnaryFields(),
       "dst = (float)src, src read as int32."},
      {Opcode::VCvtF2I, "v.cvt.f2i", Queue::Compute, Unit::Vector, vectorUnaryFields(),
       "dst = src rounded to nearest even and saturated to int32."},
  };
}

} // namespace

const std::vector<OpcodeInfo> &opcodeTable() {
  static const std::vector<OpcodeInfo> table = buildTable();
  return table;
}

} // namespace tpu::isa
