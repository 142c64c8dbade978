// The tunables of every policy (docs/schedulers.md, "Parameters") are settings: config/settings_list.h
// lists them (COEX_POLICY_PARAM) with their defaults and checks, and config/policy_params.h makes the
// struct. The policies take it under this name; a scenario sets fields by name through
// config::set_policy_param, as a config file does.
#pragma once

#include "config/policy_params.h"

namespace coex::sched {

using PolicyParams = config::PolicyParams;

}  // namespace coex::sched
