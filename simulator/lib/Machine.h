// State shared by the modules of one simulation: the clock, the memories,
// the token channels, the statistics, what each queue is doing and the first
// fault.
#pragma once

#include "Memory.h"
#include "TokenChannels.h"

#include "tpu/isa/Bundle.h"
#include "tpu/sim/Simulator.h"

#include <systemc>

#include <optional>
#include <ostream>
#include <string>

namespace tpu::sim {

// An instruction on its way from the controller to a queue.
struct IssuedInstruction {
  uint32_t pc = 0;
  isa::Instruction instruction;
};
// sc_fifo prints its contents through operator<<.
std::ostream &operator<<(std::ostream &out, const IssuedInstruction &issued);

class Clock {
public:
  explicit Clock(double ghz);
  sc_core::sc_time cycles(uint64_t count) const;
  uint64_t cyclesIn(const sc_core::sc_time &duration) const;
  uint64_t now() const { return cyclesIn(sc_core::sc_time_stamp()); }

private:
  sc_core::sc_time period_;
};

// What a queue (or the controller, as Queue::Control) is doing; read when the
// kernel runs out of events, to tell completion from deadlock.
enum class Activity { Idle, Executing, WaitingForToken, Stalled };

struct QueueState {
  Activity activity = Activity::Idle;
  IssuedInstruction current;
};

class Machine {
public:
  Machine(const HardwareConfig &config, std::vector<uint8_t> &dram);

  WordMemory &memory(isa::Space space);
  QueueState &queue(isa::Queue queue) { return queues_[static_cast<unsigned>(queue)]; }
  const QueueState &queue(isa::Queue queue) const { return queues_[static_cast<unsigned>(queue)]; }
  QueueStats &queueStats(isa::Queue queue) { return stats.queues[static_cast<unsigned>(queue)]; }
  // Records the first fault as "pc N (disassembly): reason" and stops the
  // kernel.
  void fail(const IssuedInstruction &issued, const std::string &reason);
  const std::optional<std::string> &fault() const { return fault_; }

  const HardwareConfig &config;
  const Clock clock;
  WordMemory scratchpad;
  WordMemory accumulator;
  Dram dram;
  TokenChannels tokens;
  SimStats stats;

private:
  std::array<QueueState, isa::kNumQueues> queues_;
  std::optional<std::string> fault_;
};

} // namespace tpu::sim
