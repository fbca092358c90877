// ONNX (opsets 11 to 17) -> MLIR at the TOSA level.
#pragma once

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <string_view>
#include <vector>

namespace tpu::frontend {

struct ImportOptions {
  // Not 0: the first axis of every graph input has this size (a dynamic
  // first axis too), and shapes follow from it.
  int64_t batch = 0;
  // For training (tpuc --train): weights stay values computed from their
  // initializer, never constants folded from its data, so that tpu-autodiff
  // can train them (grouped and depthwise Conv use per-group slices and
  // tosa.depthwise_conv2d instead of block-diagonal constant weights).
  bool training = false;
};

// Returns a module with one function @main whose arguments and results are
// the model's inputs and outputs in order, named by `tpu.name` attributes.
// Throws tpu::Error naming the file, node and op of anything unsupported.
mlir::OwningOpRef<mlir::ModuleOp> importOnnx(const std::string &path, mlir::MLIRContext &context,
                                             const ImportOptions &options = {});
// The same from a model file's bytes already in memory (the fuzzer's entry);
// `path` only names the model in errors.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxBytes(std::string_view bytes, const std::string &path,
                                                  mlir::MLIRContext &context,
                                                  const ImportOptions &options = {});

// The ONNX operators the importer has an import for, sorted (docs/compiler.md's
// table is checked against this list).
std::vector<std::string> supportedOperators();

} // namespace tpu::frontend
