#include "TokenChannels.h"

namespace tpu::sim {

TokenChannels::Channel &TokenChannels::channel(isa::Queue from, isa::Queue to) {
  return channels_[static_cast<unsigned>(from) * isa::kNumQueues + static_cast<unsigned>(to)];
}

void TokenChannels::push(isa::Queue from, isa::Queue to) {
  Channel &target = channel(from, to);
  ++target.tokens;
  // A delta notification wakes a waiting pop in this same cycle, whichever
  // of the two threads the kernel happened to run first.
  target.pushed.notify(sc_core::SC_ZERO_TIME);
}

void TokenChannels::pop(isa::Queue from, isa::Queue to) {
  Channel &source = channel(from, to);
  while (source.tokens == 0)
    sc_core::wait(source.pushed);
  --source.tokens;
}

} // namespace tpu::sim
