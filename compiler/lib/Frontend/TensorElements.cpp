#include "TensorElements.h"

#include "tpu/isa/Error.h"

#include <fmt/format.h>

namespace tpu::frontend {

int64_t tensorElements(const onnx::TensorProto &tensor, const std::string &what) {
  int64_t count = 1;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0)
      throw Error(fmt::format("{}: dimension {} is negative", what, dim));
    if (dim != 0 && count > kMaxElements / dim)
      throw Error(fmt::format("{}: more than {} elements", what, kMaxElements));
    count *= dim;
  }
  return count;
}

} // namespace tpu::frontend
