#include "Files.h"

#include "tpu/isa/Error.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace tpu::detail {

std::vector<uint8_t> readFile(const std::string &path, std::string_view what) {
  auto fail = [&](std::string_view reason) {
    throw Error(fmt::format("{}: cannot read {}: {}", path, what, reason));
  };
  std::error_code error;
  std::filesystem::file_status status = std::filesystem::status(path, error);
  if (status.type() == std::filesystem::file_type::not_found)
    fail("no such file");
  if (error)
    fail(error.message());
  if (status.type() != std::filesystem::file_type::regular)
    fail("not a regular file");
  std::ifstream file(path, std::ios::binary);
  if (!file)
    fail(std::strerror(errno));
  uintmax_t size = std::filesystem::file_size(path, error);
  if (error)
    fail(error.message());
  std::vector<uint8_t> bytes(size);
  file.read(reinterpret_cast<char *>(bytes.data()), static_cast<std::streamsize>(size));
  if (static_cast<uintmax_t>(file.gcount()) != size)
    fail("read failed");
  return bytes;
}

std::string_view jsonErrorText(const char *what) {
  std::string_view text(what);
  if (!text.empty() && text.front() == '[') {
    size_t end = text.find("] ");
    if (end != std::string_view::npos)
      text.remove_prefix(end + 2);
  }
  return text;
}

} // namespace tpu::detail
