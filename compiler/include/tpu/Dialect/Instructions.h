// tpu.inst and the isa library's Instruction, converted both ways. Kept out
// of TPUDialect.h: the isa's `::tpu` namespace would clash with `tpu::` in
// files that use namespace mlir.
#pragma once

#include "tpu/Dialect/TPUDialect.h"
#include "tpu/isa/Isa.h"

#include "mlir/IR/Builders.h"

#include <utility>
#include <vector>

namespace mlir::tpu {

::tpu::isa::Instruction instructionOf(InstOp op);
// The block's instructions in program order, each decoded once, for passes
// that walk the program many times.
std::vector<std::pair<InstOp, ::tpu::isa::Instruction>> decodeInstructions(Block &block);
// The instruction's fields in its opcode's order: a tpu.inst's `fields`.
SmallVector<int64_t> instructionFields(const ::tpu::isa::Instruction &instruction);
InstOp createInstruction(OpBuilder &builder, Location location,
                         const ::tpu::isa::Instruction &instruction);

inline ::tpu::isa::Queue isaQueue(Queue queue) { return ::tpu::isa::Queue(uint8_t(queue)); }
inline Queue dialectQueue(::tpu::isa::Queue queue) { return Queue(uint8_t(queue)); }

} // namespace mlir::tpu
