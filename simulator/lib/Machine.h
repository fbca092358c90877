// State shared by the modules of one simulation: the clock, the memories,
// the profiler, what each queue is doing and the first fault, and the channels
// (banks, DRAM, tokens) the units are bound to through their ports.
#pragma once

#include "BankArbiter.h"
#include "Clock.h"
#include "DramChannel.h"
#include "Memory.h"
#include "Profiler.h"
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

// What a queue (or the controller, as Queue::Control) is doing; read when the
// kernel runs out of events, to tell completion from deadlock.
enum class Activity { Idle, Executing, WaitingForToken, Stalled };

struct QueueState {
  Activity activity = Activity::Idle;
  IssuedInstruction current;
};

class Machine {
public:
  Machine(const Bundle &bundle, std::vector<uint8_t> &dram, const SimOptions &options);

  WordMemory &memory(isa::Space space);
  QueueState &queue(isa::Queue queue) { return queues_[static_cast<unsigned>(queue)]; }
  const QueueState &queue(isa::Queue queue) const { return queues_[static_cast<unsigned>(queue)]; }

  // Waits until no other component holds a bank in `scratchpadBanks` or
  // `accumulatorBanks`, recording the wait as a bank stall, then takes them.
  void acquireBanks(Component who, uint32_t pc, BankSet scratchpadBanks, BankSet accumulatorBanks);
  void releaseBanks(BankSet scratchpadBanks, BankSet accumulatorBanks);

  // Records the first fault as "pc N (disassembly): reason" and stops the
  // kernel.
  void fail(const IssuedInstruction &issued, const std::string &reason);
  const std::optional<std::string> &fault() const { return fault_; }
  // The latest cycle any component finished something in.
  void finished(uint64_t cycle) { lastActivity_ = std::max(lastActivity_, cycle); }
  uint64_t lastActivity() const { return lastActivity_; }

  const HardwareConfig &config;
  const uint64_t dramBytes;
  const Mode mode;
  const bool roundOperands; // SimOptions::round_operands
  const Clock clock;
  WordMemory scratchpad;
  WordMemory accumulator;
  Dram dram;
  Profiler profiler;
  // The channels the units reach through their ports.
  BankArbiter banks;
  DramChannel dramChannel;
  TokenChannels tokens;

private:
  std::array<QueueState, isa::kNumQueues> queues_;
  std::optional<std::string> fault_;
  uint64_t lastActivity_ = 0;
};

} // namespace tpu::sim
