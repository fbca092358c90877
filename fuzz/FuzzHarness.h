// What every libFuzzer harness shares (docs/fuzzing.md): bad input may end in
// tpu::Error, the project's one-line error for bad input, and in nothing else.
// Any other exception, a crash, a hang or a sanitizer report is a finding; so
// is a broken round trip, which the harnesses check with expect().
#pragma once

#include "tpu/isa/Error.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

namespace tpu::fuzz {

[[noreturn]] inline void finding(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "fuzz finding: %.*s: %.*s\n", static_cast<int>(what.size()), what.data(),
               static_cast<int>(detail.size()), detail.data());
  std::abort(); // libFuzzer reports the abort and saves the input
}

// A property the harness checks on input the library accepted.
inline void expect(bool holds, std::string_view property) {
  if (!holds)
    finding("property broken", property);
}

// Runs `body` on one input: tpu::Error is the expected way to reject it.
template <typename Body> void rejectOnlyWithError(Body &&body) {
  try {
    body();
  } catch (const tpu::Error &) {
  } catch (const std::exception &error) {
    finding("exception other than tpu::Error", error.what());
  }
}

inline std::string_view asText(const uint8_t *data, size_t size) {
  return {reinterpret_cast<const char *>(data), size};
}

} // namespace tpu::fuzz
