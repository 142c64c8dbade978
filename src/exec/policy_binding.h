#pragma once

#include <memory>
#include <vector>

#include "config/settings.h"
#include "sched/policy.h"

namespace coex::exec {

// The policy the settings name, with their parameters, over the history shared by every launch.
std::unique_ptr<sched::Policy> make_configured_policy(const config::Settings& settings,
                                                      const std::vector<sched::DeviceProfile>& devices);

}  // namespace coex::exec
