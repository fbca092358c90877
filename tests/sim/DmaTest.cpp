// dma.ld / dma.st: strides, spaces and the conversion of every dtype.
#include "SimTestUtil.h"

#include "tpu/isa/LittleEndian.h"

#include <gtest/gtest.h>

namespace tpu::sim::test {
namespace {

constexpr uint32_t kSentinel = 0xdeadbeef;

TEST(Dma, F32StridedRoundTrip) {
  // 3 x 5 elements: DRAM rows 7 apart in, 8 apart out; scratchpad rows 6 apart.
  constexpr uint64_t rows = 3, cols = 5, inStride = 7, outStride = 8, out = 512;
  std::vector<uint8_t> dram(1024);
  for (uint64_t i = 0; i < 256; ++i)
    putWord(dram, 4 * i, kSentinel);
  std::vector<float> input = testValues(rows * inStride, 1);
  putFloats(dram, 0, input);
  Bundle bundle =
      makeBundle(loadComputeStore(
                     {dmaLoad(0, inStride, Space::Scratchpad, 10, 6, rows, cols, DType::F32)}, {},
                     {dmaStore(out, outStride, Space::Scratchpad, 10, 6, rows, cols, DType::F32)}),
                 dram.size());
  simulate(bundle, dram);
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t c = 0; c < outStride; ++c) {
      uint32_t got = getWord(dram, out + 4 * (r * outStride + c));
      if (c < cols)
        EXPECT_EQ(got, floatBits(input[r * inStride + c])) << r << "," << c;
      else
        EXPECT_EQ(got, kSentinel) << "gap " << r << "," << c << " was written";
    }
  }
}

TEST(Dma, Bf16LoadWidensExactlyAndStoreRoundsToNearestEven) {
  // Halfway cases: 1 + 2^-8 ties to 1 (even), 1 + 3 * 2^-8 ties up to 1 + 2^-6.
  std::vector<float> values = {1.0f + 0x1p-8f,  1.0f + 3 * 0x1p-8f,
                               -1.0f - 0x1p-8f, 3.14159265f,
                               -2.71828182f,    1e-3f,
                               65504.0f,        0.0f};
  std::vector<float> random = testValues(8, 2);
  values.insert(values.end(), random.begin(), random.end()); // 16 values, 2 x 8
  std::vector<uint8_t> dram(1024);
  putFloats(dram, 0, values);
  // Store the f32 words as bf16 at 256 (rows 10 elements apart), reload those
  // bf16 halves at 512 and store them as f32 at 768.
  Bundle bundle =
      makeBundle({dmaLoad(0, 8, Space::Scratchpad, 0, 8, 2, 8, DType::F32),
                  push(Queue::Load, Queue::Store), pop(Queue::Load, Queue::Store),
                  dmaStore(256, 10, Space::Scratchpad, 0, 8, 2, 8, DType::BF16),
                  push(Queue::Store, Queue::Load), pop(Queue::Store, Queue::Load),
                  dmaLoad(256, 10, Space::Accumulator, 100, 8, 2, 8, DType::BF16),
                  push(Queue::Load, Queue::Store), pop(Queue::Load, Queue::Store),
                  dmaStore(768, 8, Space::Accumulator, 100, 8, 2, 8, DType::F32), halt()},
                 dram.size());
  simulate(bundle, dram);
  for (size_t i = 0; i < values.size(); ++i) {
    size_t r = i / 8, c = i % 8;
    float expected = referenceBF16(values[i]);
    uint16_t half =
        static_cast<uint16_t>(dram[256 + 2 * (r * 10 + c)] | dram[256 + 2 * (r * 10 + c) + 1] << 8);
    EXPECT_EQ(half, floatBits(expected) >> 16) << "value " << values[i];
    EXPECT_EQ(getWord(dram, 768 + 4 * i), floatBits(expected)) << "value " << values[i];
  }
}

TEST(Dma, I8LoadSignExtendsAndStoreSaturates) {
  std::vector<uint8_t> dram(1024);
  const std::vector<uint8_t> bytes = {0x80, 0x7f, 0xff, 0x01, 0x00, 0xfe};
  std::copy(bytes.begin(), bytes.end(), dram.begin());
  const std::vector<int32_t> words = {300, -300, -5, 127, -128, 0x7fffffff};
  for (size_t i = 0; i < words.size(); ++i)
    putWord(dram, 64 + 4 * i, static_cast<uint32_t>(words[i]));
  // i8 bytes -> i32 words at 256; i32 words -> i8 bytes at 512 (2 rows of 3, 4 apart).
  Bundle bundle =
      makeBundle(loadComputeStore({dmaLoad(0, 3, Space::Scratchpad, 0, 3, 2, 3, DType::I8),
                                   dmaLoad(64, 3, Space::Accumulator, 0, 3, 2, 3, DType::I32)},
                                  {},
                                  {dmaStore(256, 3, Space::Scratchpad, 0, 3, 2, 3, DType::I32),
                                   dmaStore(512, 4, Space::Accumulator, 0, 3, 2, 3, DType::I8)}),
                 dram.size());
  simulate(bundle, dram);
  const std::vector<int32_t> widened = {-128, 127, -1, 1, 0, -2};
  for (size_t i = 0; i < widened.size(); ++i)
    EXPECT_EQ(static_cast<int32_t>(getWord(dram, 256 + 4 * i)), widened[i]) << i;
  const std::vector<int8_t> narrowed = {127, -128, -5, 127, -128, 127};
  for (size_t i = 0; i < narrowed.size(); ++i)
    EXPECT_EQ(static_cast<int8_t>(dram[512 + (i / 3) * 4 + i % 3]), narrowed[i]) << i;
  EXPECT_EQ(dram[512 + 3], 0) << "the gap between the rows was written";
}

TEST(Dma, I32IsRawAndCountsBytes) {
  std::vector<uint8_t> dram(1024);
  const std::vector<uint32_t> words = {0, 1, 0xffffffff, 0x80000000, 0x12345678, 42};
  for (size_t i = 0; i < words.size(); ++i)
    putWord(dram, 4 * i, words[i]);
  Bundle bundle =
      makeBundle(loadComputeStore({dmaLoad(0, 2, Space::Scratchpad, 200, 5, 3, 2, DType::I32)}, {},
                                  {dmaStore(128, 2, Space::Scratchpad, 200, 5, 3, 2, DType::I32)}),
                 dram.size());
  SimStats stats = simulate(bundle, dram);
  for (size_t i = 0; i < words.size(); ++i)
    EXPECT_EQ(getWord(dram, 128 + 4 * i), words[i]);
  EXPECT_EQ(stats.dram_bytes_read, 24u);
  EXPECT_EQ(stats.dram_bytes_written, 24u);
}

TEST(Dma, ConstantsArePlacedBeforeTheProgramRuns) {
  Bundle bundle =
      makeBundle(loadComputeStore({dmaLoad(64, 2, Space::Scratchpad, 0, 2, 1, 2, DType::I32)}, {},
                                  {dmaStore(0, 2, Space::Scratchpad, 0, 2, 1, 2, DType::I32)}),
                 128);
  bundle.constants = {1, 0, 0, 0, 2, 0, 0, 0};
  bundle.constant_address = 64;
  std::vector<uint8_t> dram(128);
  simulate(bundle, dram);
  EXPECT_EQ(getWord(dram, 0), 1u);
  EXPECT_EQ(getWord(dram, 4), 2u);
}

// The output check's reference run (round_operands = false) sees DRAM's bf16
// elements at fp32: a constant stored as bf16 reads as its reference value,
// a bf16 store keeps the word it narrows for the loads after it, and a store
// of another dtype over such an element makes it read as its bits again.
// The hardware run reads what the image holds.
TEST(Dma, TheReferenceRunCarriesBf16ElementsAtFp32) {
  std::vector<float> weights = testValues(8, 3), activations = testValues(8, 4);
  for (float value : weights)
    ASSERT_NE(referenceBF16(value), value) << "a test value that bf16 holds exactly";
  Bundle bundle = makeBundle(
      {dmaLoad(0, 8, Space::Scratchpad, 0, 8, 1, 8, DType::BF16),
       dmaLoad(64, 8, Space::Scratchpad, 8, 8, 1, 8, DType::F32), push(Queue::Load, Queue::Store),
       pop(Queue::Load, Queue::Store), dmaStore(128, 8, Space::Scratchpad, 8, 8, 1, 8, DType::BF16),
       dmaStore(256, 8, Space::Scratchpad, 0, 8, 1, 8, DType::F32), push(Queue::Store, Queue::Load),
       pop(Queue::Store, Queue::Load), dmaLoad(128, 8, Space::Accumulator, 0, 8, 1, 8, DType::BF16),
       push(Queue::Load, Queue::Store), pop(Queue::Load, Queue::Store),
       dmaStore(320, 8, Space::Accumulator, 0, 8, 1, 8, DType::F32),
       // The activations' 8 f32 words over the 16 bf16 elements at 128.
       dmaStore(128, 8, Space::Scratchpad, 8, 8, 1, 8, DType::F32), push(Queue::Store, Queue::Load),
       pop(Queue::Store, Queue::Load),
       dmaLoad(128, 16, Space::Accumulator, 16, 16, 1, 16, DType::BF16),
       push(Queue::Load, Queue::Store), pop(Queue::Load, Queue::Store),
       dmaStore(384, 16, Space::Accumulator, 16, 16, 1, 16, DType::F32), halt()},
      512);
  bundle.constant_address = 0;
  bundle.constants.resize(2 * weights.size());
  for (size_t i = 0; i < weights.size(); ++i)
    writeLittleEndian(bundle.constants.data() + 2 * i, 2, floatToBF16(weights[i]));
  bundle.reference_constants = {{0, weights}};

  for (bool reference : {false, true}) {
    SCOPED_TRACE(reference ? "reference run" : "hardware run");
    std::vector<uint8_t> dram(512);
    putFloats(dram, 64, activations);
    SimOptions options;
    options.round_operands = !reference;
    simulate(bundle, dram, options);
    for (size_t i = 0; i < 8; ++i) {
      EXPECT_EQ(getWord(dram, 256 + 4 * i),
                floatBits(reference ? weights[i] : referenceBF16(weights[i])))
          << i;
      EXPECT_EQ(getWord(dram, 320 + 4 * i),
                floatBits(reference ? activations[i] : referenceBF16(activations[i])))
          << i;
    }
    for (size_t i = 0; i < 16; ++i) {
      uint32_t word = floatBits(activations[i / 2]);
      uint32_t half = i % 2 == 0 ? word & 0xffff : word >> 16; // little-endian
      EXPECT_EQ(getWord(dram, 384 + 4 * i), half << 16) << i;
    }
  }
}

// Transposing transfers against plain loops over the same DRAM images, for
// both on-chip memories, f32 and bf16 and odd shapes. Each program pairs a
// transposed transfer with a plain one, whose behaviour the tests above pin.
class TransposedDma
    : public ::testing::TestWithParam<std::tuple<Space, DType, uint64_t, uint64_t>> {
protected:
  static constexpr uint64_t kIn = 0, kOut = 1024, kSramAddr = 3;
  static constexpr uint16_t kHalfSentinel = 0xbeef;

  // The DRAM element (f32 word or bf16 half) at element index i of `base`.
  static uint32_t element(const std::vector<uint8_t> &dram, uint64_t base, uint64_t i,
                          DType dtype) {
    if (dtype == DType::F32)
      return getWord(dram, base + 4 * i);
    return static_cast<uint32_t>(dram[base + 2 * i] | dram[base + 2 * i + 1] << 8);
  }
  static void putElement(std::vector<uint8_t> &dram, uint64_t base, uint64_t i, DType dtype,
                         uint32_t value) {
    if (dtype == DType::F32)
      return putWord(dram, base + 4 * i, value);
    dram[base + 2 * i] = static_cast<uint8_t>(value);
    dram[base + 2 * i + 1] = static_cast<uint8_t>(value >> 8);
  }
  // A DRAM image whose output area holds sentinels.
  static std::vector<uint8_t> image(DType dtype) {
    std::vector<uint8_t> dram(2048);
    for (uint64_t i = 0; i < 256; ++i)
      putElement(dram, kOut, i, dtype, dtype == DType::F32 ? kSentinel : kHalfSentinel);
    return dram;
  }
};

TEST_P(TransposedDma, LoadLandsDramColumnsAsOnChipRows) {
  auto [space, dtype, rows, cols] = GetParam();
  uint64_t inStride = cols + 1, sramStride = rows + 2, outStride = rows + 3;
  std::vector<uint8_t> dram = image(DType::F32);
  std::vector<float> values = testValues(rows * inStride, 5);
  for (uint64_t i = 0; i < values.size(); ++i)
    putElement(dram, kIn, i, dtype,
               dtype == DType::F32 ? floatBits(values[i]) : floatBits(values[i]) >> 16);
  std::vector<uint8_t> before = dram;
  Bundle bundle = makeBundle(
      loadComputeStore(
          {transposed(dmaLoad(kIn, inStride, space, kSramAddr, sramStride, rows, cols, dtype))}, {},
          {dmaStore(kOut, outStride, space, kSramAddr, sramStride, cols, rows, DType::F32)}),
      dram.size());
  simulate(bundle, dram);
  for (uint64_t c = 0; c < cols; ++c)
    for (uint64_t r = 0; r < outStride; ++r) {
      uint32_t expected = kSentinel;
      if (r < rows) {
        uint32_t in = element(before, kIn, r * inStride + c, dtype);
        expected = dtype == DType::F32 ? in : in << 16; // bf16 widens exactly
      }
      EXPECT_EQ(getWord(dram, kOut + 4 * (c * outStride + r)), expected) << r << "," << c;
    }
}

TEST_P(TransposedDma, StoreWritesOnChipColumnsAsDramRows) {
  auto [space, dtype, rows, cols] = GetParam();
  uint64_t sramStride = rows + 2, outStride = cols + 3;
  std::vector<uint8_t> dram = image(dtype);
  std::vector<float> values = testValues(cols * rows, 6); // on chip: cols rows of rows words
  putFloats(dram, kIn, values);
  Bundle bundle = makeBundle(
      loadComputeStore(
          {dmaLoad(kIn, rows, space, kSramAddr, sramStride, cols, rows, DType::F32)}, {},
          {transposed(dmaStore(kOut, outStride, space, kSramAddr, sramStride, rows, cols, dtype))}),
      dram.size());
  simulate(bundle, dram);
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t c = 0; c < outStride; ++c) {
      uint32_t expected = dtype == DType::F32 ? kSentinel : kHalfSentinel;
      if (c < cols) {
        float word = values[c * rows + r];
        expected = dtype == DType::F32 ? floatBits(word) : floatBits(referenceBF16(word)) >> 16;
      }
      EXPECT_EQ(element(dram, kOut, r * outStride + c, dtype), expected) << r << "," << c;
    }
}

INSTANTIATE_TEST_SUITE_P(SpacesTypesShapes, TransposedDma,
                         ::testing::Combine(::testing::Values(Space::Scratchpad,
                                                              Space::Accumulator),
                                            ::testing::Values(DType::F32, DType::BF16),
                                            ::testing::Values(1, 3, 7), ::testing::Values(1, 5)));

} // namespace
} // namespace tpu::sim::test
