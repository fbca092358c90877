// The tensor-core GEMM (tpu_cuda::gemm_block) under the host emulator against plain C++
// references: ragged and batched shapes, every loader, 1..4 pipeline stages, a fused epilogue,
// conflict-free shared memory; and the tile rule (TileRule.h).
#include "GemmTestUtil.h"

#include <gtest/gtest.h>

using namespace gemm_test;
using tpu_cuda::bf16;
using tpu_cuda::TileConfig;
namespace cuda = tpu::cuda;

namespace {

constexpr BLayout NK = BLayout::WeightsNK;
constexpr BLayout KN = BLayout::ActivationsKN;

// ---- Shapes, with the tile the rule picks for each (as the emitter instantiates it) ----

TEST(Gemm, OneRowDecoderStep) {
  Shape s{1, 1, 10, 64};
  using Tile = ChosenTile<1, 10, 64>::type;
  static_assert(Tile::BM == 32 && Tile::BN == 32 && Tile::Stages == 2);
  EXPECT_EQ((denseGemmMismatch<Tile, bf16, bf16, NK>(s)), -1);
}

TEST(Gemm, RaggedEveryDimension) {
  Shape s{1, 37, 50, 70};
  using Tile = ChosenTile<37, 50, 70>::type;
  static_assert(Tile::BM == 64 && Tile::BN == 64 && Tile::Stages == 3);
  // K % 8 != 0: bf16 A and B take the element path.
  EXPECT_EQ((denseGemmMismatch<Tile, bf16, bf16, NK>(s)), -1);
  EXPECT_EQ((denseGemmMismatch<Tile, bf16, bf16, KN>(s)), -1);
}

TEST(Gemm, FullTiles128) {
  Shape s{1, 128, 128, 256};
  using Tile = ChosenTile<128, 128, 256>::type;
  static_assert(Tile::BM == 128 && Tile::BN == 128 && Tile::kThreads == 256 && Tile::Stages == 4);
  tpu_emu::reset_stats();
  EXPECT_EQ((denseGemmMismatch<Tile, bf16, bf16, NK>(s)), -1);
  // Both operands by cp.async: (128*256 + 256*128) bf16.
  EXPECT_EQ(tpu_emu::stats().cp_async_bytes, 2u * (128 * 256 + 256 * 128));
  // 8 warps x (256 / 16) k steps x 4 x 4 mma tiles.
  EXPECT_EQ(tpu_emu::stats().mma, 8u * 16 * 16);
}

TEST(Gemm, Batched) {
  Shape s{3, 40, 64, 96};
  using Tile = TileConfig<32, 64, 32, 1, 2, 3>;
  EXPECT_EQ((denseGemmMismatch<Tile, bf16, bf16, KN>(s)), -1);   // attention-like: cp.async B
  EXPECT_EQ((denseGemmMismatch<Tile, bf16, bf16, NK>(s)), -1);   // weights shared by the batch
  EXPECT_EQ((denseGemmMismatch<Tile, float, float, KN>(s)), -1); // fp32 activations
}

// The shape the multiprocessor rule picks for wide-N grids: one row of four 64x32 warp tiles.
TEST(Gemm, OneByFourWarps) {
  Shape s{1, 70, 150, 96};
  using Tile = TileConfig<64, 128, 32, 1, 4, 2>;
  EXPECT_EQ((denseGemmMismatch<Tile, bf16, bf16, NK>(s)), -1);
  EXPECT_EQ((denseGemmMismatch<Tile, bf16, bf16, KN>(s)), -1);
}

// ---- Loaders ----

TEST(Gemm, DenseAFloatIsRoundedToBf16) {
  Shape s{1, 37, 50, 64};
  using Tile = TileConfig<32, 32, 32, 1, 1, 2>;
  tpu_emu::reset_stats();
  EXPECT_EQ((denseGemmMismatch<Tile, float, bf16, NK>(s)), -1);
  // Only B (50 x 64 bf16, 2 column blocks of 32 x 2 row blocks) goes by cp.async.
  EXPECT_EQ(tpu_emu::stats().cp_async_bytes, 2u * 64 * 64 * 2);
}

TEST(Gemm, DenseB_KNRaggedN) {
  Shape s{2, 33, 50, 48}; // N % 8 != 0: element path for B
  using Tile = TileConfig<32, 32, 16, 1, 1, 2>;
  EXPECT_EQ((denseGemmMismatch<Tile, bf16, bf16, KN>(s)), -1);
  EXPECT_EQ((denseGemmMismatch<Tile, bf16, float, KN>(s)), -1);
}

// A base one element past a 16-byte boundary: no cp.async or vector loads, element loads only.
template <class T> void checkUnalignedA() {
  Shape s{1, 20, 24, 32};
  std::vector<float> a = randomValues(s.M * s.K + 1, 7), b = randomValues(s.K * s.N, 8);
  std::vector<T> aData = asType<T>(a);
  std::vector<bf16> bNK(s.N * s.K);
  for (int k = 0; k < s.K; ++k)
    for (int n = 0; n < s.N; ++n)
      bNK[n * s.K + k] = tpu_cuda::to_bf16(b[k * s.N + n]);
  std::vector<float> c(s.M * s.N, NAN);
  tpu_cuda::DenseA<T> aLoader(aData.data() + 1, s.M, s.K);
  EXPECT_FALSE(aLoader.whole_chunks);
  using Tile = TileConfig<32, 32, 32, 1, 1, 2>;
  tpu_cuda::launch_gemm<Tile>(aLoader, tpu_cuda::DenseB_NK(bNK.data(), s.N, s.K),
                              StoreC{c.data(), s.M, s.N}, s.M, s.N, s.K, 1);
  std::vector<float> aShifted(a.begin() + 1, a.end());
  EXPECT_EQ(firstMismatch(c, referenceGemm(s, aShifted, b, false), s.K), -1);
}

TEST(Gemm, UnalignedBaseFallsBackToElementLoads) {
  checkUnalignedA<bf16>();
  checkUnalignedA<float>();
}

// ---- Implicit-GEMM convolution ----

// Direct convolution, NHWC input, weights [OC][KH][KW][C], output NHWC = C[m = (n, oh, ow)][oc].
std::vector<float> referenceConv(const tpu_cuda::ConvShape &s, int outChannels,
                                 const std::vector<float> &input,
                                 const std::vector<float> &weights) {
  std::vector<float> out(static_cast<size_t>(s.n) * s.oh * s.ow * outChannels);
  for (int n = 0; n < s.n; ++n)
    for (int oh = 0; oh < s.oh; ++oh)
      for (int ow = 0; ow < s.ow; ++ow)
        for (int oc = 0; oc < outChannels; ++oc) {
          double sum = 0;
          for (int kh = 0; kh < s.kh; ++kh)
            for (int kw = 0; kw < s.kw; ++kw) {
              int ih = oh * s.stride_h - s.pad_top + kh * s.dilation_h;
              int iw = ow * s.stride_w - s.pad_left + kw * s.dilation_w;
              if (ih < 0 || ih >= s.h || iw < 0 || iw >= s.w)
                continue;
              for (int c = 0; c < s.c; ++c)
                sum += static_cast<double>(
                           roundedToBf16(input[((n * s.h + ih) * s.w + iw) * s.c + c])) *
                       roundedToBf16(weights[((oc * s.kh + kh) * s.kw + kw) * s.c + c]);
            }
          out[((n * s.oh + oh) * s.ow + ow) * outChannels + oc] = static_cast<float>(sum);
        }
  return out;
}

template <class Tile, class T> void checkConv(const tpu_cuda::ConvShape &s, int outChannels) {
  std::vector<float> input = randomValues(static_cast<size_t>(s.n) * s.h * s.w * s.c, 11);
  std::vector<float> weights =
      randomValues(static_cast<size_t>(outChannels) * s.kh * s.kw * s.c, 12);
  std::vector<T> inputData = asType<T>(input);
  std::vector<bf16> weightData = asType<bf16>(weights); // [OC][KH*KW*C] = B as [N][K]
  int M = s.gemm_m(), N = outChannels, K = s.gemm_k();
  std::vector<float> out(static_cast<size_t>(M) * N, NAN);
  tpu_cuda::launch_gemm<Tile>(tpu_cuda::ConvA<T>(inputData.data(), s),
                              tpu_cuda::DenseB_NK(weightData.data(), N, K),
                              StoreC{out.data(), M, N}, M, N, K, 1);
  EXPECT_EQ(firstMismatch(out, referenceConv(s, outChannels, input, weights), K), -1);
}

// {n, h, w, c, kh, kw, stride_h, stride_w, pad_top, pad_left, dilation_h, dilation_w, oh, ow}
TEST(Gemm, Conv3x3Stride2Pad1) {
  using Tile = TileConfig<64, 32, 32, 1, 1, 3>;
  checkConv<Tile, bf16>({2, 9, 11, 16, 3, 3, 2, 2, 1, 1, 1, 1, 5, 6}, 24); // cp.async chunks
  checkConv<Tile, bf16>({1, 8, 8, 3, 3, 3, 2, 2, 1, 1, 1, 1, 4, 4}, 16);   // C = 3: element path
  checkConv<Tile, float>({1, 7, 7, 8, 3, 3, 2, 2, 1, 1, 1, 1, 4, 4}, 8);
}

TEST(Gemm, Conv1x1) {
  using Tile = TileConfig<32, 32, 16, 1, 1, 2>;
  checkConv<Tile, bf16>({2, 6, 5, 24, 1, 1, 1, 1, 0, 0, 1, 1, 6, 5}, 40);
}

TEST(Gemm, Conv3x3Dilation2) {
  using Tile = TileConfig<32, 32, 32, 1, 1, 4>;
  checkConv<Tile, bf16>({1, 10, 10, 8, 3, 3, 1, 1, 2, 2, 2, 2, 10, 10}, 16);
}

// ---- Pipeline depth ----

template <int Stages> void checkStages() {
  Shape s{1, 37, 50, 200}; // 7 k tiles
  using Tile = TileConfig<32, 64, 32, 1, 2, Stages>;
  EXPECT_EQ((denseGemmMismatch<Tile, bf16, bf16, NK>(s)), -1) << Stages << " stages";
  EXPECT_EQ((denseGemmMismatch<Tile, bf16, bf16, KN>(s)), -1) << Stages << " stages";
  EXPECT_EQ((denseGemmMismatch<Tile, float, bf16, NK>(s)), -1) << Stages << " stages";
}

TEST(Gemm, StagesOneToFour) {
  checkStages<1>();
  checkStages<2>();
  checkStages<3>();
  checkStages<4>();
}

// The result must not depend on the order the emulator runs the threads in.
TEST(Gemm, ScheduleSeeds) {
  Shape s{1, 64, 64, 128};
  using Tile = TileConfig<64, 64, 32, 2, 2, 3>;
  for (uint64_t seed : {0, 1, 2, 3}) {
    tpu_emu::set_schedule_seed(seed);
    EXPECT_EQ((denseGemmMismatch<Tile, bf16, bf16, KN>(s)), -1) << "seed " << seed;
  }
  tpu_emu::set_schedule_seed(0);
}

// Random extents from 1 to 80 (ragged in every dimension, K often not a multiple of 8) with
// random schedules, on two tiles and both B layouts.
TEST(Gemm, RandomShapes) {
  std::mt19937 random(99);
  std::uniform_int_distribution<int> extent(1, 80), batches(1, 2);
  for (int trial = 0; trial < 12; ++trial) {
    Shape s{batches(random), extent(random), extent(random), extent(random)};
    tpu_emu::set_schedule_seed(trial);
    SCOPED_TRACE(s.name() + ", seed " + std::to_string(trial));
    EXPECT_EQ((denseGemmMismatch<TileConfig<32, 32, 16, 1, 1, 2>, bf16, bf16, KN>(s, trial)), -1);
    EXPECT_EQ((denseGemmMismatch<TileConfig<64, 64, 32, 2, 2, 3>, bf16, bf16, NK>(s, trial)), -1);
  }
  tpu_emu::set_schedule_seed(0);
}

// ---- Fused epilogue ----

struct BiasReluResidual {
  const float *bias;     // [N]
  const float *residual; // [batch][M][N]
  float *out;
  int M, N;
  __device__ void operator()(int batch, int m, int n, float acc) const {
    long long index = (static_cast<long long>(batch) * M + m) * N + n;
    out[index] = fmaxf(acc + bias[n], 0.0f) + residual[index];
  }
};

TEST(Gemm, FusedBiasReluResidual) {
  Shape s{2, 45, 40, 80};
  std::vector<float> a = randomValues(s.batch * s.M * s.K, 21), b = randomValues(s.K * s.N, 22);
  std::vector<float> bias = randomValues(s.N, 23), residual = randomValues(s.batch * s.M * s.N, 24);
  std::vector<bf16> aData = asType<bf16>(a);
  std::vector<bf16> bNK(s.N * s.K);
  for (int k = 0; k < s.K; ++k)
    for (int n = 0; n < s.N; ++n)
      bNK[n * s.K + k] = tpu_cuda::to_bf16(b[k * s.N + n]);
  std::vector<float> out(residual.size(), NAN);
  using Tile = TileConfig<64, 64, 32, 2, 2, 2>;
  tpu_cuda::launch_gemm<Tile>(
      tpu_cuda::DenseA<bf16>(aData.data(), s.M, s.K), tpu_cuda::DenseB_NK(bNK.data(), s.N, s.K),
      BiasReluResidual{bias.data(), residual.data(), out.data(), s.M, s.N}, s.M, s.N, s.K, s.batch);
  std::vector<float> expected = referenceGemm(s, a, b, false);
  for (size_t i = 0; i < expected.size(); ++i)
    expected[i] = std::max(expected[i] + bias[i % s.N], 0.0f) + residual[i];
  EXPECT_EQ(firstMismatch(out, expected, s.K), -1);
}

// An epilogue with the optional two-column store: used for every pair inside C, the ragged last
// column (odd N) falls back to operator().
struct PairStoreC {
  float *c;
  int M, N;
  int *pairs, *singles; // call counters (the emulator runs one thread at a time)
  __device__ void operator()(int batch, int m, int n, float acc) const {
    ++*singles;
    c[(static_cast<long long>(batch) * M + m) * N + n] = acc;
  }
  __device__ void pair(int batch, int m, int n, float first, float second) const {
    ++*pairs;
    long long index = (static_cast<long long>(batch) * M + m) * N + n;
    c[index] = first;
    c[index + 1] = second;
  }
};
static_assert(tpu_cuda::detail::HasPairStore<PairStoreC>::value);
static_assert(!tpu_cuda::detail::HasPairStore<StoreC>::value);

TEST(Gemm, PairStoreEpilogue) {
  Shape s{2, 21, 37, 48};
  std::vector<float> a = randomValues(s.batch * s.M * s.K, 31), b = randomValues(s.K * s.N, 32);
  std::vector<bf16> aData = asType<bf16>(a);
  std::vector<bf16> bNK(s.N * s.K);
  for (int k = 0; k < s.K; ++k)
    for (int n = 0; n < s.N; ++n)
      bNK[n * s.K + k] = tpu_cuda::to_bf16(b[k * s.N + n]);
  std::vector<float> c(s.batch * s.M * s.N, NAN);
  int pairs = 0, singles = 0;
  using Tile = TileConfig<32, 32, 32, 1, 1, 2>;
  tpu_cuda::launch_gemm<Tile>(
      tpu_cuda::DenseA<bf16>(aData.data(), s.M, s.K), tpu_cuda::DenseB_NK(bNK.data(), s.N, s.K),
      PairStoreC{c.data(), s.M, s.N, &pairs, &singles}, s.M, s.N, s.K, s.batch);
  EXPECT_EQ(firstMismatch(c, referenceGemm(s, a, b, false), s.K), -1);
  EXPECT_EQ(pairs, s.batch * s.M * (s.N / 2));
  EXPECT_EQ(singles, s.batch * s.M); // column 36 of each row
}

// ---- Shared-memory banks ----

TEST(Gemm, SwizzledTilesAreBankConflictFree) {
  Shape s{1, 128, 128, 128};
  using Wide = TileConfig<128, 128, 32, 2, 4, 3>; // A/B_NK rows of 64 B, B_KN rows of 256 B
  using Narrow = TileConfig<64, 32, 16, 2, 1, 2>; // rows of 32 and 64 B
  using Deep = TileConfig<32, 64, 64, 1, 2, 2>;   // rows of 128 B
  tpu_emu::reset_stats();
  EXPECT_EQ((denseGemmMismatch<Wide, bf16, bf16, NK>(s)), -1);
  EXPECT_EQ((denseGemmMismatch<Wide, bf16, bf16, KN>(s)), -1);
  EXPECT_EQ((denseGemmMismatch<Narrow, bf16, bf16, KN>(s)), -1);
  EXPECT_EQ((denseGemmMismatch<Deep, float, bf16, NK>(s)), -1);
  EXPECT_GT(tpu_emu::stats().ldmatrix_phases, 0u);
  EXPECT_EQ(tpu_emu::stats().ldmatrix_bank_conflicts, 0u);
}

// ---- The tile rule ----

TEST(TileRule, ChoicesForTypicalShapes) {
  using cuda::chooseTile;
  using cuda::TileChoice;
  EXPECT_EQ(chooseTile(4096, 4096, 4096, cuda::kSmemPerBlockSm80),
            (TileChoice{128, 128, 32, 2, 4, 4}));
  EXPECT_EQ(chooseTile(1, 4096, 4096, cuda::kSmemPerBlockSm90), (TileChoice{32, 128, 32, 1, 4, 4}));
  EXPECT_EQ(chooseTile(50, 10, 8, cuda::kSmemPerBlockSm80), (TileChoice{64, 32, 16, 1, 1, 1}));
  // ResNet stem as implicit GEMM: M = 112 * 112, N = 64, K = 7 * 7 * 3.
  EXPECT_EQ(chooseTile(12544, 64, 147, cuda::kSmemPerBlockSm80),
            (TileChoice{128, 64, 32, 2, 2, 4}));
  // Little shared memory (the 48 KiB default): 128x128x32 stages are 16 KiB, so 3.
  EXPECT_EQ(chooseTile(4096, 4096, 4096, 48 * 1024).stages, 3);
}

// With the multiprocessor count, tiles shrink (not below 64) until the grid fills the GPU.
TEST(TileRule, SmallGridsUseSmallerTiles) {
  using cuda::chooseTile;
  using cuda::TileChoice;
  constexpr int smem = cuda::kSmemPerBlockSm90, sms = cuda::kMultiprocessorsH100;
  EXPECT_EQ(chooseTile(4096, 4096, 4096, smem, sms), chooseTile(4096, 4096, 4096, smem));
  EXPECT_EQ(chooseTile(512, 512, 4096, smem, sms), (TileChoice{64, 64, 32, 1, 2, 4}));
  EXPECT_EQ(chooseTile(512, 4096, 4096, smem, sms), (TileChoice{64, 128, 32, 1, 4, 4}));
  // Enough batches fill the GPU with the big tile.
  EXPECT_EQ(chooseTile(512, 512, 4096, smem, sms, 16).bm, 128);
  // Tiny GEMMs keep their small tiles.
  EXPECT_EQ(chooseTile(1, 10, 64, smem, sms), chooseTile(1, 10, 64, smem));
}

TEST(TileRule, EveryChoiceIsValidAndFits) {
  for (int smem : {cuda::kSmemPerBlockSm80, cuda::kSmemPerBlockSm90, 48 * 1024})
    for (int64_t m : {1, 16, 31, 32, 33, 64, 65, 100, 128, 1000, 1 << 20})
      for (int64_t n : {1, 8, 33, 64, 65, 128, 4096})
        for (int64_t k : {1, 16, 17, 32, 33, 100, 4096, 1 << 20}) {
          // Without and with the multiprocessor count (which only ever shrinks tiles).
          cuda::TileChoice tile = cuda::chooseTile(m, n, k, smem, (m + n + k) % 2 ? 132 : 0);
          SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
          EXPECT_TRUE(tile.valid());
          EXPECT_LE(tile.smemBytes(), smem);
          EXPECT_GE(tile.stages, 1);
          EXPECT_LE(tile.stages, 4);
          // Never more stages than k tiles; at least 2 when there are 2 k tiles to overlap.
          int64_t kTiles = (k + tile.bk - 1) / tile.bk;
          EXPECT_LE(tile.stages, std::max<int64_t>(kTiles, 1));
          if (kTiles >= 2) {
            EXPECT_GE(tile.stages, 2);
          }
          // No tile dimension more than twice the problem's, beyond the 32 minimum.
          EXPECT_TRUE(tile.bm == 32 || tile.bm < 2 * m);
          EXPECT_TRUE(tile.bn == 32 || tile.bn < 2 * n);
        }
}

TEST(TileRule, MatchesTheDeviceTileConfig) {
  constexpr cuda::TileChoice choice = cuda::chooseTile(4096, 4096, 4096, cuda::kSmemPerBlockSm90);
  using Tile = ChosenTile<4096, 4096, 4096, cuda::kSmemPerBlockSm90>::type;
  EXPECT_EQ(Tile::smem_bytes(), choice.smemBytes());
  EXPECT_EQ(Tile::kThreads, choice.threads());
}

} // namespace
