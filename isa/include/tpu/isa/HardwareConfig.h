// The hardware configuration: array size, memories, DRAM and vector unit.
// Loaded from JSON (configs/*.json); every field is validated on load.
#pragma once

#include "tpu/isa/Isa.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tpu {

struct HardwareConfig {
  std::string name;
  struct {
    uint32_t rows = 0; // R: the reduction (K) dimension a weight tile covers
    uint32_t cols = 0; // C: output columns (N) a weight tile covers
    isa::DType dtype =
        isa::DType::BF16; // multiply type: bf16 (fp32 accumulate) or i8 (i32 accumulate)
  } array;
  struct Memory {
    uint64_t bytes = 0; // capacity; addressed in 32-bit words
    uint32_t banks = 0;
    uint64_t words() const { return bytes / 4; }
  };
  Memory scratchpad;
  Memory accumulator;
  struct {
    uint32_t lanes = 0;            // elements per cycle
    uint32_t pipeline_latency = 0; // cycles from issue to first result
    // Cycles each group of `lanes` elements of a transcendental (v.exp,
    // v.recip, v.rsqrt, v.sigmoid, v.tanh, v.log) occupies the unit; every
    // other vector op takes 1. Optional in JSON (docs/config.md).
    uint32_t transcendental_cycles_per_group = 1;
  } vector;
  struct {
    double bytes_per_cycle = 0;
    uint32_t latency_cycles = 0;
    uint32_t max_outstanding = 0; // requests in flight
  } dram;
  // Per-access energies for the report's estimate (docs/config.md).
  struct {
    double mac_pj = 0;                   // one multiply-accumulate in the array
    double scratchpad_word_pj = 0;       // one 32-bit scratchpad read or write
    double accumulator_word_pj = 0;      // one 32-bit accumulator read or write
    double vector_element_pj = 0;        // one element through any other vector op
    double vector_transcendental_pj = 0; // one element through a transcendental
    double dram_byte_pj = 0;             // one byte moved to or from DRAM
    double static_mw = 0;                // leakage and clock, paid every cycle
  } energy;
  double clock_ghz = 0;

  // Throws tpu::Error "<origin>: <key path>: <problem>" on any missing,
  // unknown, mistyped or out-of-range field.
  static HardwareConfig fromJson(const nlohmann::json &json, const std::string &origin);
  // JSON text, e.g. a config file's contents; errors start with `origin`.
  static HardwareConfig fromText(std::string_view text, const std::string &origin);
  static HardwareConfig fromFile(const std::string &path);
  // A preset by name (`tpu-8x8`), or a JSON file: a path, or any argument
  // ending in `.json`. Throws tpu::Error listing the presets otherwise.
  static HardwareConfig load(const std::string &presetOrPath);
  // The same checks for a config built in code (e.g. one read from a bundle
  // and then modified); errors start with `origin`.
  void validate(const std::string &origin) const;
  nlohmann::json toJson() const;
  bool operator==(const HardwareConfig &other) const;
};

// The presets built into the tools: configs/*.json when they were built, by
// name, so that no tool depends on where the source tree is.
std::vector<std::string> presetNames();
// The preset used when no --config is given.
constexpr const char *kDefaultPreset = "tpu-32x32";

} // namespace tpu
