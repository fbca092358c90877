#include "tpu/isa/HardwareConfig.h"
#include "tpu/isa/Error.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>

using ::testing::HasSubstr;
using tpu::HardwareConfig;
using json = nlohmann::json;

namespace {

const char *const kPresets[] = {"tpu-8x8", "tpu-32x32", "tpu-128x128"};

json presetJson() {
  std::ifstream file(TPU_SOURCE_DIR "/configs/tpu-8x8.json");
  return json::parse(file);
}

std::string fromJsonError(const json &config) {
  try {
    HardwareConfig::fromJson(config, "test.json");
  } catch (const tpu::Error &error) {
    return error.what();
  }
  ADD_FAILURE() << "accepted " << config.dump();
  return {};
}

using KeyVisitor = std::function<void(const std::string &path, const json::json_pointer &pointer)>;

// Calls visit(dotted path, JSON pointer) for every key, objects and leaves.
void forEachKey(const json &object, const KeyVisitor &visit, const std::string &path = "",
                const json::json_pointer &pointer = json::json_pointer()) {
  for (const auto &[key, value] : object.items()) {
    std::string keyPath = path.empty() ? key : path + "." + key;
    visit(keyPath, pointer / key);
    if (value.is_object())
      forEachKey(value, visit, keyPath, pointer / key);
  }
}

std::string writeTempFile(const std::string &name, const std::string &text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

} // namespace

TEST(HardwareConfig, PresetsLoadByNameAndRoundTrip) {
  EXPECT_THAT(tpu::presetNames(), ::testing::UnorderedElementsAreArray(kPresets));
  for (const char *preset : kPresets) {
    HardwareConfig config = HardwareConfig::load(preset);
    EXPECT_EQ(config.name, preset);
    EXPECT_EQ(config.array.rows, config.array.cols);
    EXPECT_EQ(config.array.dtype, tpu::isa::DType::BF16);
    EXPECT_EQ(HardwareConfig::fromJson(config.toJson(), "round trip"), config);
    EXPECT_NO_THROW(config.validate(preset));
    // The built-in copy is the file in configs/.
    EXPECT_EQ(HardwareConfig::load(fmt::format("{}/configs/{}.json", TPU_SOURCE_DIR, preset)),
              config);
  }
  HardwareConfig small = HardwareConfig::load("tpu-8x8");
  EXPECT_EQ(small.scratchpad.bytes, 64u * 1024);
  EXPECT_EQ(small.scratchpad.words(), 16u * 1024);
  EXPECT_EQ(small.accumulator.banks, 2u);
  EXPECT_EQ(HardwareConfig::load(tpu::kDefaultPreset).name, "tpu-32x32");
}

TEST(HardwareConfig, UnknownPresetNamesThePresets) {
  try {
    HardwareConfig::load("tpu-9x9");
    ADD_FAILURE() << "accepted an unknown preset";
  } catch (const tpu::Error &error) {
    EXPECT_STREQ(error.what(), "no preset config named 'tpu-9x9' (presets: tpu-128x128, "
                               "tpu-32x32, tpu-8x8; or give a .json file)");
  }
  // A name ending in .json is a file, never a preset.
  EXPECT_THROW(HardwareConfig::load("tpu-8x8.json"), tpu::Error);
}

namespace {

// The keys a config may leave out (docs/config.md).
const char *const kOptionalKeys[] = {"vector.transcendental_cycles_per_group",
                                     "energy.vector_transcendental_pj"};

bool isOptional(const std::string &path) {
  return std::find(std::begin(kOptionalKeys), std::end(kOptionalKeys), path) !=
         std::end(kOptionalKeys);
}

} // namespace

TEST(HardwareConfig, RejectsEachMissingKey) {
  json preset = presetJson();
  forEachKey(preset, [&](const std::string &path, const json::json_pointer &pointer) {
    if (isOptional(path))
      return;
    json config = preset;
    config[pointer.parent_pointer()].erase(pointer.back());
    EXPECT_EQ(fromJsonError(config), "test.json: " + path + ": missing");
  });
}

TEST(HardwareConfig, LeftOutTranscendentalFiguresChargeAnAdd) {
  json config = presetJson();
  config["vector"].erase("transcendental_cycles_per_group");
  config["energy"].erase("vector_transcendental_pj");
  config["energy"]["vector_element_pj"] = 2.5;
  HardwareConfig parsed = HardwareConfig::fromJson(config, "older.json");
  EXPECT_EQ(parsed.vector.transcendental_cycles_per_group, 1u);
  EXPECT_EQ(parsed.energy.vector_transcendental_pj, 2.5);
  // Written out, the defaults become explicit and read back the same.
  json written = parsed.toJson();
  EXPECT_EQ(written["vector"]["transcendental_cycles_per_group"], 1);
  EXPECT_EQ(written["energy"]["vector_transcendental_pj"], 2.5);
  EXPECT_EQ(HardwareConfig::fromJson(written, "round trip"), parsed);
  // Each key also stands alone.
  config["vector"]["transcendental_cycles_per_group"] = 6;
  parsed = HardwareConfig::fromJson(config, "cycles only");
  EXPECT_EQ(parsed.vector.transcendental_cycles_per_group, 6u);
  EXPECT_EQ(parsed.energy.vector_transcendental_pj, 2.5);
  config["vector"].erase("transcendental_cycles_per_group");
  config["energy"]["vector_transcendental_pj"] = 0;
  parsed = HardwareConfig::fromJson(config, "energy only");
  EXPECT_EQ(parsed.vector.transcendental_cycles_per_group, 1u);
  EXPECT_EQ(parsed.energy.vector_transcendental_pj, 0.0);
}

TEST(HardwareConfig, RejectsEachWronglyTypedValue) {
  json preset = presetJson();
  forEachKey(preset, [&](const std::string &path, const json::json_pointer &pointer) {
    json config = preset;
    config[pointer] = preset[pointer].is_string() ? json(7) : json("7");
    EXPECT_THAT(fromJsonError(config), HasSubstr("test.json: " + path + ": must be"));
  });
}

TEST(HardwareConfig, RejectsUnknownKeysAtEveryLevel) {
  json preset = presetJson();
  json withExtra = preset;
  withExtra["colour"] = "blue";
  EXPECT_EQ(fromJsonError(withExtra), "test.json: colour: unknown key");
  forEachKey(preset, [&](const std::string &path, const json::json_pointer &pointer) {
    if (!preset[pointer].is_object())
      return;
    json config = preset;
    config[pointer]["colour"] = "blue";
    EXPECT_EQ(fromJsonError(config), "test.json: " + path + ".colour: unknown key");
  });
}

TEST(HardwareConfig, RejectsOutOfRangeValues) {
  struct Mutation {
    const char *pointer;
    json value;
    const char *expected;
  };
  const Mutation mutations[] = {
      {"/clock_ghz", 0, "clock_ghz: must be a number in (0, 10] (got 0)"},
      {"/clock_ghz", 10.5, "clock_ghz: must be a number in (0, 10] (got 10.5)"},
      {"/clock_ghz", -1, "clock_ghz: must be a number in (0, 10]"},
      {"/array/rows", 0, "array.rows: must be an integer in [1, 2048] (got 0)"},
      {"/array/rows", 2049, "array.rows: must be an integer in [1, 2048] (got 2049)"},
      {"/array/cols", -8, "array.cols: must be an integer in [1, 2048] (got -8)"},
      {"/array/cols", 8.5, "array.cols: must be an integer in [1, 2048] (got 8.5)"},
      {"/array/dtype", "f32", "array.dtype: must be \"bf16\" or \"i8\" (got \"f32\")"},
      {"/array/dtype", "int8", "array.dtype: must be \"bf16\" or \"i8\""},
      {"/scratchpad/kib", 0, "scratchpad.kib: must be an integer in [1, 16384] (got 0)"},
      {"/scratchpad/kib", 16385, "scratchpad.kib: must be an integer in [1, 16384] (got 16385)"},
      {"/accumulator/kib", uint64_t{1} << 60, "accumulator.kib: must be an integer in [1, 16384]"},
      {"/scratchpad/banks", 3, "scratchpad.banks: must be a power of two in [1, 64] (got 3)"},
      {"/accumulator/banks", 48, "accumulator.banks: must be a power of two in [1, 64] (got 48)"},
      {"/accumulator/banks", 0, "accumulator.banks: must be an integer in [1, 64] (got 0)"},
      {"/accumulator/banks", 128, "accumulator.banks: must be an integer in [1, 64] (got 128)"},
      {"/vector/lanes", 0, "vector.lanes: must be an integer in [1, 4096] (got 0)"},
      {"/vector/lanes", 4097, "vector.lanes: must be an integer in [1, 4096] (got 4097)"},
      {"/vector/pipeline_latency", 1001,
       "vector.pipeline_latency: must be an integer in [0, 1000]"},
      {"/vector/transcendental_cycles_per_group", 0,
       "vector.transcendental_cycles_per_group: must be an integer in [1, 1000] (got 0)"},
      {"/vector/transcendental_cycles_per_group", 1001,
       "vector.transcendental_cycles_per_group: must be an integer in [1, 1000] (got 1001)"},
      {"/vector/transcendental_cycles_per_group", 2.5,
       "vector.transcendental_cycles_per_group: must be an integer in [1, 1000] (got 2.5)"},
      {"/vector/transcendental_cycles_per_group", nullptr,
       "vector.transcendental_cycles_per_group: must be an integer in [1, 1000] (got null)"},
      {"/dram/bytes_per_cycle", 0, "dram.bytes_per_cycle: must be a number in (0, 4096] (got 0)"},
      {"/dram/bytes_per_cycle", 4097, "dram.bytes_per_cycle: must be a number in (0, 4096]"},
      {"/dram/latency_cycles", 100001, "dram.latency_cycles: must be an integer in [0, 100000]"},
      {"/dram/max_outstanding", 0, "dram.max_outstanding: must be an integer in [1, 1024]"},
      {"/dram/max_outstanding", 1025, "dram.max_outstanding: must be an integer in [1, 1024]"},
      {"/energy/mac_pj", -1, "energy.mac_pj: must be a number in [0, 1000000] (got -1)"},
      {"/energy/vector_transcendental_pj", -0.5,
       "energy.vector_transcendental_pj: must be a number in [0, 1000000] (got -0.5)"},
      {"/energy/vector_transcendental_pj", 1e7,
       "energy.vector_transcendental_pj: must be a number in [0, 1000000] (got 10000000.0)"},
      {"/energy/dram_byte_pj", "x", "energy.dram_byte_pj: must be a number in [0, 1000000]"},
      {"/energy/static_mw", 1e7, "energy.static_mw: must be a number in [0, 1000000]"},
      {"/energy/sram_pj", 1, "energy.sram_pj: unknown key"},
  };
  json preset = presetJson();
  for (const Mutation &mutation : mutations) {
    json config = preset;
    config[json::json_pointer(mutation.pointer)] = mutation.value;
    EXPECT_THAT(fromJsonError(config), HasSubstr(std::string("test.json: ") + mutation.expected));
  }
  EXPECT_EQ(fromJsonError(json::array()), "test.json: must be an object (got [])");
}

TEST(HardwareConfig, AcceptsTheRangeLimits) {
  json config = presetJson();
  config["clock_ghz"] = 10;
  config["array"] = {{"rows", 2048}, {"cols", 1}, {"dtype", "i8"}};
  config["scratchpad"] = {{"kib", 16384}, {"banks", 64}};
  config["accumulator"] = {{"kib", 1}, {"banks", 1}};
  config["vector"] = {
      {"lanes", 4096}, {"pipeline_latency", 0}, {"transcendental_cycles_per_group", 1000}};
  config["dram"] = {{"bytes_per_cycle", 0.5}, {"latency_cycles", 0}, {"max_outstanding", 1024}};
  config["energy"] = {{"mac_pj", 0},
                      {"scratchpad_word_pj", 1e6},
                      {"accumulator_word_pj", 0},
                      {"vector_element_pj", 0},
                      {"vector_transcendental_pj", 1e6},
                      {"dram_byte_pj", 0.25},
                      {"static_mw", 1e6}};
  HardwareConfig parsed = HardwareConfig::fromJson(config, "limits");
  EXPECT_EQ(parsed.array.dtype, tpu::isa::DType::I8);
  EXPECT_EQ(parsed.scratchpad.words(), uint64_t{1} << 22);
  EXPECT_EQ(HardwareConfig::fromJson(parsed.toJson(), "round trip"), parsed);
}

TEST(HardwareConfig, ValidateRejectsConfigsBuiltInCode) {
  HardwareConfig config = HardwareConfig::fromJson(presetJson(), "preset");
  config.scratchpad.bytes += 4;
  EXPECT_THROW(config.validate("built"), tpu::Error);
  config = HardwareConfig::fromJson(presetJson(), "preset");
  config.array.rows = 0;
  try {
    config.validate("built");
    FAIL() << "accepted rows = 0";
  } catch (const tpu::Error &error) {
    EXPECT_STREQ(error.what(), "built: array.rows: must be an integer in [1, 2048] (got 0)");
  }
  config = HardwareConfig::fromJson(presetJson(), "preset");
  config.vector.transcendental_cycles_per_group = 0;
  try {
    config.validate("built");
    FAIL() << "accepted transcendental_cycles_per_group = 0";
  } catch (const tpu::Error &error) {
    EXPECT_STREQ(error.what(), "built: vector.transcendental_cycles_per_group: must be an integer "
                               "in [1, 1000] (got 0)");
  }
}

TEST(HardwareConfig, FileErrorsNameTheFile) {
  std::string malformed = writeTempFile("malformed-config.json", "{\"name\": \"x\",\n  oops}");
  try {
    HardwareConfig::fromFile(malformed);
    FAIL() << "accepted malformed JSON";
  } catch (const tpu::Error &error) {
    std::string message = error.what();
    EXPECT_THAT(message, HasSubstr(malformed + ": invalid JSON: parse error at line 2"));
    EXPECT_EQ(message.find('\n'), std::string::npos);
  }
  std::string missing = ::testing::TempDir() + "no-such-config.json";
  try {
    HardwareConfig::fromFile(missing);
    FAIL() << "accepted a missing file";
  } catch (const tpu::Error &error) {
    EXPECT_EQ(std::string(error.what()), missing + ": cannot read config: no such file");
  }
  std::string invalid = writeTempFile("invalid-config.json", R"({"name": "x"})");
  try {
    HardwareConfig::fromFile(invalid);
    FAIL() << "accepted an incomplete config";
  } catch (const tpu::Error &error) {
    EXPECT_THAT(error.what(), HasSubstr(invalid + ": "));
  }
}

// Found by fuzz-config: nlohmann's number overflow is an out_of_range error,
// not a parse_error, and escaped as a bare JSON exception.
TEST(HardwareConfig, NumberTooLargeForADoubleIsInvalidJson) {
  json config = presetJson();
  config["clock_ghz"] = "HUGE";
  std::string text = config.dump();
  text.replace(text.find("\"HUGE\""), 6, "1e999");
  try {
    HardwareConfig::fromText(text, "huge.json");
    FAIL() << "accepted " << text;
  } catch (const tpu::Error &error) {
    EXPECT_STREQ(error.what(), "huge.json: invalid JSON: number overflow parsing '1e999'");
  }
}
