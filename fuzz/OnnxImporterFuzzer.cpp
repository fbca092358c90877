// The ONNX importer (tpu::frontend::importOnnxBytes, what tpuc MODEL.onnx
// runs first): any bytes either import to a module that verifies or are
// rejected with tpu::Error.
#include "FuzzHarness.h"

#include "tpu/Frontend/OnnxImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A context per input: one shared context would keep every input's
  // constants and types alive and grow until libFuzzer's memory limit.
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  // The importer turns a failed verification into tpu::Error; the
  // diagnostics behind it would only slow the fuzzer down.
  mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic &) { return mlir::success(); });
  tpu::fuzz::rejectOnlyWithError(
      [&] { tpu::frontend::importOnnxBytes(tpu::fuzz::asText(data, size), "fuzz.onnx", context); });
  return 0;
}
