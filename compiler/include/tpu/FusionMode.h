// The fusion modes, named once for tpuc, the pipelines and the fusion pass.
// No MLIR types here, so that the tools can include it.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace tpu {

enum class FusionMode {
  None,     // every op's result goes through DRAM
  Epilogue, // matmul epilogues (bias, residual, activation) in the accumulators
  Full,     // also groups of row-local ops (elementwise, row reductions)
};

constexpr std::array<std::string_view, 3> kFusionModeNames = {"none", "epilogue", "full"};

inline std::string_view fusionModeName(FusionMode mode) {
  return kFusionModeNames[static_cast<size_t>(mode)];
}

inline std::optional<FusionMode> parseFusionMode(std::string_view name) {
  for (size_t i = 0; i < kFusionModeNames.size(); ++i)
    if (kFusionModeNames[i] == name)
      return static_cast<FusionMode>(i);
  return std::nullopt;
}

} // namespace tpu
