#include "Machine.h"

#include "tpu/isa/Error.h"
#include "tpu/isa/Numerics.h"

#include <fmt/format.h>

namespace tpu::sim {

std::ostream &operator<<(std::ostream &out, const IssuedInstruction &issued) {
  return out << "pc " << issued.pc << ": " << isa::disassemble(issued.instruction);
}

Machine::Machine(const Bundle &bundle, std::vector<uint8_t> &dramImage, const SimOptions &options)
    : config(bundle.config), dramBytes(bundle.dram_bytes), mode(options.mode),
      roundOperands(options.round_operands), clock(config.clock_ghz),
      scratchpad(config.scratchpad.words()), accumulator(config.accumulator.words()),
      dram(dramImage, !options.round_operands), profiler(bundle, options.trace),
      banks(config, clock, profiler), dramChannel(config) {
  for (const ReferenceConstant &constant : bundle.reference_constants)
    for (size_t i = 0; i < constant.values.size(); ++i)
      dram.record(constant.dram_address + 2 * i, floatBits(constant.values[i]));
}

WordMemory &Machine::memory(isa::Space space) {
  return space == isa::Space::Scratchpad ? scratchpad : accumulator;
}

void Machine::fail(const IssuedInstruction &issued, const std::string &reason) {
  if (fault_)
    return;
  fault_ = fmt::format("pc {} ({}): {}", issued.pc, isa::disassemble(issued.instruction), reason);
  sc_core::sc_stop();
}

} // namespace tpu::sim
