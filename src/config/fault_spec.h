// The `fault` setting (COEX_FAULT): a testing aid that makes one device
// misbehave, so that the error paths of a split launch can be tested on real
// drivers. "fail:<index>" makes that device's sub-launches fail;
// "stall:<index>" makes them wait on an event that never completes (Boyer et
// al.'s emulation of a blocked GPU); "stall_upload:<index>" makes the
// preparation of its chunks (the upload of what they lack) last until another
// device takes them over; "hung_upload:<index>" makes it last 20 s whatever happens (a transfer to a
// server that went away: it does not look at the cancel); "late_start:<index>" makes its sub-launches, once
// started, reach the driver only after another device took them over and the
// process began to exit (the app has released everything by then: the
// abandoned sub-launch must still find its objects); "throw_late:<index>" makes the thread of its
// sub-launches, once started, throw (as a failed allocation would) when another device has taken them
// over (the launch may be over by then: the thread must touch nothing of it); "build:<index>" makes
// coex's build of a program for that device fail; "slow_build:<index>" makes each of those builds
// begin a second late (a device still building when launches come); "slow_analysis" (no index) makes
// each program's analysis begin a second after its first launch that waits for it (launches that come
// meanwhile); "slow_libclang" (no index) makes the analysis process load libclang three seconds late
// (a slow start: analyses asked for meanwhile wait for it); "no_libclang" (no index) makes every load of
// libclang fail (a machine without it), in the app's process and, where COEX_FAULT says so, in the analysis
// process (it reads the environment only); "merge_write:<index>" makes a merge
// that writes home at once (an app write queued behind the launch) fail to write home what that device changed, as a
// driver error would. "fail:<index>@<n>" and "stall:<index>@<n>": from the device's n-th sub-launch on (the earlier
// ones leave results on the device, resident_results.h); "throw_late" takes "@<n>" too. Empty: no fault.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace coex::config {

struct FaultSpec {
  // Fail: the device's sub-launches fail; Stall: they never start;
  // StallUpload: their preparation never ends; HungUpload: it lasts 20 s, deaf to a cancel; LateStart: they reach the
  // driver only once taken over and the process exiting; ThrowLate: their thread throws once taken over;
  // Build: coex's build
  // of the program for that device fails; SlowBuild: it begins a second late; SlowAnalysis: the
  // analysis of each program begins a second late; SlowLibclang: the analysis process loads libclang
  // three seconds late; NoLibclang: no load of libclang succeeds; MergeWrite: a merge's write home of what the device
  // changed fails.
  enum class Kind {
    None,
    Fail,
    Stall,
    StallUpload,
    HungUpload,
    LateStart,
    ThrowLate,
    Build,
    SlowBuild,
    SlowAnalysis,
    SlowLibclang,
    NoLibclang,
    MergeWrite
  };
  Kind kind = Kind::None;
  int64_t device = -1;           // coex device index; -1 with Kind::None and the analyses' kinds
  uint64_t from_sub_launch = 1;  // the first of the device's sub-launches that the fault hits
};

extern const char* const kFaultGrammar;  // the "accepts" phrase of the setting

std::optional<FaultSpec> parse_fault_spec(const std::string& text, std::string* error);
bool check_fault_spec(const std::string& text, std::string& detail);

// Whether `text` (a valid setting) injects a fault of `kind` on `device`, in the device's sub-launch
// number `sub_launch` (1 for the first).
bool fault_injected(const std::string& text, FaultSpec::Kind kind, int device, uint64_t sub_launch = 1);

}  // namespace coex::config
