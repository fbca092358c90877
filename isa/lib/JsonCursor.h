// Strict reading of the JSON documents the toolchain writes and reads
// (hardware configs, bundle metadata): objects must hold exactly the expected
// keys, values must have the expected type and range, and every failure is
// one line "ORIGIN: key.path: problem (got VALUE)".
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tpu::detail {

// A JSON value together with where it sits, for error messages. Where it
// sits is spelled out only when a message needs it: a bundle's metadata has
// an array element per instruction.
class JsonCursor {
public:
  JsonCursor(const nlohmann::json &value, std::string origin);

  [[noreturn]] void fail(std::string_view problem) const;

  // Fails unless the value is an object holding every one of `keys` and
  // nothing else but `optionalKeys`.
  void expectObject(std::initializer_list<std::string_view> keys,
                    std::initializer_list<std::string_view> optionalKeys = {}) const;
  // Whether an object checked by expectObject() holds an optional key.
  bool contains(std::string_view key) const;
  // A member of an object checked by expectObject().
  JsonCursor operator[](std::string_view key) const;
  std::vector<JsonCursor> arrayElements() const;

  std::string string() const;
  bool boolean() const;
  uint64_t unsignedInteger(uint64_t min, uint64_t max) const;
  // A number in (exclusiveMin, max].
  double number(double exclusiveMin, double max) const;
  // A number in [0, max].
  double nonNegativeNumber(double max) const;

private:
  JsonCursor(const nlohmann::json &value, std::shared_ptr<const std::string> origin,
             std::shared_ptr<const std::string> path, size_t index);

  // The key path, e.g. "inputs[0].shape"; empty at the root.
  std::string path() const;
  // Fails with the problem `expected()` names, composed only on failure.
  template <typename Expected> void require(bool holds, Expected expected) const {
    if (!holds)
      fail(expected());
  }
  double boundedNumber(const std::function<std::string()> &expected,
                       const std::function<bool(double)> &inRange) const;

  static constexpr size_t kNoIndex = ~size_t{0};
  const nlohmann::json *value_;
  std::shared_ptr<const std::string> origin_;
  // The path of this value, or with `index_` that of the array it is in.
  std::shared_ptr<const std::string> path_;
  size_t index_ = kNoIndex;
};

} // namespace tpu::detail
