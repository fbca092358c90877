// Number formats shared by the compiler, the simulator and the runtime, so
// that all three round exactly alike.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace tpu {

inline uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

inline float bitsFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// fp32 -> bf16 bits, round to nearest, ties to even; NaN stays a quiet NaN.
inline uint16_t floatToBF16(float value) {
  uint32_t bits = floatBits(value);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  uint32_t roundingBias = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + roundingBias) >> 16);
}

inline float bf16ToFloat(uint16_t bits) { return bitsFloat(static_cast<uint32_t>(bits) << 16); }

inline float roundToBF16(float value) { return bf16ToFloat(floatToBF16(value)); }

inline int32_t saturateInt8(int32_t value) {
  return value < -128 ? -128 : (value > 127 ? 127 : value);
}

} // namespace tpu
