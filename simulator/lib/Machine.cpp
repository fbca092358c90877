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

void Clock::waitUntil(uint64_t cycle) const {
  uint64_t current = now();
  if (cycle > current)
    sc_core::wait(cycles(cycle - current));
}

Machine::Machine(const Bundle &bundle, std::vector<uint8_t> &dramBytes, const SimOptions &options)
    : config(bundle.config), mode(options.mode), clock(config.clock_ghz),
      scratchpad("scratchpad", config.scratchpad.words()),
      accumulator("accumulator", config.accumulator.words()),
      scratchpadBanks(config.scratchpad.words(), config.scratchpad.banks),
      accumulatorBanks(config.accumulator.words(), config.accumulator.banks), dram(dramBytes),
      dramChannel(config), profiler(bundle, options.trace) {}

WordMemory &Machine::memory(isa::Space space) {
  return space == isa::Space::Scratchpad ? scratchpad : accumulator;
}

BankArbiter &Machine::banks(isa::Space space) {
  return space == isa::Space::Scratchpad ? scratchpadBanks : accumulatorBanks;
}

void Machine::acquireBanks(Component who, uint32_t pc, BankSet scratchpadSet,
                           BankSet accumulatorSet) {
  uint64_t start = clock.now();
  while (!scratchpadBanks.available(who, scratchpadSet) ||
         !accumulatorBanks.available(who, accumulatorSet))
    sc_core::wait(scratchpadBanks.released() | accumulatorBanks.released());
  profiler.stall(who, pc, StallReason::Bank, start, clock.now());
  scratchpadBanks.acquire(who, scratchpadSet);
  accumulatorBanks.acquire(who, accumulatorSet);
}

void Machine::releaseBanks(BankSet scratchpadSet, BankSet accumulatorSet) {
  scratchpadBanks.release(scratchpadSet);
  accumulatorBanks.release(accumulatorSet);
}

void Machine::fail(const IssuedInstruction &issued, const std::string &reason) {
  if (fault_)
    return;
  fault_ = fmt::format("pc {} ({}): {}", issued.pc, isa::disassemble(issued.instruction), reason);
  sc_core::sc_stop();
}

} // namespace tpu::sim
