// The planner's gate: whether the policy runs a launch on home alone (auto: sched/auto_policy.h),
// asked once the launch's geometry and buffers are known (launch_planner.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "exec/launch_job.h"
#include "report/report.h"
#include "sched/policy.h"

namespace coex::exec {

class Services;

// Whether the policy runs the launch on home alone, unsplit (auto: sched/auto_policy.h), and the
// reason; when it splits, the launch's number (History::plan_launch) goes with the job, so that the
// policy makes the probe the planner saw and later launches do not take it for theirs, and the job
// counts among the History's splits in flight while it lives.
// `drained_key`: the key under which home's own launches of the kernel and size are timed
// (drained_home_key).
const char* policy_keeps_on_home(Services& services, const std::string& kernel_key, const std::string& drained_key,
                                 LaunchJob& job, const std::vector<int>& participants, int home,
                                 std::optional<report::GateRecord>& gate, std::optional<sched::LaunchShape>& asked);

}  // namespace coex::exec
