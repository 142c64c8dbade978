// Reading a report's JSON defensively, for `coex report` and its page: reports come from other
// versions of coex or from people's editors, so every key is optional and every value may be of the
// wrong type. Internal to src/report.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

namespace coex::report::detail {

using nlohmann::json;

inline const json& member(const json& object, const char* key) {
  static const json* const missing = new json();  // never destroyed: may be used while the process exits
  if (!object.is_object()) return *missing;
  auto it = object.find(key);
  return it == object.end() ? *missing : *it;
}

// One line of text: a control character in a kernel name would break a table (and is not allowed in
// an XML page).
inline std::string text_of(const json& value) {
  if (value.is_string()) {
    std::string text = value.get<std::string>();
    for (char& c : text) {
      if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    }
    return text;
  }
  if (value.is_null()) return "";
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

inline bool number_of(const json& value, double& out) {
  if (!value.is_number()) return false;
  out = value.get<double>();
  return true;
}

inline uint64_t count_of(const json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer()) return static_cast<uint64_t>(std::max<int64_t>(0, value.get<int64_t>()));
  if (value.is_number_float() && value.get<double>() > 0) return static_cast<uint64_t>(value.get<double>());
  return 0;
}

inline std::string format(const char* pattern, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

inline std::string format_bytes(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < sizeof units / sizeof *units) {
    value /= 1024;
    ++unit;
  }
  return format("%.1f ", value) + units[unit];
}

struct DeviceColumn {
  uint64_t work_items = 0;
  double seconds = 0;
  bool present = false;
};

// Per kernel: device index -> summed work.
inline std::map<int, DeviceColumn> per_device_of(const json& kernel) {
  std::map<int, DeviceColumn> columns;
  const json& entries = member(kernel, "per_device");
  if (!entries.is_array()) return columns;
  for (const json& entry : entries) {
    double index = 0;
    if (!number_of(member(entry, "index"), index)) continue;
    DeviceColumn& column = columns[static_cast<int>(index)];
    column.present = true;
    column.work_items += count_of(member(entry, "work_items"));
    double seconds = 0;
    if (number_of(member(entry, "seconds"), seconds)) column.seconds += seconds;
  }
  return columns;
}

// "a (arg 0) exact, out (arg 2) diff": the tier of each buffer argument, from the kernel's "args", with
// its name in the source when the report has it ("arg 0 exact" otherwise).
inline std::string arg_tiers_of(const json& kernel) {
  std::string text;
  const json& args = member(kernel, "args");
  if (!args.is_array()) return text;
  for (const json& arg : args) {
    double index = 0;
    if (!number_of(member(arg, "index"), index)) continue;
    const std::string position = "arg " + std::to_string(static_cast<int>(index));
    const std::string name = text_of(member(arg, "name"));
    text += (text.empty() ? "" : ", ") + (name.empty() ? position : name + " (" + position + ")") + " " +
            text_of(member(arg, "tier"));
  }
  return text;
}

}  // namespace coex::report::detail
