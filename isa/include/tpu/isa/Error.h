#pragma once

#include <stdexcept>
#include <string>

namespace tpu {

// Every user-facing failure (bad model, bundle, config or program) is thrown
// as an Error whose message is one line naming what is wrong; drivers print it
// and exit non-zero.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

} // namespace tpu
