// ONNX's version converter, for models older than the importer's opsets.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

namespace tpu::frontend {

// The model upgraded to `target` by libonnx; an Error naming `path` when the
// converter has no adapter for one of its operators.
onnx::ModelProto upgradeOpset(const onnx::ModelProto &model, int target, const std::string &path);

} // namespace tpu::frontend
