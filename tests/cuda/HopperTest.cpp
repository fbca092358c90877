// Lane-level tests of the Hopper path (prelude/tpu_cuda_sm90a.cuh) under the host emulator: the
// wgmma accumulator layout and the 128-byte swizzle against the PTX ISA figures (written out here,
// not taken from the emulator or the library), the descriptor fields, TMA zero fill, and whole
// gemm_block_sm90a GEMMs against a plain C++ reference.
#include "GemmTestUtil.h"
#include "tpu_cuda_host.h"
#include "tpu_cuda_sm90a.cuh"

#include <gtest/gtest.h>

#include <vector>

using namespace tpu_cuda;

namespace {

// PTX ISA, "Register Fragments: wgmma .m64nNk16", the D matrix figure, read off per thread:
// thread T of the warpgroup, register i. Rows: T0-T3 row 0, T4-T7 row 1, ... T28-T31 row 7 (and
// +8 for registers 2, 3 of every 4), T32-T63 rows 16-31 the same way, up to T96-T127 rows 48-63.
// Columns: T0 holds columns 0, 1 (registers 0, 1 and 2, 3), T1 2, 3, T2 4, 5, T3 6, 7; registers
// 4-7 the same 8 columns further, and so on.
struct RowCol {
  int row, col;
};
RowCol figureD(int thread, int reg) {
  static const int rowOfQuad[8] = {0, 1, 2, 3, 4, 5, 6, 7};            // lanes 4q..4q+3
  static const int colOfLane[4] = {0, 2, 4, 6};                        // lane % 4
  static const int regRow[4] = {0, 0, 8, 8}, regCol[4] = {0, 1, 0, 1}; // register % 4
  int warp = thread / 32, lane = thread % 32;
  return {16 * warp + rowOfQuad[lane / 4] + regRow[reg % 4],
          8 * (reg / 4) + colOfLane[lane % 4] + regCol[reg % 4]};
}

// PTX ISA, "Shared Memory Matrix Layout", the 128-byte swizzle: within each 1024-byte span, row r
// (128 bytes) holds at 16-byte position p the chunk kSwizzle128[r][p] of its unswizzled row.
const int kSwizzle128[8][8] = {{0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6},
                               {2, 3, 0, 1, 6, 7, 4, 5}, {3, 2, 1, 0, 7, 6, 5, 4},
                               {4, 5, 6, 7, 0, 1, 2, 3}, {5, 4, 7, 6, 1, 0, 3, 2},
                               {6, 7, 4, 5, 2, 3, 0, 1}, {7, 6, 5, 4, 3, 2, 1, 0}};

// The byte offset of element (row, k) of a K-major bf16 tile of 128-byte rows, 128-byte swizzle.
int swizzledByte(int row, int k) {
  int chunk = k / 8, position = 0;
  while (kSwizzle128[row % 8][position] != chunk)
    ++position;
  return row * 128 + position * 16 + (k % 8) * 2;
}

constexpr int kN = 64;

struct WgmmaData {
  float d[128][kN / 2];
  uint64_t descriptor_a, descriptor_b; // 0: the library's matrix_descriptor
  bool skip_wait;                      // read the accumulators without wgmma.wait_group
};

// A (64 x 16) and B (kN x 16, K-major) from the test's own layout of the tiles, at the start of the
// dynamic shared memory (1024-aligned in emulation: the smem ends on a page).
std::vector<uint8_t> g_tiles;

__global__ void wgmmaKernel(WgmmaData *data) {
  TPU_DYNAMIC_SMEM(smem);
  unsigned char *tiles = smem + (1024 - sm90a::smem_address(smem) % 1024) % 1024;
  if (threadIdx.x == 0)
    std::memcpy(tiles, g_tiles.data(), g_tiles.size());
  __syncthreads();
  uint32_t a = sm90a::smem_address(tiles), b = a + 64 * 128;
  float acc[kN / 2] = {};
  sm90a::wgmma_fence();
  sm90a::Wgmma<kN>::run(
      acc, data->descriptor_a ? data->descriptor_a + (a >> 4) : sm90a::matrix_descriptor(a),
      data->descriptor_b ? data->descriptor_b + (b >> 4) : sm90a::matrix_descriptor(b));
  sm90a::wgmma_commit();
  if (!data->skip_wait)
    sm90a::wgmma_wait<0>();
  for (int r = 0; r < kN / 2; ++r)
    data->d[threadIdx.x][r] = acc[r];
}

// A[row][0] = row, A[row][1] = 1, B[col][1] = 64 col (exact in bf16), all else 0: D[row][col] =
// row + 64 col.
std::vector<uint8_t> identifyingTiles() {
  std::vector<uint8_t> tiles((64 + kN) * 128, 0);
  auto put = [&](int tileRow, int k, float value) {
    bf16 bits = to_bf16(value);
    std::memcpy(&tiles[swizzledByte(tileRow, k)], &bits, 2);
  };
  for (int row = 0; row < 64; ++row) {
    put(row, 0, float(row));
    put(row, 1, 1.0f);
  }
  for (int col = 0; col < kN; ++col) {
    put(64 + col, 0, 1.0f);
    put(64 + col, 1, 64.0f * col);
  }
  return tiles;
}

WgmmaData runWgmma(uint64_t descriptorA = 0, uint64_t descriptorB = 0, bool skipWait = false) {
  g_tiles = identifyingTiles();
  WgmmaData data{};
  data.skip_wait = skipWait;
  data.descriptor_a = descriptorA;
  data.descriptor_b = descriptorB;
  tpu_emu::launch(wgmmaKernel, dim3(1), dim3(128), 1024 + g_tiles.size(), &data);
  return data;
}

TEST(WgmmaAccumulator, ThreadsHoldThePtxFigureElements) {
  WgmmaData data = runWgmma();
  // Spot checks read straight off the figure.
  EXPECT_EQ(data.d[0][0], 0 + 64 * 0);   // T0 d0: row 0, col 0
  EXPECT_EQ(data.d[0][1], 0 + 64 * 1);   // T0 d1: row 0, col 1
  EXPECT_EQ(data.d[0][2], 8 + 64 * 0);   // T0 d2: row 8, col 0
  EXPECT_EQ(data.d[0][4], 0 + 64 * 8);   // T0 d4: row 0, col 8
  EXPECT_EQ(data.d[5][0], 1 + 64 * 2);   // T5 d0: row 1, col 2
  EXPECT_EQ(data.d[33][3], 24 + 64 * 3); // T33 d3: row 24, col 3
  EXPECT_EQ(data.d[127][31], 63 + 64 * 63);
  for (int t = 0; t < 128; ++t)
    for (int r = 0; r < kN / 2; ++r) {
      RowCol at = figureD(t, r);
      ASSERT_EQ(data.d[t][r], at.row + 64.0f * at.col) << "thread " << t << " register " << r;
    }
}

// wgmma is asynchronous: before wgmma.wait_group the registers still hold their old values.
TEST(WgmmaAccumulator, ResultsLandOnlyAtTheWait) {
  WgmmaData early = runWgmma(0, 0, true);
  for (int t = 0; t < 128; ++t)
    for (int r = 0; r < kN / 2; ++r)
      ASSERT_EQ(early.d[t][r], 0.0f);
}

// The library's descriptor: start address >> 4 in bits 0-13, SBO 1024 >> 4 in 32-45, 128-byte
// swizzle (1) in 62-63 (PTX ISA "Matrix Descriptor Format").
TEST(WgmmaDescriptor, FieldsFollowThePtxFormat) {
  uint64_t d = sm90a::matrix_descriptor(0x12340);
  EXPECT_EQ(d & 0x3fff, 0x1234u);
  EXPECT_EQ(d >> 32 & 0x3fff, 1024u >> 4);
  EXPECT_EQ(d >> 62, 1u);
  EXPECT_EQ(d >> 49 & 7, 0u);
}

// A descriptor built by hand from the format reads the tiles the same way; a wrong swizzle mode or
// stride byte offset reads other elements. LBO is unused by K-major swizzled layouts.
TEST(WgmmaDescriptor, WrongFieldsReadOtherElements) {
  auto fields = [](uint64_t lbo, uint64_t sbo, uint64_t swizzle) {
    return (lbo >> 4) << 16 | (sbo >> 4) << 32 | swizzle << 62;
  };
  WgmmaData good = runWgmma(fields(16, 1024, 1), fields(16, 1024, 1));
  WgmmaData lbo = runWgmma(fields(4096, 1024, 1), fields(4096, 1024, 1));
  WgmmaData sbo = runWgmma(fields(16, 512, 1), fields(16, 1024, 1));
  WgmmaData swizzle64 = runWgmma(fields(16, 1024, 2), fields(16, 1024, 1));
  WgmmaData none = runWgmma(fields(16, 1024, 1), fields(16, 1024, 0));
  EXPECT_EQ(good.d[1][0], 0 + 64 * 2);
  EXPECT_EQ(std::memcmp(good.d, lbo.d, sizeof good.d), 0);
  EXPECT_NE(std::memcmp(good.d, sbo.d, sizeof good.d), 0);
  EXPECT_NE(std::memcmp(good.d, swizzle64.d, sizeof good.d), 0);
  EXPECT_NE(std::memcmp(good.d, none.d, sizeof good.d), 0);
}

// The loaders' layout (swizzled_offset<128>, what cp.async stores A to) is the 128-byte swizzle.
TEST(Swizzle128, LoaderLayoutIsThePtxPattern) {
  for (int row = 0; row < 16; ++row)
    for (int k = 0; k < 64; k += 8)
      EXPECT_EQ(swizzled_offset<128>(row, k / 8), swizzledByte(row, k)) << row << ", " << k;
}

struct TmaData {
  CUtensorMap map;
  uint16_t smem[16][64];
  int c0, c1;
};

__global__ void tmaKernel(TmaData *data) {
  TPU_DYNAMIC_SMEM(smem);
  unsigned char *tile = smem + (1024 - sm90a::smem_address(smem) % 1024) % 1024;
  uint64_t *bar = reinterpret_cast<uint64_t *>(tile + 2048);
  if (threadIdx.x == 0) {
    sm90a::mbarrier_init(bar, 1);
    sm90a::mbarrier_arrive_expect_tx(bar, 2048);
    sm90a::tma_load_2d(tile, &data->map, data->c0, data->c1, bar);
  }
  __syncthreads();
  sm90a::mbarrier_wait(bar, 0);
  if (threadIdx.x == 0)
    std::memcpy(data->smem, tile, 2048);
}

// A 20 x 70 bf16 matrix (pitch 72) through a tensor map (box 64 x 16, 128-byte swizzle): the box
// at (c0, c1) lands in the 128-byte swizzle pattern, zero outside the matrix.
TEST(Tma, BoxLandsSwizzledAndZeroFilled) {
  std::vector<bf16> matrix(20 * 72);
  for (int r = 0; r < 20; ++r)
    for (int c = 0; c < 72; ++c)
      matrix[r * 72 + c] = bf16{static_cast<uint16_t>(c < 70 ? 1 + r * 100 + c : 0xffff)};
  for (auto [c0, c1] : {std::pair{0, 0}, std::pair{64, 8}}) {
    TmaData data{};
    data.map = tpu_host::weightTensorMap(matrix.data(), 20, 70, 72, 16);
    data.c0 = c0, data.c1 = c1;
    tpu_emu::launch(tmaKernel, dim3(1), dim3(32), 1024 + 2048 + 8, &data);
    const auto *bytes = reinterpret_cast<const uint8_t *>(data.smem);
    for (int r = 0; r < 16; ++r)
      for (int k = 0; k < 64; ++k) {
        int row = c1 + r, col = c0 + k;
        uint16_t expected = row < 20 && col < 70 ? 1 + row * 100 + col : 0, got;
        std::memcpy(&got, bytes + swizzledByte(r, k), 2);
        ASSERT_EQ(got, expected) << "box (" << c0 << ", " << c1 << ") row " << r << " k " << k;
      }
  }
}

// Whole GEMMs: gemm_block_sm90a with fp32 or bf16 A, ragged edges, one or more stages' worth of
// K, shared or per-batch weights.
template <class Tile, class AType>
long hopperGemmMismatch(const gemm_test::Shape &s, bool batchedWeights) {
  using namespace gemm_test;
  std::vector<float> a = randomValues(size_t(s.batch) * s.M * s.K, 7);
  int weightBatches = batchedWeights ? s.batch : 1;
  std::vector<float> bKN = randomValues(size_t(weightBatches) * s.K * s.N, 8);
  int pitch = (s.K + 7) / 8 * 8;
  std::vector<bf16> bNK(size_t(weightBatches) * s.N * pitch, bf16{0});
  for (int b = 0; b < weightBatches; ++b)
    for (int k = 0; k < s.K; ++k)
      for (int n = 0; n < s.N; ++n)
        bNK[(size_t(b) * s.N + n) * pitch + k] = to_bf16(bKN[(size_t(b) * s.K + k) * s.N + n]);
  CUtensorMap map =
      tpu_host::weightTensorMap(bNK.data(), uint64_t(weightBatches) * s.N, s.K, pitch, Tile::BN);
  std::vector<AType> aData = asType<AType>(a);
  std::vector<float> c(size_t(s.batch) * s.M * s.N, NAN);
  auto kernel = [](DenseA<AType> a, CUtensorMap map, int rows, StoreC store, int M, int N, int K) {
    TPU_DYNAMIC_SMEM(smem);
    gemm_block_sm90a<Tile>(a, &map, rows, store, M, N, K, smem);
  };
  void (*entry)(DenseA<AType>, CUtensorMap, int, StoreC, int, int, int) = kernel;
  tpu_emu::launch(entry,
                  dim3((s.M + Tile::BM - 1) / Tile::BM, (s.N + Tile::BN - 1) / Tile::BN, s.batch),
                  dim3(Tile::kThreads), Tile::smem_bytes(), DenseA<AType>(aData.data(), s.M, s.K),
                  map, batchedWeights ? s.N : 0, StoreC{c.data(), s.M, s.N}, s.M, s.N, s.K);
  return firstMismatch(c, referenceGemm(s, a, bKN, batchedWeights), s.K);
}

TEST(HopperGemm, RaggedFp32A) {
  EXPECT_EQ((hopperGemmMismatch<HopperTileConfig<128, 128, 3>, float>({1, 150, 200, 300}, false)),
            -1);
}
TEST(HopperGemm, Bf16ASmallTileTwoStages) {
  EXPECT_EQ((hopperGemmMismatch<HopperTileConfig<64, 64, 2>, bf16>({1, 70, 60, 40}, false)), -1);
}
TEST(HopperGemm, BatchedWeights) {
  EXPECT_EQ((hopperGemmMismatch<HopperTileConfig<64, 128, 4>, float>({3, 33, 90, 200}, true)), -1);
}

// The host's tile rule picks tiles the device configuration accepts, with the same shared memory,
// within the sm_90 limit.
TEST(HopperTileRule, ChoicesFitAndMatchTheDeviceConfig) {
  using tpu::cuda::chooseHopperTile;
  constexpr int kSmem = tpu::cuda::kSmemPerBlockSm90, kSms = tpu::cuda::kMultiprocessorsH100;
  constexpr tpu::cuda::HopperTileChoice big = chooseHopperTile(4096, 4096, 4096, kSmem, kSms);
  static_assert(big.smemBytes() == HopperTileConfig<big.bm, big.bn, big.stages>::smem_bytes());
  EXPECT_EQ(big.bm, 128);
  EXPECT_EQ(big.bn, 128);
  EXPECT_EQ(big.stages, 4);
  constexpr tpu::cuda::HopperTileChoice small = chooseHopperTile(8, 10, 40, kSmem, kSms);
  static_assert(small.smemBytes() ==
                HopperTileConfig<small.bm, small.bn, small.stages>::smem_bytes());
  EXPECT_EQ(small.bm, 64);
  EXPECT_EQ(small.bn, 64);
  EXPECT_EQ(small.stages, 2); // one k tile, but the pipeline needs two buffers
  for (int64_t m : {1, 64, 65, 1000, 12544})
    for (int64_t n : {8, 64, 100, 1024})
      for (int64_t k : {3, 64, 147, 4608}) {
        tpu::cuda::HopperTileChoice t = chooseHopperTile(m, n, k, kSmem, kSms);
        EXPECT_TRUE((t.bm == 64 || t.bm == 128) && (t.bn == 64 || t.bn == 128));
        EXPECT_GE(t.stages, 2);
        EXPECT_LE(t.smemBytes(), kSmem);
      }
}

} // namespace
