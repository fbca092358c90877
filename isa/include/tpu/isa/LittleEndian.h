// Little-endian byte order, the order of every multi-byte value in the bundle
// and in DRAM.
#pragma once

#include <cstdint>

namespace tpu {

inline uint64_t readLittleEndian(const uint8_t *bytes, unsigned count) {
  uint64_t value = 0;
  for (unsigned i = 0; i < count; ++i)
    value |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  return value;
}

inline void writeLittleEndian(uint8_t *bytes, unsigned count, uint64_t value) {
  for (unsigned i = 0; i < count; ++i)
    bytes[i] = static_cast<uint8_t>(value >> (8 * i));
}

} // namespace tpu
