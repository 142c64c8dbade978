// The kinds of value a setting can hold. Each rule knows how to read its value from JSON and from an
// environment variable, how to write it back as JSON, and how to say in words what it accepts: that
// phrase ends every error line ("... is not <accepted>") and the "Accepts" line of docs/settings.md.
//
// A rule's readers return false when the value is rejected; they may then set `detail` to say which
// part was wrong (for example which element of a list).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace coex::config {

constexpr int64_t kNoIntLimit = std::numeric_limits<int64_t>::max();
constexpr double kNoLimit = std::numeric_limits<double>::infinity();

struct BoolRule {
  using value_type = bool;
  std::string type_name() const { return "bool"; }
  std::string accepted() const { return "true or false"; }
  bool from_json(const nlohmann::json& in, bool& out, std::string& detail) const;
  // 1/0, true/false, yes/no, on/off, in any case.
  bool from_env(const std::string& in, bool& out, std::string& detail) const;
  nlohmann::json to_json(bool value) const { return value; }
};

// An integer in [min, max]. JSON numbers with an integral value (4096, 4096.0, 4e3) are accepted.
struct IntRule {
  using value_type = int64_t;
  IntRule(int64_t min_value, int64_t max_value) : min(min_value), max(max_value) {}
  int64_t min;
  int64_t max;
  std::string type_name() const { return "integer"; }
  std::string accepted() const;
  bool from_json(const nlohmann::json& in, int64_t& out, std::string& detail) const;
  bool from_env(const std::string& in, int64_t& out, std::string& detail) const;
  nlohmann::json to_json(int64_t value) const { return value; }

 private:
  bool in_range(double value) const;
};

// A finite number in [min, max], or in (min, max] when min_exclusive.
struct DoubleRule {
  using value_type = double;
  DoubleRule(double min_value, double max_value, bool exclusive_min = false)
      : min(min_value), max(max_value), min_exclusive(exclusive_min) {}
  double min;
  double max;
  bool min_exclusive;
  std::string type_name() const { return "number"; }
  std::string accepted() const;
  bool in_range(double value) const;
  bool from_json(const nlohmann::json& in, double& out, std::string& detail) const;
  bool from_env(const std::string& in, double& out, std::string& detail) const;
  nlohmann::json to_json(double value) const { return value; }
};

// One word of a fixed list, matched without regard to case and stored in the list's spelling.
struct EnumRule {
  using value_type = std::string;
  explicit EnumRule(const char* space_separated_words);
  std::vector<std::string> words;
  std::string type_name() const { return "string"; }
  std::string accepted() const;
  bool from_json(const nlohmann::json& in, std::string& out, std::string& detail) const;
  bool from_env(const std::string& in, std::string& out, std::string& detail) const;
  nlohmann::json to_json(const std::string& value) const { return value; }
};

// Any string: paths. An empty string means "not set".
struct PathRule {
  using value_type = std::string;
  std::string type_name() const { return "string"; }
  std::string accepted() const { return "a string"; }
  bool from_json(const nlohmann::json& in, std::string& out, std::string& detail) const;
  bool from_env(const std::string& in, std::string& out, std::string& detail) const;
  nlohmann::json to_json(const std::string& value) const { return value; }
};

// A string with a small grammar of its own (the device selector, the fault spec), checked by
// `check`, which explains a rejection in `detail`.
struct GrammarRule {
  using value_type = std::string;
  using Check = bool (*)(const std::string& text, std::string& detail);
  GrammarRule(const char* what_is_accepted, Check check_fn) : description(what_is_accepted), check(check_fn) {}
  const char* description;
  Check check;
  std::string type_name() const { return "string"; }
  std::string accepted() const { return description; }
  bool from_json(const nlohmann::json& in, std::string& out, std::string& detail) const;
  bool from_env(const std::string& in, std::string& out, std::string& detail) const;
  nlohmann::json to_json(const std::string& value) const { return value; }
};

// A list of numbers, each in [min, max]. JSON: an array. Environment: comma-separated ("3, 1").
struct DoubleListRule {
  using value_type = std::vector<double>;
  DoubleListRule(double min_value, double max_value) : element(min_value, max_value) {}
  DoubleRule element;
  std::string type_name() const { return "list of numbers"; }
  std::string accepted() const;
  bool from_json(const nlohmann::json& in, std::vector<double>& out, std::string& detail) const;
  bool from_env(const std::string& in, std::vector<double>& out, std::string& detail) const;
  nlohmann::json to_json(const std::vector<double>& value) const { return value; }
};

// Shared helpers, also used by the loader and the grammars.
std::string trim(const std::string& text);
std::string to_lower(std::string text);
// Shortest text that reads back as the same double ("0.07", "1e+30", "inf").
std::string format_number(double value);
// Parses a whole string as a finite double (surrounding blanks allowed).
bool parse_double(const std::string& text, double& out);

}  // namespace coex::config
