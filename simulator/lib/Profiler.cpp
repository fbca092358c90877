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
  stalls_[static_cast<unsigned>(component)].push_back({start, end, reason});
  if (recordEvents_)
    stats_.events.push_back({component, pc, start, end, true, reason});
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

// Sorts and merges spans in place; returns the cycles they cover.
template <typename Span> uint64_t mergeSpans(std::vector<Span> &spans) {
  std::sort(spans.begin(), spans.end(),
            [](const Span &a, const Span &b) { return a.start < b.start; });
  std::vector<Span> merged;
  uint64_t covered = 0;
  for (const Span &span : spans) {
    if (!merged.empty() && span.start <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, span.end);
    } else {
      merged.push_back(span);
    }
  }
  for (const Span &span : merged)
    covered += span.end - span.start;
  spans = std::move(merged);
  return covered;
}

// Cycles of [start, end) that no busy span covers; `busy` is merged and sorted.
template <typename Span>
uint64_t uncovered(uint64_t start, uint64_t end, const std::vector<Span> &busy) {
  auto first = std::lower_bound(busy.begin(), busy.end(), start,
                                [](const Span &span, uint64_t at) { return span.end <= at; });
  uint64_t covered = 0;
  for (auto it = first; it != busy.end() && it->start < end; ++it)
    covered += std::min(end, it->end) - std::max(start, it->start);
  return end - start - covered;
}

double utilization(uint64_t macs, const HardwareConfig &config, uint64_t cycles) {
  double peak =
      static_cast<double>(config.array.rows) * config.array.cols * static_cast<double>(cycles);
  return peak > 0 ? static_cast<double>(macs) / peak : 0.0;
}

} // namespace

SimStats Profiler::finish(uint64_t totalCycles, const HardwareConfig &config) {
  SimStats stats = stats_;
  stats.total_cycles = totalCycles;
  stats.mxu_utilization = utilization(stats.macs, config, totalCycles);
  for (unsigned c = 0; c < kNumComponents; ++c) {
    ComponentStats &component = stats.components[c];
    component.busy = mergeSpans(busy_[c]);
    // A stall counts only where the component is not busy anyway, and each
    // cycle once: stalls of one component never overlap each other.
    std::vector<StallSpan> stalls = stalls_[c];
    std::sort(stalls.begin(), stalls.end(),
              [](const StallSpan &a, const StallSpan &b) { return a.start < b.start; });
    uint64_t stalledUntil = 0;
    uint64_t stalledTotal = 0;
    for (const StallSpan &stall : stalls) {
      uint64_t start = std::max(stall.start, stalledUntil);
      if (start >= stall.end)
        continue;
      uint64_t cycles = uncovered(start, stall.end, busy_[c]);
      component.stalled[static_cast<unsigned>(stall.reason)] += cycles;
      stalledTotal += cycles;
      stalledUntil = stall.end;
    }
    component.idle = totalCycles - component.busy - stalledTotal;
  }
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
