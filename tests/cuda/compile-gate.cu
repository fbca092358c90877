// Compile gate for the device library (tests/cuda/CMakeLists.txt): instantiates every loader with
// the multi-stage 128x128x32 tile and a row kernel, so that nvcc/ptxas check the inline PTX, the
// register budget (no spills, no local memory) and the per-architecture rules for sm_80/90/90a.
#include "tpu_cuda.cuh"

using namespace tpu_cuda;
using BigTile = TileConfig<128, 128, 32, 2, 4, 4>;
using SmallTile = TileConfig<32, 32, 32, 1, 1, 1>;

// bias + ReLU + residual, stored as bf16 (pairs as one bf16x2): the fused epilogue shape the
// emitter generates.
struct BiasReluResidual {
  const float *bias;
  const bf16 *residual;
  bf16 *out;
  int N;
  __device__ bf16 value(long long index, int n, float acc) const {
    return to_bf16(fmaxf(acc + bias[n], 0.0f) + to_float(residual[index]));
  }
  __device__ void operator()(int, int m, int n, float acc) const {
    long long index = static_cast<long long>(m) * N + n;
    out[index] = value(index, n, acc);
  }
  __device__ void pair(int, int m, int n, float first, float second) const {
    long long index = static_cast<long long>(m) * N + n;
    *reinterpret_cast<uint32_t *>(out + index) =
        pack_bf16x2(value(index, n, first), value(index + 1, n + 1, second));
  }
};

struct StoreF32 {
  float *out;
  int M, N;
  __device__ void operator()(int batch, int m, int n, float acc) const {
    out[(static_cast<long long>(batch) * M + m) * N + n] = acc;
  }
};

template __global__ void tpu_cuda::gemm_kernel<BigTile, DenseA<bf16>, DenseB_NK, BiasReluResidual>(
    DenseA<bf16>, DenseB_NK, BiasReluResidual, int, int, int);
template __global__ void tpu_cuda::gemm_kernel<BigTile, DenseA<float>, DenseB_KN<bf16>, StoreF32>(
    DenseA<float>, DenseB_KN<bf16>, StoreF32, int, int, int);
template __global__ void
tpu_cuda::gemm_kernel<BigTile, ConvA<bf16>, DenseB_NK, StoreF32>(ConvA<bf16>, DenseB_NK, StoreF32,
                                                                 int, int, int);
template __global__ void tpu_cuda::gemm_kernel<SmallTile, DenseA<bf16>, DenseB_KN<float>, StoreF32>(
    DenseA<bf16>, DenseB_KN<float>, StoreF32, int, int, int);

// Softmax over rows of `cols` elements, one block per row: block_max and block_sum.
__global__ void softmax_rows(const float *in, float *out, int cols) {
  const float *row = in + static_cast<long long>(blockIdx.x) * cols;
  float local_max = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    local_max = fmaxf(local_max, row[c]);
  float row_max = block_max(local_max);
  float local_sum = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    local_sum += __expf(row[c] - row_max);
  float inverse = 1.0f / block_sum(local_sum);
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    out[static_cast<long long>(blockIdx.x) * cols + c] = __expf(row[c] - row_max) * inverse;
}

// The host side of a generated driver: a launch through TPU_LAUNCH with > 48 KiB of shared memory.
void launch_all(const bf16 *a, const bf16 *w, const float *bias, const bf16 *residual, bf16 *out,
                int M, int N, int K) {
  launch_gemm<BigTile>(DenseA<bf16>(a, M, K), DenseB_NK(w, N, K),
                       BiasReluResidual{bias, residual, out, N}, M, N, K, 1);
}
