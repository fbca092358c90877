// The memories of the machine: on-chip word memories (scratchpad,
// accumulator) and the byte-addressed DRAM. They trust their callers: every
// access pattern has been checked against the machine (checkFitsMachine in
// Legality.h) before an instruction touches any element.
#pragma once

#include "tpu/isa/Isa.h"

#include <cstdint>
#include <vector>

namespace tpu::sim {

// rows x cols elements; row r starts `stride` elements after row r-1.
struct Region {
  uint64_t address = 0;
  uint64_t rows = 0;
  uint64_t cols = 0;
  uint64_t stride = 0;

  uint64_t offset(uint64_t row, uint64_t col) const { return row * stride + col; }
  uint64_t at(uint64_t row, uint64_t col) const { return address + offset(row, col); }
  uint64_t elements() const { return rows * cols; }
};

// A memory of 32-bit words: fp32 bits or int32 values.
class WordMemory {
public:
  explicit WordMemory(uint64_t words) : words_(words, 0) {}

  uint32_t read(uint64_t address) const { return words_[address]; }
  void write(uint64_t address, uint32_t value) { words_[address] = value; }
  // The region's words, row-major.
  std::vector<uint32_t> read(const Region &region) const;
  void write(const Region &region, const std::vector<uint32_t> &words);

private:
  std::vector<uint32_t> words_;
};

// Little-endian DRAM over the caller's image. A DRAM Region has a byte
// address but counts columns and stride in elements of `elementBytes` bytes.
//
// A `wide` DRAM (the output check's reference run, SimOptions::round_operands
// = false) keeps the fp32 value of each bf16 element beside the image: a bf16
// store writes the rounded bits and records the word it narrowed, a bf16 load
// returns the recorded word where there is one (else it widens the image's
// bits), and any other store over a recorded element forgets it. So that run
// computes in fp32 throughout, whatever the program stores as bf16
// (docs/numerics.md).
class Dram {
public:
  Dram(std::vector<uint8_t> &bytes, bool wide) : bytes_(bytes), wide_(wide) {}
  // A wide DRAM's record for the bf16 element at `address` (a constant's fp32
  // value, Bundle::reference_constants); ignored by one that is not wide.
  void record(uint64_t address, uint32_t word);

  // Reads one element of `dtype` at `address` and widens it to an on-chip word.
  uint32_t load(uint64_t address, isa::DType dtype) const;
  // Narrows an on-chip word to `dtype` and writes it at `address`.
  void store(uint64_t address, isa::DType dtype, uint32_t word);
  // The same for every element of a region, row-major.
  std::vector<uint32_t> load(const Region &region, isa::DType dtype) const;
  void store(const Region &region, isa::DType dtype, const std::vector<uint32_t> &words);

private:
  // Forgets the records of the bf16 elements that [address, address + bytes)
  // touches.
  void forget(uint64_t address, uint64_t bytes);

  std::vector<uint8_t> &bytes_;
  const bool wide_;
  // Per 2-byte slot of the image, allocated at the first record.
  std::vector<uint32_t> recordedWords_;
  std::vector<bool> recorded_;
};

} // namespace tpu::sim
