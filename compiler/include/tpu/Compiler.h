// The compiler's entry point for drivers: no MLIR types in this header, so
// tools and tests can call it without MLIR's headers or build flags.
#pragma once

#include <string>

namespace tpu::compiler {

enum class EmitKind {
  Tosa,   // the imported graph after graph-level optimization
  TPU,    // the hardware-level dialect
  Asm,    // the ISA program as assembly text
  Bundle, // the binary program bundle (.tpub)
};

struct CompileOptions {
  std::string input_path;  // .onnx, or .mlir at the TOSA level
  std::string output_path; // "-" for stdout (text kinds only)
  std::string config_path; // empty: the default preset
  EmitKind emit = EmitKind::Bundle;
  std::string fusion = "full";       // none, epilogue or full (the tpu-fuse pass)
  bool print_fusion_groups = false; // list the groups on stdout
};

// Throws tpu::Error with a one-line message on any failure.
void compile(const CompileOptions &options);

} // namespace tpu::compiler
