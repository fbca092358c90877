// The CUDA target: a fused TOSA module (tpu.fused groups) as one CUDA C++
// file, one kernel per fusion group and a host driver (docs/gpu.md).
#pragma once

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mlir::tpu::cuda {

// The GPUs the generated source is tuned for: shared memory per block and
// multiprocessors (the tile rule fills them), and the architecture named in
// its build line.
struct GpuTarget {
  std::string name;               // sm_80, sm_90 or sm_90a
  int64_t shared_bytes_per_block; // the opt-in maximum of one block
  int multiprocessors;            // of the reference part: A100, H100/H200
};
const std::vector<GpuTarget> &gpuTargets();
const GpuTarget *findGpuTarget(const std::string &name);

struct CudaOptions {
  std::string gpu = "sm_80";
  std::string model_path; // named in the file's header and its report
  std::string fusion;
};

// What the generated file holds, for a CUDA bundle (docs/bundle.md).
struct CudaTensor {
  std::string name;
  std::vector<int64_t> shape; // float32
  int64_t reduction_length = 0;
};
struct CudaKernelInfo {
  std::string name, source_ops, kind;
  uint64_t global_bytes = 0;
};
struct CudaSource {
  std::string text;
  std::vector<CudaTensor> inputs, outputs; // the model's, in order
  std::vector<CudaKernelInfo> kernels;     // in launch order
};

// Fails with an error at the first operation the CUDA target cannot lower.
FailureOr<CudaSource> emitCuda(ModuleOp module, const CudaOptions &options);

} // namespace mlir::tpu::cuda
