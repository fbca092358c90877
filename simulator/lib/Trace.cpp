// Timelines for viewers: Chrome/Perfetto trace-event JSON and VCD
// (docs/simulator.md#traces), both drawn from SimStats::events.
#include "tpu/sim/Simulator.h"

#include "tpu/isa/Error.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>

namespace tpu::sim {
namespace {

// The instruction tracks: one per component, with the matrix unit's weight
// loader apart because mxu.ldw overlaps mxu.mm by design. `component` is the
// component whose busy and stalled cycles go with the track; the weight
// loader's are the matrix unit's.
struct Track {
  std::string name;
  Component component;
  bool weights;                           // the matrix unit's weight loader
  std::vector<const TraceEvent *> events; // sorted by start
};

std::vector<Track> tracksOf(const SimStats &stats, const Bundle &bundle) {
  std::vector<Track> tracks;
  for (unsigned c = 0; c < kNumComponents; ++c) {
    auto component = static_cast<Component>(c);
    tracks.push_back({componentName(component), component, false, {}});
    if (component == Component::Matrix)
      tracks.push_back({"matrix_weights", component, true, {}});
  }
  auto trackIndex = [&](const TraceEvent &event) {
    unsigned index = static_cast<unsigned>(event.component);
    bool afterMatrix = index > static_cast<unsigned>(Component::Matrix);
    bool weights = event.component == Component::Matrix &&
                   bundle.program[event.pc].opcode == isa::Opcode::LoadWeights;
    return index + (afterMatrix || weights ? 1 : 0);
  };
  for (const TraceEvent &event : stats.events)
    tracks[trackIndex(event)].events.push_back(&event);
  return tracks;
}

std::string instructionName(uint32_t pc, const Bundle &bundle) {
  std::string name(isa::opcodeInfo(bundle.program[pc].opcode).mnemonic);
  if (pc < bundle.source_of.size() && bundle.source_of[pc] < bundle.source_ops.size())
    name += " " + bundle.source_ops[bundle.source_of[pc]];
  return name;
}

std::string stateName(const StateSpan &span) {
  return span.busy ? "busy" : fmt::format("stall: {}", stallReasonName(span.reason));
}

void requireEvents(const SimStats &stats, const char *what) {
  if (stats.events.empty() && stats.total_cycles > 0)
    throw Error(fmt::format("{} needs a run that records events (SimOptions::trace)", what));
}

} // namespace

nlohmann::json traceJson(const SimStats &stats, const Bundle &bundle) {
  requireEvents(stats, "the trace");
  const double microsecondsPerCycle = 1e-3 / bundle.config.clock_ghz;
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", 1},
                    {"args", {{"name", fmt::format("tpu {}", bundle.config.name)}}}});
  int tid = 0;
  auto addTrack = [&](const std::string &name) {
    ++tid;
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 1},
                      {"tid", tid},
                      {"args", {{"name", name}}}});
    events.push_back({{"name", "thread_sort_index"},
                      {"ph", "M"},
                      {"pid", 1},
                      {"tid", tid},
                      {"args", {{"sort_index", tid}}}});
  };
  auto addSlice = [&](const std::string &name, const char *category, uint64_t start, uint64_t end,
                      nlohmann::json args) {
    events.push_back({{"name", name},
                      {"cat", category},
                      {"ph", "X"},
                      {"pid", 1},
                      {"tid", tid},
                      {"ts", static_cast<double>(start) * microsecondsPerCycle},
                      {"dur", static_cast<double>(end - start) * microsecondsPerCycle},
                      {"args", std::move(args)}});
  };
  std::vector<Track> tracks = tracksOf(stats, bundle);
  for (size_t t = 0; t < tracks.size(); ++t) {
    addTrack(tracks[t].name);
    const std::vector<const TraceEvent *> &spans = tracks[t].events;
    for (size_t i = 0; i < spans.size(); ++i) {
      const TraceEvent &event = *spans[i];
      // Slices on one track must not overlap: a pipelined mm is drawn until
      // the next one starts (possibly for no time at all), and its true end
      // is in its arguments.
      uint64_t end = i + 1 < spans.size() ? std::min(event.end, spans[i + 1]->start) : event.end;
      addSlice(instructionName(event.pc, bundle), "instruction", event.start, end,
               {{"pc", event.pc},
                {"start_cycle", event.start},
                {"end_cycle", event.end},
                {"asm", isa::disassemble(bundle.program[event.pc])}});
    }
    // After a component's instruction tracks, the track of its cycles: the
    // report's busy and stalled counts are the sums of these slices.
    if (t + 1 < tracks.size() && tracks[t + 1].component == tracks[t].component)
      continue;
    addTrack(fmt::format("{} state", componentName(tracks[t].component)));
    for (const StateSpan &span : stats.states) {
      if (span.component != tracks[t].component)
        continue;
      nlohmann::json args = {{"start_cycle", span.start}, {"end_cycle", span.end}};
      if (!span.busy) {
        args["pc"] = span.pc;
        args["asm"] = isa::disassemble(bundle.program[span.pc]);
      }
      addSlice(stateName(span), span.busy ? "busy" : "stall", span.start, span.end,
               std::move(args));
    }
  }
  return {{"displayTimeUnit", "ns"}, {"traceEvents", events}};
}

std::string vcd(const SimStats &stats, const Bundle &bundle,
                const std::vector<std::string> &signals) {
  requireEvents(stats, "the VCD");
  struct Signal {
    std::string track, kind; // kind: busy, stalled or pc
    std::string id;
    std::map<uint64_t, uint64_t> changes; // cycle -> value
  };
  std::vector<Track> tracks = tracksOf(stats, bundle);
  std::vector<Signal> all;
  for (const Track &track : tracks) {
    // A unit's busy and stalled are its states, as the report counts them;
    // the weight loader's busy is an mxu.ldw loading (its stalls are the
    // matrix unit's).
    for (const char *kind : {"busy", "stalled", "pc"}) {
      if (track.weights && std::string(kind) == "stalled")
        continue;
      Signal signal{track.name, kind, "", {{0, 0}}};
      // Count overlapping spans so that a signal drops only when all have ended.
      std::map<uint64_t, int64_t> delta;
      auto span = [&](uint64_t start, uint64_t end) {
        delta[start] += 1;
        delta[end] -= 1;
      };
      if (signal.kind == "pc") {
        for (const TraceEvent *event : track.events)
          signal.changes[event->start] = event->pc;
      } else if (track.weights) {
        for (const TraceEvent *event : track.events)
          span(event->start, event->end);
      } else {
        for (const StateSpan &state : stats.states)
          if (state.component == track.component && state.busy == (signal.kind == "busy"))
            span(state.start, state.end);
      }
      int64_t active = 0;
      for (const auto &[cycle, change] : delta) {
        active += change;
        signal.changes[cycle] = active > 0 ? 1 : 0;
      }
      all.push_back(std::move(signal));
    }
  }
  std::vector<Signal *> chosen;
  for (Signal &signal : all)
    if (signals.empty() || std::find(signals.begin(), signals.end(),
                                     signal.track + "." + signal.kind) != signals.end())
      chosen.push_back(&signal);
  for (const std::string &name : signals)
    if (std::none_of(all.begin(), all.end(),
                     [&](const Signal &s) { return s.track + "." + s.kind == name; }))
      throw Error(fmt::format("unknown VCD signal '{}' (signals are <unit>.busy, <unit>.stalled "
                              "and <unit>.pc for units controller, dma_load, matrix, vector "
                              "and dma_store, and matrix_weights.busy and matrix_weights.pc)",
                              name));

  std::string text = "$version tpusim $end\n$timescale 1 ps $end\n$scope module tpu $end\n";
  std::string currentScope;
  for (size_t i = 0; i < chosen.size(); ++i) {
    Signal &signal = *chosen[i];
    signal.id = fmt::format("s{}", i);
    if (signal.track != currentScope) {
      if (!currentScope.empty())
        text += "$upscope $end\n";
      text += fmt::format("$scope module {} $end\n", signal.track);
      currentScope = signal.track;
    }
    text += fmt::format("$var wire {} {} {} $end\n", signal.kind == "pc" ? 32 : 1, signal.id,
                        signal.kind);
  }
  if (!currentScope.empty())
    text += "$upscope $end\n";
  text += "$upscope $end\n$enddefinitions $end\n";

  // All changes in time order, each time stamped once.
  std::map<uint64_t, std::vector<std::pair<Signal *, uint64_t>>> timeline;
  for (Signal *signal : chosen)
    for (const auto &[cycle, value] : signal->changes)
      timeline[cycle].emplace_back(signal, value);
  const double picosecondsPerCycle = 1e3 / bundle.config.clock_ghz;
  for (const auto &[cycle, changes] : timeline) {
    text += fmt::format("#{}\n", std::llround(static_cast<double>(cycle) * picosecondsPerCycle));
    for (const auto &[signal, value] : changes) {
      if (signal->kind == "pc")
        text += fmt::format("b{:b} {}\n", value, signal->id);
      else
        text += fmt::format("{}{}\n", value, signal->id);
    }
  }
  return text;
}

} // namespace tpu::sim
