#include "Accelerator.h"

#include "tpu/isa/Error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace tpu::sim {
namespace {

constexpr isa::Queue kDataQueues[] = {isa::Queue::Load, isa::Queue::Compute, isa::Queue::Store};

} // namespace

Accelerator::Accelerator(const sc_core::sc_module_name &name, const Bundle &bundle,
                         std::vector<uint8_t> &dram)
    : sc_module(name), machine_(bundle.config, dram), loadFifo_("load_fifo", kQueueDepth),
      computeFifo_("compute_fifo", kQueueDepth), storeFifo_("store_fifo", kQueueDepth),
      controller_("controller", bundle.program, machine_), dma_("dma", machine_),
      matrix_("matrix", machine_), vector_("vector", machine_),
      loadQueue_("load_queue", isa::Queue::Load, machine_, {&dma_}),
      computeQueue_("compute_queue", isa::Queue::Compute, machine_, {&matrix_, &vector_}),
      storeQueue_("store_queue", isa::Queue::Store, machine_, {&dma_}) {
  controller_.load(loadFifo_);
  controller_.compute(computeFifo_);
  controller_.store(storeFifo_);
  loadQueue_.input(loadFifo_);
  computeQueue_.input(computeFifo_);
  storeQueue_.input(storeFifo_);
}

SimStats Accelerator::run() {
  // With no clock in the design the kernel returns once no event is pending:
  // either everything has drained or the queues wait on each other.
  sc_core::sc_start();
  if (machine_.fault())
    throw Error(*machine_.fault());
  if (!drained())
    throw Error(deadlockReport());

  SimStats stats = machine_.stats;
  stats.total_cycles = machine_.clock.now();
  double peakMacs = static_cast<double>(machine_.config.array.rows) * machine_.config.array.cols *
                    static_cast<double>(stats.total_cycles);
  stats.mxu_utilization = peakMacs > 0 ? static_cast<double>(stats.macs) / peakMacs : 0.0;
  return stats;
}

bool Accelerator::drained() const {
  return controller_.halted() && loadFifo_.num_available() == 0 &&
         computeFifo_.num_available() == 0 && storeFifo_.num_available() == 0 &&
         std::all_of(std::begin(kDataQueues), std::end(kDataQueues), [&](isa::Queue queue) {
           return machine_.queue(queue).activity == Activity::Idle;
         });
}

std::string Accelerator::deadlockReport() {
  std::vector<std::string> blocked;
  for (isa::Queue queue : kDataQueues) {
    const QueueState &state = machine_.queue(queue);
    if (state.activity == Activity::WaitingForToken)
      blocked.push_back(fmt::format("{} waits at pc {} ({})", isa::queueName(queue),
                                    state.current.pc, isa::disassemble(state.current.instruction)));
  }
  const QueueState &controller = machine_.queue(isa::Queue::Control);
  if (controller.activity == Activity::Stalled)
    blocked.push_back(fmt::format("controller stalls at pc {} ({}): the {} queue is full",
                                  controller.current.pc,
                                  isa::disassemble(controller.current.instruction),
                                  isa::queueName(controller.current.instruction.queue())));
  return fmt::format("deadlock: {}", fmt::join(blocked, "; "));
}

} // namespace tpu::sim
