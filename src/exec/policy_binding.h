#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/settings.h"
#include "sched/history.h"
#include "sched/policy.h"
#include "sched/policy_params.h"

namespace coex::exec {

// The policy the settings name, with their parameters, over the history shared by every launch.
std::unique_ptr<sched::Policy> make_configured_policy(const config::Settings& settings,
                                                      const std::vector<sched::DeviceProfile>& devices,
                                                      std::shared_ptr<sched::History> history);

// The history cache file: COEX_CACHE, else the default path ("" when there is none).
std::string history_path(const config::Settings& settings);

// The history of this device set, loaded from the cache file (COEX_CACHE, else the default path).
std::shared_ptr<sched::History> load_history(const config::Settings& settings,
                                             const std::vector<sched::DeviceProfile>& devices);
void save_history(const config::Settings& settings, const sched::History& history);

}  // namespace coex::exec
