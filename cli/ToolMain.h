// The command-line contract every tool shares: --help prints usage and exits
// 0; any usage error or failure is one line "TOOL: error: MESSAGE" on stderr
// and exit 1.
#pragma once

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <string>

namespace tpu {

inline int reportToolError(const std::string &tool, std::string message) {
  std::replace(message.begin(), message.end(), '\n', ' ');
  fmt::print(stderr, "{}: error: {}\n", tool, message);
  return 1;
}

// Parses the command line into `app`, then runs `body` (which returns the
// exit code), turning every exception into the one-line error.
template <typename Body> int runTool(CLI::App &app, int argc, char **argv, Body body) {
  const std::string tool = app.get_name();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &help) {
    return app.exit(help);
  } catch (const CLI::ParseError &error) {
    return reportToolError(tool, error.what());
  }
  try {
    return body();
  } catch (const std::exception &error) {
    return reportToolError(tool, error.what());
  }
}

} // namespace tpu
