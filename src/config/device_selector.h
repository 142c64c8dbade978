// The grammar of the `devices` setting (COEX_DEVICES): which devices coex splits launches across.
//
//   selector := term ("," term)*
//   term     := ["!"] ( "all" | <index> | "type:" ("gpu"|"cpu"|"accelerator")
//                      | "platform:" <text> | "name:" <text> )
//
// Meaning: a device is used when it matches at least one term without "!" (or no term lacks "!")
// and matches no term with "!". <index> is the device's index as `coex devices` prints it; <text>
// matches a substring of the platform or device name, ignoring case.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace coex::config {

struct DeviceSelectorTerm {
  enum class Kind { All, Index, Type, Platform, Name };
  Kind kind = Kind::All;
  bool exclude = false;  // written with a leading "!"
  int64_t index = -1;    // Kind::Index
  std::string text;      // Kind::Type: "gpu", "cpu" or "accelerator"; Platform/Name: the substring
};

// What a device offers to be matched: filled in by whoever enumerates the devices.
struct SelectableDevice {
  int64_t index = 0;
  std::string type;  // "gpu", "cpu" or "accelerator" (any case)
  std::string platform;
  std::string name;
};

extern const char* const kDeviceSelectorGrammar;  // the "accepts" phrase of the setting

// Returns the terms, or std::nullopt with `error` naming the bad term and why.
std::optional<std::vector<DeviceSelectorTerm>> parse_device_selector(const std::string& text, std::string* error);
// GrammarRule::Check form of parse_device_selector.
bool check_device_selector(const std::string& text, std::string& detail);
// The meaning given in the comment at the top of this file.
bool device_selected(const std::vector<DeviceSelectorTerm>& terms, const SelectableDevice& device);

}  // namespace coex::config
