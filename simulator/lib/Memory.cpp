#include "Memory.h"

#include "tpu/isa/Error.h"
#include "tpu/isa/LittleEndian.h"
#include "tpu/isa/Numerics.h"

#include <fmt/format.h>

#include <cstring>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "Dram copies f32/i32 rows as host words");

namespace tpu::sim {

std::vector<uint32_t> WordMemory::read(const Region &region) const {
  std::vector<uint32_t> words;
  words.reserve(region.elements());
  for (uint64_t r = 0; r < region.rows; ++r)
    for (uint64_t c = 0; c < region.cols; ++c)
      words.push_back(read(region.at(r, c)));
  return words;
}

void WordMemory::write(const Region &region, const std::vector<uint32_t> &words) {
  for (uint64_t r = 0; r < region.rows; ++r)
    for (uint64_t c = 0; c < region.cols; ++c)
      write(region.at(r, c), words[r * region.cols + c]);
}

void Dram::record(uint64_t address, uint32_t word) {
  if (!wide_)
    return;
  if (recorded_.empty()) {
    recordedWords_.resize(bytes_.size() / 2);
    recorded_.resize(bytes_.size() / 2);
  }
  recordedWords_[address / 2] = word;
  recorded_[address / 2] = true;
}

void Dram::forget(uint64_t address, uint64_t bytes) {
  if (recorded_.empty())
    return;
  for (uint64_t slot = address / 2; slot < (address + bytes + 1) / 2; ++slot)
    recorded_[slot] = false;
}

uint32_t Dram::load(uint64_t address, isa::DType dtype) const {
  const uint8_t *bytes = bytes_.data() + address;
  switch (dtype) {
  case isa::DType::F32:
  case isa::DType::I32:
    return static_cast<uint32_t>(readLittleEndian(bytes, 4));
  case isa::DType::BF16:
    if (!recorded_.empty() && recorded_[address / 2])
      return recordedWords_[address / 2];
    return static_cast<uint32_t>(readLittleEndian(bytes, 2)) << 16;
  case isa::DType::I8:
    return static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>(bytes[0])));
  }
  throw Error(fmt::format("invalid dtype {}", static_cast<unsigned>(dtype)));
}

void Dram::store(uint64_t address, isa::DType dtype, uint32_t word) {
  uint8_t *bytes = bytes_.data() + address;
  if (dtype == isa::DType::BF16)
    record(address, word);
  else
    forget(address, isa::dtypeBytes(dtype));
  switch (dtype) {
  case isa::DType::F32:
  case isa::DType::I32:
    return writeLittleEndian(bytes, 4, word);
  case isa::DType::BF16:
    return writeLittleEndian(bytes, 2, floatToBF16(bitsFloat(word)));
  case isa::DType::I8:
    return writeLittleEndian(bytes, 1,
                             static_cast<uint32_t>(saturateInt8(static_cast<int32_t>(word))));
  }
  throw Error(fmt::format("invalid dtype {}", static_cast<unsigned>(dtype)));
}

std::vector<uint32_t> Dram::load(const Region &region, isa::DType dtype) const {
  unsigned elementBytes = isa::dtypeBytes(dtype);
  std::vector<uint32_t> words(region.elements());
  for (uint64_t r = 0; r < region.rows; ++r) {
    uint64_t address = region.address + region.offset(r, 0) * elementBytes;
    uint32_t *row = words.data() + r * region.cols;
    if (dtype == isa::DType::F32 || dtype == isa::DType::I32) {
      std::memcpy(row, bytes_.data() + address, region.cols * 4); // the host is little-endian
      continue;
    }
    for (uint64_t c = 0; c < region.cols; ++c)
      row[c] = load(address + c * elementBytes, dtype);
  }
  return words;
}

void Dram::store(const Region &region, isa::DType dtype, const std::vector<uint32_t> &words) {
  unsigned elementBytes = isa::dtypeBytes(dtype);
  for (uint64_t r = 0; r < region.rows; ++r) {
    uint64_t address = region.address + region.offset(r, 0) * elementBytes;
    const uint32_t *row = words.data() + r * region.cols;
    if (dtype == isa::DType::F32 || dtype == isa::DType::I32) {
      std::memcpy(bytes_.data() + address, row, region.cols * 4);
      forget(address, region.cols * 4);
      continue;
    }
    for (uint64_t c = 0; c < region.cols; ++c)
      store(address + c * elementBytes, dtype, row[c]);
  }
}

} // namespace tpu::sim
