// The report JSON and the terminal summary (docs/simulator.md#report).
#include "tpu/sim/Simulator.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace tpu::sim {
namespace {

double perCycle(double amount, uint64_t cycles) {
  return cycles > 0 ? amount / static_cast<double>(cycles) : 0.0;
}

uint64_t dramBytes(const SimStats &stats) {
  return stats.dram_bytes_read + stats.dram_bytes_written;
}

// cycles / roofline; null where the bound is 0 (no compulsory work).
nlohmann::json overRoofline(uint64_t cycles, const Roofline &roofline) {
  if (roofline.cycles() == 0)
    return nullptr;
  return static_cast<double>(cycles) / static_cast<double>(roofline.cycles());
}

// The roofline keys of the report, for `cycles` against `roofline`.
void addRoofline(nlohmann::json &json, uint64_t cycles, const std::optional<Roofline> &roofline) {
  if (!roofline)
    return;
  json["roofline_cycles"] = roofline->cycles();
  json["roofline_compute_cycles"] = roofline->computeCycles();
  json["roofline_matrix_cycles"] = roofline->matrix_cycles;
  json["roofline_vector_cycles"] = roofline->vector_cycles;
  json["roofline_memory_cycles"] = roofline->memory_cycles;
  json["roofline_compute_latency_cycles"] = roofline->compute_latency_cycles;
  json["roofline_memory_latency_cycles"] = roofline->memory_latency_cycles;
  json["cycles_over_roofline"] = overRoofline(cycles, *roofline);
}

nlohmann::json workJson(const WorkStats &work) {
  nlohmann::json json = {{"name", work.name},
                         {"instructions", work.instructions},
                         {"cycles", work.cycles},
                         {"first_cycle", work.first_cycle},
                         {"last_cycle", work.last_cycle},
                         {"macs", work.macs},
                         {"dram_bytes", work.dram_bytes},
                         {"mxu_utilization", work.mxu_utilization}};
  addRoofline(json, work.last_cycle - work.first_cycle, work.roofline);
  return json;
}

// "1.23x" of the roofline, or "-" where there is none.
std::string ratioText(uint64_t cycles, const std::optional<Roofline> &roofline) {
  if (!roofline || roofline->cycles() == 0)
    return "-";
  return fmt::format("{:.2f}x",
                     static_cast<double>(cycles) / static_cast<double>(roofline->cycles()));
}

nlohmann::json workListJson(const std::vector<WorkStats> &list) {
  nlohmann::json entries = nlohmann::json::array();
  for (const WorkStats &work : list)
    if (work.instructions > 0)
      entries.push_back(workJson(work));
  return entries;
}

// Thousands separators make cycle counts readable at a glance.
std::string grouped(uint64_t value) {
  std::string digits = std::to_string(value);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3)
    digits.insert(static_cast<size_t>(i), ",");
  return digits;
}

} // namespace

nlohmann::json toJson(const SimStats &stats, const HardwareConfig &config) {
  nlohmann::json units = nlohmann::json::object();
  for (unsigned c = 0; c < kNumComponents; ++c) {
    const ComponentStats &component = stats.components[c];
    nlohmann::json stalled = nlohmann::json::object();
    for (unsigned r = 0; r < kNumStallReasons; ++r)
      stalled[stallReasonName(static_cast<StallReason>(r))] = component.stalled[r];
    units[componentName(static_cast<Component>(c))] = {{"instructions", component.instructions},
                                                       {"busy", component.busy},
                                                       {"stalled", stalled},
                                                       {"idle", component.idle}};
  }
  double achieved = perCycle(static_cast<double>(dramBytes(stats)), stats.total_cycles);
  const EnergyEstimate &energy = stats.energy;
  nlohmann::json json = {
      {"mode", modeName(stats.mode)},
      {"total_cycles", stats.total_cycles},
      {"dram_bytes_read", stats.dram_bytes_read},
      {"dram_bytes_written", stats.dram_bytes_written},
      {"dram_bandwidth",
       {{"bytes_per_cycle", achieved},
        {"fraction_of_peak", achieved / config.dram.bytes_per_cycle}}},
      {"macs", stats.macs},
      {"mxu_utilization", stats.mxu_utilization},
      {"vector_elements", stats.vector_elements},
      {"vector_transcendental_elements", stats.vector_transcendental_elements},
      {"sram",
       {{"scratchpad", {{"reads", stats.scratchpad.reads}, {"writes", stats.scratchpad.writes}}},
        {"accumulator",
         {{"reads", stats.accumulator.reads}, {"writes", stats.accumulator.writes}}}}},
      {"energy_pj",
       {{"mac", energy.mac_pj},
        {"scratchpad", energy.scratchpad_pj},
        {"accumulator", energy.accumulator_pj},
        {"vector", energy.vector_pj},
        {"dram", energy.dram_pj},
        {"static", energy.static_pj},
        {"total", energy.total_pj()}}},
      {"units", units},
      {"by_instruction", workListJson(stats.by_opcode)},
      {"by_source_op", workListJson(stats.by_source_op)},
      {"wall_seconds", stats.wall_seconds},
      {"simulated_macs_per_second",
       stats.wall_seconds > 0 ? static_cast<double>(stats.macs) / stats.wall_seconds : 0.0},
  };
  addRoofline(json, stats.total_cycles, stats.roofline);
  return json;
}

std::string formatSummary(const SimStats &stats, const HardwareConfig &config) {
  std::string text =
      fmt::format("total cycles: {} ({:.3f} us at {} GHz), {} mode, {:.3f} s on the host\n",
                  grouped(stats.total_cycles),
                  static_cast<double>(stats.total_cycles) / (config.clock_ghz * 1e3),
                  config.clock_ghz, modeName(stats.mode), stats.wall_seconds);
  if (stats.roofline) {
    const Roofline &bound = *stats.roofline;
    text += fmt::format("roofline: {} cycles = max(compute {} + DRAM latency {}, memory {} + DRAM "
                        "latency {}), compute = matrix {} + vector {}; the run takes {} of it\n",
                        grouped(bound.cycles()), grouped(bound.computeCycles()),
                        bound.compute_latency_cycles, grouped(bound.memory_cycles),
                        bound.memory_latency_cycles, grouped(bound.matrix_cycles),
                        grouped(bound.vector_cycles), ratioText(stats.total_cycles, bound));
  }
  text += fmt::format("MACs: {}, MXU utilization {:.2f}% of {}x{}\n", grouped(stats.macs),
                      100 * stats.mxu_utilization, config.array.rows, config.array.cols);
  double achieved = perCycle(static_cast<double>(dramBytes(stats)), stats.total_cycles);
  text += fmt::format("DRAM: {} bytes read, {} bytes written, {:.1f} B/cycle ({:.1f}% of peak)\n",
                      grouped(stats.dram_bytes_read), grouped(stats.dram_bytes_written), achieved,
                      100 * achieved / config.dram.bytes_per_cycle);
  text +=
      fmt::format("SRAM words: scratchpad {} read, {} written; accumulator {} read, {} written\n",
                  grouped(stats.scratchpad.reads), grouped(stats.scratchpad.writes),
                  grouped(stats.accumulator.reads), grouped(stats.accumulator.writes));
  const EnergyEstimate &energy = stats.energy;
  auto share = [&](double part) {
    return energy.total_pj() > 0 ? 100 * part / energy.total_pj() : 0.0;
  };
  text += fmt::format("energy: {:.3f} uJ (MAC {:.1f}%, SRAM {:.1f}%, vector {:.1f}%, DRAM {:.1f}%, "
                      "static {:.1f}%)\n",
                      energy.total_pj() * 1e-6, share(energy.mac_pj),
                      share(energy.scratchpad_pj + energy.accumulator_pj), share(energy.vector_pj),
                      share(energy.dram_pj), share(energy.static_pj));
  text += fmt::format("{:<11}{:>9}{:>12}", "unit", "instrs", "busy");
  for (unsigned r = 0; r < kNumStallReasons; ++r)
    text += fmt::format("{:>11}", stallReasonName(static_cast<StallReason>(r)));
  text += fmt::format("{:>12}\n", "idle");
  for (unsigned c = 0; c < kNumComponents; ++c) {
    const ComponentStats &component = stats.components[c];
    text += fmt::format("{:<11}{:>9}{:>12}", componentName(static_cast<Component>(c)),
                        component.instructions, component.busy);
    for (uint64_t stalled : component.stalled)
      text += fmt::format("{:>11}", stalled);
    text += fmt::format("{:>12}\n", component.idle);
  }
  // The operations that kept the machine longest, as a profiler would list them.
  std::vector<const WorkStats *> ops;
  for (const WorkStats &work : stats.by_source_op)
    if (work.instructions > 0)
      ops.push_back(&work);
  std::sort(ops.begin(), ops.end(), [](const WorkStats *a, const WorkStats *b) {
    return a->last_cycle - a->first_cycle > b->last_cycle - b->first_cycle;
  });
  constexpr size_t kShownOps = 10;
  if (!ops.empty())
    text +=
        fmt::format("{:<32}{:>8}{:>12}{:>12}{:>9}{:>14}{:>12}{:>8}\n", "source op (longest first)",
                    "instrs", "span", "roofline", "ratio", "MACs", "DRAM bytes", "util");
  for (size_t i = 0; i < std::min(ops.size(), kShownOps); ++i) {
    const WorkStats &work = *ops[i];
    std::string name = work.name.size() > 30 ? work.name.substr(0, 29) + "~" : work.name;
    uint64_t span = work.last_cycle - work.first_cycle;
    text += fmt::format(
        "{:<32}{:>8}{:>12}{:>12}{:>9}{:>14}{:>12}{:>7.1f}%\n", name, work.instructions, span,
        work.roofline ? std::to_string(work.roofline->cycles()) : "-",
        ratioText(span, work.roofline), work.macs, work.dram_bytes, 100 * work.mxu_utilization);
  }
  if (ops.size() > kShownOps)
    text += fmt::format("({} more in the report's by_source_op)\n", ops.size() - kShownOps);
  return text;
}

} // namespace tpu::sim
