#include "Profiler.h"

#include <algorithm>

namespace tpu::sim {

Profiler::Profiler(const Bundle &bundle, bool recordEvents)
    : bundle_(bundle), recordEvents_(recordEvents), byOpcode_(256) {
  stats_.by_source_op.resize(bundle.source_ops.size());
  for (size_t i = 0; i < bundle.source_ops.size(); ++i)
    stats_.by_source_op[i].name = bundle.source_ops[i];
}

WorkStats &Profiler::sourceOf(uint32_t pc) {
  if (pc < bundle_.source_of.size() && bundle_.source_of[pc] < stats_.by_source_op.size())
    return stats_.by_source_op[bundle_.source_of[pc]];
  return unattributed_; // bundles built in code may carry no source map
}

void Profiler::addWork(WorkStats &work, uint64_t start, uint64_t end) {
  work.first_cycle = work.instructions == 0 ? start : std::min(work.first_cycle, start);
  work.last_cycle = std::max(work.last_cycle, end);
  work.instructions += 1;
  work.cycles += end - start;
}

void Profiler::instruction(Component component, uint32_t pc, uint64_t start, uint64_t end,
                           bool busy) {
  const isa::Instruction &instruction = bundle_.program[pc];
  addWork(byOpcode_[static_cast<unsigned>(instruction.opcode)], start, end);
  addWork(sourceOf(pc), start, end);
  stats_.components[static_cast<unsigned>(component)].instructions += 1;
  if (busy)
    this->busy(component, start, end);
  if (recordEvents_)
    stats_.events.push_back({component, pc, start, end});
}

void Profiler::busy(Component component, uint64_t start, uint64_t end) {
  if (end > start)
    busy_[static_cast<unsigned>(component)].push_back({start, end});
}

void Profiler::stall(Component component, uint32_t pc, StallReason reason, uint64_t start,
                     uint64_t end) {
  if (end <= start)
    return;
  stalls_[static_cast<unsigned>(component)].push_back({start, end, reason, pc});
}

void Profiler::macs(uint32_t pc, uint64_t count) {
  stats_.macs += count;
  byOpcode_[static_cast<unsigned>(bundle_.program[pc].opcode)].macs += count;
  sourceOf(pc).macs += count;
}

void Profiler::dramBytes(uint32_t pc, uint64_t bytes, bool read) {
  (read ? stats_.dram_bytes_read : stats_.dram_bytes_written) += bytes;
  byOpcode_[static_cast<unsigned>(bundle_.program[pc].opcode)].dram_bytes += bytes;
  sourceOf(pc).dram_bytes += bytes;
}

void Profiler::memoryAccess(isa::Space space, uint64_t reads, uint64_t writes) {
  MemoryTraffic &traffic = space == isa::Space::Scratchpad ? stats_.scratchpad : stats_.accumulator;
  traffic.reads += reads;
  traffic.writes += writes;
}

namespace {

// The order in which states claim a cycle that several spans cover: busy
// first, then work in flight that overlaps its queue's waits (the matrix
// unit's mxu.ldw, a DMA transfer waiting on DRAM), then the queue's own
// waits, which never overlap each other.
constexpr StallReason kStallPriority[kNumStallReasons] = {
    StallReason::Weights, StallReason::Dram,  StallReason::Token,
    StallReason::Bank,    StallReason::Fence, StallReason::QueueFull};

double utilization(uint64_t macs, const HardwareConfig &config, uint64_t cycles) {
  double peak =
      static_cast<double>(config.array.rows) * config.array.cols * static_cast<double>(cycles);
  return peak > 0 ? static_cast<double>(macs) / peak : 0.0;
}

} // namespace

void Profiler::classify(unsigned c, SimStats &stats) const {
  // A sweep over the span boundaries: state 0 is busy, state 1 + i the stall
  // kStallPriority[i]; each cycle goes to the first state with a span open.
  constexpr unsigned kStates = 1 + kNumStallReasons;
  struct Edge {
    uint64_t cycle;
    unsigned state;
    int delta;
    uint32_t pc;
  };
  std::vector<Edge> edges;
  edges.reserve(2 * (busy_[c].size() + stalls_[c].size()));
  for (const Span &span : busy_[c]) {
    edges.push_back({span.start, 0, 1, 0});
    edges.push_back({span.end, 0, -1, 0});
  }
  for (const StallSpan &stall : stalls_[c]) {
    unsigned state = 1 + static_cast<unsigned>(std::find(std::begin(kStallPriority),
                                                         std::end(kStallPriority), stall.reason) -
                                               std::begin(kStallPriority));
    edges.push_back({stall.start, state, 1, stall.pc});
    edges.push_back({stall.end, state, -1, stall.pc});
  }
  std::sort(edges.begin(), edges.end(),
            [](const Edge &a, const Edge &b) { return a.cycle < b.cycle; });
  std::array<int, kStates> open{};
  std::array<uint32_t, kStates> pcOf{}; // the latest span opened in each state
  ComponentStats &component = stats.components[c];
  uint64_t accounted = 0;
  for (size_t i = 0; i < edges.size(); ++i) {
    open[edges[i].state] += edges[i].delta;
    if (edges[i].delta > 0)
      pcOf[edges[i].state] = edges[i].pc;
    uint64_t start = edges[i].cycle;
    uint64_t end = i + 1 < edges.size() ? edges[i + 1].cycle : start;
    unsigned state = 0;
    while (state < kStates && open[state] == 0)
      ++state;
    if (end == start || state == kStates)
      continue;
    accounted += end - start;
    bool busy = state == 0;
    StallReason reason = busy ? StallReason::Token : kStallPriority[state - 1];
    (busy ? component.busy : component.stalled[static_cast<unsigned>(reason)]) += end - start;
    if (!recordEvents_)
      continue;
    uint32_t pc = busy ? 0 : pcOf[state];
    StateSpan *last = stats.states.empty() ? nullptr : &stats.states.back();
    if (last && last->component == static_cast<Component>(c) && last->end == start &&
        last->busy == busy && last->reason == reason && last->pc == pc)
      last->end = end;
    else
      stats.states.push_back({static_cast<Component>(c), start, end, busy, reason, pc});
  }
  component.idle = stats.total_cycles - accounted;
}

SimStats Profiler::finish(uint64_t totalCycles, const HardwareConfig &config) {
  SimStats stats = stats_;
  stats.total_cycles = totalCycles;
  stats.mxu_utilization = utilization(stats.macs, config, totalCycles);
  for (unsigned c = 0; c < kNumComponents; ++c)
    classify(c, stats);
  for (unsigned opcode = 0; opcode < byOpcode_.size(); ++opcode) {
    if (byOpcode_[opcode].instructions == 0)
      continue;
    WorkStats work = byOpcode_[opcode];
    work.name = std::string(isa::opcodeInfo(static_cast<isa::Opcode>(opcode)).mnemonic);
    stats.by_opcode.push_back(work);
  }
  for (std::vector<WorkStats> *work : {&stats.by_opcode, &stats.by_source_op})
    for (WorkStats &entry : *work)
      entry.mxu_utilization = utilization(entry.macs, config, entry.last_cycle - entry.first_cycle);
  if (bundle_.work) {
    stats.roofline = roofline(*bundle_.work, config);
    // As with the source map, a bundle built in code may record less.
    for (size_t i = 0; i < std::min(stats.by_source_op.size(), bundle_.work->source_ops.size());
         ++i)
      stats.by_source_op[i].roofline = roofline(bundle_.work->source_ops[i], config);
  }

  const auto &energy = config.energy;
  stats.energy.mac_pj = energy.mac_pj * static_cast<double>(stats.macs);
  stats.energy.scratchpad_pj =
      energy.scratchpad_word_pj *
      static_cast<double>(stats.scratchpad.reads + stats.scratchpad.writes);
  stats.energy.accumulator_pj =
      energy.accumulator_word_pj *
      static_cast<double>(stats.accumulator.reads + stats.accumulator.writes);
  stats.energy.vector_pj =
      energy.vector_element_pj *
          static_cast<double>(stats.vector_elements - stats.vector_transcendental_elements) +
      energy.vector_transcendental_pj * static_cast<double>(stats.vector_transcendental_elements);
  stats.energy.dram_pj =
      energy.dram_byte_pj * static_cast<double>(stats.dram_bytes_read + stats.dram_bytes_written);
  // mW x cycles / GHz = 1e-3 W x 1e-9 s x cycles / GHz = pJ.
  stats.energy.static_pj = energy.static_mw * static_cast<double>(totalCycles) / config.clock_ghz;
  std::sort(stats.events.begin(), stats.events.end(),
            [](const TraceEvent &a, const TraceEvent &b) { return a.start < b.start; });
  return stats;
}

} // namespace tpu::sim
