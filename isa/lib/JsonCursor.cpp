#include "JsonCursor.h"

#include "tpu/isa/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace tpu::detail {
namespace {

constexpr size_t kMaxShownValueChars = 60;

std::string describe(const nlohmann::json &value) {
  // Replace invalid UTF-8 rather than throw while reporting another error.
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > kMaxShownValueChars)
    text = text.substr(0, kMaxShownValueChars) + "...";
  return text;
}

} // namespace

JsonCursor::JsonCursor(const nlohmann::json &value, std::string origin)
    : JsonCursor(value, std::make_shared<const std::string>(std::move(origin)),
                 std::make_shared<const std::string>(), kNoIndex) {}

JsonCursor::JsonCursor(const nlohmann::json &value, std::shared_ptr<const std::string> origin,
                       std::shared_ptr<const std::string> path, size_t index)
    : value_(&value), origin_(std::move(origin)), path_(std::move(path)), index_(index) {}

std::string JsonCursor::path() const {
  return index_ == kNoIndex ? *path_ : fmt::format("{}[{}]", *path_, index_);
}

void JsonCursor::fail(std::string_view problem) const {
  std::string at = path();
  std::string location = at.empty() ? *origin_ : fmt::format("{}: {}", *origin_, at);
  throw Error(fmt::format("{}: {} (got {})", location, problem, describe(*value_)));
}

void JsonCursor::expectObject(std::initializer_list<std::string_view> keys,
                              std::initializer_list<std::string_view> optionalKeys) const {
  if (!value_->is_object())
    fail("must be an object");
  std::string at = path();
  std::string prefix = at.empty() ? "" : at + ".";
  auto known = [](std::initializer_list<std::string_view> list, const std::string &key) {
    return std::find(list.begin(), list.end(), key) != list.end();
  };
  for (const auto &[key, member] : value_->items())
    if (!known(keys, key) && !known(optionalKeys, key))
      throw Error(fmt::format("{}: {}{}: unknown key", *origin_, prefix, key));
  for (std::string_view key : keys)
    if (!value_->contains(key))
      throw Error(fmt::format("{}: {}{}: missing", *origin_, prefix, key));
}

bool JsonCursor::contains(std::string_view key) const { return value_->contains(key); }

JsonCursor JsonCursor::operator[](std::string_view key) const {
  std::string at = path();
  return JsonCursor(value_->at(std::string(key)), origin_,
                    std::make_shared<const std::string>(at.empty() ? std::string(key)
                                                                   : fmt::format("{}.{}", at, key)),
                    kNoIndex);
}

std::vector<JsonCursor> JsonCursor::arrayElements() const {
  if (!value_->is_array())
    fail("must be an array");
  // The elements share this cursor's origin and path.
  auto arrayPath = std::make_shared<const std::string>(path());
  std::vector<JsonCursor> elements;
  elements.reserve(value_->size());
  for (size_t index = 0; index < value_->size(); ++index)
    elements.push_back(JsonCursor((*value_)[index], origin_, arrayPath, index));
  return elements;
}

std::string JsonCursor::string() const {
  if (!value_->is_string())
    fail("must be a string");
  return value_->get<std::string>();
}

bool JsonCursor::boolean() const {
  if (!value_->is_boolean())
    fail("must be true or false");
  return value_->get<bool>();
}

uint64_t JsonCursor::unsignedInteger(uint64_t min, uint64_t max) const {
  auto expected = [&] {
    return min == 0 && max == std::numeric_limits<uint64_t>::max()
               ? std::string("must be a non-negative integer")
               : fmt::format("must be an integer in [{}, {}]", min, max);
  };
  require(value_->is_number_integer(), expected);
  // Integers built in code are signed even when non-negative.
  require(value_->is_number_unsigned() || value_->get<int64_t>() >= 0, expected);
  uint64_t value = value_->get<uint64_t>();
  require(value >= min && value <= max, expected);
  return value;
}

double JsonCursor::number(double exclusiveMin, double max) const {
  return boundedNumber(
      [&] { return fmt::format("must be a number in ({}, {}]", exclusiveMin, max); },
      [&](double value) { return value > exclusiveMin && value <= max; });
}

double JsonCursor::nonNegativeNumber(double max) const {
  return boundedNumber([&] { return fmt::format("must be a number in [0, {}]", max); },
                       [&](double value) { return value >= 0 && value <= max; });
}

double JsonCursor::boundedNumber(const std::function<std::string()> &expected,
                                 const std::function<bool(double)> &inRange) const {
  require(value_->is_number(), expected);
  double value = value_->get<double>();
  require(inRange(value), expected);
  return value;
}

} // namespace tpu::detail
