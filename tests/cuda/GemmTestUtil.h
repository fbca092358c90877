// Helpers of the emulated GEMM tests: random operands, plain C++ references (fp32 products of the
// bf16-rounded inputs, accumulated in double), launches through the device library.
#pragma once

#include "TileRule.h"
#include "tpu_cuda.cuh"

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace gemm_test {

using tpu_cuda::bf16;

// The TileConfig the tile rule picks for an M x N x K GEMM: how the emitter instantiates it.
template <int64_t M, int64_t N, int64_t K, int Smem = tpu::cuda::kSmemPerBlockSm80>
struct ChosenTile {
  static constexpr tpu::cuda::TileChoice choice = tpu::cuda::chooseTile(M, N, K, Smem);
  using type = tpu_cuda::TileConfig<choice.bm, choice.bn, choice.bk, choice.warpsM, choice.warpsN,
                                    choice.stages>;
};

inline std::vector<float> randomValues(size_t count, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float &v : values)
    v = uniform(random);
  return values;
}

inline float roundedToBf16(float value) { return tpu_cuda::to_float(tpu_cuda::to_bf16(value)); }

// The values a loader of element type T is given: bf16-rounded or the fp32 originals (which the
// loader rounds itself).
template <class T> std::vector<T> asType(const std::vector<float> &values) {
  std::vector<T> converted(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if constexpr (std::is_same_v<T, bf16>)
      converted[i] = tpu_cuda::to_bf16(values[i]);
    else
      converted[i] = values[i];
  }
  return converted;
}

struct Shape {
  int batch, M, N, K;
  std::string name() const {
    return std::to_string(batch) + "x" + std::to_string(M) + "x" + std::to_string(N) + "x" +
           std::to_string(K);
  }
};

// C[batch][M][N] = A[batch][M][K] * B[batch or 0][K][N] on bf16-rounded operands.
inline std::vector<float> referenceGemm(const Shape &s, const std::vector<float> &a,
                                        const std::vector<float> &bKN, bool bBatched) {
  std::vector<float> c(static_cast<size_t>(s.batch) * s.M * s.N);
  for (int b = 0; b < s.batch; ++b)
    for (int m = 0; m < s.M; ++m)
      for (int n = 0; n < s.N; ++n) {
        double sum = 0;
        for (int k = 0; k < s.K; ++k)
          sum +=
              static_cast<double>(roundedToBf16(a[(static_cast<size_t>(b) * s.M + m) * s.K + k])) *
              roundedToBf16(bKN[((bBatched ? static_cast<size_t>(b) : 0) * s.K + k) * s.N + n]);
        c[(static_cast<size_t>(b) * s.M + m) * s.N + n] = static_cast<float>(sum);
      }
  return c;
}

// Index of the first element that differs beyond fp32 accumulation error (NaN never matches), or
// -1. `reduction` is the length of the sums.
inline long firstMismatch(const std::vector<float> &got, const std::vector<float> &expected,
                          int reduction) {
  float tolerance = 1e-5f * static_cast<float>(reduction) + 1e-5f;
  for (size_t i = 0; i < expected.size(); ++i)
    if (!(std::fabs(got[i] - expected[i]) <= tolerance * (1.0f + std::fabs(expected[i]))))
      return static_cast<long>(i);
  return -1;
}

// Stores the fp32 sum to C[batch][M][N].
struct StoreC {
  float *c;
  int M, N;
  __device__ void operator()(int batch, int m, int n, float acc) const {
    c[(static_cast<long long>(batch) * M + m) * N + n] = acc;
  }
};

enum class BLayout { WeightsNK, ActivationsKN };

// Runs C = A * B with DenseA<AType> and, for WeightsNK, DenseB_NK on the bf16 [N][K] transpose of
// the (unbatched) bKN; for ActivationsKN, DenseB_KN<BType> on the batched bKN.
template <class Tile, class AType, class BType, BLayout Layout>
std::vector<float> runDenseGemm(const Shape &s, const std::vector<float> &a,
                                const std::vector<float> &bKN) {
  std::vector<float> c(static_cast<size_t>(s.batch) * s.M * s.N, NAN);
  std::vector<AType> aData = asType<AType>(a);
  tpu_cuda::DenseA<AType> aLoader(aData.data(), s.M, s.K);
  StoreC store{c.data(), s.M, s.N};
  if constexpr (Layout == BLayout::WeightsNK) {
    std::vector<float> bNK(static_cast<size_t>(s.N) * s.K);
    for (int k = 0; k < s.K; ++k)
      for (int n = 0; n < s.N; ++n)
        bNK[static_cast<size_t>(n) * s.K + k] = bKN[static_cast<size_t>(k) * s.N + n];
    std::vector<bf16> bData = asType<bf16>(bNK);
    tpu_cuda::launch_gemm<Tile>(aLoader, tpu_cuda::DenseB_NK(bData.data(), s.N, s.K), store, s.M,
                                s.N, s.K, s.batch);
  } else {
    std::vector<BType> bData = asType<BType>(bKN);
    tpu_cuda::launch_gemm<Tile>(aLoader, tpu_cuda::DenseB_KN<BType>(bData.data(), s.K, s.N), store,
                                s.M, s.N, s.K, s.batch);
  }
  return c;
}

// Runs a dense GEMM on random operands; returns the index of the first wrong element or -1.
template <class Tile, class AType, class BType, BLayout Layout>
long denseGemmMismatch(const Shape &s, unsigned seed = 1) {
  bool bBatched = Layout == BLayout::ActivationsKN;
  std::vector<float> a = randomValues(static_cast<size_t>(s.batch) * s.M * s.K, seed);
  std::vector<float> b =
      randomValues(static_cast<size_t>(bBatched ? s.batch : 1) * s.K * s.N, seed + 1000);
  std::vector<float> got = runDenseGemm<Tile, AType, BType, Layout>(s, a, b);
  return firstMismatch(got, referenceGemm(s, a, b, bBatched), s.K);
}

} // namespace gemm_test
