#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tpu::detail {

// Reads a whole regular file. Throws tpu::Error "PATH: cannot read WHAT: reason".
std::vector<uint8_t> readFile(const std::string &path, std::string_view what);

// Strips nlohmann's "[json.exception.parse_error.101] " prefix from a message.
std::string_view jsonErrorText(const char *what);

} // namespace tpu::detail
