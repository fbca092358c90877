// mxu.ldw / mxu.mm against a reference matmul written in the test.
#include "SimTestUtil.h"

#include <gtest/gtest.h>

#include <tuple>

namespace tpu::sim::test {
namespace {

// Layout of the tests below: A at DRAM 0 (dense m x k f32), W at 1024 (dense
// k x n), the result at 2048 (dense m x n f32). On chip, A sits at scratchpad 0
// with rows 5 words apart, W at scratchpad 128 with rows 6 apart, and C at
// accumulator 16 with rows 7 apart, so no stride equals a width.
constexpr uint64_t kA = 0, kW = 1024, kC = 2048;
constexpr uint64_t kSpA = 0, kSpAStride = 5, kSpW = 128, kSpWStride = 6, kAcc = 16, kAccStride = 7;

std::vector<Instruction> loadOperands(size_t m, size_t k, size_t n, DType dtype) {
  return {dmaLoad(kA, k, Space::Scratchpad, kSpA, kSpAStride, m, k, dtype),
          dmaLoad(kW, n, Space::Scratchpad, kSpW, kSpWStride, k, n, dtype)};
}

Instruction storeResult(size_t m, size_t n, DType dtype) {
  return dmaStore(kC, n, Space::Accumulator, kAcc, kAccStride, m, n, dtype);
}

MatMulFields streamA(size_t m, size_t k, DType dtype, bool flip, bool accumulate = false) {
  MatMulFields fields;
  fields.srcAddr = kSpA;
  fields.srcStride = kSpAStride;
  fields.dstAddr = kAcc;
  fields.dstStride = kAccStride;
  fields.rows = m;
  fields.cols = k;
  fields.dtype = dtype;
  fields.flip = flip;
  fields.accumulate = accumulate;
  return fields;
}

// Loads the m x k activations a and the k x n weight tile w, streams the
// first `cols` columns of a through it and returns the m x n result.
std::vector<float> multiplyBF16(const std::vector<float> &a, const std::vector<float> &w, size_t m,
                                size_t k, size_t n, size_t cols, SimStats &stats) {
  std::vector<uint8_t> dram(4096);
  putFloats(dram, kA, a);
  putFloats(dram, kW, w);
  Bundle bundle =
      makeBundle(loadComputeStore(loadOperands(m, k, n, DType::F32),
                                  {loadWeights(kSpW, kSpWStride, k, n),
                                   matMul(streamA(m, cols, DType::BF16, /*flip=*/true))},
                                  {storeResult(m, n, DType::F32)}),
                 dram.size());
  stats = simulate(bundle, dram);
  return getFloats(dram, kC, m * n);
}

class MatMulBF16 : public ::testing::TestWithParam<std::tuple<size_t, size_t, size_t>> {};

TEST_P(MatMulBF16, MatchesReferenceBitForBit) {
  auto [m, k, n] = GetParam();
  std::vector<float> a = testValues(m * k, 3), w = testValues(k * n, 4);
  SimStats stats;
  std::vector<float> got = multiplyBF16(a, w, m, k, n, k, stats);
  std::vector<float> expected = referenceMatMulBF16(a, w, m, k, n);
  for (size_t i = 0; i < m * n; ++i)
    EXPECT_EQ(floatBits(got[i]), floatBits(expected[i])) << "element " << i;
  EXPECT_EQ(stats.macs, m * k * n);
}

// (m, k, n): ragged k and n below the 4 x 4 array, the full array, one element,
// and more rows than the array has.
INSTANTIATE_TEST_SUITE_P(Shapes, MatMulBF16,
                         ::testing::Values(std::make_tuple(5, 3, 2), std::make_tuple(4, 4, 4),
                                           std::make_tuple(1, 1, 1), std::make_tuple(9, 4, 3),
                                           std::make_tuple(2, 2, 4)));

TEST(MatMul, AccumulateAddsToTheAccumulator) {
  constexpr size_t m = 3, k = 4, n = 3;
  std::vector<float> a = testValues(m * k, 5), w = testValues(k * n, 6),
                     initial = testValues(m * n, 7);
  std::vector<uint8_t> dram(4096);
  putFloats(dram, kA, a);
  putFloats(dram, kW, w);
  putFloats(dram, kC, initial);
  std::vector<Instruction> loads = loadOperands(m, k, n, DType::F32);
  loads.push_back(dmaLoad(kC, n, Space::Accumulator, kAcc, kAccStride, m, n, DType::F32));
  Bundle bundle =
      makeBundle(loadComputeStore(loads,
                                  {loadWeights(kSpW, kSpWStride, k, n),
                                   matMul(streamA(m, k, DType::BF16, true, /*accumulate=*/true))},
                                  {storeResult(m, n, DType::F32)}),
                 dram.size());
  simulate(bundle, dram);
  std::vector<float> product = referenceMatMulBF16(a, w, m, k, n);
  std::vector<float> got = getFloats(dram, kC, m * n);
  for (size_t i = 0; i < m * n; ++i)
    EXPECT_EQ(floatBits(got[i]), floatBits(initial[i] + product[i])) << "element " << i;
}

TEST(MatMul, ShadowTileLoadsWhileTheActiveOneComputes) {
  // ldw W1; mm flip (W1); ldw W2; mm (still W1); mm flip (W2). The three
  // results go to accumulator rows 0, 2 and 4 (m = 2 rows each, n = 2).
  constexpr size_t m = 2, k = 3, n = 2;
  std::vector<float> a = testValues(m * k, 8), w1 = testValues(k * n, 9),
                     w2 = testValues(k * n, 10);
  std::vector<uint8_t> dram(4096);
  putFloats(dram, kA, a);
  putFloats(dram, kW, w1);
  putFloats(dram, kW + 4 * k * n, w2);
  auto mmInto = [&](uint64_t dstRow, bool flip) {
    MatMulFields fields = streamA(m, k, DType::BF16, flip);
    fields.dstAddr = kAcc + dstRow * n;
    fields.dstStride = n;
    return matMul(fields);
  };
  Bundle bundle = makeBundle(
      loadComputeStore({dmaLoad(kA, k, Space::Scratchpad, kSpA, kSpAStride, m, k, DType::F32),
                        dmaLoad(kW, n, Space::Scratchpad, kSpW, n, 2 * k, n, DType::F32)},
                       {loadWeights(kSpW, n, k, n), mmInto(0, true),
                        loadWeights(kSpW + k * n, n, k, n), mmInto(2, false), mmInto(4, true)},
                       {dmaStore(kC, n, Space::Accumulator, kAcc, n, 3 * m, n, DType::F32)}),
      dram.size());
  simulate(bundle, dram);
  std::vector<float> with1 = referenceMatMulBF16(a, w1, m, k, n);
  std::vector<float> with2 = referenceMatMulBF16(a, w2, m, k, n);
  std::vector<float> got = getFloats(dram, kC, 3 * m * n);
  for (size_t i = 0; i < m * n; ++i) {
    EXPECT_EQ(floatBits(got[i]), floatBits(with1[i])) << i;
    EXPECT_EQ(floatBits(got[m * n + i]), floatBits(with1[i])) << i;
    EXPECT_EQ(floatBits(got[2 * m * n + i]), floatBits(with2[i])) << i;
  }
}

TEST(MatMul, FewerColumnsUseTheTilesFirstRows) {
  // A 4-row tile streamed with rows of 2: the sums over its first 2 rows.
  constexpr size_t m = 3, k = 4, cols = 2, n = 3;
  std::vector<float> a = testValues(m * k, 11), w = testValues(k * n, 12);
  SimStats stats;
  std::vector<float> got = multiplyBF16(a, w, m, k, n, cols, stats);
  std::vector<float> firstColumns, firstRows(w.begin(), w.begin() + cols * n);
  for (size_t r = 0; r < m; ++r)
    firstColumns.insert(firstColumns.end(), a.begin() + r * k, a.begin() + r * k + cols);
  std::vector<float> expected = referenceMatMulBF16(firstColumns, firstRows, m, cols, n);
  for (size_t i = 0; i < m * n; ++i)
    EXPECT_EQ(floatBits(got[i]), floatBits(expected[i])) << "element " << i;
  EXPECT_EQ(stats.macs, m * cols * n);
}

TEST(MatMul, Int8SaturatesOperandsAndWrapsTheInt32Sum) {
  constexpr size_t m = 2, k = 3, n = 2;
  // Words beyond int8 saturate to -128 / 127 before multiplying.
  // Elements (0, 0) and (1, 1) overflow int32 and wrap.
  const std::vector<int32_t> a = {200, 300, 5, -7, 127, -128};
  const std::vector<int32_t> w = {3, -1000, 127, 9, -128, 127};
  const std::vector<int32_t> initial = {0x7fffffff, -5, 100, std::numeric_limits<int32_t>::min()};
  std::vector<uint8_t> dram(4096);
  for (size_t i = 0; i < a.size(); ++i)
    putWord(dram, kA + 4 * i, static_cast<uint32_t>(a[i]));
  for (size_t i = 0; i < w.size(); ++i)
    putWord(dram, kW + 4 * i, static_cast<uint32_t>(w[i]));
  for (size_t i = 0; i < initial.size(); ++i)
    putWord(dram, kC + 4 * i, static_cast<uint32_t>(initial[i]));
  std::vector<Instruction> loads = loadOperands(m, k, n, DType::I32);
  loads.push_back(dmaLoad(kC, n, Space::Accumulator, kAcc, kAccStride, m, n, DType::I32));
  Bundle bundle =
      makeBundle(loadComputeStore(loads,
                                  {loadWeights(kSpW, kSpWStride, k, n),
                                   matMul(streamA(m, k, DType::I8, true, /*accumulate=*/true))},
                                  {storeResult(m, n, DType::I32)}),
                 dram.size(), smallConfig(DType::I8));
  simulate(bundle, dram);
  auto clampInt8 = [](int64_t v) { return std::max<int64_t>(-128, std::min<int64_t>(127, v)); };
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j) {
      int64_t sum = initial[i * n + j];
      for (size_t r = 0; r < k; ++r)
        sum += clampInt8(a[i * k + r]) * clampInt8(w[r * n + j]);
      auto expected = static_cast<int32_t>(static_cast<uint32_t>(sum)); // two's complement wrap
      EXPECT_EQ(static_cast<int32_t>(getWord(dram, kC + 4 * (i * n + j))), expected)
          << i << "," << j;
    }
}

} // namespace
} // namespace tpu::sim::test
