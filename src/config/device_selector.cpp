#include "config/device_selector.h"

#include <cctype>
#include <sstream>

#include "config/setting_rules.h"

namespace coex::config {

const char* const kDeviceSelectorGrammar =
    "a device selector: comma-separated terms, each all, <index>, type:gpu|cpu|accelerator, "
    "platform:<text> or name:<text>, any of them prefixed by ! to exclude";

namespace {

// A device index: decimal digits only, small enough that no machine has more devices.
bool parse_index(const std::string& text, int64_t& out) {
  if (text.empty() || text.size() > 6) return false;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  out = std::stoll(text);
  return true;
}

bool contains_ignoring_case(const std::string& haystack, const std::string& needle) {
  return to_lower(haystack).find(to_lower(needle)) != std::string::npos;
}

bool parse_term(const std::string& raw, DeviceSelectorTerm& term, std::string& why) {
  std::string text = trim(raw);
  if (!text.empty() && text[0] == '!') {
    term.exclude = true;
    text = trim(text.substr(1));
  }
  if (text.empty()) {
    why = "is empty";
    return false;
  }
  const std::string lower = to_lower(text);
  if (lower == "all") {
    term.kind = DeviceSelectorTerm::Kind::All;
    return true;
  }
  if (std::isdigit(static_cast<unsigned char>(text[0]))) {
    term.kind = DeviceSelectorTerm::Kind::Index;
    if (parse_index(text, term.index)) return true;
    why = "is not a device index (a small non-negative integer)";
    return false;
  }
  const size_t colon = text.find(':');
  const std::string prefix = to_lower(trim(text.substr(0, colon)));
  const std::string value = colon == std::string::npos ? "" : trim(text.substr(colon + 1));
  if (colon == std::string::npos) {
    if (lower == "gpu" || lower == "cpu" || lower == "accelerator") {
      why = "is not a term; write type:" + lower;
    } else {
      why = "is not a term";
    }
    return false;
  }
  if (prefix == "type") {
    term.kind = DeviceSelectorTerm::Kind::Type;
    term.text = to_lower(value);
    if (term.text == "gpu" || term.text == "cpu" || term.text == "accelerator") return true;
    why = "names no device type (gpu, cpu or accelerator)";
    return false;
  }
  if (prefix == "platform" || prefix == "name") {
    term.kind = prefix == "name" ? DeviceSelectorTerm::Kind::Name : DeviceSelectorTerm::Kind::Platform;
    term.text = value;
    if (!value.empty()) return true;
    why = "needs text after \"" + prefix + ":\"";
    return false;
  }
  why = "starts with \"" + prefix + ":\", which is none of type:, platform:, name:";
  return false;
}

}  // namespace

std::optional<std::vector<DeviceSelectorTerm>> parse_device_selector(const std::string& text, std::string* error) {
  std::vector<DeviceSelectorTerm> terms;
  if (trim(text).empty()) {
    if (error) *error = "the selector is empty (\"all\" selects every device)";
    return std::nullopt;
  }
  // getline drops a trailing empty item; a trailing comma is still an empty term.
  std::istringstream in(text + (text.back() == ',' ? " " : ""));
  size_t position = 0;
  for (std::string raw; std::getline(in, raw, ',');) {
    ++position;
    DeviceSelectorTerm term;
    std::string why;
    if (!parse_term(raw, term, why)) {
      if (error) *error = "term " + std::to_string(position) + " \"" + trim(raw) + "\" " + why;
      return std::nullopt;
    }
    terms.push_back(term);
  }
  return terms;
}

bool check_device_selector(const std::string& text, std::string& detail) {
  return parse_device_selector(text, &detail).has_value();
}

bool device_selected(const std::vector<DeviceSelectorTerm>& terms, const SelectableDevice& device) {
  auto matches = [&device](const DeviceSelectorTerm& term) {
    switch (term.kind) {
      case DeviceSelectorTerm::Kind::All: return true;
      case DeviceSelectorTerm::Kind::Index: return term.index == device.index;
      case DeviceSelectorTerm::Kind::Type: return to_lower(device.type) == term.text;
      case DeviceSelectorTerm::Kind::Platform: return contains_ignoring_case(device.platform, term.text);
      case DeviceSelectorTerm::Kind::Name: return contains_ignoring_case(device.name, term.text);
    }
    return false;
  };
  bool any_include_term = false;
  bool included = false;
  for (const DeviceSelectorTerm& term : terms) {
    if (term.exclude) {
      if (matches(term)) return false;
    } else {
      any_include_term = true;
      included = included || matches(term);
    }
  }
  return included || !any_include_term;
}

}  // namespace coex::config
