// The compiler's entry point for drivers: no MLIR types in this header, so
// tools and tests can call it without MLIR's headers or build flags.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tpu::compiler {

// What tpuc writes, in pipeline order; each MLIR level reads back into tpuc
// and tpu-opt and compiles to the same bundle.
enum class EmitKind {
  OnnxImport, // the graph as imported, before any optimization
  Tosa,       // the graph after target-neutral optimization
  Fused,      // the graph with the target and its fusion groups (tpu.fused)
  TPU,        // the hardware-level dialect with its plans
  Isa,        // the ISA level: instructions and tokens in the TPU dialect
  Asm,        // the ISA program as assembly text
  Bundle,     // the binary program bundle (.tpub)
  Cuda,       // the CUDA target: one .cu file (docs/gpu.md)
};

// tpuc --train: the forward graph becomes a training step (tpu-autodiff).
struct TrainOptions {
  bool enabled = false;
  std::string loss = "cross-entropy"; // or mse
  std::string optimizer = "sgd";      // or momentum
  double lr = 0.1;
  double momentum = 0.9;
  double weight_decay = 0.0;
  int64_t batch = 0;                  // 0: the model's; otherwise resized at import
  std::vector<std::string> trainable; // empty: every float initializer
};

struct CompileOptions {
  std::string input_path;  // .onnx, or .mlir at any level tpuc writes
  std::string output_path; // "-" for stdout (text kinds only)
  std::string config;      // a preset's name or a config file; empty: the default
  EmitKind emit = EmitKind::Bundle;
  std::string fusion = "full";      // none, epilogue or full (tpu/FusionMode.h)
  bool print_fusion_groups = false; // list the groups on stdout
  std::string dram_dtype = "array"; // array or f32: what DRAM holds only-array-read tensors as
  std::string gpu = "sm_80";        // with EmitKind::Cuda: sm_80, sm_90 or sm_90a
  TrainOptions train;
};

// MLIR's own command-line options (--mlir-print-ir-after-all, --mlir-timing,
// --mlir-elide-elementsattrs-if-larger, ...): `arguments` are the ones tpuc
// does not know itself. Throws tpu::Error for an unknown option. Call once,
// before compile().
void parseMlirOptions(const std::string &tool, const std::vector<std::string> &arguments);
// The help text of those options.
std::string mlirOptionsHelp();

// Throws tpu::Error with a one-line message on any failure.
void compile(const CompileOptions &options);

} // namespace tpu::compiler
