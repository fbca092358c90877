// Lane-level tests of the device library's warp primitives under the host emulator: the mma and
// ldmatrix fragment mappings per lane against the PTX ISA tables (written out again here, as in
// /work/shared/gpu-and-autodiff-facts.md A1, not taken from the emulator), the reductions, bf16
// rounding, the swizzle, and the emulator's own checks (deferred cp.async, poisoned shared
// memory, deadlock reports).
#include "tpu_cuda.cuh"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <vector>

using namespace tpu_cuda;

namespace {

struct RowCol {
  int row, col;
};

// PTX ISA, mma.m16n8k16 .bf16 fragments; g = lane / 4, t = lane % 4; `half` 0 is the low 16 bits.
// A (16x16): a0 = A[g][2t, 2t+1], a1 = A[g+8][2t, 2t+1], a2 = A[g][2t+8, 2t+9],
//            a3 = A[g+8][2t+8, 2t+9]
RowCol ptxAElement(int lane, int reg, int half) {
  static const int rowOffset[4] = {0, 8, 0, 8};
  static const int colOffset[4] = {0, 0, 8, 8};
  return {lane / 4 + rowOffset[reg], 2 * (lane % 4) + colOffset[reg] + half};
}
// B (16x8, row = k, col = n): b0 = B[2t, 2t+1][g], b1 = B[2t+8, 2t+9][g]
RowCol ptxBElement(int lane, int reg, int half) {
  return {2 * (lane % 4) + 8 * reg + half, lane / 4};
}
// C/D (16x8): c0, c1 = C[g][2t, 2t+1]; c2, c3 = C[g+8][2t, 2t+1]
RowCol ptxCElement(int lane, int reg) {
  static const int rowOffset[4] = {0, 0, 8, 8};
  return {lane / 4 + rowOffset[reg], 2 * (lane % 4) + reg % 2};
}

// Small integers: their products and sums are exact in bf16 and fp32, so results compare equal.
float smallInteger(std::mt19937 &random) {
  return static_cast<float>(static_cast<int>(random() % 9) - 4);
}

struct MmaLaneData {
  uint32_t a[32][4], b[32][2];
  float d[32][4];
};

__global__ void mmaKernel(MmaLaneData *data) {
  int lane = threadIdx.x;
  mma_m16n8k16_bf16(data->d[lane], data->a[lane], data->b[lane]);
}

TEST(MmaFragment, LanesFollowThePtxTables) {
  std::mt19937 random(1);
  float A[16][16], B[16][8], C[16][8];
  for (auto &row : A)
    for (float &v : row)
      v = smallInteger(random);
  for (auto &row : B)
    for (float &v : row)
      v = smallInteger(random);
  for (auto &row : C)
    for (float &v : row)
      v = smallInteger(random);
  MmaLaneData data;
  for (int lane = 0; lane < 32; ++lane) {
    for (int reg = 0; reg < 4; ++reg) {
      RowCol lo = ptxAElement(lane, reg, 0), hi = ptxAElement(lane, reg, 1);
      data.a[lane][reg] = pack_bf16x2(to_bf16(A[lo.row][lo.col]), to_bf16(A[hi.row][hi.col]));
      RowCol c = ptxCElement(lane, reg);
      data.d[lane][reg] = C[c.row][c.col];
    }
    for (int reg = 0; reg < 2; ++reg) {
      RowCol lo = ptxBElement(lane, reg, 0), hi = ptxBElement(lane, reg, 1);
      data.b[lane][reg] = pack_bf16x2(to_bf16(B[lo.row][lo.col]), to_bf16(B[hi.row][hi.col]));
    }
  }
  TPU_LAUNCH(mmaKernel, dim3(1), dim3(32), 0, &data);
  for (int lane = 0; lane < 32; ++lane)
    for (int reg = 0; reg < 4; ++reg) {
      RowCol c = ptxCElement(lane, reg);
      float expected = C[c.row][c.col];
      for (int k = 0; k < 16; ++k)
        expected += A[c.row][k] * B[k][c.col];
      EXPECT_EQ(data.d[lane][reg], expected) << "lane " << lane << " reg " << reg;
    }
}

// Every A element of the 16x16 tile is in exactly one (lane, register, half), and likewise for B
// and C: the tables above are permutations, so the test above pins every position.
TEST(MmaFragment, TablesCoverEveryElementOnce) {
  std::set<int> a, b, c;
  for (int lane = 0; lane < 32; ++lane) {
    for (int reg = 0; reg < 4; ++reg)
      for (int half = 0; half < 2; ++half) {
        RowCol e = ptxAElement(lane, reg, half);
        a.insert(e.row * 16 + e.col);
      }
    for (int reg = 0; reg < 2; ++reg)
      for (int half = 0; half < 2; ++half) {
        RowCol e = ptxBElement(lane, reg, half);
        b.insert(e.row * 8 + e.col);
      }
    for (int reg = 0; reg < 4; ++reg) {
      RowCol e = ptxCElement(lane, reg);
      c.insert(e.row * 8 + e.col);
    }
  }
  EXPECT_EQ(a.size(), 256u);
  EXPECT_EQ(b.size(), 128u);
  EXPECT_EQ(c.size(), 128u);
}

// Four 8x8 matrices of 16-bit ids (matrix * 64 + row * 8 + col), their rows scattered over shared
// memory at a 48-byte pitch so that only the per-lane addresses can find them.
constexpr int kRowPitch = 48;
struct LdmatrixLaneData {
  int matrices;
  bool transpose;
  uint32_t regs[32][4];
};

uint16_t matrixId(int matrix, int row, int col) {
  return static_cast<uint16_t>(matrix * 64 + row * 8 + col);
}

__global__ void ldmatrixKernel(LdmatrixLaneData *data) {
  __shared__ __align__(16) unsigned char tile[32 * kRowPitch];
  int lane = threadIdx.x;
  // Lane l writes row l % 8 of matrix l / 8, stored at slot (l * 5) % 32 to scatter the rows.
  int slot = lane * 5 % 32;
  uint16_t *row = reinterpret_cast<uint16_t *>(tile + slot * kRowPitch);
  for (int col = 0; col < 8; ++col)
    row[col] = matrixId(lane / 8, lane % 8, col);
  __syncthreads();
  // PTX ISA: lanes 8j..8j+7 give the addresses of the rows of matrix j.
  const unsigned char *address = tile + slot * kRowPitch;
  uint32_t *regs = data->regs[lane];
  if (data->matrices == 4)
    data->transpose ? ldmatrix_x4_trans(regs, address) : ldmatrix_x4(regs, address);
  else
    data->transpose ? ldmatrix_x2_trans(regs, address) : ldmatrix_x2(regs, address);
}

void checkLdmatrix(int matrices, bool transpose) {
  LdmatrixLaneData data{matrices, transpose, {}};
  TPU_LAUNCH(ldmatrixKernel, dim3(1), dim3(32), 0, &data);
  for (int lane = 0; lane < 32; ++lane)
    for (int j = 0; j < matrices; ++j) {
      // PTX ISA: register j of lane l holds M_j[l/4][2(l%4)], M_j[l/4][2(l%4)+1] (low half
      // first); with .trans M_j[2(l%4)][l/4], M_j[2(l%4)+1][l/4].
      int q = lane / 4, p = 2 * (lane % 4);
      uint32_t low = transpose ? matrixId(j, p, q) : matrixId(j, q, p);
      uint32_t high = transpose ? matrixId(j, p + 1, q) : matrixId(j, q, p + 1);
      EXPECT_EQ(data.regs[lane][j], low | high << 16)
          << "lane " << lane << " register " << j << (transpose ? " .trans" : "");
    }
}

TEST(Ldmatrix, X4) { checkLdmatrix(4, false); }
TEST(Ldmatrix, X4Trans) { checkLdmatrix(4, true); }
TEST(Ldmatrix, X2) { checkLdmatrix(2, false); }
TEST(Ldmatrix, X2Trans) { checkLdmatrix(2, true); }

// The address recipes of facts A1: a row-major 16x16 A tile read with x4 at &A[l % 16][(l/16)*8]
// gives the a registers, a [K=16][N=8] B tile read with x2.trans at &B[l][0] the b registers; an
// mma on them must equal the matrix product.
struct LdmatrixMmaData {
  bf16 A[16][16], B[16][8];
  float D[16][8];
};

__global__ void ldmatrixMmaKernel(LdmatrixMmaData *data) {
  __shared__ __align__(16) bf16 a[16][16];
  __shared__ __align__(16) bf16 b[16][8];
  int lane = threadIdx.x;
  for (int i = lane; i < 256; i += 32)
    a[i / 16][i % 16] = data->A[i / 16][i % 16];
  for (int i = lane; i < 128; i += 32)
    b[i / 8][i % 8] = data->B[i / 8][i % 8];
  __syncthreads();
  uint32_t a_regs[4], b_regs[2];
  ldmatrix_x4(a_regs, &a[lane % 16][(lane / 16) * 8]);
  ldmatrix_x2_trans(b_regs, &b[lane % 16][0]);
  float d[4] = {0, 0, 0, 0};
  mma_m16n8k16_bf16(d, a_regs, b_regs);
  for (int reg = 0; reg < 4; ++reg) {
    RowCol c = ptxCElement(lane, reg);
    data->D[c.row][c.col] = d[reg];
  }
}

TEST(Ldmatrix, FeedsMmaFragments) {
  std::mt19937 random(2);
  LdmatrixMmaData data;
  for (auto &row : data.A)
    for (bf16 &v : row)
      v = to_bf16(smallInteger(random));
  for (auto &row : data.B)
    for (bf16 &v : row)
      v = to_bf16(smallInteger(random));
  TPU_LAUNCH(ldmatrixMmaKernel, dim3(1), dim3(32), 0, &data);
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) {
      float expected = 0;
      for (int k = 0; k < 16; ++k)
        expected += to_float(data.A[m][k]) * to_float(data.B[k][n]);
      EXPECT_EQ(data.D[m][n], expected) << "D[" << m << "][" << n << "]";
    }
}

// ---- Reductions ----

__global__ void reduceKernel(const float *in, float *out) {
  float value = in[blockIdx.x * blockDim.x + threadIdx.x];
  int index = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  out[index + 0] = warp_sum(value);
  out[index + 1] = warp_max(value);
  out[index + 2] = block_sum(value);
  out[index + 3] = block_max(value);
}

void checkReductions(int blocks, int threads) {
  std::mt19937 random(3);
  std::vector<float> in(blocks * threads), out(in.size() * 4);
  for (float &v : in)
    v = smallInteger(random);
  TPU_LAUNCH(reduceKernel, dim3(blocks), dim3(threads), 0, in.data(), out.data());
  for (int block = 0; block < blocks; ++block) {
    float blockSum = 0, blockMax = -INFINITY;
    for (int i = 0; i < threads; ++i) {
      blockSum += in[block * threads + i];
      blockMax = std::max(blockMax, in[block * threads + i]);
    }
    for (int i = 0; i < threads; ++i) {
      int warp0 = block * threads + i / 32 * 32;
      float warpSum = 0, warpMax = -INFINITY;
      for (int l = 0; l < 32; ++l) {
        warpSum += in[warp0 + l];
        warpMax = std::max(warpMax, in[warp0 + l]);
      }
      const float *got = &out[(block * threads + i) * 4];
      ASSERT_EQ(got[0], warpSum) << "thread " << i;
      ASSERT_EQ(got[1], warpMax) << "thread " << i;
      ASSERT_EQ(got[2], blockSum) << "thread " << i;
      ASSERT_EQ(got[3], blockMax) << "thread " << i;
    }
  }
}

TEST(Reduction, OneWarp) { checkReductions(2, 32); }
TEST(Reduction, ThreeWarps) { checkReductions(3, 96); }
TEST(Reduction, MaximumBlock) { checkReductions(1, 1024); }

// ---- bf16 ----

// Independent reference: the nearer of the two bf16 neighbours in double precision, ties to the
// even one.
uint16_t nearestBf16(float value) {
  uint32_t word;
  std::memcpy(&word, &value, sizeof word);
  uint16_t below = static_cast<uint16_t>(word >> 16), above = static_cast<uint16_t>(below + 1);
  double down = std::fabs(static_cast<double>(value) - to_float(bf16{below}));
  double up = std::fabs(static_cast<double>(value) - to_float(bf16{above}));
  if (down != up)
    return down < up ? below : above;
  return below % 2 == 0 ? below : above;
}

TEST(Bf16, RoundsToNearestEven) {
  EXPECT_EQ(to_bf16(1.0f).bits, 0x3f80);
  EXPECT_EQ(to_bf16(1.0f + 1.0f / 256).bits, 0x3f80); // tie, 0x3f80 is even
  EXPECT_EQ(to_bf16(1.0f + 3.0f / 256).bits, 0x3f82); // tie, 0x3f82 is even
  EXPECT_EQ(to_bf16(-2.5f).bits, 0xc020);
  EXPECT_EQ(to_bf16(INFINITY).bits, 0x7f80);
  EXPECT_EQ(to_bf16(3.4e38f).bits, 0x7f80); // beyond the largest bf16: rounds to infinity
  EXPECT_TRUE(std::isnan(to_float(to_bf16(NAN))));
  std::mt19937 random(4);
  std::uniform_real_distribution<float> magnitude(-30.0f, 30.0f);
  for (int i = 0; i < 100000; ++i) {
    float value = std::ldexp(std::uniform_real_distribution<float>(-1, 1)(random),
                             static_cast<int>(magnitude(random)));
    ASSERT_EQ(to_bf16(value).bits, nearestBf16(value)) << value;
  }
}

// ---- Swizzle ----

// Every 8 consecutive rows (starting at a multiple of 8) of one chunk column cover all 32 banks,
// and the swizzle is a permutation of the chunks within each row.
template <int RowBytes> void checkSwizzle() {
  constexpr int chunks = RowBytes / 16;
  for (int row = 0; row < 64; ++row) {
    std::set<int> offsets;
    for (int chunk = 0; chunk < chunks; ++chunk) {
      int offset = swizzled_offset<RowBytes>(row, chunk);
      EXPECT_EQ(offset / RowBytes, row);
      offsets.insert(offset);
    }
    EXPECT_EQ(static_cast<int>(offsets.size()), chunks) << "row " << row;
  }
  for (int row0 = 0; row0 < 64; row0 += 8)
    for (int chunk = 0; chunk < chunks; ++chunk) {
      std::set<int> bankGroups; // 16-byte groups of 4 banks
      for (int r = 0; r < 8; ++r)
        bankGroups.insert(swizzled_offset<RowBytes>(row0 + r, chunk) / 16 % 8);
      EXPECT_EQ(bankGroups.size(), 8u)
          << RowBytes << "-byte rows, rows " << row0 << ", chunk " << chunk;
    }
}

TEST(Swizzle, ConflictFreeForEveryRowPitch) {
  checkSwizzle<16>();
  checkSwizzle<32>();
  checkSwizzle<64>();
  checkSwizzle<128>();
  checkSwizzle<256>();
}

// ---- Emulator semantics ----

struct CopyProbe {
  const unsigned char *source; // 64 threads x 16 bytes
  unsigned char before[64][16], after[64][16], zero[64][16];
};

__global__ void cpAsyncKernel(CopyProbe *probe) {
  TPU_DYNAMIC_SMEM(smem);
  int i = threadIdx.x;
  cp_async_16(smem + 16 * i, probe->source + 16 * i, true);
  cp_async_16(smem + 1024 + 16 * i, probe->source, false);
  cp_async_commit();
  std::memcpy(probe->before[i], smem + 16 * i, 16);
  cp_async_wait<0>();
  std::memcpy(probe->after[i], smem + 16 * i, 16);
  std::memcpy(probe->zero[i], smem + 1024 + 16 * i, 16);
}

// The destination is written only at the wait; before, the thread sees the poison (0xFF).
TEST(Emulator, CpAsyncLandsAtTheWaitAndZeroFills) {
  std::vector<unsigned char> source(64 * 16);
  for (size_t i = 0; i < source.size(); ++i)
    source[i] = static_cast<unsigned char>(i * 7);
  auto probe = std::make_unique<CopyProbe>();
  probe->source = source.data();
  TPU_LAUNCH(cpAsyncKernel, dim3(2), dim3(64), 2048, probe.get());
  for (int i = 0; i < 64; ++i)
    for (int b = 0; b < 16; ++b) {
      ASSERT_EQ(probe->before[i][b], 0xFF);
      ASSERT_EQ(probe->after[i][b], source[16 * i + b]);
      ASSERT_EQ(probe->zero[i][b], 0);
    }
}

// Every thread of a 3-D grid of 3-D blocks records its linear id at its global position, so
// each position must be written exactly once with the value CUDA's index rules give.
__global__ void indexKernel(int *out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  int width = gridDim.x * blockDim.x, height = gridDim.y * blockDim.y;
  out[(z * height + y) * width + x] +=
      1 + threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

TEST(Emulator, ThreeDimensionalIndices) {
  dim3 grid(3, 2, 2), block(8, 4, 2);
  int width = 24, height = 8, depth = 4;
  std::vector<int> out(width * height * depth, 0);
  TPU_LAUNCH(indexKernel, grid, block, 0, out.data());
  for (int z = 0; z < depth; ++z)
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x)
        ASSERT_EQ(out[(z * height + y) * width + x], 1 + x % 8 + 8 * (y % 4 + 4 * (z % 2)))
            << x << "," << y << "," << z;
}

int parameterlessRuns = 0;
__global__ void parameterlessKernel() { ++parameterlessRuns; }

TEST(Emulator, KernelWithoutParameters) {
  TPU_LAUNCH(parameterlessKernel, dim3(2), dim3(32), 0);
  EXPECT_EQ(parameterlessRuns, 64);
}

struct GroupProbe {
  unsigned char source[2][16];
  unsigned char afterWaitOne[2], afterWaitZero[2];
};

__global__ void cpAsyncGroupsKernel(GroupProbe *probe) {
  TPU_DYNAMIC_SMEM(smem);
  cp_async_16(smem, probe->source[0], true);
  cp_async_commit(); // older group
  cp_async_16(smem + 16, probe->source[1], true);
  cp_async_commit(); // newer group
  cp_async_wait<1>();
  probe->afterWaitOne[0] = smem[0];
  probe->afterWaitOne[1] = smem[16];
  cp_async_wait<0>();
  probe->afterWaitZero[0] = smem[0];
  probe->afterWaitZero[1] = smem[16];
}

// wait_group 1 completes all but the newest committed group.
TEST(Emulator, CpAsyncWaitLeavesTheNewestGroupsPending) {
  GroupProbe probe{};
  std::memset(probe.source[0], 1, 16);
  std::memset(probe.source[1], 2, 16);
  TPU_LAUNCH(cpAsyncGroupsKernel, dim3(1), dim3(1), 32, &probe); // one thread: no other copies
  EXPECT_EQ(probe.afterWaitOne[0], 1);
  EXPECT_EQ(probe.afterWaitOne[1], 0xFF);
  EXPECT_EQ(probe.afterWaitZero[0], 1);
  EXPECT_EQ(probe.afterWaitZero[1], 2);
}

__global__ void barrierInDivergentCode(int *out) {
  if (threadIdx.x < 32)
    __syncthreads();
  out[threadIdx.x] = 1;
}

__global__ void twoDifferentBarriers(int *out) {
  if (threadIdx.x < 32)
    __syncthreads();
  else
    __syncthreads();
  out[threadIdx.x] = 1;
}

__global__ void shuffleInDivergentCode(float *out) {
  float value = 1.0f;
  if (threadIdx.x % 2 == 0)
    value = warp_sum(value);
  out[threadIdx.x] = value;
}

TEST(EmulatorDeathTest, BarrierInDivergentCodeIsADeadlock) {
  std::vector<int> out(64);
  EXPECT_EXIT(TPU_LAUNCH(barrierInDivergentCode, dim3(1), dim3(64), 0, out.data()),
              testing::ExitedWithCode(1), "tpu_emu: deadlock in block \\(0,0,0\\): 32 threads");
}

TEST(EmulatorDeathTest, DifferentBarriersAreReported) {
  std::vector<int> out(64);
  EXPECT_EXIT(TPU_LAUNCH(twoDifferentBarriers, dim3(1), dim3(64), 0, out.data()),
              testing::ExitedWithCode(1), "tpu_emu: divergent __syncthreads");
}

TEST(EmulatorDeathTest, HalfAWarpInAShuffleIsADeadlock) {
  std::vector<float> out(32);
  EXPECT_EXIT(TPU_LAUNCH(shuffleInDivergentCode, dim3(1), dim3(32), 0, out.data()),
              testing::ExitedWithCode(1), "tpu_emu: deadlock.*16 at a warp collective");
}

__global__ void writeSharedAt(int offset) {
  TPU_DYNAMIC_SMEM(smem);
  smem[offset] = 1;
}

// Dynamic shared memory ends at a guard page: using more than the launch asked for is reported.
TEST(EmulatorDeathTest, SharedMemoryOverrunIsReported) {
  TPU_LAUNCH(writeSharedAt, dim3(1), dim3(32), 1000, 1023); // within the 128-byte rounding
  EXPECT_EXIT(TPU_LAUNCH(writeSharedAt, dim3(1), dim3(32), 1000, 1024), testing::ExitedWithCode(1),
              "tpu_emu: access beyond the dynamic shared memory");
}

TEST(EmulatorDeathTest, TooMuchSharedMemoryIsRejected) {
  std::vector<int> out(64);
  EXPECT_EXIT(TPU_LAUNCH(barrierInDivergentCode, dim3(1), dim3(64), 300 * 1024, out.data()),
              testing::ExitedWithCode(1), "tpu_emu: launch with 307200 bytes");
}

} // namespace
