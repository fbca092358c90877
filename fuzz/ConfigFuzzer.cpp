// The hardware config loader (tpu::HardwareConfig::fromText, what --config
// FILE reads): any text either loads or is rejected with tpu::Error; a config
// it accepts validates and survives the JSON round trip.
#include "FuzzHarness.h"

#include "tpu/isa/HardwareConfig.h"

#include <nlohmann/json.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tpu::fuzz::rejectOnlyWithError([&] {
    tpu::HardwareConfig config =
        tpu::HardwareConfig::fromText(tpu::fuzz::asText(data, size), "fuzz");
    config.validate("fuzz");
    tpu::fuzz::expect(tpu::HardwareConfig::fromJson(config.toJson(), "fuzz") == config,
                      "fromJson(config.toJson()) == config");
  });
  return 0;
}
