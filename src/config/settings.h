// coex's settings: the list in config/settings_list.h, read from the embedded default or the file
// named by COEX_CONFIG, then overridden by COEX_<NAME> environment variables.
//
// Errors are collected, one line each, never thrown: on any error the caller prints them and runs
// the app in pass-through (a bad config never breaks the app).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/device_selector.h"
#include "config/fault_spec.h"
#include "config/policy_params.h"
#include "config/setting_rules.h"

namespace coex::config {

// config/default.json, embedded by CMake (cmake/embedded_default_config.cpp.in).
extern const char* const kEmbeddedDefaultConfig;

// The policy parameters are its base (config/policy_params.h); the other settings are its own fields.
struct Settings : PolicyParams {
#define COEX_SETTING(kind, key, initial, rule_args, doc_text) kind##Rule::value_type key = initial;
#define COEX_POLICY_PARAM(kind, key, initial, rule_args, doc_text)
#include "config/settings_list.h"
#undef COEX_POLICY_PARAM
#undef COEX_SETTING
};

using GetenvFn = std::function<const char*(const char*)>;

// One setting as the loader, the docs and the tests see it.
struct SettingInfo {
  const char* name;       // the JSON key
  std::string env_var;    // COEX_<NAME>
  std::string type_name;  // "bool", "integer", "number", "string", "list of numbers"
  std::string accepted;   // "one of static, boyer, ...": ends the error line "... is not <accepted>"
  const char* doc;
  nlohmann::json default_value;
  bool policy_param;  // listed with COEX_POLICY_PARAM: also a field of PolicyParams
  // Set the field from a JSON value / an environment string. false: rejected; `detail` may say why.
  std::function<bool(const nlohmann::json& value, Settings& settings, std::string& detail)> read_json;
  std::function<bool(const std::string& value, Settings& settings, std::string& detail)> read_env;
  std::function<nlohmann::json(const Settings& settings)> to_json;
};

// In the order of config/settings_list.h.
const std::vector<SettingInfo>& setting_infos();
const SettingInfo* find_setting(const std::string& name);
std::string env_var_name(const std::string& setting_name);  // "min_split_work_items" -> "COEX_MIN_SPLIT_WORK_ITEMS"

struct LoadResult {
  Settings settings;
  std::vector<std::string> errors;  // one line each, starting "coex: "
  // Where the settings came from, for logs and the report:
  // "config /etc/x.json, env COEX_POLICY" or "embedded default (config/default.json)".
  std::string source_description;
};

// The embedded default, or the file named by COEX_CONFIG (which replaces it: keys the file lacks take
// the defaults of the list), then COEX_<NAME> overrides. COEX_CONFIG set but empty counts as unset.
// Does not throw.
LoadResult load_settings(const GetenvFn& getenv_fn);

// The steps of load_settings, for tests and for the launcher (`coex run --config F` may check the
// file before it starts the app). `source` names the text in error lines ("config /path/x.json").
void apply_json_text(const std::string& text, const std::string& source, Settings& settings,
                     std::vector<std::string>& errors);
// Applies every COEX_<NAME> that is set; appends the names applied to `applied` when given.
void apply_env(const GetenvFn& getenv_fn, Settings& settings, std::vector<std::string>& errors,
               std::vector<std::string>* applied = nullptr);
// Checks that need more than one setting (static_mode "ratio" needs weights).
void check_combinations(const Settings& settings, const std::string& source, std::vector<std::string>& errors);

// Every setting, by its key: the "settings" section of the report.
nlohmann::json settings_to_json(const Settings& settings);

// Sets the policy parameter `name` from a JSON value, checked by its setting's rule (the simulator's
// scenario "params"). false: `error` says why in the words of the settings' own error lines
// ("2 is not a number in [0, 1]"), and `params` is unchanged.
bool set_policy_param(PolicyParams& params, const std::string& name, const nlohmann::json& value, std::string& error);

// docs/settings.md, generated from the list (settings_doc.cpp); `coex settings-doc` prints it.
std::string settings_markdown();
// The table of docs/schedulers.md, "Parameters" (its markers included), generated from the
// COEX_POLICY_PARAM entries of the list; `coex settings-doc --policy-params` prints it.
std::string policy_params_markdown();
// The last line of that table, which ends the generated part of docs/schedulers.md.
constexpr const char* kPolicyParamsTableEnd = "<!-- End of the generated table. -->";

// The files in config/examples/ and what each shows: docs/settings.md explains them, since JSON has
// no comments and an explanatory key would be an unknown key.
struct ExampleConfig {
  const char* file;  // relative to the repository root
  const char* shows;
};
const std::vector<ExampleConfig>& example_configs();

}  // namespace coex::config
