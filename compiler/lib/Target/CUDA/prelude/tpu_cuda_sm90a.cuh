// tpu_cuda_sm90a: the Hopper GEMM path of the device library and its host side (docs/gpu.md,
// "Hopper path"). The emitter pastes it after tpu_cuda.cuh and tpu_cuda_host.h into files
// generated for --gpu=sm_90a only; it uses both. wgmma and the tensor copies need sm_90a: ptxas
// rejects this code for sm_80 and sm_90.
//
//   - gemm_block_sm90a<HopperTileConfig<BM, BN, Stages>>(a_loader, &b_map, b_batch_rows, epilogue,
//     M, N, K, smem): one block's BM x BN tile of C = A * B, BM / 64 warpgroups of 128 threads,
//     each issuing wgmma.mma_async m64nBNk16 (bf16, fp32 accumulators in registers) with both
//     operands in shared memory described by 64-bit matrix descriptors, 128-byte swizzle.
//   - B is a bf16 weight matrix [rows][K] (K contiguous) brought by TMA
//     (cp.async.bulk.tensor.2d) through a host-built tensor map, completion on an mbarrier per
//     stage; A comes through the existing loaders (DenseA, ConvA: cp.async or converting stores)
//     into the same 128-byte swizzled layout (swizzled_offset<128>).
//   - The accumulators go to the epilogue through detail::store_accumulators, as in gemm_block.
//   - Host: tpu_host::weightTensorMap builds the tensor map with cuTensorMapEncodeTiled, obtained
//     through cudaGetDriverEntryPointByVersion (no -lcuda).
#ifndef TPU_CUDA_SM90A_CUH
#define TPU_CUDA_SM90A_CUH

#if !defined(TPU_CUDA_EMULATE)
#include <cuda.h>
#include <cudaTypedefs.h>
#endif

// Test-only mutations of this path (tests/cuda-target/hopper-mutations.py); 0 in real builds.
#define TPU_CUDA_MUTATION_DESC_SWIZZLE 6     // descriptors say 64-byte swizzle instead of 128
#define TPU_CUDA_MUTATION_DESC_SBO 7         // stride byte offset 512 instead of 1024
#define TPU_CUDA_MUTATION_DESC_LBO 8         // leading byte offset 4096 (unused by K-major swizzle)
#define TPU_CUDA_MUTATION_NO_MBARRIER_WAIT 9 // wgmma reads the B stage without waiting for TMA

namespace tpu_cuda {
namespace sm90a {

__device__ __forceinline__ uint32_t smem_address(const void *pointer) {
#if defined(TPU_CUDA_EMULATE)
  return ::tpu_emu::shared_address(pointer);
#elif defined(__CUDA_ARCH__)
  return shared_address(pointer);
#else
  (void)pointer;
  return 0;
#endif
}

// ---------------------------------------------------------------------------------------------
// Matrix descriptors (PTX ISA, "Matrix Descriptor Format"): bits 0-13 start address >> 4, 16-29
// leading dimension byte offset >> 4, 32-45 stride dimension byte offset >> 4, 49-51 base offset,
// 62-63 swizzle mode (1 = 128-byte). Every operand tile here is K-major: rows (M of A, N of B) of
// 128 bytes = 64 bf16 of K, the 16-byte chunks of row r at chunk ^ (r % 8) (the 128-byte swizzle,
// which is swizzled_offset<128> on a 1024-byte aligned tile), so
//   SBO = 1024: the next group of 8 rows (core matrices) is 8 x 128 bytes further;
//   LBO: unused for K-major swizzled layouts (one instruction's 16 k lie in one 128-byte row);
//   base offset 0: every tile starts on a 1024-byte boundary, where the swizzle pattern does.
// The k16 step kk of a 64-wide k tile starts 32 * kk bytes into the row; the hardware applies the
// swizzle to the address it computes, so the step needs no other change.
constexpr uint32_t kSwizzleRowBytes = 128;
#if TPU_CUDA_MUTATION == TPU_CUDA_MUTATION_DESC_SWIZZLE
constexpr uint64_t kSwizzleMode = 2;
#else
constexpr uint64_t kSwizzleMode = 1;
#endif
#if TPU_CUDA_MUTATION == TPU_CUDA_MUTATION_DESC_SBO
constexpr uint32_t kStrideBytes = 512;
#else
constexpr uint32_t kStrideBytes = 8 * kSwizzleRowBytes;
#endif
#if TPU_CUDA_MUTATION == TPU_CUDA_MUTATION_DESC_LBO
constexpr uint32_t kLeadingBytes = 4096;
#else
constexpr uint32_t kLeadingBytes = 16;
#endif

__host__ __device__ __forceinline__ constexpr uint64_t matrix_descriptor(uint32_t smem_address) {
  return static_cast<uint64_t>((smem_address & 0x3ffff) >> 4) |
         static_cast<uint64_t>(kLeadingBytes >> 4) << 16 |
         static_cast<uint64_t>(kStrideBytes >> 4) << 32 | kSwizzleMode << 62;
}

// ---------------------------------------------------------------------------------------------
// Warpgroup MMA: d += a * b, a 64 x 16 (descriptor a) by 16 x N (descriptor b), f32 accumulators
// in the m64nNk16 fragment layout (see store_accumulators).
template <int N> struct Wgmma;
#if !defined(TPU_CUDA_EMULATE) && defined(__CUDA_ARCH__)
template <> struct Wgmma<64> {
  __device__ __forceinline__ static void run(float (&d)[32], uint64_t a, uint64_t b) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
                 "}, %32, %33, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
                   "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
                   "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
                   "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
                   "+f"(d[30]), "+f"(d[31])
                 : "l"(a), "l"(b), "n"(1));
  }
};

template <> struct Wgmma<128> {
  __device__ __forceinline__ static void run(float (&d)[64], uint64_t a, uint64_t b) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
                 "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
                   "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
                   "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
                   "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
                   "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
                   "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
                   "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
                   "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]),
                   "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
                   "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(a), "l"(b), "n"(1));
  }
};
#else
template <int N> struct Wgmma {
  __device__ __forceinline__ static void run(float (&d)[N / 2], uint64_t a, uint64_t b) {
#if defined(TPU_CUDA_EMULATE)
    ::tpu_emu::wgmma_m64nNk16_bf16(d, N, a, b);
#else
    (void)d, (void)a, (void)b;
#endif
  }
};
#endif

// wgmma.fence: the accumulator registers written before are ready for the next wgmma.
__device__ __forceinline__ void wgmma_fence() {
#if defined(TPU_CUDA_EMULATE)
  ::tpu_emu::wgmma_fence();
#elif defined(__CUDA_ARCH__)
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void wgmma_commit() {
#if defined(TPU_CUDA_EMULATE)
  ::tpu_emu::wgmma_commit();
#elif defined(__CUDA_ARCH__)
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

// Waits until at most `Pending` committed wgmma groups are in flight; the accumulators of the
// others are then in the registers.
template <int Pending> __device__ __forceinline__ void wgmma_wait() {
#if defined(TPU_CUDA_EMULATE)
  ::tpu_emu::wgmma_wait(Pending);
#elif defined(__CUDA_ARCH__)
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
#endif
}

// Shared-memory writes of the generic proxy (st.shared, cp.async) become visible to the async
// proxy (wgmma operand reads, TMA). Nothing to do in emulation (one memory).
__device__ __forceinline__ void fence_proxy_async() {
#if !defined(TPU_CUDA_EMULATE) && defined(__CUDA_ARCH__)
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

// ---------------------------------------------------------------------------------------------
// mbarrier (PTX ISA "mbarrier"): 8 bytes of shared memory.
__device__ __forceinline__ void mbarrier_init(uint64_t *bar, int count) {
#if defined(TPU_CUDA_EMULATE)
  ::tpu_emu::mbarrier_init(bar, count);
#elif defined(__CUDA_ARCH__)
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_address(bar)), "r"(count)
               : "memory");
  // The initialisation is visible to the async proxy (the TMA unit) before first use.
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

// Arrives on the barrier and adds `bytes` to the transaction count the phase waits for.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t *bar, uint32_t bytes) {
#if defined(TPU_CUDA_EMULATE)
  ::tpu_emu::mbarrier_arrive_expect_tx(bar, bytes);
#elif defined(__CUDA_ARCH__)
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_address(bar)),
               "r"(bytes)
               : "memory");
#endif
}

// Waits until the phase with parity `parity` (0 for the first use, then alternating) completed.
__device__ __forceinline__ void mbarrier_wait(uint64_t *bar, uint32_t parity) {
#if defined(TPU_CUDA_EMULATE)
  while (!::tpu_emu::mbarrier_try_wait_parity(bar, parity)) {
  }
#elif defined(__CUDA_ARCH__)
  uint32_t done = 0;
  while (!done)
    asm volatile("{\n.reg .pred p;\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done)
                 : "r"(smem_address(bar)), "r"(parity)
                 : "memory");
#endif
}

// TMA: the box of `map` at (c0 innermost, c1) into shared memory at dst (1024-byte aligned for the
// 128-byte swizzle), zero outside the tensor, completing `bytes` of the barrier's transactions.
__device__ __forceinline__ void tma_load_2d(void *dst, const CUtensorMap *map, int c0, int c1,
                                            uint64_t *bar) {
#if defined(TPU_CUDA_EMULATE)
  ::tpu_emu::tma_load_2d(dst, map, c0, c1, bar);
#elif defined(__CUDA_ARCH__)
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(smem_address(dst)),
               "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_address(bar))
               : "memory");
#else
  (void)dst, (void)map, (void)c0, (void)c1, (void)bar;
#endif
}

} // namespace sm90a

// ---------------------------------------------------------------------------------------------
// Hopper tile: BM x BN outputs per block (BM / 64 warpgroups, each a 64 x BN wgmma tile), 64 of
// K per stage (one 128-byte swizzle row), Stages >= 2 buffers of A and B with one mbarrier each.
// The host-side rule is chooseHopperTile in compiler/lib/Target/CUDA/TileRule.h.
template <int BM_, int BN_, int Stages_> struct HopperTileConfig {
  static constexpr int BM = BM_, BN = BN_, BK = 64, Stages = Stages_;
  static constexpr int kWarpgroups = BM / 64, kThreads = kWarpgroups * 128;
  static constexpr int kATileBytes = BM * BK * 2, kBTileBytes = BN * BK * 2;
  static constexpr int kStageBytes = kATileBytes + kBTileBytes;
  static_assert(BM == 64 || BM == 128, "one or two warpgroups of 64 rows");
  static_assert(BN == 64 || BN == 128, "wgmma n of 64 or 128");
  static_assert(Stages >= 2, "the pipeline loads the next stage while one is read");
  // 1024 bytes of slack to align the tiles to the swizzle pattern, the stages, the barriers.
  __host__ __device__ static constexpr int smem_bytes() {
    return 1024 + Stages * kStageBytes + Stages * 8;
  }
};

// One block's BM x BN tile of C = A * B on Hopper. `b_map` is the tensor map of the bf16 weights
// [rows][K] (box 64 x BN, 128-byte swizzle); batch b reads rows b * b_batch_rows + n (0: every
// batch the same weights). Grid and epilogue as gemm_block.
//
// Pipeline: the prologue issues stages 0..S-2. k tile kt then waits for its cp.async group (A),
// fences the generic-proxy writes for wgmma, synchronises the block (A is visible, and every
// warpgroup finished the wgmma of tile kt-1, whose buffer is reused now), issues tile kt+S-1 into
// that buffer (A by cp.async, B by one thread: expect_tx + TMA), waits on the mbarrier of its own
// stage (B landed; parity = use count of the buffer & 1), and runs BK / 16 wgmma, waiting for them
// before the next tile.
template <class Tile, class ALoader, class Epilogue>
__device__ __forceinline__ void gemm_block_sm90a(const ALoader &a, const CUtensorMap *b_map,
                                                 int b_batch_rows, const Epilogue &epilogue, int M,
                                                 int N, int K, unsigned char *smem) {
  constexpr int S = Tile::Stages;
  const int batch = blockIdx.z, m0 = blockIdx.x * Tile::BM, n0 = blockIdx.y * Tile::BN;
  const int warpgroup = threadIdx.x / 128, warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32;
  const int k_tiles = (K + Tile::BK - 1) / Tile::BK;
  unsigned char *tiles = smem + (1024 - sm90a::smem_address(smem) % 1024) % 1024;
  uint64_t *barriers = reinterpret_cast<uint64_t *>(tiles + S * Tile::kStageBytes);

  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s)
      sm90a::mbarrier_init(&barriers[s], 1);
  }
  __syncthreads();

  auto load = [&](int stage, int k_tile) {
    unsigned char *a_tile = tiles + stage * Tile::kStageBytes;
    detail::load_tile<Tile::BM, Tile::BK, Tile::kThreads>(a, a_tile, batch, m0, k_tile * Tile::BK);
    if (threadIdx.x == 0) {
      sm90a::mbarrier_arrive_expect_tx(&barriers[stage], Tile::kBTileBytes);
      sm90a::tma_load_2d(a_tile + Tile::kATileBytes, b_map, k_tile * Tile::BK,
                         batch * b_batch_rows + n0, &barriers[stage]);
    }
  };

  float acc[Tile::BN / 2];
  TPU_UNROLL
  for (int r = 0; r < Tile::BN / 2; ++r)
    acc[r] = 0.0f;

  for (int s = 0; s < S - 1; ++s) {
    if (s < k_tiles)
      load(s, s);
    cp_async_commit();
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    cp_async_wait<S - 2>();
    sm90a::fence_proxy_async();
    __syncthreads();
    int next = kt + S - 1;
    if (next < k_tiles)
      load(next % S, next);
    cp_async_commit();
    const int stage = kt % S;
#if TPU_CUDA_MUTATION != TPU_CUDA_MUTATION_NO_MBARRIER_WAIT
    sm90a::mbarrier_wait(&barriers[stage], static_cast<uint32_t>(kt / S) & 1u);
#endif
    const unsigned char *a_tile = tiles + stage * Tile::kStageBytes;
    const uint32_t a_rows = sm90a::smem_address(a_tile) + warpgroup * 64 * sm90a::kSwizzleRowBytes;
    const uint32_t b_rows = sm90a::smem_address(a_tile + Tile::kATileBytes);
    sm90a::wgmma_fence();
    TPU_UNROLL
    for (int kk = 0; kk < Tile::BK / 16; ++kk)
      sm90a::Wgmma<Tile::BN>::run(acc, sm90a::matrix_descriptor(a_rows + kk * 32),
                                  sm90a::matrix_descriptor(b_rows + kk * 32));
    sm90a::wgmma_commit();
    sm90a::wgmma_wait<0>();
  }

  // Warp w of the warpgroup holds rows 16w..16w+15 of its 64; registers 4j..4j+3 are the 16x8
  // tile of columns 8j..8j+7.
  TPU_UNROLL
  for (int j = 0; j < Tile::BN / 8; ++j)
    detail::store_accumulators(epilogue, batch, m0 + warpgroup * 64 + warp * 16, n0 + j * 8,
                               &acc[4 * j], lane, M, N);
}

} // namespace tpu_cuda

namespace tpu_host {

// The tensor map of bf16 weights [rows][cols] whose rows are `pitch` elements apart (a multiple
// of 8: the driver wants 16-byte strides), read in boxes of box_rows x 64 with the 128-byte
// swizzle; columns from cols to the box's end read as zero.
inline CUtensorMap weightTensorMap(const tpu_cuda::bf16 *data, uint64_t rows, uint64_t cols,
                                   uint64_t pitch, uint32_t box_rows) {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void *function = nullptr;
    cudaDriverEntryPointQueryResult found{};
    checkCuda(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000,
                                               cudaEnableDefault, &found),
              "cudaGetDriverEntryPointByVersion");
    if (found != cudaDriverEntryPointSuccess || !function)
      fail("the driver has no cuTensorMapEncodeTiled");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
  }();
  CUtensorMap map;
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {pitch * 2};
  const cuuint32_t box[2] = {64, box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  if (encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<tpu_cuda::bf16 *>(data), dims,
             strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
             CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
    fail("cuTensorMapEncodeTiled refused a weight tensor map");
  return map;
}

} // namespace tpu_host

#endif // TPU_CUDA_SM90A_CUH
