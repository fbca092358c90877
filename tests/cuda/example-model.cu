// A miniature of the file the CUDA emitter generates for a model: the device library, one kernel
// per fusion group and a host driver (cudaMalloc, copies, TPU_LAUNCH, events). The model is
//   x [1][8][8][8] NHWC -> conv 3x3 pad 1 + bias + ReLU (bf16 NHWC) -> dense 512 -> 10 (fp32)
//   -> softmax,
// checked against a plain C++ reference. It builds with nvcc for a GPU, and with the host compiler
// and -DTPU_CUDA_EMULATE (tests/cuda/CMakeLists.txt) as the test cuda.example_model. Exit status 0
// when the probabilities match.
#include "tpu_cuda.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

using tpu_cuda::bf16;

namespace {

constexpr int kH = 8, kW = 8, kC = 8, kOC = 16, kClasses = 10;
constexpr int kPixels = kH * kW, kFeatures = kPixels * kOC;

// Group 0: implicit-GEMM convolution, M = 64 pixels, N = 16 channels, K = 3*3*8.
using ConvTile = tpu_cuda::TileConfig<64, 32, 32, 1, 1, 3>;
struct ConvEpilogue {
  const float *bias;
  bf16 *out; // NHWC [1][8][8][16] = [m][n]
  __device__ void operator()(int, int m, int n, float acc) const {
    out[m * kOC + n] = tpu_cuda::to_bf16(fmaxf(acc + bias[n], 0.0f));
  }
};
__global__ void __launch_bounds__(ConvTile::kThreads)
    group0_conv(tpu_cuda::ConvA<bf16> x, tpu_cuda::DenseB_NK w, ConvEpilogue epilogue) {
  TPU_DYNAMIC_SMEM(smem);
  tpu_cuda::gemm_block<ConvTile>(x, w, epilogue, kPixels, kOC, 9 * kC, smem);
}

// Group 1: dense layer on the flattened features, M = 1, N = 10, K = 1024.
using DenseTile = tpu_cuda::TileConfig<32, 32, 32, 1, 1, 4>;
struct LogitsEpilogue {
  const float *bias;
  float *logits;
  __device__ void operator()(int, int, int n, float acc) const { logits[n] = acc + bias[n]; }
};
__global__ void __launch_bounds__(DenseTile::kThreads)
    group1_dense(tpu_cuda::DenseA<bf16> features, tpu_cuda::DenseB_NK w, LogitsEpilogue epilogue) {
  TPU_DYNAMIC_SMEM(smem);
  tpu_cuda::gemm_block<DenseTile>(features, w, epilogue, 1, kClasses, kFeatures, smem);
}

// Group 2: softmax over each row, one block per row.
__global__ void group2_softmax(const float *logits, float *probabilities, int cols) {
  const float *row = logits + blockIdx.x * cols;
  float local_max = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    local_max = fmaxf(local_max, row[c]);
  float row_max = tpu_cuda::block_max(local_max);
  float local_sum = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    local_sum += __expf(row[c] - row_max);
  float inverse = 1.0f / tpu_cuda::block_sum(local_sum);
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    probabilities[blockIdx.x * cols + c] = __expf(row[c] - row_max) * inverse;
}

float rounded(float v) { return tpu_cuda::to_float(tpu_cuda::to_bf16(v)); }

// The model in plain C++ on bf16-rounded inputs, weights and conv activations.
std::vector<float> reference(const std::vector<float> &x, const std::vector<float> &convW,
                             const std::vector<float> &convB, const std::vector<float> &denseW,
                             const std::vector<float> &denseB) {
  std::vector<float> act(kFeatures);
  for (int oh = 0; oh < kH; ++oh)
    for (int ow = 0; ow < kW; ++ow)
      for (int oc = 0; oc < kOC; ++oc) {
        double sum = 0;
        for (int kh = 0; kh < 3; ++kh)
          for (int kw = 0; kw < 3; ++kw) {
            int ih = oh - 1 + kh, iw = ow - 1 + kw;
            if (ih < 0 || ih >= kH || iw < 0 || iw >= kW)
              continue;
            for (int c = 0; c < kC; ++c)
              sum += static_cast<double>(rounded(x[(ih * kW + iw) * kC + c])) *
                     rounded(convW[((oc * 3 + kh) * 3 + kw) * kC + c]);
          }
        act[(oh * kW + ow) * kOC + oc] = rounded(std::fmax(static_cast<float>(sum) + convB[oc], 0));
      }
  std::vector<float> logits(kClasses);
  for (int n = 0; n < kClasses; ++n) {
    double sum = 0;
    for (int k = 0; k < kFeatures; ++k)
      sum += static_cast<double>(act[k]) * rounded(denseW[n * kFeatures + k]);
    logits[n] = static_cast<float>(sum) + denseB[n];
  }
  float top = *std::max_element(logits.begin(), logits.end());
  double total = 0;
  for (float l : logits)
    total += std::exp(l - top);
  std::vector<float> probabilities(kClasses);
  for (int n = 0; n < kClasses; ++n)
    probabilities[n] = static_cast<float>(std::exp(logits[n] - top) / total);
  return probabilities;
}

std::vector<float> pattern(size_t count, float scale, int salt) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i)
    values[i] = scale * std::sin(static_cast<float>(i * 7 + salt));
  return values;
}

template <class T> T *upload(const std::vector<T> &host) {
  T *device;
  TPU_CUDA_CHECK(cudaMalloc(&device, host.size() * sizeof(T)));
  TPU_CUDA_CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return device;
}

std::vector<bf16> toBf16(const std::vector<float> &values) {
  std::vector<bf16> converted(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    converted[i] = tpu_cuda::to_bf16(values[i]);
  return converted;
}

} // namespace

int main() {
  std::vector<float> x = pattern(kPixels * kC, 1.0f, 1), convW = pattern(kOC * 9 * kC, 0.3f, 2);
  std::vector<float> convB = pattern(kOC, 0.1f, 3),
                     denseW = pattern(kClasses * kFeatures, 0.05f, 4);
  std::vector<float> denseB = pattern(kClasses, 0.1f, 5);

  bf16 *dX = upload(toBf16(x)), *dConvW = upload(toBf16(convW)), *dDenseW = upload(toBf16(denseW));
  float *dConvB = upload(convB), *dDenseB = upload(denseB);
  bf16 *dAct;
  float *dLogits, *dProbabilities;
  TPU_CUDA_CHECK(cudaMalloc(&dAct, kFeatures * sizeof(bf16)));
  TPU_CUDA_CHECK(cudaMalloc(&dLogits, kClasses * sizeof(float)));
  TPU_CUDA_CHECK(cudaMalloc(&dProbabilities, kClasses * sizeof(float)));

  cudaEvent_t start, stop;
  TPU_CUDA_CHECK(cudaEventCreate(&start));
  TPU_CUDA_CHECK(cudaEventCreate(&stop));
  TPU_CUDA_CHECK(cudaEventRecord(start));
  // {n, h, w, c, kh, kw, stride_h, stride_w, pad_top, pad_left, dilation_h, dilation_w, oh, ow}
  tpu_cuda::ConvShape conv{1, kH, kW, kC, 3, 3, 1, 1, 1, 1, 1, 1, kH, kW};
  TPU_LAUNCH(group0_conv, tpu_cuda::gemm_grid<ConvTile>(kPixels, kOC, 1), dim3(ConvTile::kThreads),
             ConvTile::smem_bytes(), tpu_cuda::ConvA<bf16>(dX, conv),
             tpu_cuda::DenseB_NK(dConvW, kOC, 9 * kC), ConvEpilogue{dConvB, dAct});
  TPU_LAUNCH(group1_dense, tpu_cuda::gemm_grid<DenseTile>(1, kClasses, 1),
             dim3(DenseTile::kThreads), DenseTile::smem_bytes(),
             tpu_cuda::DenseA<bf16>(dAct, 1, kFeatures),
             tpu_cuda::DenseB_NK(dDenseW, kClasses, kFeatures), LogitsEpilogue{dDenseB, dLogits});
  TPU_LAUNCH(group2_softmax, dim3(1), dim3(32), 0, dLogits, dProbabilities, kClasses);
  TPU_CUDA_CHECK(cudaGetLastError());
  TPU_CUDA_CHECK(cudaEventRecord(stop));
  TPU_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  TPU_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));

  std::vector<float> probabilities(kClasses);
  TPU_CUDA_CHECK(cudaMemcpy(probabilities.data(), dProbabilities, kClasses * sizeof(float),
                            cudaMemcpyDeviceToHost));
  std::vector<float> expected = reference(x, convW, convB, denseW, denseB);
  double worst = 0;
  for (int n = 0; n < kClasses; ++n) {
    double error = std::fabs(probabilities[n] - expected[n]);
    worst = std::isnan(error) ? INFINITY : std::fmax(worst, error);
  }
  for (void *p :
       {static_cast<void *>(dX), static_cast<void *>(dConvW), static_cast<void *>(dDenseW),
        static_cast<void *>(dConvB), static_cast<void *>(dDenseB), static_cast<void *>(dAct),
        static_cast<void *>(dLogits), static_cast<void *>(dProbabilities)})
    TPU_CUDA_CHECK(cudaFree(p));
  TPU_CUDA_CHECK(cudaEventDestroy(start));
  TPU_CUDA_CHECK(cudaEventDestroy(stop));
  // The conv activations are rounded to bf16 on both sides; sums in different orders can round a
  // few of them one bf16 ulp apart, which moves the probabilities by far less than 1e-3.
  bool ok = worst <= 1e-3;
  std::printf("example-model: max probability error %.2e (%s), %.3f ms\n", worst,
              ok ? "ok" : "MISMATCH", ms);
  return ok ? 0 : 1;
}
