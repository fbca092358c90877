#include "tpu/isa/HardwareConfig.h"

#include "Files.h"
#include "JsonCursor.h"
#include "Presets.h"
#include "tpu/isa/Error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace tpu {
namespace {

using detail::JsonCursor;

constexpr uint64_t kMaxArrayDim = 2048;
constexpr uint64_t kMaxBanks = 64;
constexpr uint64_t kMaxVectorLanes = 4096;
constexpr uint64_t kMaxPipelineLatency = 1000;
constexpr uint64_t kMaxCyclesPerGroup = 1000;
constexpr double kMaxClockGHz = 10;
constexpr double kMaxDramBytesPerCycle = 4096;
constexpr uint64_t kMaxDramLatency = 100000;
constexpr uint64_t kMaxDramOutstanding = 1024;
constexpr uint64_t kBytesPerWord = 4;
constexpr double kMaxEnergyPj = 1e6;
constexpr double kMaxStaticMw = 1e6;

// On-chip memories must be reachable by the ISA's word addresses.
uint64_t maxMemoryKiB() {
  const isa::OpcodeInfo &dma = isa::opcodeInfo(isa::Opcode::DmaLoad);
  auto address = std::find_if(dma.fields.begin(), dma.fields.end(), [](const isa::FieldInfo &f) {
    return f.field == isa::Field::SramAddr;
  });
  return (uint64_t{1} << address->bits) * kBytesPerWord / 1024;
}

HardwareConfig::Memory readMemory(const JsonCursor &json) {
  json.expectObject({"kib", "banks"});
  HardwareConfig::Memory memory;
  memory.bytes = json["kib"].unsignedInteger(1, maxMemoryKiB()) * 1024;
  JsonCursor banks = json["banks"];
  memory.banks = static_cast<uint32_t>(banks.unsignedInteger(1, kMaxBanks));
  if ((memory.banks & (memory.banks - 1)) != 0)
    banks.fail(fmt::format("must be a power of two in [1, {}]", kMaxBanks));
  return memory;
}

nlohmann::json memoryJson(const HardwareConfig::Memory &memory) {
  return {{"kib", memory.bytes / 1024}, {"banks", memory.banks}};
}

} // namespace

HardwareConfig HardwareConfig::fromJson(const nlohmann::json &json, const std::string &origin) {
  JsonCursor root(json, origin);
  root.expectObject(
      {"name", "clock_ghz", "array", "scratchpad", "accumulator", "vector", "dram", "energy"});
  HardwareConfig config;
  config.name = root["name"].string();
  config.clock_ghz = root["clock_ghz"].number(0, kMaxClockGHz);

  JsonCursor array = root["array"];
  array.expectObject({"rows", "cols", "dtype"});
  config.array.rows = static_cast<uint32_t>(array["rows"].unsignedInteger(1, kMaxArrayDim));
  config.array.cols = static_cast<uint32_t>(array["cols"].unsignedInteger(1, kMaxArrayDim));
  JsonCursor dtype = array["dtype"];
  std::optional<isa::DType> arrayType = isa::parseDType(dtype.string());
  if (arrayType != isa::DType::BF16 && arrayType != isa::DType::I8)
    dtype.fail("must be \"bf16\" or \"i8\"");
  config.array.dtype = *arrayType;

  config.scratchpad = readMemory(root["scratchpad"]);
  config.accumulator = readMemory(root["accumulator"]);

  JsonCursor vector = root["vector"];
  // The transcendental figures are optional, and their defaults charge a
  // transcendental as an add, so configs written before they existed keep
  // their figures.
  vector.expectObject({"lanes", "pipeline_latency"}, {"transcendental_cycles_per_group"});
  config.vector.lanes = static_cast<uint32_t>(vector["lanes"].unsignedInteger(1, kMaxVectorLanes));
  config.vector.pipeline_latency =
      static_cast<uint32_t>(vector["pipeline_latency"].unsignedInteger(0, kMaxPipelineLatency));
  if (vector.contains("transcendental_cycles_per_group"))
    config.vector.transcendental_cycles_per_group = static_cast<uint32_t>(
        vector["transcendental_cycles_per_group"].unsignedInteger(1, kMaxCyclesPerGroup));

  JsonCursor dram = root["dram"];
  dram.expectObject({"bytes_per_cycle", "latency_cycles", "max_outstanding"});
  config.dram.bytes_per_cycle = dram["bytes_per_cycle"].number(0, kMaxDramBytesPerCycle);
  config.dram.latency_cycles =
      static_cast<uint32_t>(dram["latency_cycles"].unsignedInteger(0, kMaxDramLatency));
  config.dram.max_outstanding =
      static_cast<uint32_t>(dram["max_outstanding"].unsignedInteger(1, kMaxDramOutstanding));

  JsonCursor energy = root["energy"];
  energy.expectObject({"mac_pj", "scratchpad_word_pj", "accumulator_word_pj", "vector_element_pj",
                       "dram_byte_pj", "static_mw"},
                      {"vector_transcendental_pj"});
  config.energy.mac_pj = energy["mac_pj"].nonNegativeNumber(kMaxEnergyPj);
  config.energy.scratchpad_word_pj = energy["scratchpad_word_pj"].nonNegativeNumber(kMaxEnergyPj);
  config.energy.accumulator_word_pj = energy["accumulator_word_pj"].nonNegativeNumber(kMaxEnergyPj);
  config.energy.vector_element_pj = energy["vector_element_pj"].nonNegativeNumber(kMaxEnergyPj);
  config.energy.vector_transcendental_pj =
      energy.contains("vector_transcendental_pj")
          ? energy["vector_transcendental_pj"].nonNegativeNumber(kMaxEnergyPj)
          : config.energy.vector_element_pj;
  config.energy.dram_byte_pj = energy["dram_byte_pj"].nonNegativeNumber(kMaxEnergyPj);
  config.energy.static_mw = energy["static_mw"].nonNegativeNumber(kMaxStaticMw);
  return config;
}

HardwareConfig HardwareConfig::fromText(std::string_view text, const std::string &origin) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception &error) { // out_of_range too: a number like 1e999
    throw Error(fmt::format("{}: invalid JSON: {}", origin, detail::jsonErrorText(error.what())));
  }
  return fromJson(json, origin);
}

HardwareConfig HardwareConfig::fromFile(const std::string &path) {
  std::vector<uint8_t> bytes = detail::readFile(path, "config");
  return fromText(std::string_view(reinterpret_cast<const char *>(bytes.data()), bytes.size()),
                  path);
}

void HardwareConfig::validate(const std::string &origin) const {
  // toJson() writes whole KiB; anything else would not survive the round trip.
  for (const auto &[memory, key] :
       {std::pair{&scratchpad, "scratchpad"}, std::pair{&accumulator, "accumulator"}})
    if (memory->bytes % 1024 != 0)
      throw Error(fmt::format("{}: {}.kib: must be a whole number of KiB (got {} bytes)", origin,
                              key, memory->bytes));
  fromJson(toJson(), origin);
}

nlohmann::json HardwareConfig::toJson() const {
  return {
      {"name", name},
      {"clock_ghz", clock_ghz},
      {"array",
       {{"rows", array.rows}, {"cols", array.cols}, {"dtype", isa::dtypeName(array.dtype)}}},
      {"scratchpad", memoryJson(scratchpad)},
      {"accumulator", memoryJson(accumulator)},
      {"vector",
       {{"lanes", vector.lanes},
        {"pipeline_latency", vector.pipeline_latency},
        {"transcendental_cycles_per_group", vector.transcendental_cycles_per_group}}},
      {"dram",
       {{"bytes_per_cycle", dram.bytes_per_cycle},
        {"latency_cycles", dram.latency_cycles},
        {"max_outstanding", dram.max_outstanding}}},
      {"energy",
       {{"mac_pj", energy.mac_pj},
        {"scratchpad_word_pj", energy.scratchpad_word_pj},
        {"accumulator_word_pj", energy.accumulator_word_pj},
        {"vector_element_pj", energy.vector_element_pj},
        {"vector_transcendental_pj", energy.vector_transcendental_pj},
        {"dram_byte_pj", energy.dram_byte_pj},
        {"static_mw", energy.static_mw}}},
  };
}

bool HardwareConfig::operator==(const HardwareConfig &other) const {
  auto sameMemory = [](const Memory &a, const Memory &b) {
    return a.bytes == b.bytes && a.banks == b.banks;
  };
  return name == other.name && array.rows == other.array.rows && array.cols == other.array.cols &&
         array.dtype == other.array.dtype && sameMemory(scratchpad, other.scratchpad) &&
         sameMemory(accumulator, other.accumulator) && vector.lanes == other.vector.lanes &&
         vector.pipeline_latency == other.vector.pipeline_latency &&
         vector.transcendental_cycles_per_group == other.vector.transcendental_cycles_per_group &&
         dram.bytes_per_cycle == other.dram.bytes_per_cycle &&
         dram.latency_cycles == other.dram.latency_cycles &&
         dram.max_outstanding == other.dram.max_outstanding && clock_ghz == other.clock_ghz &&
         energy.mac_pj == other.energy.mac_pj &&
         energy.scratchpad_word_pj == other.energy.scratchpad_word_pj &&
         energy.accumulator_word_pj == other.energy.accumulator_word_pj &&
         energy.vector_element_pj == other.energy.vector_element_pj &&
         energy.vector_transcendental_pj == other.energy.vector_transcendental_pj &&
         energy.dram_byte_pj == other.energy.dram_byte_pj &&
         energy.static_mw == other.energy.static_mw;
}

std::vector<std::string> presetNames() {
  std::vector<std::string> names;
  for (const detail::Preset &preset : detail::kPresets)
    names.emplace_back(preset.name);
  return names;
}

HardwareConfig HardwareConfig::load(const std::string &presetOrPath) {
  bool isFile =
      presetOrPath.find('/') != std::string::npos ||
      (presetOrPath.size() > 5 && presetOrPath.substr(presetOrPath.size() - 5) == ".json");
  if (isFile)
    return fromFile(presetOrPath);
  for (const detail::Preset &preset : detail::kPresets)
    if (preset.name == presetOrPath)
      return fromText(preset.json, presetOrPath);
  throw Error(fmt::format("no preset config named '{}' (presets: {}; or give a .json file)",
                          presetOrPath, fmt::join(presetNames(), ", ")));
}

} // namespace tpu
