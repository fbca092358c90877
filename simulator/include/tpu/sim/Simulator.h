// The cycle-accurate simulator of the accelerator (docs/simulator.md).
//
// This header is free of SystemC so that the compiler and the runtime can use
// the simulator without its kernel headers.
#pragma once

#include "tpu/isa/Bundle.h"
#include "tpu/isa/Isa.h"

#include <nlohmann/json_fwd.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tpu::sim {

using isa::kQueueDepth;

// How the matrix unit computes; both give the same outputs and cycles.
enum class Mode {
  Cycle, // the PE array stepped cycle by cycle over its registers
  Fast,  // each mxu.mm computed at once, completing when the PE array would
};
const char *modeName(Mode mode);

// The parts of the machine the report accounts for, one trace track each.
enum class Component { Controller, DmaLoad, Matrix, Vector, DmaStore };
constexpr unsigned kNumComponents = 5;
const char *componentName(Component component);

// Why a component that is not busy cannot proceed.
enum class StallReason {
  Token,     // its queue waits in sync.pop
  Dram,      // a transfer waits for DRAM latency or for the bus
  Bank,      // an on-chip bank it needs is held by another component
  Weights,   // the array holds no mxu.mm while a weight tile loads or mxu.ldw waits for it
  Fence,     // the compute queue waits for the matrix unit's earlier instructions
  QueueFull, // the controller waits for room in a queue
};
constexpr unsigned kNumStallReasons = 6;
const char *stallReasonName(StallReason reason);

struct ComponentStats {
  uint64_t instructions = 0;
  uint64_t busy = 0;
  std::array<uint64_t, kNumStallReasons> stalled{}; // indexed by StallReason
  uint64_t idle = 0;                                // total - busy - all stalls
};

// A lower bound on the cycles some compulsory work takes on a config
// (docs/simulator.md#roofline): the longer of the compute queue's time and the
// DRAM time, each with the DRAM latency no schedule hides. The matrix and
// vector units share the in-order compute queue and never run at once, so
// their times add.
struct Roofline {
  uint64_t matrix_cycles = 0; // matrixCycles of the products
  uint64_t vector_cycles = 0; // vectorCycles of the vector elements
  uint64_t memory_cycles = 0; // ceil(compulsory DRAM bytes / dram.bytes_per_cycle)
  // The bus carries no byte of a request before its latency has passed: L
  // where there are bytes.
  uint64_t memory_latency_cycles = 0;
  // The model's compute waits for its first load's data, and its last result
  // for a store: 2L where the model both computes and moves bytes. 0 for a
  // source op, whose compute may use data other ops loaded.
  uint64_t compute_latency_cycles = 0;
  uint64_t computeCycles() const { return matrix_cycles + vector_cycles; }
  uint64_t cycles() const {
    return std::max(computeCycles() + compute_latency_cycles,
                    memory_cycles + memory_latency_cycles);
  }
};

// The matrix unit's least time for these products, each streamed through the
// array tile by tile, first weight load and last drain included.
uint64_t matrixCycles(const std::vector<GemmShape> &gemms, const HardwareConfig &config);
// The vector unit's least time for `elements`, `transcendental` of them
// through a transcendental; 0 for none.
uint64_t vectorCycles(uint64_t elements, uint64_t transcendental, const HardwareConfig &config);
Roofline roofline(const SourceWork &work, const HardwareConfig &config);
// The model's bound: every source op's products on the one array, every
// vector element on the one vector unit, and the model's compulsory bytes.
Roofline roofline(const CompulsoryWork &work, const HardwareConfig &config);

// Cycles and work attributed to one opcode or one source graph operation.
struct WorkStats {
  std::string name;
  uint64_t instructions = 0;
  uint64_t cycles = 0; // summed instruction durations; overlapping ones count each
  uint64_t first_cycle = 0;
  uint64_t last_cycle = 0; // the span [first_cycle, last_cycle) its instructions cover
  uint64_t macs = 0;
  uint64_t dram_bytes = 0;
  double mxu_utilization = 0;       // macs / (R * C * span)
  std::optional<Roofline> roofline; // source ops of a bundle that records its work
};

struct MemoryTraffic {
  uint64_t reads = 0; // 32-bit words
  uint64_t writes = 0;
};

struct EnergyEstimate {
  double mac_pj = 0;
  double scratchpad_pj = 0;
  double accumulator_pj = 0;
  double vector_pj = 0;
  double dram_pj = 0;
  double static_pj = 0;
  double total_pj() const {
    return mac_pj + scratchpad_pj + accumulator_pj + vector_pj + dram_pj + static_pj;
  }
};

// One instruction on its component's track, from its start to its completion.
struct TraceEvent {
  Component component;
  uint32_t pc;
  uint64_t start;
  uint64_t end;
};

// A run of cycles a component spends in one state of the report's accounting:
// busy, or stalled for one reason (idle is what no span covers). A component's
// spans never overlap, and their cycles add up to its busy and stalled counts.
struct StateSpan {
  Component component;
  uint64_t start;
  uint64_t end;
  bool busy;
  StallReason reason; // when !busy
  uint32_t pc;        // when !busy: the instruction that waits
};

struct SimStats {
  Mode mode = Mode::Fast;
  uint64_t total_cycles = 0;
  uint64_t dram_bytes_read = 0;
  uint64_t dram_bytes_written = 0;
  uint64_t macs = 0;
  uint64_t vector_elements = 0;
  // Of vector_elements, those through a transcendental (v.exp and the like).
  uint64_t vector_transcendental_elements = 0;
  double mxu_utilization = 0; // macs / (R * C * total_cycles)
  MemoryTraffic scratchpad;
  MemoryTraffic accumulator;
  EnergyEstimate energy;
  std::array<ComponentStats, kNumComponents> components{}; // indexed by Component
  std::vector<WorkStats> by_opcode;                        // opcodes that ran, table order
  std::vector<WorkStats> by_source_op;                     // the bundle's source_ops order
  std::vector<TraceEvent> events;                          // when SimOptions::trace
  std::vector<StateSpan> states;                           // when SimOptions::trace
  double wall_seconds = 0;                                 // host time of the run
  std::optional<Roofline> roofline; // the model's, when the bundle records its work

  const ComponentStats &component(Component c) const {
    return components[static_cast<unsigned>(c)];
  }
};

struct Progress {
  uint64_t cycle = 0;
  uint32_t dispatched = 0; // instructions dispatched by the controller
  uint32_t program_size = 0;
};

struct SimOptions {
  Mode mode = Mode::Fast;
  bool trace = false;      // record SimStats::events and SimStats::states
  uint64_t max_cycles = 0; // watchdog: fail if still running at this cycle (0: no limit)
  // false: the reference run that the output check compares with the
  // expected outputs (docs/numerics.md): a bf16 array multiplies the fp32
  // words as they are, and DRAM holds bf16 elements at fp32 (a bf16 store
  // keeps the word it narrows for the loads that follow; a constant stored as
  // bf16 reads as its Bundle::reference_constants value). Cycles are the
  // same either way.
  bool round_operands = true;
  // Called about once a second of host time while the simulation runs.
  std::function<void(const Progress &)> progress;
};

// Runs the bundle's program to completion on `dram`, which must hold exactly
// bundle.dram_bytes bytes with the inputs already placed at their
// dram_address. simulate() copies bundle.constants to constant_address first;
// on return `dram` holds the outputs. Each call uses a fresh SystemC kernel,
// so any number of simulations can run one after another in a process (not
// concurrently from several threads).
//
// Throws tpu::Error "pc N (disassembly): reason" for an illegal instruction,
// "deadlock: ..." when every unfinished queue waits for a token that can
// never arrive, and "watchdog: ..." past SimOptions::max_cycles.
SimStats simulate(const Bundle &bundle, std::vector<uint8_t> &dram, const SimOptions &options = {});

// The report of docs/simulator.md (without the trace events).
nlohmann::json toJson(const SimStats &stats, const HardwareConfig &config);
// A readable summary: cycles, traffic, utilization, energy, and tables per
// component and per source operation.
std::string formatSummary(const SimStats &stats, const HardwareConfig &config);
// Chrome / Perfetto trace-event JSON: a track of instructions per component,
// named by opcode and source operation, and a track of its busy and stalled
// cycles, which add up to the report's; needs SimOptions::trace.
nlohmann::json traceJson(const SimStats &stats, const Bundle &bundle);
// A VCD of per-component busy, stall and pc signals; `signals` selects them by
// name ("matrix.busy", "dma_load.pc", ...); empty selects all. Needs
// SimOptions::trace. Throws tpu::Error on an unknown signal name.
std::string vcd(const SimStats &stats, const Bundle &bundle,
                const std::vector<std::string> &signals);

} // namespace tpu::sim
