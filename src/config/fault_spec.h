// The `fault` setting (COEX_FAULT): a testing aid that makes one device misbehave, so that the
// error paths of a split launch can be tested on real drivers. "fail:<index>" makes that device's
// sub-launches fail; "stall:<index>" makes them never finish on their own. Empty: no fault.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace coex::config {

struct FaultSpec {
  enum class Kind { None, Fail, Stall };
  Kind kind = Kind::None;
  int64_t device = -1;  // coex device index; -1 with Kind::None
};

extern const char* const kFaultGrammar;  // the "accepts" phrase of the setting

std::optional<FaultSpec> parse_fault_spec(const std::string& text, std::string* error);
bool check_fault_spec(const std::string& text, std::string& detail);

}  // namespace coex::config
