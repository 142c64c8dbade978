#include "config/setting_rules.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <sstream>

namespace coex::config {

std::string trim(const std::string& text) {
  const auto is_blank = [](unsigned char c) { return std::isspace(c) != 0; };
  auto first = std::find_if_not(text.begin(), text.end(), is_blank);
  auto last = std::find_if_not(text.rbegin(), text.rend(), is_blank).base();
  return first < last ? std::string(first, last) : std::string();
}

std::string to_lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string format_number(double value) {
  // std::to_chars: shortest round-trip form, and independent of the app's locale (an app may have
  // set LC_NUMERIC to one with a decimal comma).
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

bool parse_double(const std::string& text, double& out) {
  const std::string t = trim(text);
  if (t.empty()) return false;
  const char* first = t.data();
  const char* last = t.data() + t.size();
  if (*first == '+') ++first;  // from_chars rejects a leading '+', people write it
  double value = 0;
  auto result = std::from_chars(first, last, value);
  if (result.ec != std::errc() || result.ptr != last || !std::isfinite(value)) return false;
  out = value;
  return true;
}

namespace {

// "> 0", ">= 1", "in [0, 1]", "in (0, 1]", or "" when unbounded.
std::string range_phrase(double min, double max, bool min_exclusive) {
  const bool has_min = min != -kNoLimit;
  const bool has_max = max != kNoLimit;
  if (has_min && has_max) {
    return "in " + std::string(min_exclusive ? "(" : "[") + format_number(min) + ", " + format_number(max) + "]";
  }
  if (has_min) return std::string(min_exclusive ? "> " : ">= ") + format_number(min);
  if (has_max) return "<= " + format_number(max);
  return "";
}

std::string with_phrase(const std::string& noun, const std::string& phrase) {
  return phrase.empty() ? noun : noun + " " + phrase;
}

// 2^63 as a double: every double below it converts to int64_t without overflow.
constexpr double kTwoPow63 = 9223372036854775808.0;

}  // namespace

bool BoolRule::from_json(const nlohmann::json& in, bool& out, std::string& /*detail*/) const {
  if (!in.is_boolean()) return false;
  out = in.get<bool>();
  return true;
}

bool BoolRule::from_env(const std::string& in, bool& out, std::string& detail) const {
  const std::string word = to_lower(trim(in));
  if (word == "1" || word == "true" || word == "yes" || word == "on") {
    out = true;
    return true;
  }
  if (word == "0" || word == "false" || word == "no" || word == "off") {
    out = false;
    return true;
  }
  detail = "the environment accepts 1/0, true/false, yes/no, on/off";
  return false;
}

std::string IntRule::accepted() const {
  if (max == kNoIntLimit) return "an integer >= " + std::to_string(min);
  return "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

bool IntRule::in_range(double value) const {
  return value >= -kTwoPow63 && value < kTwoPow63 && std::floor(value) == value &&
         static_cast<int64_t>(value) >= min && static_cast<int64_t>(value) <= max;
}

bool IntRule::from_json(const nlohmann::json& in, int64_t& out, std::string& /*detail*/) const {
  if (in.is_number_unsigned()) {
    const uint64_t value = in.get<uint64_t>();
    if (value > static_cast<uint64_t>(max)) return false;
    if (static_cast<int64_t>(value) < min) return false;
    out = static_cast<int64_t>(value);
    return true;
  }
  if (in.is_number_integer()) {
    const int64_t value = in.get<int64_t>();
    if (value < min || value > max) return false;
    out = value;
    return true;
  }
  if (in.is_number_float()) {
    const double value = in.get<double>();
    if (!in_range(value)) return false;
    out = static_cast<int64_t>(value);
    return true;
  }
  return false;
}

bool IntRule::from_env(const std::string& in, int64_t& out, std::string& /*detail*/) const {
  const std::string t = trim(in);
  if (t.empty()) return false;
  const char* first = t.data();
  const char* last = t.data() + t.size();
  if (*first == '+') ++first;
  int64_t value = 0;
  auto result = std::from_chars(first, last, value);
  if (result.ec == std::errc() && result.ptr == last) {
    if (value < min || value > max) return false;
    out = value;
    return true;
  }
  double as_double = 0;  // "1e6" is an integer written as a number
  if (!parse_double(t, as_double) || !in_range(as_double)) return false;
  out = static_cast<int64_t>(as_double);
  return true;
}

std::string DoubleRule::accepted() const { return with_phrase("a number", range_phrase(min, max, min_exclusive)); }

bool DoubleRule::in_range(double value) const {
  if (!std::isfinite(value)) return false;
  if (min_exclusive ? value <= min : value < min) return false;
  return value <= max;
}

bool DoubleRule::from_json(const nlohmann::json& in, double& out, std::string& /*detail*/) const {
  if (!in.is_number()) return false;
  const double value = in.get<double>();
  if (!in_range(value)) return false;
  out = value;
  return true;
}

bool DoubleRule::from_env(const std::string& in, double& out, std::string& /*detail*/) const {
  double value = 0;
  if (!parse_double(in, value) || !in_range(value)) return false;
  out = value;
  return true;
}

EnumRule::EnumRule(const char* space_separated_words) {
  std::istringstream in(space_separated_words);
  for (std::string word; in >> word;) words.push_back(word);
}

std::string EnumRule::accepted() const {
  std::string text = "one of ";
  for (size_t i = 0; i < words.size(); ++i) text += (i ? ", " : "") + words[i];
  return text;
}

bool EnumRule::from_json(const nlohmann::json& in, std::string& out, std::string& detail) const {
  return in.is_string() && from_env(in.get<std::string>(), out, detail);
}

bool EnumRule::from_env(const std::string& in, std::string& out, std::string& /*detail*/) const {
  const std::string word = to_lower(trim(in));
  for (const std::string& w : words) {
    if (w == word) {
      out = w;
      return true;
    }
  }
  return false;
}

bool PathRule::from_json(const nlohmann::json& in, std::string& out, std::string& /*detail*/) const {
  if (!in.is_string()) return false;
  out = in.get<std::string>();
  return true;
}

bool PathRule::from_env(const std::string& in, std::string& out, std::string& /*detail*/) const {
  out = in;
  return true;
}

bool GrammarRule::from_json(const nlohmann::json& in, std::string& out, std::string& detail) const {
  return in.is_string() && from_env(in.get<std::string>(), out, detail);
}

bool GrammarRule::from_env(const std::string& in, std::string& out, std::string& detail) const {
  if (!check(in, detail)) return false;
  out = in;
  return true;
}

std::string DoubleListRule::accepted() const {
  return with_phrase("a list of numbers", range_phrase(element.min, element.max, element.min_exclusive));
}

bool DoubleListRule::from_json(const nlohmann::json& in, std::vector<double>& out, std::string& detail) const {
  if (!in.is_array()) return false;
  std::vector<double> values;
  for (size_t i = 0; i < in.size(); ++i) {
    double value = 0;
    std::string ignored;
    if (!element.from_json(in[i], value, ignored)) {
      detail = "element " + std::to_string(i + 1) + " is not " + element.accepted();
      return false;
    }
    values.push_back(value);
  }
  out = std::move(values);
  return true;
}

bool DoubleListRule::from_env(const std::string& in, std::vector<double>& out, std::string& detail) const {
  std::vector<double> values;
  if (!trim(in).empty()) {
    std::istringstream items(in);
    size_t position = 0;
    for (std::string item; std::getline(items, item, ',');) {
      ++position;
      double value = 0;
      std::string ignored;
      if (!element.from_env(item, value, ignored)) {
        detail = "element " + std::to_string(position) + " (\"" + trim(item) + "\") is not " + element.accepted();
        return false;
      }
      values.push_back(value);
    }
    if (in.back() == ',') {  // getline drops a trailing empty item: "1,2," names a third element
      detail = "element " + std::to_string(position + 1) + " is empty";
      return false;
    }
  }
  out = std::move(values);
  return true;
}

}  // namespace coex::config
