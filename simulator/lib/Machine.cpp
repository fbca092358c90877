#include "Machine.h"

#include "tpu/isa/Error.h"

#include <fmt/format.h>

namespace tpu::sim {

std::ostream &operator<<(std::ostream &out, const IssuedInstruction &issued) {
  return out << "pc " << issued.pc << ": " << isa::disassemble(issued.instruction);
}

Clock::Clock(double ghz) : period_(1.0 / ghz, sc_core::SC_NS) {
  if (period_ == sc_core::SC_ZERO_TIME)
    throw Error(fmt::format("clock_ghz {} is too fast for the kernel's time resolution", ghz));
}

// Every delay is a whole number of periods, so times divide exactly.
sc_core::sc_time Clock::cycles(uint64_t count) const {
  return sc_core::sc_time::from_value(period_.value() * count);
}

uint64_t Clock::cyclesIn(const sc_core::sc_time &duration) const {
  return duration.value() / period_.value();
}

Machine::Machine(const HardwareConfig &config, std::vector<uint8_t> &dram)
    : config(config), clock(config.clock_ghz), scratchpad("scratchpad", config.scratchpad.words()),
      accumulator("accumulator", config.accumulator.words()), dram(dram) {}

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
