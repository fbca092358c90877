// GPU benchmark of the device library's GEMM (tpu_cuda::gemm_block) against cuBLAS.
//
//   nvcc -std=c++17 -O3 -arch=sm_90 -I compiler/lib/Target/CUDA -I compiler/lib/Target/CUDA/prelude
//        tests/cuda/bench-gemm.cu -lcublas -o bench-gemm
//   ./bench-gemm [SIZE...]            (default: 4096 8192; square M = N = K = SIZE)
//
// With -DTPU_BENCH_SM90A, built for sm_90a alone (-gencode arch=compute_90a,code=sm_90a: nvcc 13's
// -arch=sm_90a also builds compute_90 PTX, which has no wgmma), it benches the Hopper path
// (gemm_block_sm90a: wgmma, weights by TMA, prelude/tpu_cuda_sm90a.cuh) as well, on the same
// inputs against the same cuBLAS results. scripts/bench-gpu does so on an sm_90 GPU.
//
// For every size and kernel (kernel=gemm_block, and kernel=gemm_block_sm90a) it prints two lines of
// key=value pairs:
//   case=gemm: C = A * W^T, bf16 inputs, fp32 accumulation, bf16 output; tpu_cuda vs cublasGemmEx
//     (CUBLAS_COMPUTE_32F), TFLOP/s = 2 M N K / time, pct_of_cublas = 100 * cuBLAS time / ours;
//   case=fused: the same GEMM plus bias + ReLU + residual; tpu_cuda's epilogue in registers vs
//     cublasGemmEx followed by a separate elementwise kernel (ratio = their time / ours).
// Each case also compares the tpu_cuda result with the cuBLAS one (max_rel_diff) and the program
// exits 1 when they disagree beyond bf16 rounding, so a run doubles as a hardware check.
#include "TileRule.h"
#include "tpu_cuda.cuh"
#if defined(TPU_BENCH_SM90A)
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "TPU_BENCH_SM90A needs a build for sm_90a alone: -gencode arch=compute_90a,code=sm_90a"
#endif
#include "tpu_cuda_host.h"
#include "tpu_cuda_sm90a.cuh"
#endif

#include <cublas_v2.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace tpu_cuda;

namespace {

// The tile the rule picks for large square GEMMs on both sm_80 and sm_90.
using BigTile = TileConfig<128, 128, 32, 2, 4, 4>;
constexpr tpu::cuda::TileChoice kBigChoice =
    tpu::cuda::chooseTile(4096, 4096, 4096, tpu::cuda::kSmemPerBlockSm80);
static_assert(kBigChoice == tpu::cuda::TileChoice{BigTile::BM, BigTile::BN, BigTile::BK,
                                                  BigTile::WarpsM, BigTile::WarpsN,
                                                  BigTile::Stages},
              "the benchmark measures the tile the rule picks");

#if defined(TPU_BENCH_SM90A)
// The Hopper tile the rule picks for these GEMMs on an H100/H200 (sm_90a).
using HopperTile = HopperTileConfig<128, 128, 4>;
constexpr tpu::cuda::HopperTileChoice kHopperChoice = tpu::cuda::chooseHopperTile(
    4096, 4096, 4096, tpu::cuda::kSmemPerBlockSm90, tpu::cuda::kMultiprocessorsH100);
static_assert(kHopperChoice.bm == HopperTile::BM && kHopperChoice.bn == HopperTile::BN &&
                  kHopperChoice.stages == HopperTile::Stages &&
                  kHopperChoice.smemBytes() == HopperTile::smem_bytes(),
              "the benchmark measures the Hopper tile the rule picks");

// gemm_block_sm90a over the whole C, the weights W[N][K] (the same for every batch) by TMA.
template <class Tile, class Epilogue>
__global__ void __launch_bounds__(Tile::kThreads)
    hopper_gemm_kernel(DenseA<bf16> a, const __grid_constant__ CUtensorMap w_map, Epilogue epilogue,
                       int M, int N, int K) {
  TPU_DYNAMIC_SMEM(smem);
  gemm_block_sm90a<Tile>(a, &w_map, 0, epilogue, M, N, K, smem);
}

template <class Tile, class Epilogue>
void launch_hopper_gemm(const DenseA<bf16> &a, const CUtensorMap &w_map, const Epilogue &epilogue,
                        int M, int N, int K) {
  auto *kernel = &hopper_gemm_kernel<Tile, Epilogue>;
  TPU_LAUNCH(kernel, gemm_grid<Tile>(M, N, 1), dim3(Tile::kThreads), Tile::smem_bytes(), a, w_map,
             epilogue, M, N, K);
}
#endif

#define CUBLAS_CHECK(call)                                                                         \
  do {                                                                                             \
    cublasStatus_t status_ = (call);                                                               \
    if (status_ != CUBLAS_STATUS_SUCCESS) {                                                        \
      std::fprintf(stderr, "%s:%d: %s failed: status %d\n", __FILE__, __LINE__, #call,             \
                   static_cast<int>(status_));                                                     \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

// Deterministic values in [-1, 1) from a hash of the index.
__global__ void fill_random(bf16 *data, long long count, unsigned seed) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u ^ seed * 0x9E3779B9u;
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    x ^= x >> 12;
    data[i] = to_bf16(static_cast<float>(x & 0xffffu) / 32768.0f - 1.0f);
  }
}

// Both epilogues store adjacent column pairs as one 32-bit bf16x2 (N is even here).
struct StoreBf16 {
  bf16 *out;
  int N;
  __device__ void operator()(int, int m, int n, float acc) const {
    out[static_cast<long long>(m) * N + n] = to_bf16(acc);
  }
  __device__ void pair(int, int m, int n, float first, float second) const {
    *reinterpret_cast<uint32_t *>(out + static_cast<long long>(m) * N + n) =
        pack_bf16x2(to_bf16(first), to_bf16(second));
  }
};

struct BiasReluResidual {
  const bf16 *bias;
  const bf16 *residual;
  bf16 *out;
  int N;
  __device__ float value(long long index, int n, float acc) const {
    return fmaxf(acc + to_float(bias[n]), 0.0f) + to_float(residual[index]);
  }
  __device__ void operator()(int, int m, int n, float acc) const {
    long long index = static_cast<long long>(m) * N + n;
    out[index] = to_bf16(value(index, n, acc));
  }
  __device__ void pair(int, int m, int n, float first, float second) const {
    long long index = static_cast<long long>(m) * N + n;
    *reinterpret_cast<uint32_t *>(out + index) =
        pack_bf16x2(to_bf16(value(index, n, first)), to_bf16(value(index + 1, n + 1, second)));
  }
};

// The unfused baseline's second kernel: out = relu(c + bias) + residual.
__global__ void bias_relu_residual(const bf16 *c, const bf16 *bias, const bf16 *residual, bf16 *out,
                                   long long count, int N) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    out[i] = to_bf16(fmaxf(to_float(c[i]) + to_float(bias[i % N]), 0.0f) + to_float(residual[i]));
}

// Mean milliseconds of `run` over `iterations` after `warmup` runs.
template <class Run> float time_ms(Run run, int warmup, int iterations) {
  for (int i = 0; i < warmup; ++i)
    run();
  TPU_CUDA_CHECK(cudaGetLastError());
  cudaEvent_t start, stop;
  TPU_CUDA_CHECK(cudaEventCreate(&start));
  TPU_CUDA_CHECK(cudaEventCreate(&stop));
  TPU_CUDA_CHECK(cudaEventRecord(start));
  for (int i = 0; i < iterations; ++i)
    run();
  TPU_CUDA_CHECK(cudaEventRecord(stop));
  TPU_CUDA_CHECK(cudaEventSynchronize(stop));
  TPU_CUDA_CHECK(cudaGetLastError());
  float ms = 0;
  TPU_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  TPU_CUDA_CHECK(cudaEventDestroy(start));
  TPU_CUDA_CHECK(cudaEventDestroy(stop));
  return ms / iterations;
}

// Largest |a - b| / (1 + |b|) over two device bf16 arrays.
double max_relative_difference(const bf16 *a, const bf16 *b, long long count) {
  std::vector<bf16> ha(count), hb(count);
  TPU_CUDA_CHECK(cudaMemcpy(ha.data(), a, count * sizeof(bf16), cudaMemcpyDeviceToHost));
  TPU_CUDA_CHECK(cudaMemcpy(hb.data(), b, count * sizeof(bf16), cudaMemcpyDeviceToHost));
  double worst = 0;
  for (long long i = 0; i < count; ++i) {
    double x = to_float(ha[i]), y = to_float(hb[i]);
    double diff = std::fabs(x - y) / (1.0 + std::fabs(y));
    if (!(diff <= worst)) // NaN makes it infinite
      worst = std::isnan(diff) ? INFINITY : diff;
  }
  return worst;
}

// Both results are rounded to bf16 (2^-8 relative) after fp32 sums in different orders.
constexpr double kTolerance = 2e-2;

bool bench_size(cublasHandle_t handle, int size) {
  const int M = size, N = size, K = size;
  const long long mk = 1LL * M * K, nk = 1LL * N * K, mn = 1LL * M * N;
  bf16 *a, *w, *bias, *residual, *c_ours, *c_cublas, *out_ours, *out_cublas;
  TPU_CUDA_CHECK(cudaMalloc(&a, mk * sizeof(bf16)));
  TPU_CUDA_CHECK(cudaMalloc(&w, nk * sizeof(bf16)));
  TPU_CUDA_CHECK(cudaMalloc(&bias, N * sizeof(bf16)));
  TPU_CUDA_CHECK(cudaMalloc(&residual, mn * sizeof(bf16)));
  TPU_CUDA_CHECK(cudaMalloc(&c_ours, mn * sizeof(bf16)));
  TPU_CUDA_CHECK(cudaMalloc(&c_cublas, mn * sizeof(bf16)));
  TPU_CUDA_CHECK(cudaMalloc(&out_ours, mn * sizeof(bf16)));
  TPU_CUDA_CHECK(cudaMalloc(&out_cublas, mn * sizeof(bf16)));
  fill_random<<<1024, 256>>>(a, mk, 1);
  fill_random<<<1024, 256>>>(w, nk, 2);
  fill_random<<<1024, 256>>>(bias, N, 3);
  fill_random<<<1024, 256>>>(residual, mn, 4);
  TPU_CUDA_CHECK(cudaDeviceSynchronize());

  const DenseA<bf16> a_loader(a, M, K);
  const DenseB_NK w_loader(w, N, K);
  const StoreBf16 store{c_ours, N};
  const BiasReluResidual store_fused{bias, residual, out_ours, N};
  // Row-major C[M][N] = A[M][K] * W[N][K]^T is column-major C^T = W * A^T: cuBLAS (column-major)
  // sees W's storage as the K x N matrix W^T (so op T gives W), A's as the K x M matrix A^T (op N),
  // and writes C^T (N x M, leading dimension N), which is C in row-major order.
  const float one = 1.0f, zero = 0.0f;
  auto cublas = [&] {
    CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, w, CUDA_R_16BF, K, a,
                              CUDA_R_16BF, K, &zero, c_cublas, CUDA_R_16BF, N, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
  };
  auto cublas_fused = [&] {
    cublas();
    bias_relu_residual<<<4 * 132, 256>>>(c_cublas, bias, residual, out_cublas, mn, N);
  };

  int iterations = size >= 8192 ? 10 : 30;
  double flop = 2.0 * M * N * K;
  float ms_cublas = time_ms(cublas, 3, iterations);
  float ms_unfused = time_ms(cublas_fused, 3, iterations);
  // One kernel of ours against the cuBLAS runs above, on the same inputs. Its outputs start as NaN
  // (all bits set), so a kernel that writes nothing cannot pass for the previous one.
  bool agree = true;
  auto bench_ours = [&](const char *kernel, auto gemm, auto gemm_fused) {
    TPU_CUDA_CHECK(cudaMemset(c_ours, 0xff, mn * sizeof(bf16)));
    TPU_CUDA_CHECK(cudaMemset(out_ours, 0xff, mn * sizeof(bf16)));
    float ms_ours = time_ms(gemm, 3, iterations);
    double gemm_diff = max_relative_difference(c_ours, c_cublas, mn);
    std::printf("case=gemm kernel=%s size=%dx%dx%d tpu_cuda_tflops=%.1f cublas_tflops=%.1f "
                "pct_of_cublas=%.1f max_rel_diff=%.2e\n",
                kernel, M, N, K, flop / ms_ours * 1e-9, flop / ms_cublas * 1e-9,
                100.0 * ms_cublas / ms_ours, gemm_diff);
    float ms_fused = time_ms(gemm_fused, 3, iterations);
    double fused_diff = max_relative_difference(out_ours, out_cublas, mn);
    std::printf("case=fused kernel=%s size=%dx%dx%d tpu_cuda_ms=%.3f "
                "cublas_plus_elementwise_ms=%.3f ratio=%.3f max_rel_diff=%.2e\n",
                kernel, M, N, K, ms_fused, ms_unfused, ms_unfused / ms_fused, fused_diff);
    if (!(gemm_diff <= kTolerance && fused_diff <= kTolerance)) {
      std::fprintf(stderr, "bench-gemm: %s and cuBLAS disagree at size %d\n", kernel, size);
      agree = false;
    }
  };
  bench_ours(
      "gemm_block", [&] { launch_gemm<BigTile>(a_loader, w_loader, store, M, N, K, 1); },
      [&] { launch_gemm<BigTile>(a_loader, w_loader, store_fused, M, N, K, 1); });
#if defined(TPU_BENCH_SM90A)
  const CUtensorMap w_map = tpu_host::weightTensorMap(w, N, K, K, HopperTile::BN);
  bench_ours(
      "gemm_block_sm90a", [&] { launch_hopper_gemm<HopperTile>(a_loader, w_map, store, M, N, K); },
      [&] { launch_hopper_gemm<HopperTile>(a_loader, w_map, store_fused, M, N, K); });
#endif

  for (bf16 *p : {a, w, bias, residual, c_ours, c_cublas, out_ours, out_cublas})
    TPU_CUDA_CHECK(cudaFree(p));
  return agree;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) {
    int size = std::atoi(argv[i]);
    if (size <= 0 || size % 8 != 0) {
      std::fprintf(stderr, "bench-gemm: size '%s' is not a positive multiple of 8\n", argv[i]);
      return 1;
    }
    sizes.push_back(size);
  }
  if (sizes.empty())
    sizes = {4096, 8192};
  cudaDeviceProp properties;
  TPU_CUDA_CHECK(cudaGetDeviceProperties(&properties, 0));
  std::printf("device=\"%s\" sm=%d%d tile=%dx%dx%d warps=%dx%d stages=%d smem_bytes=%d\n",
              properties.name, properties.major, properties.minor, BigTile::BM, BigTile::BN,
              BigTile::BK, BigTile::WarpsM, BigTile::WarpsN, BigTile::Stages,
              BigTile::smem_bytes());
#if defined(TPU_BENCH_SM90A)
  std::printf("hopper_tile=%dx%dx%d warpgroups=%d stages=%d smem_bytes=%d\n", HopperTile::BM,
              HopperTile::BN, HopperTile::BK, HopperTile::kWarpgroups, HopperTile::Stages,
              HopperTile::smem_bytes());
#endif
  cublasHandle_t handle;
  CUBLAS_CHECK(cublasCreate(&handle));
  bool ok = true;
  for (int size : sizes)
    ok = bench_size(handle, size) && ok;
  CUBLAS_CHECK(cublasDestroy(handle));
  return ok ? 0 : 1;
}
