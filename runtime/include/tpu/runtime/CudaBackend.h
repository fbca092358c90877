// CUDA bundles (tpuc --target=cuda -o OUT.tpub) as a runtime backend
// (docs/gpu.md#running-cuda-bundles-through-the-runtime). The bundle's source
// is compiled once into a shared library, kept in a cache directory under a
// hash of everything that goes into it, loaded into the process and run
// through its entry point tpu_cuda_run() on the Session's host image: on the
// GPU (built with nvcc) or, without one, in emulation (the same source built
// by the host compiler against runtime/cuda-emu/tpu_cuda_emu.h). Built only
// where CMake finds the CUDA toolkit (TPU_HAVE_CUDA_BACKEND).
#pragma once

#include "tpu/runtime/Backend.h"

#include <optional>
#include <string>

namespace tpu::runtime {

enum class CudaExecution { Gpu, Emulate };

struct CudaOptions {
  CudaExecution execution = CudaExecution::Gpu;
  // Where built libraries are kept; empty: defaultCudaCacheDirectory().
  std::string cache_directory;
};

// $XDG_CACHE_HOME/tpu, else $HOME/.cache/tpu.
std::string defaultCudaCacheDirectory();
// Whether `nvidia-smi -L` lists a GPU.
bool nvidiaGpuPresent();

// How the library of the last run came to be.
struct CudaBuild {
  std::string library; // its path in the cache
  bool cached = false; // found there rather than compiled
  double seconds = 0;  // compiling it (0 when cached)
};

class CudaBackend : public Backend {
public:
  explicit CudaBackend(CudaOptions options);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend &) = delete;
  CudaBackend &operator=(const CudaBackend &) = delete;

  std::string name() const override;
  // `dram` is the bundle's host image (Bundle::cuda): the inputs at their
  // dram_address in, the outputs at theirs out. In emulation the report's
  // times are the host's wall-clock times (keys host_ms, total_host_ms) and
  // device_seconds is 0: the emulation says nothing about a GPU's speed.
  RunReport run(const Bundle &bundle, std::vector<uint8_t> &dram) override;
  // The build of the last run; throws tpu::Error before the first.
  const CudaBuild &build() const;

private:
  using RunFunction = int (*)(const float *const *, size_t, float *const *, size_t, float *, size_t,
                              char *, size_t);
  // Finds the bundle's library in the cache or compiles it there, and opens it.
  void load(const Bundle &bundle);

  CudaOptions options_;
  std::optional<CudaBuild> build_;
  std::string loadedKey_; // the cache key of the open library
  void *handle_ = nullptr;
  RunFunction run_ = nullptr;
};

} // namespace tpu::runtime
