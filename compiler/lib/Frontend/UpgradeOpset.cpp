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

#include <set>

namespace tpu::frontend {
namespace {

// The converter trusts its input: a graph output that nothing makes crashes
// it (fuzz/corpus/onnx-importer/regression-upgrade-*.onnx), and ONNX's
// checker lets that through.
void checkOutputsAreMade(const onnx::GraphProto &graph, const std::string &path) {
  std::set<std::string> made;
  for (const onnx::ValueInfoProto &input : graph.input())
    made.insert(input.name());
  for (const onnx::TensorProto &initializer : graph.initializer())
    made.insert(initializer.name());
  for (const onnx::NodeProto &node : graph.node())
    made.insert(node.output().begin(), node.output().end());
  for (const onnx::ValueInfoProto &output : graph.output())
    if (!made.count(output.name()))
      throw Error(fmt::format("{}: output '{}' is made by no node", path, output.name()));
}

} // namespace

onnx::ModelProto upgradeOpset(const onnx::ModelProto &model, int target, const std::string &path) {
  checkOutputsAreMade(model.graph(), path);
  try {
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
