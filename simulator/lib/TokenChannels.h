// The sync.push / sync.pop token channels, one per ordered pair of queues.
#pragma once

#include "Interfaces.h"

#include "tpu/isa/Isa.h"

#include <systemc>

#include <array>
#include <cstdint>

namespace tpu::sim {

class TokenChannels : public TokenInterface {
public:
  void push(isa::Queue from, isa::Queue to) override;
  void pop(isa::Queue from, isa::Queue to) override;

private:
  struct Channel {
    uint64_t tokens = 0;
    sc_core::sc_event pushed;
  };
  Channel &channel(isa::Queue from, isa::Queue to);

  std::array<Channel, isa::kNumQueues * isa::kNumQueues> channels_;
};

} // namespace tpu::sim
