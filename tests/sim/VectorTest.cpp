// Every v.* operation against std:: arithmetic in the test.
#include "SimTestUtil.h"

#include <gtest/gtest.h>

#include <functional>
#include <limits>

namespace tpu::sim::test {
namespace {

constexpr uint64_t kRows = 3, kCols = 5, kElements = kRows * kCols;
// DRAM: src at 0, src2 at 256, result at 512. On chip: src in the scratchpad
// at 8, src2 in the accumulator at 40, dst in the scratchpad at 100.
constexpr uint64_t kSrc = 0, kSrc2 = 256, kOut = 512;
const Operand kSrcOp{Space::Scratchpad, 8}, kSrc2Op{Space::Accumulator, 40},
    kDstOp{Space::Scratchpad, 100};

// Runs one vector instruction on `src` (rows x cols) and `src2` (up to rows x
// cols words), returning the dstWords words it wrote.
std::vector<uint32_t> runVector(const Instruction &op, const std::vector<uint32_t> &src,
                                const std::vector<uint32_t> &src2, size_t dstWords) {
  std::vector<uint8_t> dram(1024);
  for (size_t i = 0; i < src.size(); ++i)
    putWord(dram, kSrc + 4 * i, src[i]);
  for (size_t i = 0; i < src2.size(); ++i)
    putWord(dram, kSrc2 + 4 * i, src2[i]);
  Bundle bundle = makeBundle(
      loadComputeStore(
          {dmaLoad(kSrc, kCols, kSrcOp.space, kSrcOp.addr, kCols, kRows, kCols, DType::I32),
           dmaLoad(kSrc2, kCols, kSrc2Op.space, kSrc2Op.addr, kCols, kRows, kCols, DType::I32)},
          {op}, {dmaStore(kOut, 1, kDstOp.space, kDstOp.addr, 1, dstWords, 1, DType::I32)}),
      dram.size());
  simulate(bundle, dram);
  std::vector<uint32_t> words;
  for (size_t i = 0; i < dstWords; ++i)
    words.push_back(getWord(dram, kOut + 4 * i));
  return words;
}

std::vector<uint32_t> bitsOf(const std::vector<float> &values) {
  std::vector<uint32_t> words;
  for (float v : values)
    words.push_back(floatBits(v));
  return words;
}

// Values with both signs, a zero and an infinity.
std::vector<float> mixedValues(uint32_t seed) {
  std::vector<float> values = testValues(kElements, seed);
  values[3] = 0.0f;
  values[7] = -std::numeric_limits<float>::infinity();
  return values;
}

struct BinaryCase {
  Opcode opcode;
  std::function<float(float, float)> reference;
};
// Names the case in test listings (ctest shows the parameter).
void PrintTo(const BinaryCase &c, std::ostream *os) { *os << isa::opcodeInfo(c.opcode).mnemonic; }

class VectorBinary : public ::testing::TestWithParam<BinaryCase> {};

TEST_P(VectorBinary, EveryBroadcast) {
  const BinaryCase &test = GetParam();
  std::vector<float> a = mixedValues(11), b = mixedValues(12);
  for (isa::Broadcast broadcast : {isa::Broadcast::None, isa::Broadcast::Row,
                                   isa::Broadcast::Scalar, isa::Broadcast::Column}) {
    std::vector<uint32_t> got =
        runVector(vectorBinary(test.opcode, kDstOp, kSrcOp, kSrc2Op, broadcast, kRows, kCols),
                  bitsOf(a), bitsOf(b), kElements);
    for (uint64_t r = 0; r < kRows; ++r)
      for (uint64_t c = 0; c < kCols; ++c) {
        float second = broadcast == isa::Broadcast::None     ? b[r * kCols + c]
                       : broadcast == isa::Broadcast::Row    ? b[c]
                       : broadcast == isa::Broadcast::Column ? b[r]
                                                             : b[0];
        float expected = test.reference(a[r * kCols + c], second);
        EXPECT_EQ(got[r * kCols + c], floatBits(expected))
            << isa::opcodeInfo(test.opcode).mnemonic << " broadcast " << static_cast<int>(broadcast)
            << " at " << r << "," << c;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ops, VectorBinary,
    ::testing::Values(
        BinaryCase{Opcode::VAdd, [](float a, float b) { return a + b; }},
        BinaryCase{Opcode::VSub, [](float a, float b) { return a - b; }},
        BinaryCase{Opcode::VMul, [](float a, float b) { return a * b; }},
        BinaryCase{Opcode::VMax, [](float a, float b) { return a < b ? b : a; }},
        BinaryCase{Opcode::VMin, [](float a, float b) { return b < a ? b : a; }},
        BinaryCase{Opcode::VGreater, [](float a, float b) { return a > b ? 1.0f : 0.0f; }},
        BinaryCase{Opcode::VGreaterEqual, [](float a, float b) { return a >= b ? 1.0f : 0.0f; }},
        BinaryCase{Opcode::VEqual, [](float a, float b) { return a == b ? 1.0f : 0.0f; }}),
    [](const auto &info) {
      std::string name(isa::opcodeInfo(info.param.opcode).mnemonic);
      return name.substr(2); // drop "v."
    });

TEST(Vector, MaxMinAndRowMaxPropagateNaN) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a(kElements, 1.0f), b(kElements, 2.0f);
  a[1] = nan;
  b[2] = nan;
  for (Opcode opcode : {Opcode::VMax, Opcode::VMin}) {
    std::vector<uint32_t> got =
        runVector(vectorBinary(opcode, kDstOp, kSrcOp, kSrc2Op, isa::Broadcast::None, kRows, kCols),
                  bitsOf(a), bitsOf(b), kElements);
    EXPECT_TRUE(std::isnan(bitsFloat(got[1])));
    EXPECT_TRUE(std::isnan(bitsFloat(got[2])));
    EXPECT_EQ(bitsFloat(got[3]), opcode == Opcode::VMax ? 2.0f : 1.0f);
  }
  std::vector<uint32_t> rowMax =
      runVector(vectorUnary(Opcode::VRowMax, kDstOp, kSrcOp, kRows, kCols), bitsOf(a), {}, kRows);
  EXPECT_TRUE(std::isnan(bitsFloat(rowMax[0])));
  EXPECT_EQ(bitsFloat(rowMax[1]), 1.0f);
}

TEST(Vector, ComparesAreFalseOnNaNAndEqualOnSignedZeros) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a(kElements, 1.0f), b(kElements, 1.0f);
  a[0] = nan;
  b[1] = nan;
  a[2] = -0.0f;
  b[2] = 0.0f;
  for (Opcode opcode : {Opcode::VGreater, Opcode::VGreaterEqual, Opcode::VEqual}) {
    std::vector<uint32_t> got =
        runVector(vectorBinary(opcode, kDstOp, kSrcOp, kSrc2Op, isa::Broadcast::None, kRows, kCols),
                  bitsOf(a), bitsOf(b), kElements);
    EXPECT_EQ(bitsFloat(got[0]), 0.0f);
    EXPECT_EQ(bitsFloat(got[1]), 0.0f);
    EXPECT_EQ(bitsFloat(got[2]), opcode == Opcode::VGreater ? 0.0f : 1.0f);
  }
}

TEST(Vector, ClampReadsLoAndHiFromSrc2) {
  std::vector<float> a = mixedValues(13);
  std::vector<uint32_t> got = runVector(
      vectorBinary(Opcode::VClamp, kDstOp, kSrcOp, kSrc2Op, isa::Broadcast::Scalar, kRows, kCols),
      bitsOf(a), bitsOf({-0.5f, 0.75f}), kElements);
  for (size_t i = 0; i < kElements; ++i)
    EXPECT_EQ(bitsFloat(got[i]), std::min(std::max(a[i], -0.5f), 0.75f)) << i;
}

struct UnaryCase {
  Opcode opcode;
  std::function<float(float)> reference;
};
void PrintTo(const UnaryCase &c, std::ostream *os) { *os << isa::opcodeInfo(c.opcode).mnemonic; }

class VectorUnaryFloat : public ::testing::TestWithParam<UnaryCase> {};

TEST_P(VectorUnaryFloat, MatchesStd) {
  const UnaryCase &test = GetParam();
  std::vector<float> a = mixedValues(14);
  a[4] = 4.0f;
  std::vector<uint32_t> got =
      runVector(vectorUnary(test.opcode, kDstOp, kSrcOp, kRows, kCols), bitsOf(a), {}, kElements);
  for (size_t i = 0; i < kElements; ++i) {
    float expected = test.reference(a[i]);
    if (std::isnan(expected))
      EXPECT_TRUE(std::isnan(bitsFloat(got[i]))) << "element " << i << " of " << a[i];
    else
      EXPECT_EQ(got[i], floatBits(expected)) << "element " << i << " of " << a[i];
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ops, VectorUnaryFloat,
    ::testing::Values(UnaryCase{Opcode::VRelu, [](float x) { return x > 0 ? x : 0.0f; }},
                      UnaryCase{Opcode::VExp, [](float x) { return std::exp(x); }},
                      UnaryCase{Opcode::VRecip, [](float x) { return 1.0f / x; }},
                      UnaryCase{Opcode::VRsqrt, [](float x) { return 1.0f / std::sqrt(x); }},
                      UnaryCase{Opcode::VSigmoid,
                                [](float x) { return 1.0f / (1.0f + std::exp(-x)); }},
                      UnaryCase{Opcode::VTanh, [](float x) { return std::tanh(x); }},
                      UnaryCase{Opcode::VLog, [](float x) { return std::log(x); }}),
    [](const auto &info) {
      std::string name(isa::opcodeInfo(info.param.opcode).mnemonic);
      return name.substr(2);
    });

TEST(Vector, CopyMovesBitsBetweenMemories) {
  std::vector<uint32_t> words;
  for (uint32_t i = 0; i < kElements; ++i)
    words.push_back(0x7fc00001u + i * 0x01010101u); // NaN payloads and arbitrary bits
  Operand fromAccumulator = kSrc2Op;
  std::vector<uint32_t> got = runVector(
      vectorUnary(Opcode::VCopy, kDstOp, fromAccumulator, kRows, kCols), {}, words, kElements);
  EXPECT_EQ(got, words);
}

TEST(Vector, RowSumAddsInOrderAndRowMax) {
  // Summed in order, row 0 loses its first 1 against 2^24: 1.5, not the exact 2.5.
  std::vector<float> a = testValues(kElements, 15);
  a[0] = 0x1p24f;
  a[1] = 1.0f;
  a[2] = -0x1p24f;
  a[3] = 1.0f;
  a[4] = 0.5f;
  std::vector<uint32_t> sums =
      runVector(vectorUnary(Opcode::VRowSum, kDstOp, kSrcOp, kRows, kCols), bitsOf(a), {}, kRows);
  std::vector<uint32_t> maxima =
      runVector(vectorUnary(Opcode::VRowMax, kDstOp, kSrcOp, kRows, kCols), bitsOf(a), {}, kRows);
  for (uint64_t r = 0; r < kRows; ++r) {
    float sum = a[r * kCols];
    float max = a[r * kCols];
    for (uint64_t c = 1; c < kCols; ++c) {
      sum += a[r * kCols + c];
      max = std::max(max, a[r * kCols + c]);
    }
    EXPECT_EQ(sums[r], floatBits(sum)) << "row " << r;
    EXPECT_EQ(maxima[r], floatBits(max)) << "row " << r;
  }
  EXPECT_EQ(bitsFloat(sums[0]), 1.5f);
}

TEST(Vector, ConvertIntToFloat) {
  const std::vector<int32_t> ints = {
      0, 1, -1, 16777217, -16777219, 2147483647, std::numeric_limits<int32_t>::min()};
  std::vector<uint32_t> words(kElements, 0);
  for (size_t i = 0; i < ints.size(); ++i)
    words[i] = static_cast<uint32_t>(ints[i]);
  std::vector<uint32_t> got =
      runVector(vectorUnary(Opcode::VCvtI2F, kDstOp, kSrcOp, kRows, kCols), words, {}, kElements);
  for (size_t i = 0; i < ints.size(); ++i)
    EXPECT_EQ(got[i], floatBits(static_cast<float>(ints[i]))) << ints[i];
  EXPECT_EQ(bitsFloat(got[3]), 16777216.0f); // nearest even
}

TEST(Vector, ConvertFloatToIntRoundsToEvenAndSaturates) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<std::pair<float, int32_t>> cases = {
      {2.5f, 2},
      {3.5f, 4},
      {-2.5f, -2},
      {-0.5f, 0},
      {0.49999997f, 0},
      {7.0f, 7},
      {-7.75f, -8},
      {1e10f, 2147483647},
      {-1e10f, std::numeric_limits<int32_t>::min()},
      {2147483648.0f, 2147483647},
      {-2147483648.0f, std::numeric_limits<int32_t>::min()},
      {nan, 0},
      {std::numeric_limits<float>::infinity(), 2147483647}};
  std::vector<uint32_t> words(kElements, 0);
  for (size_t i = 0; i < cases.size(); ++i)
    words[i] = floatBits(cases[i].first);
  std::vector<uint32_t> got =
      runVector(vectorUnary(Opcode::VCvtF2I, kDstOp, kSrcOp, kRows, kCols), words, {}, kElements);
  for (size_t i = 0; i < cases.size(); ++i)
    EXPECT_EQ(static_cast<int32_t>(got[i]), cases[i].second) << cases[i].first;
}

TEST(Vector, InPlaceOperationReadsItsSourceBeforeWriting) {
  // dst == src == src2 (scalar): every element adds the original a[0].
  std::vector<float> a = testValues(kElements, 16);
  std::vector<uint8_t> dram(1024);
  putFloats(dram, 0, a);
  Bundle bundle =
      makeBundle(loadComputeStore(
                     {dmaLoad(0, kCols, Space::Scratchpad, 0, kCols, kRows, kCols, DType::F32)},
                     {vectorBinary(Opcode::VAdd, {Space::Scratchpad, 0}, {Space::Scratchpad, 0},
                                   {Space::Scratchpad, 0}, isa::Broadcast::Scalar, kRows, kCols)},
                     {dmaStore(512, kCols, Space::Scratchpad, 0, kCols, kRows, kCols, DType::F32)}),
                 dram.size());
  simulate(bundle, dram);
  std::vector<float> result = getFloats(dram, 512, kElements);
  for (size_t i = 0; i < kElements; ++i)
    EXPECT_EQ(floatBits(result[i]), floatBits(a[i] + a[0])) << i;
}

} // namespace
} // namespace tpu::sim::test
