#include "config/fault_spec.h"

#include <cctype>

#include "config/setting_rules.h"

namespace coex::config {

const char* const kFaultGrammar =
    "empty, fail:<device index>, stall:<device index>, stall_upload:<device index>, late_start:<device index>, "
    "throw_late:<device index>, build:<device index>, slow_build:<device index>, hung_upload:<device index>, "
    "merge_write:<device index>, slow_analysis, slow_libclang or no_libclang; fail, stall, stall_upload, hung_upload, "
    "late_start and throw_late take an optional @<n>: from the device's n-th sub-launch on";

std::optional<FaultSpec> parse_fault_spec(const std::string& text, std::string* error) {
  const std::string spec = trim(text);
  FaultSpec fault;
  if (spec.empty()) return fault;
  const size_t colon = spec.find(':');
  const std::string kind = to_lower(trim(spec.substr(0, colon)));
  std::string index = colon == std::string::npos ? "" : trim(spec.substr(colon + 1));
  if (kind == "slow_analysis" || kind == "slow_libclang" || kind == "no_libclang") {  // the analyses'
    if (colon != std::string::npos) {
      if (error) *error = kind + " takes no device index";
      return std::nullopt;
    }
    fault.kind = kind == "slow_analysis"   ? FaultSpec::Kind::SlowAnalysis
                 : kind == "slow_libclang" ? FaultSpec::Kind::SlowLibclang
                                           : FaultSpec::Kind::NoLibclang;
    return fault;
  }
  std::string from;
  if (const size_t at = index.find('@'); at != std::string::npos) {
    from = trim(index.substr(at + 1));
    index = trim(index.substr(0, at));
    bool from_digits =
        !from.empty() && from.size() <= 9 && kind != "build" && kind != "slow_build" && kind != "merge_write";
    for (char c : from) from_digits = from_digits && std::isdigit(static_cast<unsigned char>(c));
    if (!from_digits || std::stoull(from) == 0) {
      if (error)
        *error = "\"@\" must be followed by a sub-launch number from 1 (not for build, slow_build or merge_write)";
      return std::nullopt;
    }
  }
  if (kind == "fail") {
    fault.kind = FaultSpec::Kind::Fail;
  } else if (kind == "stall") {
    fault.kind = FaultSpec::Kind::Stall;
  } else if (kind == "stall_upload") {
    fault.kind = FaultSpec::Kind::StallUpload;
  } else if (kind == "hung_upload") {
    fault.kind = FaultSpec::Kind::HungUpload;
  } else if (kind == "late_start") {
    fault.kind = FaultSpec::Kind::LateStart;
  } else if (kind == "throw_late") {
    fault.kind = FaultSpec::Kind::ThrowLate;
  } else if (kind == "build") {
    fault.kind = FaultSpec::Kind::Build;
  } else if (kind == "slow_build") {
    fault.kind = FaultSpec::Kind::SlowBuild;
  } else if (kind == "merge_write") {
    fault.kind = FaultSpec::Kind::MergeWrite;
  } else {
    if (error)
      *error =
          "the fault kind must be fail, stall, stall_upload, hung_upload, late_start, throw_late, build, "
          "slow_build, merge_write, slow_analysis, slow_libclang or no_libclang";
    return std::nullopt;
  }
  bool digits = !index.empty() && index.size() <= 6;
  for (char c : index) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  if (!digits) {
    if (error) *error = "\"" + kind + ":\" must be followed by a device index";
    return std::nullopt;
  }
  fault.device = std::stoll(index);
  if (!from.empty()) fault.from_sub_launch = std::stoull(from);
  return fault;
}

bool fault_injected(const std::string& text, FaultSpec::Kind kind, int device, uint64_t sub_launch) {
  if (text.empty()) return false;
  auto spec = parse_fault_spec(text, nullptr);
  return spec && spec->kind == kind && spec->device == device && sub_launch >= spec->from_sub_launch;
}

bool check_fault_spec(const std::string& text, std::string& detail) {
  return parse_fault_spec(text, &detail).has_value();
}

}  // namespace coex::config
