#include "config/fault_spec.h"

#include <cctype>

#include "config/setting_rules.h"

namespace coex::config {

const char* const kFaultGrammar = "empty, fail:<device index>, stall:<device index> or build:<device index>";

std::optional<FaultSpec> parse_fault_spec(const std::string& text, std::string* error) {
  const std::string spec = trim(text);
  FaultSpec fault;
  if (spec.empty()) return fault;
  const size_t colon = spec.find(':');
  const std::string kind = to_lower(trim(spec.substr(0, colon)));
  const std::string index = colon == std::string::npos ? "" : trim(spec.substr(colon + 1));
  if (kind == "fail") {
    fault.kind = FaultSpec::Kind::Fail;
  } else if (kind == "stall") {
    fault.kind = FaultSpec::Kind::Stall;
  } else if (kind == "build") {
    fault.kind = FaultSpec::Kind::Build;
  } else {
    if (error) *error = "the fault kind must be fail, stall or build";
    return std::nullopt;
  }
  bool digits = !index.empty() && index.size() <= 6;
  for (char c : index) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  if (!digits) {
    if (error) *error = "\"" + kind + ":\" must be followed by a device index";
    return std::nullopt;
  }
  fault.device = std::stoll(index);
  return fault;
}

bool fault_injected(const std::string& text, FaultSpec::Kind kind, int device) {
  if (text.empty()) return false;
  auto spec = parse_fault_spec(text, nullptr);
  return spec && spec->kind == kind && spec->device == device;
}

bool check_fault_spec(const std::string& text, std::string& detail) {
  return parse_fault_spec(text, &detail).has_value();
}

}  // namespace coex::config
