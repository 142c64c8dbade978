// The parameters of the scheduling policies: the entries of config/settings_list.h marked
// COEX_POLICY_PARAM, with the same names, types and defaults as the settings. One list makes both,
// so a parameter the simulator or a policy reads is always settable in a real run (JSON key and
// COEX_<NAME>), and docs/settings.md and docs/schedulers.md ("Parameters") show one default.
// config::Settings derives from this struct; src/sched takes it as sched::PolicyParams.
// Setting one by name, with the settings' checks: config::set_policy_param (config/settings.h).
#pragma once

#include "config/setting_rules.h"

namespace coex::config {

struct PolicyParams {
#define COEX_SETTING(kind, key, initial, rule_args, doc_text)
#define COEX_POLICY_PARAM(kind, key, initial, rule_args, doc_text) kind##Rule::value_type key = initial;
#include "config/settings_list.h"
#undef COEX_POLICY_PARAM
#undef COEX_SETTING
};

}  // namespace coex::config
