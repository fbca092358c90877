// tpu_cuda: the device library every generated CUDA file embeds (docs/gpu.md).
//
// Compiles under nvcc for sm_80 and newer (mma.sync, ldmatrix and cp.async as inline PTX), and as
// plain C++17 when TPU_CUDA_EMULATE is defined: then runtime/cuda-emu/tpu_cuda_emu.h stands in
// for CUDA and runs the same code on the CPU, fibers for threads.
//
// Contents
//   - Portability: TPU_LAUNCH, TPU_DYNAMIC_SMEM, TPU_CUDA_CHECK; bf16 with to_bf16/to_float.
//   - Warp primitives: mma_m16n8k16_bf16, ldmatrix_x{2,4}[_trans], cp_async_16 + commit/wait,
//     warp_sum/warp_max, block_sum/block_max.
//   - swizzled_offset: the one shared-memory tile layout (XOR swizzle of 16-byte chunks) that both
//     the tile stores and the ldmatrix addresses use.
//   - gemm_block<TileConfig<...>>(a_loader, b_loader, epilogue, M, N, K, smem): one thread block's
//     tile of C[batch][M][N] = A[batch][M][K] * B[batch][K][N], bf16 operands, fp32 accumulation.
//
// GEMM contract
//   - Grid: blockIdx.x = M tile (M / BM rounded up), blockIdx.y = N tile, blockIdx.z = batch;
//     gemm_grid<Tile>(M, N, batch) computes it. blockDim.x = Tile::kThreads (1-D).
//   - Dynamic shared memory: Tile::smem_bytes(); TPU_LAUNCH raises the 48 KiB default limit.
//   - A loaders give rows m (K contiguous): DenseA<T>, ConvA<T> (implicit GEMM over NHWC).
//     B loaders: DenseB_NK (bf16 weights [N][K]), DenseB_KN<T> (activations [batch][K][N]).
//     Every loader has load_chunk(dst, batch, row, col): the 8 elements row, col..col+7 of its
//     operand (A: m, k; B_NK: n, k; B_KN: k, n) into 16 bytes of shared memory, zero outside.
//   - Epilogue: a functor the kernel calls once per valid output element with the fp32 sum,
//       __device__ void operator()(int batch, int m, int n, float acc) const;
//     it owns the store, so fused bias/activation/residual and any output type or layout (fp32,
//     bf16, NHWC ...) live in the generated code, applied to the accumulator registers. An
//     epilogue may also define
//       __device__ void pair(int batch, int m, int n, float acc_n, float acc_n_plus_1) const;
//     then every pair of adjacent outputs (n even, both inside C) goes through it instead, for one
//     vector store; the ragged last column still uses operator().

// An include guard, not #pragma once: the emitter pastes this file into the generated source,
// where #pragma once would be "in main file".
#ifndef TPU_CUDA_CUH
#define TPU_CUDA_CUH

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>

#if defined(TPU_CUDA_EMULATE)
#include "tpu_cuda_emu.h"
#else
#include <cuda_runtime.h>
#endif

// Test-only mutations (tests/cuda): each deliberately breaks one rule, and the tests assert that
// the emulator then produces wrong results (or bank conflicts). 0 in every real build.
#define TPU_CUDA_MUTATION_NONE 0
#define TPU_CUDA_MUTATION_LOAD_SWIZZLE 1   // ldmatrix addresses ignore the swizzle the stores use
#define TPU_CUDA_MUTATION_FRAGMENT_INDEX 2 // epilogue swaps the two columns of a C fragment pair
#define TPU_CUDA_MUTATION_NO_BARRIER 3     // main loop lacks the __syncthreads after the wait
#define TPU_CUDA_MUTATION_NO_WAIT 4        // main loop lacks cp_async_wait
#define TPU_CUDA_MUTATION_NO_SWIZZLE 5     // no swizzle at all (correct, but bank conflicts)
#ifndef TPU_CUDA_MUTATION
#define TPU_CUDA_MUTATION TPU_CUDA_MUTATION_NONE
#endif

// Aborts with one line naming the failed runtime call.
#define TPU_CUDA_CHECK(call)                                                                       \
  do {                                                                                             \
    cudaError_t tpu_cuda_status_ = (call);                                                         \
    if (tpu_cuda_status_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                    \
                   cudaGetErrorString(tpu_cuda_status_));                                          \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

// TPU_LAUNCH(kernel, grid, block, smem_bytes, args...). `kernel` must be one macro argument: name a
// template instantiation through a pointer (auto *k = &gemm_kernel<...>;) or wrap it in
// parentheses. Dynamic shared memory above the 48 KiB default needs the per-kernel opt-in.
#if defined(TPU_CUDA_EMULATE)
#define TPU_LAUNCH(kernel, grid, block, smem_bytes, ...)                                           \
  ::tpu_emu::launch(kernel, grid, block, smem_bytes, ##__VA_ARGS__)
#else
#define TPU_LAUNCH(kernel, grid, block, smem_bytes, ...)                                           \
  do {                                                                                             \
    if ((smem_bytes) > 48 * 1024)                                                                  \
      TPU_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,     \
                                          static_cast<int>(smem_bytes)));                          \
    kernel<<<grid, block, smem_bytes>>>(__VA_ARGS__);                                              \
  } while (0)
#endif

// Declares `unsigned char *name`, the block's dynamic shared memory, 128-byte aligned. One
// extern array for every kernel: all extern __shared__ declarations alias the same memory.
#if defined(TPU_CUDA_EMULATE)
#define TPU_DYNAMIC_SMEM(name) unsigned char *name = ::tpu_emu::dynamic_smem()
#else
#define TPU_DYNAMIC_SMEM(name)                                                                     \
  extern __shared__ __align__(128) unsigned char tpu_cuda_dynamic_smem_[];                         \
  unsigned char *name = tpu_cuda_dynamic_smem_
#endif

// Full unrolling of the loops over register arrays (fragments, accumulators, chunk elements):
// a loop nvcc leaves rolled indexes the array dynamically, which moves it to local memory.
#if defined(__CUDACC__)
#define TPU_UNROLL _Pragma("unroll")
#else
#define TPU_UNROLL
#endif

namespace tpu_cuda {

// ---------------------------------------------------------------------------------------------
// bf16: the bit pattern of a bfloat16, the same type on host, device and in emulation (so that
// generated code can initialise weight arrays with {0x3f80} literals).
struct bf16 {
  uint16_t bits;
};

__host__ __device__ __forceinline__ float to_float(bf16 value) {
  uint32_t word = static_cast<uint32_t>(value.bits) << 16;
  float result;
  memcpy(&result, &word, sizeof result);
  return result;
}

// Round to nearest, ties to even; NaN stays a (quiet) NaN.
__host__ __device__ __forceinline__ bf16 to_bf16(float value) {
#if defined(__CUDA_ARCH__) && !defined(TPU_CUDA_EMULATE)
  uint16_t bits;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(bits) : "f"(value));
  return bf16{bits};
#else
  uint32_t word;
  memcpy(&word, &value, sizeof word);
  if ((word & 0x7fffffffu) > 0x7f800000u)
    return bf16{static_cast<uint16_t>((word >> 16) | 0x40u)};
  uint32_t rounding = 0x7fffu + ((word >> 16) & 1u);
  return bf16{static_cast<uint16_t>((word + rounding) >> 16)};
#endif
}

// Two bf16 in one 32-bit register, `low` in bits 0..15 (the lower index of a fragment pair).
__host__ __device__ __forceinline__ uint32_t pack_bf16x2(bf16 low, bf16 high) {
  return static_cast<uint32_t>(low.bits) | static_cast<uint32_t>(high.bits) << 16;
}

// ---------------------------------------------------------------------------------------------
// Warp primitives. Fragment layouts: PTX ISA "warp-level matrix fragment mma.m16n8k16" and
// "ldmatrix"; with g = lane / 4 and t = lane % 4 (documented in detail in tpu_cuda_emu.h).

#if !defined(TPU_CUDA_EMULATE) && defined(__CUDA_ARCH__)
__device__ __forceinline__ uint32_t shared_address(const void *pointer) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}
#endif

// d += a * b for one 16x16 (A, row) by 16x8 (B, col) bf16 tile, fp32 accumulators.
__device__ __forceinline__ void mma_m16n8k16_bf16(float d[4], const uint32_t a[4],
                                                  const uint32_t b[2]) {
#if defined(TPU_CUDA_EMULATE)
  ::tpu_emu::mma_m16n8k16_bf16(d, a, b);
#elif defined(__CUDA_ARCH__)
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// Four 8x8 b16 matrices; lanes 8j..8j+7 give the row addresses of matrix j, register j of lane l
// gets row l/4, columns 2(l%4), 2(l%4)+1.
__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], const void *smem_row) {
#if defined(TPU_CUDA_EMULATE)
  ::tpu_emu::ldmatrix(r, 4, false, smem_row);
#elif defined(__CUDA_ARCH__)
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(smem_row)));
#endif
}

// As ldmatrix_x4, transposed: register j of lane l gets rows 2(l%4), 2(l%4)+1 of column l/4.
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], const void *smem_row) {
#if defined(TPU_CUDA_EMULATE)
  ::tpu_emu::ldmatrix(r, 4, true, smem_row);
#elif defined(__CUDA_ARCH__)
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(smem_row)));
#endif
}

// Two matrices; lanes 0..15 give the row addresses (the others' are ignored).
__device__ __forceinline__ void ldmatrix_x2(uint32_t r[2], const void *smem_row) {
#if defined(TPU_CUDA_EMULATE)
  ::tpu_emu::ldmatrix(r, 2, false, smem_row);
#elif defined(__CUDA_ARCH__)
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(shared_address(smem_row)));
#endif
}

__device__ __forceinline__ void ldmatrix_x2_trans(uint32_t r[2], const void *smem_row) {
#if defined(TPU_CUDA_EMULATE)
  ::tpu_emu::ldmatrix(r, 2, true, smem_row);
#elif defined(__CUDA_ARCH__)
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(shared_address(smem_row)));
#endif
}

// Asynchronous 16-byte global -> shared copy (.cg: bypasses L1, the data is used once per
// block). fill == false reads nothing and writes 16 zero bytes (src-size 0): the padding and the
// ragged edges of a tile. Both addresses must be 16-byte aligned.
__device__ __forceinline__ void cp_async_16(void *smem, const void *gmem, bool fill) {
#if defined(TPU_CUDA_EMULATE)
  ::tpu_emu::cp_async(smem, gmem, 16, fill ? 16 : 0);
#elif defined(__CUDA_ARCH__)
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(smem)),
               "l"(gmem), "r"(fill ? 16 : 0));
#endif
}

// Closes the thread's current group of cp.async copies (an empty group is fine).
__device__ __forceinline__ void cp_async_commit() {
#if defined(TPU_CUDA_EMULATE)
  ::tpu_emu::cp_async_commit();
#elif defined(__CUDA_ARCH__)
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

// Waits until at most `Pending` of the thread's committed groups are still in flight. Other
// threads' copies are visible only after a following __syncthreads.
template <int Pending> __device__ __forceinline__ void cp_async_wait() {
#if defined(TPU_CUDA_EMULATE)
  ::tpu_emu::cp_async_wait(Pending);
#elif defined(__CUDA_ARCH__)
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
#endif
}

struct SumOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// Butterfly reduction: every lane ends with the result over the 32 lanes.
template <class Op> __device__ __forceinline__ float warp_reduce(float value, Op op) {
  for (int offset = 16; offset > 0; offset /= 2)
    value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}
__device__ __forceinline__ float warp_sum(float value) { return warp_reduce(value, SumOp{}); }
__device__ __forceinline__ float warp_max(float value) { return warp_reduce(value, MaxOp{}); }

// Reduction over a 1-D block (blockDim.x a multiple of 32, at most 1024); every thread gets the
// result. Every thread of the block must call it (it contains barriers).
template <class Op>
__device__ __forceinline__ float block_reduce(float value, Op op, float identity) {
  __shared__ float warp_results[32];
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  value = warp_reduce(value, op);
  __syncthreads(); // a previous call may still be reading warp_results
  if (lane == 0)
    warp_results[warp] = value;
  __syncthreads();
  // Every warp reduces the per-warp results itself, so no broadcast step is needed.
  value = lane < static_cast<int>(blockDim.x / 32) ? warp_results[lane] : identity;
  return warp_reduce(value, op);
}
__device__ __forceinline__ float block_sum(float value) {
  return block_reduce(value, SumOp{}, 0.0f);
}
__device__ __forceinline__ float block_max(float value) {
  return block_reduce(value, MaxOp{}, -INFINITY);
}

// ---------------------------------------------------------------------------------------------
// Shared-memory tile layout. A tile is rows of RowBytes bytes, each split into 16-byte chunks
// (8 bf16). ldmatrix reads one chunk column of 8 consecutive rows per phase; without a swizzle a
// row pitch of 64 bytes or more puts several of those rows into the same banks. XOR-ing the chunk
// index with the row's position among the 8 rows that share the banks (CuTe Swizzle<B,4,3> on the
// chunk's 128-byte line, B = log2(chunks per line)) spreads the 8 rows over all 32 banks:
//   >= 8 chunks per row: chunk ^= row % 8
//   c < 8 chunks per row: chunk ^= (row / (8 / c)) % c    (64-byte rows: chunk ^= (row / 2) % 4)
// Stores (cp.async or st.shared) and ldmatrix addresses both go through this one function.
template <int RowBytes>
__host__ __device__ __forceinline__ constexpr int swizzled_offset(int row, int chunk) {
  static_assert(RowBytes % 16 == 0 && RowBytes >= 16, "rows are whole 16-byte chunks");
#if TPU_CUDA_MUTATION == TPU_CUDA_MUTATION_NO_SWIZZLE
  return row * RowBytes + chunk * 16;
#else
  constexpr int kChunksPerRow = RowBytes / 16;
  if constexpr (kChunksPerRow >= 8)
    return row * RowBytes + (chunk ^ (row % 8)) * 16;
  else
    return row * RowBytes + (chunk ^ (row / (8 / kChunksPerRow) % kChunksPerRow)) * 16;
#endif
}

// The offset the fragment loads use: swizzled_offset, except in the LOAD_SWIZZLE mutation test.
template <int RowBytes>
__host__ __device__ __forceinline__ constexpr int fragment_offset(int row, int chunk) {
#if TPU_CUDA_MUTATION == TPU_CUDA_MUTATION_LOAD_SWIZZLE
  return row * RowBytes + chunk * 16;
#else
  return swizzled_offset<RowBytes>(row, chunk);
#endif
}

// ---------------------------------------------------------------------------------------------
// Tile configuration. BM x BN outputs per block, BK of the reduction per pipeline stage,
// WarpsM x WarpsN warps, each computing a (BM / WarpsM) x (BN / WarpsN) warp tile from 16x8 mma
// tiles, Stages shared-memory buffers (1 = synchronous loads). The host-side rule that picks
// these numbers is compiler/lib/Target/CUDA/TileRule.h; its constraints are the asserts here.
template <int BM_, int BN_, int BK_, int WarpsM_, int WarpsN_, int Stages_> struct TileConfig {
  static constexpr int BM = BM_, BN = BN_, BK = BK_;
  static constexpr int WarpsM = WarpsM_, WarpsN = WarpsN_, Stages = Stages_;
  static constexpr int kThreads = WarpsM * WarpsN * 32;
  static constexpr int kWarpM = BM / WarpsM, kWarpN = BN / WarpsN;
  static constexpr int kMmaM = kWarpM / 16, kMmaN = kWarpN / 8; // mma tiles per warp
  static constexpr int kATileBytes = BM * BK * 2, kBTileBytes = BN * BK * 2;
  static constexpr int kStageBytes = kATileBytes + kBTileBytes;
  static_assert(BK % 16 == 0, "BK is a multiple of the mma k (16)");
  static_assert(BM % (16 * WarpsM) == 0, "warp tiles are whole 16-row mma tiles");
  // B fragments are loaded with ldmatrix.x4, two 8-column mma tiles at a time.
  static_assert(BN % (16 * WarpsN) == 0, "warp tiles are whole pairs of 8-column mma tiles");
  static_assert(kThreads <= 1024, "at most 1024 threads per block");
  static_assert(Stages >= 1, "at least one shared-memory stage");
  __host__ __device__ static constexpr int smem_bytes() { return Stages * kStageBytes; }
};

// ---------------------------------------------------------------------------------------------
// Operand loaders. A chunk is 8 consecutive elements along a loader's contiguous dimension; the
// fast path is one cp.async of 16 bytes, the general path (fp32 sources, unaligned or ragged
// rows) reads the elements, converts them to bf16 and stores the 16 bytes synchronously.

// 16 bytes of bf16, stored to shared memory in one vector store.
struct alignas(16) Chunk16 {
  uint32_t words[4];
};

__device__ __forceinline__ bf16 load_as_bf16(const bf16 *p) { return *p; }
__device__ __forceinline__ bf16 load_as_bf16(const float *p) { return to_bf16(*p); }

// Writes element `col + i` of a row for i = 0..7, or zero where valid(i) is false.
template <class Address, class Valid>
__device__ __forceinline__ void store_chunk_elements(void *dst, Address address, Valid valid) {
  bf16 values[8];
  TPU_UNROLL
  for (int i = 0; i < 8; ++i)
    values[i] = valid(i) ? load_as_bf16(address(i)) : bf16{0};
  Chunk16 chunk;
  TPU_UNROLL
  for (int i = 0; i < 4; ++i)
    chunk.words[i] = pack_bf16x2(values[2 * i], values[2 * i + 1]);
  *static_cast<Chunk16 *>(dst) = chunk;
}

template <class T> __host__ __device__ inline bool is_aligned16(const T *p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// Row-major [batch][Rows][Cols] operand, chunks along Cols. When Cols and the batch stride are
// multiples of 8 and the base is 16-byte aligned, every chunk is whole and aligned: bf16 chunks
// then load by cp.async, fp32 chunks by two 16-byte vector loads (converted to bf16 in
// registers). Otherwise element by element.
template <class T> struct DenseRows {
  const T *data;
  int rows, cols;
  long long batch_stride; // elements between batches; 0 broadcasts one matrix to every batch
  bool whole_chunks;

  __host__ __device__ DenseRows(const T *data, int rows, int cols, long long batch_stride)
      : data(data), rows(rows), cols(cols), batch_stride(batch_stride),
        whole_chunks(cols % 8 == 0 && batch_stride % 8 == 0 && is_aligned16(data)) {}

  __host__ __device__ bool async_copy() const { return sizeof(T) == 2 && whole_chunks; }

  __device__ __forceinline__ void load_chunk(void *dst, int batch, int row, int col) const {
    const T *row_start = data + batch * batch_stride + static_cast<long long>(row) * cols;
    bool inside = row < rows && col < cols;
    if constexpr (sizeof(T) == 2) {
      if (whole_chunks) {
        cp_async_16(dst, inside ? row_start + col : data, inside);
        return;
      }
    } else {
      if (whole_chunks) {
        Chunk16 chunk = {{0, 0, 0, 0}};
        if (inside) {
          const float4 *source = reinterpret_cast<const float4 *>(row_start + col);
          float4 low = source[0], high = source[1];
          float values[8] = {low.x, low.y, low.z, low.w, high.x, high.y, high.z, high.w};
          TPU_UNROLL
          for (int i = 0; i < 4; ++i)
            chunk.words[i] = pack_bf16x2(to_bf16(values[2 * i]), to_bf16(values[2 * i + 1]));
        }
        *static_cast<Chunk16 *>(dst) = chunk;
        return;
      }
    }
    store_chunk_elements(
        dst, [&](int i) { return row_start + col + i; },
        [&](int i) { return row < rows && col + i < cols; });
  }
};

// A = [batch][M][K], row-major.
template <class T> struct DenseA : DenseRows<T> {
  __host__ __device__ DenseA(const T *data, int M, int K, long long batch_stride = -1)
      : DenseRows<T>(data, M, K, batch_stride < 0 ? static_cast<long long>(M) * K : batch_stride) {}
};

// B = [batch][K][N], row-major (activations, e.g. attention's V): chunks along N, fragments by
// ldmatrix .trans.
template <class T> struct DenseB_KN : DenseRows<T> {
  static constexpr bool kContiguousK = false;
  __host__ __device__ DenseB_KN(const T *data, int K, int N, long long batch_stride = -1)
      : DenseRows<T>(data, K, N, batch_stride < 0 ? static_cast<long long>(K) * N : batch_stride) {}
};

// B given as bf16 [N][K] (K contiguous: weights laid out at compile time), shared by every batch
// unless batch_stride says otherwise: chunks along K, fragments by ldmatrix without .trans.
struct DenseB_NK : DenseRows<bf16> {
  static constexpr bool kContiguousK = true;
  __host__ __device__ DenseB_NK(const bf16 *data, int N, int K, long long batch_stride = 0)
      : DenseRows<bf16>(data, N, K, batch_stride) {}
};

// Convolution geometry for the implicit GEMM (NHWC input, kernel rows KH x KW, channels C).
struct ConvShape {
  int n, h, w, c; // input
  int kh, kw;     // kernel
  int stride_h, stride_w;
  int pad_top, pad_left; // padding before the first row / column (the rest follows from oh, ow)
  int dilation_h, dilation_w;
  int oh, ow; // output
  __host__ __device__ int gemm_m() const { return n * oh * ow; }
  __host__ __device__ int gemm_k() const { return kh * kw * c; }
};

// Implicit-GEMM A operand of a convolution over an NHWC input: row m = (n, oh, ow), column
// k = (kh, kw, c), the input pixel (n, oh * stride - pad + kh * dilation, ...) or zero in the
// padding. No im2col buffer: the loader computes the source of every chunk. With T = bf16,
// C % 8 == 0 and an aligned base, a chunk is 8 channels of one pixel: one cp.async.
template <class T> struct ConvA {
  const T *input;
  ConvShape shape;
  bool async_copy;

  __host__ __device__ ConvA(const T *input, const ConvShape &shape)
      : input(input), shape(shape),
        async_copy(sizeof(T) == 2 && shape.c % 8 == 0 && is_aligned16(input)) {}

  // Pointer to input element (row m, column k), or nullptr in the padding or beyond the edges.
  __device__ __forceinline__ const T *element(int m, int k) const {
    const ConvShape &s = shape;
    if (m >= s.gemm_m() || k >= s.gemm_k())
      return nullptr;
    int ow = m % s.ow, oh = m / s.ow % s.oh, n = m / (s.ow * s.oh);
    int c = k % s.c, kw = k / s.c % s.kw, kh = k / (s.c * s.kw);
    int ih = oh * s.stride_h - s.pad_top + kh * s.dilation_h;
    int iw = ow * s.stride_w - s.pad_left + kw * s.dilation_w;
    if (ih < 0 || ih >= s.h || iw < 0 || iw >= s.w)
      return nullptr;
    return input + ((static_cast<long long>(n) * s.h + ih) * s.w + iw) * s.c + c;
  }

  __device__ __forceinline__ void load_chunk(void *dst, int /*batch*/, int m, int k) const {
    if (async_copy) {
      const T *source = element(m, k);
      cp_async_16(dst, source ? source : input, source != nullptr);
      return;
    }
    store_chunk_elements(
        dst, [&](int i) { return element(m, k + i); },
        [&](int i) { return element(m, k + i) != nullptr; });
  }
};

namespace detail {

// Whether the epilogue has the optional two-column store
//   __device__ void pair(int batch, int m, int n, float acc_n, float acc_n_plus_1) const;
// which gemm_block then calls for every pair (n even) whose two columns are both inside C, so the
// generated code can store them with one bf16x2 / float2 access.
template <class Epilogue, class = void> struct HasPairStore : std::false_type {};
template <class Epilogue>
struct HasPairStore<
    Epilogue, std::void_t<decltype(std::declval<const Epilogue &>().pair(0, 0, 0, 0.0f, 0.0f))>>
    : std::true_type {};

// The epilogue of one 16x8 accumulator tile whose top-left output is (m0, n0): the C fragment of
// mma.m16n8k16, which is also the layout of every 8 columns of one warp's 16 rows of a wgmma
// m64nNk16 accumulator (PTX ISA, the two "matrix fragment" figures). With g = lane / 4 and
// t = lane % 4: c[0], c[1] = C[g][2t, 2t+1] and c[2], c[3] = C[g+8][2t, 2t+1], so every lane holds
// pairs of horizontally adjacent outputs (n even). Both GEMM paths store through this function.
template <class Epilogue>
__device__ __forceinline__ void store_accumulators(const Epilogue &epilogue, int batch, int m0,
                                                   int n0, const float c[4], int lane, int M,
                                                   int N) {
  const int g = lane / 4, t = lane % 4;
  TPU_UNROLL
  for (int half = 0; half < 2; ++half) {
    int m = m0 + g + half * 8;
    int n = n0 + 2 * t;
#if TPU_CUDA_MUTATION == TPU_CUDA_MUTATION_FRAGMENT_INDEX
    float first = c[2 * half + 1], second = c[2 * half];
#else
    float first = c[2 * half], second = c[2 * half + 1];
#endif
    if (m >= M)
      continue;
    if constexpr (HasPairStore<Epilogue>::value) {
      if (n + 1 < N) {
        epilogue.pair(batch, m, n, first, second);
        continue;
      }
    }
    if (n < N)
      epilogue(batch, m, n, first);
    if (n + 1 < N)
      epilogue(batch, m, n + 1, second);
  }
}

// Issues the loads of one Rows x Cols tile (Cols contiguous, chunks of 8) whose top-left element
// is (row0, col0) of the loader's operand into the swizzled buffer `tile`.
template <int Rows, int Cols, int Threads, class Loader>
__device__ __forceinline__ void load_tile(const Loader &loader, unsigned char *tile, int batch,
                                          int row0, int col0) {
  constexpr int kChunksPerRow = Cols / 8, kChunks = Rows * kChunksPerRow;
  for (int chunk = threadIdx.x; chunk < kChunks; chunk += Threads) {
    int row = chunk / kChunksPerRow, col = chunk % kChunksPerRow;
    loader.load_chunk(tile + swizzled_offset<Cols * 2>(row, col), batch, row0 + row,
                      col0 + col * 8);
  }
}

// Loads stage `stage` (k tile `k_tile`) of A and B.
template <class Tile, class ALoader, class BLoader>
__device__ __forceinline__ void load_stage(const ALoader &a, const BLoader &b, unsigned char *smem,
                                           int stage, int k_tile, int batch, int m0, int n0) {
  unsigned char *a_tile = smem + stage * Tile::kStageBytes;
  unsigned char *b_tile = a_tile + Tile::kATileBytes;
  int k0 = k_tile * Tile::BK;
  load_tile<Tile::BM, Tile::BK, Tile::kThreads>(a, a_tile, batch, m0, k0);
  if constexpr (BLoader::kContiguousK)
    load_tile<Tile::BN, Tile::BK, Tile::kThreads>(b, b_tile, batch, n0, k0);
  else
    load_tile<Tile::BK, Tile::BN, Tile::kThreads>(b, b_tile, batch, k0, n0);
}

// The warp's mma work on one stage: BK / 16 steps, each loading the A fragments of the warp's
// kMmaM row tiles and the B fragments of its kMmaN column tiles, then kMmaM x kMmaN mma.
template <class Tile, bool BContiguousK>
__device__ __forceinline__ void compute_stage(const unsigned char *a_tile,
                                              const unsigned char *b_tile, int warp_m0, int warp_n0,
                                              int lane, float (&acc)[Tile::kMmaM][Tile::kMmaN][4]) {
  TPU_UNROLL
  for (int kk = 0; kk < Tile::BK / 16; ++kk) {
    uint32_t a_frag[Tile::kMmaM][4], b_frag[Tile::kMmaN][2];
    // A (x4): lane l addresses row l % 16, k chunk l / 16 of the 16x16 tile, so registers 0..3
    // are the (rows 0-7, k 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15) matrices = a0..a3.
    TPU_UNROLL
    for (int i = 0; i < Tile::kMmaM; ++i)
      ldmatrix_x4(a_frag[i], a_tile + fragment_offset<Tile::BK * 2>(warp_m0 + i * 16 + lane % 16,
                                                                    kk * 2 + lane / 16));
    TPU_UNROLL
    for (int j = 0; j < Tile::kMmaN; j += 2) {
      uint32_t r[4];
      if constexpr (BContiguousK) {
        // [n][k] tile: matrix q = lane / 8 covers n (q / 2) * 8.., k chunk q % 2; no transpose
        // needed, row n of the tile is column n of B: r0, r1 = b0, b1 of n tile j; r2, r3 of j+1.
        ldmatrix_x4(
            r, b_tile + fragment_offset<Tile::BK * 2>(warp_n0 + j * 8 + (lane / 16) * 8 + lane % 8,
                                                      kk * 2 + (lane / 8) % 2));
      } else {
        // [k][n] tile: matrix q covers k rows (q % 2) * 8.. and n chunk q / 2, transposed.
        ldmatrix_x4_trans(
            r, b_tile + fragment_offset<Tile::BN * 2>(kk * 16 + ((lane / 8) % 2) * 8 + lane % 8,
                                                      (warp_n0 + j * 8) / 8 + lane / 16));
      }
      b_frag[j][0] = r[0];
      b_frag[j][1] = r[1];
      b_frag[j + 1][0] = r[2];
      b_frag[j + 1][1] = r[3];
    }
    TPU_UNROLL
    for (int i = 0; i < Tile::kMmaM; ++i) {
      TPU_UNROLL
      for (int j = 0; j < Tile::kMmaN; ++j)
        mma_m16n8k16_bf16(acc[i][j], a_frag[i], b_frag[j]);
    }
  }
}

} // namespace detail

// One block's BM x BN tile of C = A * B (see the contract at the top). `smem` is the block's
// dynamic shared memory, at least Tile::smem_bytes() and 16-byte aligned.
//
// Pipeline (Stages = S >= 2): the prologue issues stages 0..S-2, one cp.async group each; k tile
// kt then waits until at most S-2 groups are pending (so tile kt has landed), synchronises the
// block (its data is visible, and every warp is done with the buffer tile kt-1 used), issues tile
// kt+S-1 into that freed buffer, commits (an empty group at the end keeps the count uniform) and
// runs the mma steps on buffer kt % S. S = 1 loads, waits and synchronises before each tile and
// synchronises again before the next load overwrites it.
template <class Tile, class ALoader, class BLoader, class Epilogue>
__device__ __forceinline__ void gemm_block(const ALoader &a, const BLoader &b,
                                           const Epilogue &epilogue, int M, int N, int K,
                                           unsigned char *smem) {
  constexpr int S = Tile::Stages;
  const int batch = blockIdx.z, m0 = blockIdx.x * Tile::BM, n0 = blockIdx.y * Tile::BN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_m0 = warp / Tile::WarpsN * Tile::kWarpM;
  const int warp_n0 = warp % Tile::WarpsN * Tile::kWarpN;
  const int k_tiles = (K + Tile::BK - 1) / Tile::BK;

  float acc[Tile::kMmaM][Tile::kMmaN][4];
  TPU_UNROLL
  for (int i = 0; i < Tile::kMmaM; ++i) {
    TPU_UNROLL
    for (int j = 0; j < Tile::kMmaN; ++j) {
      TPU_UNROLL
      for (int r = 0; r < 4; ++r)
        acc[i][j][r] = 0.0f;
    }
  }

  auto compute = [&](int stage) {
    const unsigned char *a_tile = smem + stage * Tile::kStageBytes;
    detail::compute_stage<Tile, BLoader::kContiguousK>(a_tile, a_tile + Tile::kATileBytes, warp_m0,
                                                       warp_n0, lane, acc);
  };

  if constexpr (S == 1) {
    for (int kt = 0; kt < k_tiles; ++kt) {
      detail::load_stage<Tile>(a, b, smem, 0, kt, batch, m0, n0);
      cp_async_commit();
#if TPU_CUDA_MUTATION != TPU_CUDA_MUTATION_NO_WAIT
      cp_async_wait<0>();
#endif
#if TPU_CUDA_MUTATION != TPU_CUDA_MUTATION_NO_BARRIER
      __syncthreads();
#endif
      compute(0);
      __syncthreads(); // the next tile's loads overwrite the buffer
    }
  } else {
    for (int s = 0; s < S - 1; ++s) {
      if (s < k_tiles)
        detail::load_stage<Tile>(a, b, smem, s, s, batch, m0, n0);
      cp_async_commit();
    }
    for (int kt = 0; kt < k_tiles; ++kt) {
#if TPU_CUDA_MUTATION != TPU_CUDA_MUTATION_NO_WAIT
      cp_async_wait<S - 2>();
#endif
#if TPU_CUDA_MUTATION != TPU_CUDA_MUTATION_NO_BARRIER
      __syncthreads();
#endif
      int next = kt + S - 1;
      if (next < k_tiles)
        detail::load_stage<Tile>(a, b, smem, next % S, next, batch, m0, n0);
      cp_async_commit();
      compute(kt % S);
    }
  }

  TPU_UNROLL
  for (int i = 0; i < Tile::kMmaM; ++i) {
    TPU_UNROLL
    for (int j = 0; j < Tile::kMmaN; ++j)
      detail::store_accumulators(epilogue, batch, m0 + warp_m0 + i * 16, n0 + warp_n0 + j * 8,
                                 acc[i][j], lane, M, N);
  }
}

// The grid gemm_block expects.
template <class Tile> __host__ inline dim3 gemm_grid(int M, int N, int batch) {
  return dim3(static_cast<unsigned>((M + Tile::BM - 1) / Tile::BM),
              static_cast<unsigned>((N + Tile::BN - 1) / Tile::BN), static_cast<unsigned>(batch));
}

// A kernel that is just gemm_block, for groups without extra work and for the tests/benchmarks.
template <class Tile, class ALoader, class BLoader, class Epilogue>
__global__ void __launch_bounds__(Tile::kThreads)
    gemm_kernel(ALoader a, BLoader b, Epilogue epilogue, int M, int N, int K) {
  TPU_DYNAMIC_SMEM(smem);
  gemm_block<Tile>(a, b, epilogue, M, N, K, smem);
}

// Launches gemm_kernel over the whole C[batch][M][N].
template <class Tile, class ALoader, class BLoader, class Epilogue>
__host__ inline void launch_gemm(const ALoader &a, const BLoader &b, const Epilogue &epilogue,
                                 int M, int N, int K, int batch) {
  auto *kernel = &gemm_kernel<Tile, ALoader, BLoader, Epilogue>;
  TPU_LAUNCH(kernel, gemm_grid<Tile>(M, N, batch), dim3(Tile::kThreads), Tile::smem_bytes(), a, b,
             epilogue, M, N, K);
}

} // namespace tpu_cuda

#endif // TPU_CUDA_CUH
