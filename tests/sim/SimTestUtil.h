// Helpers for building small programs and DRAM images in simulator tests.
#pragma once

#include "tpu/isa/Bundle.h"
#include "tpu/isa/Error.h"
#include "tpu/isa/Numerics.h"
#include "tpu/sim/Simulator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace tpu::sim::test {

using isa::DType;
using isa::Field;
using isa::Instruction;
using isa::Opcode;
using isa::Queue;
using isa::Space;

// A 4 x 4 array with 256-word memories and round timing numbers.
inline HardwareConfig smallConfig(DType arrayType = DType::BF16) {
  HardwareConfig config;
  config.name = "test-4x4";
  config.array.rows = 4;
  config.array.cols = 4;
  config.array.dtype = arrayType;
  config.scratchpad = {1024, 1};
  config.accumulator = {1024, 1};
  config.vector.lanes = 4;
  config.vector.pipeline_latency = 2;
  config.dram.bytes_per_cycle = 8;
  config.dram.latency_cycles = 10;
  config.dram.max_outstanding = 1;
  config.clock_ghz = 1.0;
  // mac, scratchpad word, accumulator word, vector element, transcendental
  // element (as an add, like a config that leaves it out), DRAM byte, static.
  config.energy = {1.0, 2.0, 3.0, 0.5, 0.5, 10.0, 100.0};
  return config;
}

inline Instruction dmaLoad(uint64_t dramAddr, uint64_t dramStride, Space space, uint64_t sramAddr,
                           uint64_t sramStride, uint64_t rows, uint64_t cols, DType dtype) {
  return isa::makeInstruction(Opcode::DmaLoad, {{Field::DramAddr, dramAddr},
                                                {Field::DramStride, dramStride},
                                                {Field::Space, static_cast<uint64_t>(space)},
                                                {Field::SramAddr, sramAddr},
                                                {Field::SramStride, sramStride},
                                                {Field::Rows, rows},
                                                {Field::Cols, cols},
                                                {Field::DType, static_cast<uint64_t>(dtype)}});
}

inline Instruction dmaStore(uint64_t dramAddr, uint64_t dramStride, Space space, uint64_t sramAddr,
                            uint64_t sramStride, uint64_t rows, uint64_t cols, DType dtype) {
  Instruction store = dmaLoad(dramAddr, dramStride, space, sramAddr, sramStride, rows, cols, dtype);
  store.opcode = Opcode::DmaStore;
  return store;
}

inline Instruction transposed(Instruction transfer) { return transfer.set(Field::Transpose, 1); }

// dma.gather of `rows` rows of a bound x cols table, indices at `indexAddr`.
inline Instruction gather(uint64_t tableAddr, uint64_t sramAddr, uint64_t indexAddr, uint64_t rows,
                          uint64_t cols, DType dtype, uint64_t bound) {
  return isa::makeInstruction(Opcode::DmaGather, {{Field::DramAddr, tableAddr},
                                                  {Field::SramAddr, sramAddr},
                                                  {Field::SrcAddr, indexAddr},
                                                  {Field::Rows, rows},
                                                  {Field::Cols, cols},
                                                  {Field::DType, static_cast<uint64_t>(dtype)},
                                                  {Field::Bound, bound}});
}

inline Instruction loadWeights(uint64_t srcAddr, uint64_t srcStride, uint64_t rows, uint64_t cols) {
  return isa::makeInstruction(Opcode::LoadWeights, {{Field::SrcAddr, srcAddr},
                                                    {Field::SrcStride, srcStride},
                                                    {Field::Rows, rows},
                                                    {Field::Cols, cols}});
}

struct MatMulFields {
  uint64_t srcAddr = 0, srcStride = 0, dstAddr = 0, dstStride = 0, rows = 0, cols = 0;
  DType dtype = DType::BF16;
  bool accumulate = false;
  bool flip = false;
};

inline Instruction matMul(const MatMulFields &f) {
  return isa::makeInstruction(Opcode::MatMul, {{Field::SrcAddr, f.srcAddr},
                                               {Field::SrcStride, f.srcStride},
                                               {Field::DstAddr, f.dstAddr},
                                               {Field::DstStride, f.dstStride},
                                               {Field::Rows, f.rows},
                                               {Field::Cols, f.cols},
                                               {Field::DType, static_cast<uint64_t>(f.dtype)},
                                               {Field::Accumulate, f.accumulate},
                                               {Field::Flip, f.flip}});
}

struct Operand {
  Space space = Space::Scratchpad;
  uint64_t addr = 0;
};

inline Instruction vectorUnary(Opcode opcode, Operand dst, Operand src, uint64_t rows,
                               uint64_t cols) {
  return isa::makeInstruction(opcode, {{Field::DstSpace, static_cast<uint64_t>(dst.space)},
                                       {Field::DstAddr, dst.addr},
                                       {Field::SrcSpace, static_cast<uint64_t>(src.space)},
                                       {Field::SrcAddr, src.addr},
                                       {Field::Rows, rows},
                                       {Field::Cols, cols}});
}

inline Instruction vectorBinary(Opcode opcode, Operand dst, Operand src, Operand src2,
                                isa::Broadcast broadcast, uint64_t rows, uint64_t cols) {
  return isa::makeInstruction(opcode, {{Field::DstSpace, static_cast<uint64_t>(dst.space)},
                                       {Field::DstAddr, dst.addr},
                                       {Field::SrcSpace, static_cast<uint64_t>(src.space)},
                                       {Field::SrcAddr, src.addr},
                                       {Field::Src2Space, static_cast<uint64_t>(src2.space)},
                                       {Field::Src2Addr, src2.addr},
                                       {Field::Broadcast, static_cast<uint64_t>(broadcast)},
                                       {Field::Rows, rows},
                                       {Field::Cols, cols}});
}

inline Instruction push(Queue from, Queue to) {
  return isa::makeInstruction(Opcode::SyncPush, {{Field::From, static_cast<uint64_t>(from)},
                                                 {Field::To, static_cast<uint64_t>(to)}});
}

inline Instruction pop(Queue from, Queue to) {
  return isa::makeInstruction(Opcode::SyncPop, {{Field::From, static_cast<uint64_t>(from)},
                                                {Field::To, static_cast<uint64_t>(to)}});
}

inline Instruction halt() { return isa::makeInstruction(Opcode::Halt, {}); }

inline Bundle makeBundle(std::vector<Instruction> program, uint64_t dramBytes,
                         const HardwareConfig &config = smallConfig()) {
  Bundle bundle;
  bundle.config = config;
  bundle.program = std::move(program);
  bundle.dram_bytes = dramBytes;
  return bundle;
}

// The usual shape of a test program: loads, then compute once every load
// has completed, then stores once the compute has; ends with halt.
inline std::vector<Instruction> loadComputeStore(const std::vector<Instruction> &loads,
                                                 const std::vector<Instruction> &compute,
                                                 const std::vector<Instruction> &stores) {
  std::vector<Instruction> program = loads;
  program.push_back(push(Queue::Load, Queue::Compute));
  program.push_back(pop(Queue::Load, Queue::Compute));
  program.insert(program.end(), compute.begin(), compute.end());
  program.push_back(push(Queue::Compute, Queue::Store));
  program.push_back(pop(Queue::Compute, Queue::Store));
  program.insert(program.end(), stores.begin(), stores.end());
  program.push_back(halt());
  return program;
}

inline void putWord(std::vector<uint8_t> &dram, uint64_t address, uint32_t word) {
  std::memcpy(dram.data() + address, &word, 4);
}

inline uint32_t getWord(const std::vector<uint8_t> &dram, uint64_t address) {
  uint32_t word;
  std::memcpy(&word, dram.data() + address, 4);
  return word;
}

inline void putFloats(std::vector<uint8_t> &dram, uint64_t address,
                      const std::vector<float> &values) {
  for (size_t i = 0; i < values.size(); ++i)
    putWord(dram, address + 4 * i, floatBits(values[i]));
}

inline std::vector<float> getFloats(const std::vector<uint8_t> &dram, uint64_t address,
                                    size_t count) {
  std::vector<float> values;
  for (size_t i = 0; i < count; ++i)
    values.push_back(bitsFloat(getWord(dram, address + 4 * i)));
  return values;
}

// Deterministic values in [-2, 2) with all mantissa bits in use, so that bf16
// rounding matters.
inline std::vector<float> testValues(size_t count, uint32_t seed) {
  std::vector<float> values;
  uint32_t state = seed * 2654435761u + 1;
  for (size_t i = 0; i < count; ++i) {
    state = state * 1664525u + 1013904223u;
    values.push_back(static_cast<float>(state >> 8) / static_cast<float>(1u << 22) - 2.0f);
  }
  return values;
}

// bf16 round-to-nearest-even written independently of tpu::roundToBF16: keep
// 8 significant bits of the value, rounding in double arithmetic.
inline float referenceBF16(float value) {
  if (value == 0 || std::isnan(value) || std::isinf(value))
    return value;
  int exponent;
  double mantissa = std::frexp(static_cast<double>(value), &exponent); // [0.5, 1)
  return static_cast<float>(std::ldexp(std::nearbyint(std::ldexp(mantissa, 8)), exponent - 8));
}

// C = A (m x k) * W (k x n): bf16 operands, fp32 sum in order from +0.
inline std::vector<float> referenceMatMulBF16(const std::vector<float> &a,
                                              const std::vector<float> &w, size_t m, size_t k,
                                              size_t n) {
  std::vector<float> c(m * n);
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (size_t r = 0; r < k; ++r)
        sum += referenceBF16(a[i * k + r]) * referenceBF16(w[r * n + j]);
      c[i * n + j] = sum;
    }
  return c;
}

// Statistics that must not depend on the mode.
inline void expectSameStats(const SimStats &cycle, const SimStats &fast) {
  EXPECT_EQ(cycle.total_cycles, fast.total_cycles);
  EXPECT_EQ(cycle.macs, fast.macs);
  EXPECT_EQ(cycle.dram_bytes_read, fast.dram_bytes_read);
  EXPECT_EQ(cycle.dram_bytes_written, fast.dram_bytes_written);
  EXPECT_EQ(cycle.scratchpad.reads, fast.scratchpad.reads);
  EXPECT_EQ(cycle.accumulator.writes, fast.accumulator.writes);
  EXPECT_EQ(cycle.vector_elements, fast.vector_elements);
  EXPECT_EQ(cycle.vector_transcendental_elements, fast.vector_transcendental_elements);
  for (unsigned c = 0; c < kNumComponents; ++c) {
    EXPECT_EQ(cycle.components[c].busy, fast.components[c].busy) << componentName(Component(c));
    EXPECT_EQ(cycle.components[c].stalled, fast.components[c].stalled)
        << componentName(Component(c));
    EXPECT_EQ(cycle.components[c].instructions, fast.components[c].instructions);
  }
}

// Every simulator test runs its program in both modes, which must leave the
// same DRAM, count the same cycles and fail with the same error; returns the
// cycle mode's statistics.
inline SimStats simulate(const Bundle &bundle, std::vector<uint8_t> &dram) {
  std::vector<uint8_t> fastDram = dram;
  SimStats stats[2];
  std::string errors[2];
  std::vector<uint8_t> *images[2] = {&dram, &fastDram};
  for (Mode mode : {Mode::Cycle, Mode::Fast}) {
    unsigned index = mode == Mode::Cycle ? 0 : 1;
    SimOptions options;
    options.mode = mode;
    try {
      stats[index] = tpu::sim::simulate(bundle, *images[index], options);
    } catch (const Error &error) {
      errors[index] = error.what();
    }
  }
  EXPECT_EQ(errors[0], errors[1]) << "cycle and fast mode fail differently";
  if (!errors[0].empty())
    throw Error(errors[0]);
  EXPECT_TRUE(dram == fastDram) << "cycle and fast mode leave different DRAM";
  expectSameStats(stats[0], stats[1]);
  return stats[0];
}

} // namespace tpu::sim::test
