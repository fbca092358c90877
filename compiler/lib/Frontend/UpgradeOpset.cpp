// Models older than the importer's opsets go through ONNX's own version
// converter, so old operator forms are upgraded by ONNX's adapters rather
// than re-implemented by hand. Built apart from the importer: libonnx's
// converter headers need RTTI, which the MLIR code is built without.
#include "UpgradeOpset.h"

#include "tpu/isa/Error.h"

#include <fmt/format.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

namespace tpu::frontend {

onnx::ModelProto upgradeOpset(const onnx::ModelProto &model, int target, const std::string &path) {
  try {
    // The converter trusts its input: a graph whose output no node makes
    // crashes it (fuzz/corpus/onnx-importer/regression-upgrade-undefined-output.onnx).
    onnx::checker::check_model(model);
    // The adapters read operand shapes (Gemm's, Softmax's): inferred first,
    // as python3-onnx's convert_version does.
    onnx::ModelProto inferred = model;
    onnx::shape_inference::InferShapes(inferred);
    return onnx::version_conversion::ConvertVersion(inferred, target);
  } catch (const std::exception &error) {
    // The converter's messages span lines; the first says what failed.
    std::string message = error.what();
    message = message.substr(0, message.find('\n'));
    throw Error(fmt::format("{}: ONNX's version converter cannot upgrade the model to opset {}: {}",
                            path, target, message));
  }
}

} // namespace tpu::frontend
