// The element count of an ONNX tensor, bounded: shared by the importer and
// the checks before libonnx's version converter, which is built apart (RTTI).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>

namespace tpu::frontend {

// The most elements a tensor can have: 16 GiB of float32, all the DRAM a
// bundle addresses (Bundle.cpp). Bounding the shapes a model gives keeps the
// importer's size arithmetic far from int64 overflow.
constexpr int64_t kMaxElements = int64_t{1} << 32;

// A tensor's element count from its dims; an Error starting with `what` for
// a negative dimension or more than kMaxElements.
int64_t tensorElements(const onnx::TensorProto &tensor, const std::string &what);

} // namespace tpu::frontend
