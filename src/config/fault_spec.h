// The `fault` setting (COEX_FAULT): a testing aid that makes one device misbehave, so that the
// error paths of a split launch can be tested on real drivers. "fail:<index>" makes that device's
// sub-launches fail; "build:<index>" makes coex's build of a program for that device fail. Empty: no
// fault.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace coex::config {

struct FaultSpec {
  // Fail: the device's sub-launches fail; Build: coex's build of the program for that device fails.
  // (A stalling device is not injectable yet: the executor cannot take work back from one.)
  enum class Kind { None, Fail, Build };
  Kind kind = Kind::None;
  int64_t device = -1;  // coex device index; -1 with Kind::None
};

extern const char* const kFaultGrammar;  // the "accepts" phrase of the setting

std::optional<FaultSpec> parse_fault_spec(const std::string& text, std::string* error);
bool check_fault_spec(const std::string& text, std::string& detail);

}  // namespace coex::config
