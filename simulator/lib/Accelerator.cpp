#include "Accelerator.h"

#include "tpu/isa/Error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>

namespace tpu::sim {
namespace {

constexpr isa::Queue kDataQueues[] = {isa::Queue::Load, isa::Queue::Compute, isa::Queue::Store};
// The kernel runs in slices of this many cycles, between which the progress
// report looks at the run; the last slice ends at the watchdog's limit, so
// that the limit costs nothing per cycle and still stops the run exactly.
constexpr uint64_t kSliceCycles = 1 << 16;

} // namespace

Accelerator::Accelerator(const sc_core::sc_module_name &name, const Bundle &bundle,
                         std::vector<uint8_t> &dram, const SimOptions &options)
    : sc_module(name), options_(options), program_(bundle.program), machine_(bundle, dram, options),
      loadFifo_("load_fifo", kQueueDepth), computeFifo_("compute_fifo", kQueueDepth),
      storeFifo_("store_fifo", kQueueDepth), controller_("controller", bundle.program, machine_),
      dmaLoad_("dma_load", Component::DmaLoad, machine_),
      dmaStore_("dma_store", Component::DmaStore, machine_), matrix_("matrix", machine_),
      vector_("vector", machine_),
      loadQueue_("load_queue", isa::Queue::Load, machine_, {&dmaLoad_}, {Component::DmaLoad}),
      computeQueue_("compute_queue", isa::Queue::Compute, machine_, {&matrix_, &vector_},
                    {Component::Matrix, Component::Vector}),
      storeQueue_("store_queue", isa::Queue::Store, machine_, {&dmaStore_}, {Component::DmaStore}) {
  controller_.load(loadFifo_);
  controller_.compute(computeFifo_);
  controller_.store(storeFifo_);
  loadQueue_.input(loadFifo_);
  computeQueue_.input(computeFifo_);
  storeQueue_.input(storeFifo_);
  for (InstructionQueue *queue : {&loadQueue_, &computeQueue_, &storeQueue_})
    queue->tokens(machine_.tokens);
  for (DmaEngine *dma : {&dmaLoad_, &dmaStore_}) {
    dma->dram(machine_.dramChannel);
    dma->banks(machine_.banks);
  }
  matrix_.banks(machine_.banks);
  vector_.banks(machine_.banks);
}

SimStats Accelerator::run() {
  using WallClock = std::chrono::steady_clock;
  WallClock::time_point wallStart = WallClock::now();
  WallClock::time_point lastProgress = wallStart;
  const Clock &clock = machine_.clock;
  for (;;) {
    // sc_start(t) leaves what is due at its last instant for the next call,
    // so the slice that ends at the limit runs one cycle past it: a run that
    // completes at the limit is then done when it returns.
    uint64_t slice = kSliceCycles;
    if (options_.max_cycles != 0)
      slice = std::min(slice, options_.max_cycles + 1 - clock.now());
    sc_core::sc_start(clock.cycles(slice));
    if (machine_.fault())
      throw Error(*machine_.fault());
    if (!sc_core::sc_pending_activity())
      break; // completed, or the queues wait on each other
    if (options_.max_cycles != 0 && clock.now() > options_.max_cycles)
      throw Error(fmt::format("watchdog: still running after {} cycles (limit {}): {}",
                              options_.max_cycles, options_.max_cycles, blockedQueues()));
    if (options_.progress && WallClock::now() - lastProgress > std::chrono::seconds(1)) {
      lastProgress = WallClock::now();
      options_.progress({clock.now(), controller_.dispatched(),
                         static_cast<uint32_t>(machine_.profiler.programSize())});
    }
  }
  if (!drained())
    throw Error(fmt::format("deadlock: {}", blockedQueues()));

  SimStats stats = machine_.profiler.finish(machine_.lastActivity(), machine_.config);
  stats.mode = machine_.mode;
  stats.wall_seconds = std::chrono::duration<double>(WallClock::now() - wallStart).count();
  return stats;
}

bool Accelerator::drained() const {
  return controller_.halted() && loadFifo_.num_available() == 0 &&
         computeFifo_.num_available() == 0 && storeFifo_.num_available() == 0 &&
         std::all_of(std::begin(kDataQueues), std::end(kDataQueues), [&](isa::Queue queue) {
           return machine_.queue(queue).activity == Activity::Idle;
         });
}

std::string Accelerator::blockedQueues() const {
  std::vector<std::string> blocked;
  for (isa::Queue queue : kDataQueues) {
    const QueueState &state = machine_.queue(queue);
    const char *doing = state.activity == Activity::WaitingForToken ? "waits"
                        : state.activity == Activity::Executing     ? "runs"
                                                                    : nullptr;
    if (doing)
      blocked.push_back(fmt::format("{} {} at pc {} ({})", isa::queueName(queue), doing,
                                    state.current.pc, isa::disassemble(state.current.instruction)));
  }
  // Past the queues' instructions, the matrix unit and the DMA engines may
  // still be completing and the controller dispatching; none is ever so in a
  // deadlock, where nothing is left to happen.
  auto completing = [&](const char *unit, std::optional<uint32_t> pc) {
    bool named = std::any_of(std::begin(kDataQueues), std::end(kDataQueues), [&](isa::Queue queue) {
      const QueueState &state = machine_.queue(queue);
      return state.activity == Activity::Executing && state.current.pc == pc;
    });
    if (pc && !named)
      blocked.push_back(
          fmt::format("{} completes pc {} ({})", unit, *pc, isa::disassemble(program_[*pc])));
  };
  completing("dma_load", dmaLoad_.inFlight());
  completing("matrix", matrix_.inFlight());
  completing("dma_store", dmaStore_.inFlight());
  const QueueState &controller = machine_.queue(isa::Queue::Control);
  if (controller.activity == Activity::Executing)
    blocked.push_back(fmt::format("controller dispatches pc {} ({})", controller.current.pc,
                                  isa::disassemble(controller.current.instruction)));
  if (controller.activity == Activity::Stalled)
    blocked.push_back(fmt::format("controller stalls at pc {} ({}): the {} queue is full",
                                  controller.current.pc,
                                  isa::disassemble(controller.current.instruction),
                                  isa::queueName(controller.current.instruction.queue())));
  return fmt::format("{}", fmt::join(blocked, "; "));
}

} // namespace tpu::sim
