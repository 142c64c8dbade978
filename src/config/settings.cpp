#include "config/settings.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace coex::config {

namespace {

const Settings& default_settings() {
  static const Settings* const defaults = new Settings();  // never destroyed, like setting_infos()
  return *defaults;
}

// One entry of setting_infos(). `field` may be a member of PolicyParams, which converts to a member
// of Settings: one kind of entry serves both the plain settings and the policy parameters.
template <typename Rule>
SettingInfo make_info(const char* name, const char* doc, const Rule& rule, typename Rule::value_type Settings::*field,
                      bool policy_param) {
  SettingInfo info;
  info.name = name;
  info.env_var = env_var_name(name);
  info.type_name = rule.type_name();
  info.accepted = rule.accepted();
  info.doc = doc;
  info.default_value = rule.to_json(default_settings().*field);
  info.policy_param = policy_param;
  info.read_json = [rule, field](const nlohmann::json& value, Settings& settings, std::string& detail) {
    return rule.from_json(value, settings.*field, detail);
  };
  info.read_env = [rule, field](const std::string& value, Settings& settings, std::string& detail) {
    return rule.from_env(value, settings.*field, detail);
  };
  info.to_json = [rule, field](const Settings& settings) { return rule.to_json(settings.*field); };
  return info;
}

std::vector<SettingInfo> build_setting_infos() {
  std::vector<SettingInfo> infos;
#define COEX_SETTING(kind, key, initial, rule_args, doc_text) \
  infos.push_back(make_info(#key, doc_text, kind##Rule rule_args, &Settings::key, false));
#define COEX_POLICY_PARAM(kind, key, initial, rule_args, doc_text) \
  infos.push_back(make_info(#key, doc_text, kind##Rule rule_args, &Settings::key, true));
#include "config/settings_list.h"
#undef COEX_POLICY_PARAM
#undef COEX_SETTING
  return infos;
}

// A value as it appears in an error line: JSON text (strings quoted, control characters escaped, so
// the line stays one line), shortened when long.
std::string quote_value(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  constexpr size_t kLongest = 120;
  if (text.size() > kLongest) text = text.substr(0, kLongest) + "...";
  return text;
}

std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return text;
}

std::string rejection(const SettingInfo& info, const nlohmann::json& value, const std::string& detail) {
  std::string line = quote_value(value) + " is not " + info.accepted;
  if (!detail.empty()) line += ": " + detail;
  return one_line(line);
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The known key closest to an unknown one, when it is close enough to be a typo.
std::string closest_key(const std::string& unknown, bool policy_params_only = false) {
  std::string lowered = to_lower(unknown);
  if (lowered.rfind("coex_", 0) == 0) lowered = lowered.substr(5);  // an env var name used as a key
  const SettingInfo* best = nullptr;
  size_t best_distance = std::max<size_t>(2, lowered.size() / 3) + 1;
  for (const SettingInfo& info : setting_infos()) {
    if (policy_params_only && !info.policy_param) continue;
    const size_t d = edit_distance(lowered, info.name);
    if (d < best_distance) {
      best = &info;
      best_distance = d;
    }
  }
  return best ? best->name : "";
}

const char* json_kind(const nlohmann::json& value) {
  if (value.is_array()) return "an array";
  if (value.is_string()) return "a string";
  if (value.is_number()) return "a number";
  if (value.is_boolean()) return "a boolean";
  if (value.is_null()) return "null";
  return "an object";
}

// nlohmann's parse errors read "[json.exception.parse_error.101] parse error at line 3, column 5: ...".
std::string describe_parse_error(const std::string& what) {
  const size_t bracket = what.find("] ");
  return one_line(what.rfind("[json.exception.", 0) == 0 && bracket != std::string::npos ? what.substr(bracket + 2)
                                                                                         : what);
}

bool read_file(const std::string& path, std::string& text, std::string& why) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    why = "is a directory";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    why = "cannot be read: " + std::generic_category().message(errno);
    return false;
  }
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) {
    why = "cannot be read";
    return false;
  }
  text = content.str();
  return true;
}

}  // namespace

const std::vector<SettingInfo>& setting_infos() {
  // Never destroyed: the list may be consulted at process exit, after static destructors have run.
  static const std::vector<SettingInfo>* const infos = new std::vector<SettingInfo>(build_setting_infos());
  return *infos;
}

const SettingInfo* find_setting(const std::string& name) {
  for (const SettingInfo& info : setting_infos()) {
    if (name == info.name) return &info;
  }
  return nullptr;
}

std::string env_var_name(const std::string& setting_name) {
  std::string name = "COEX_";
  for (char c : setting_name) name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

void apply_json_text(const std::string& text, const std::string& source, Settings& settings,
                     std::vector<std::string>& errors) {
  const std::string prefix = "coex: " + source + ": ";
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    errors.push_back(prefix + "not valid JSON: " + describe_parse_error(e.what()));
    return;
  }
  if (!document.is_object()) {
    errors.push_back(prefix + "the top level must be a JSON object ({\"key\": value, ...}), not " +
                     json_kind(document));
    return;
  }
  for (const auto& [key, value] : document.items()) {
    const SettingInfo* info = find_setting(key);
    if (!info) {
      const std::string guess = closest_key(key);
      errors.push_back(one_line(prefix + "unknown key " + quote_value(key) +
                                (guess.empty() ? "" : "; did you mean \"" + guess + "\"?") +
                                " (docs/settings.md lists the keys)"));
      continue;
    }
    std::string detail;
    if (!info->read_json(value, settings, detail)) {
      errors.push_back(prefix + "key \"" + key + "\": " + rejection(*info, value, detail));
    }
  }
}

void apply_env(const GetenvFn& getenv_fn, Settings& settings, std::vector<std::string>& errors,
               std::vector<std::string>* applied) {
  for (const SettingInfo& info : setting_infos()) {
    const char* value = getenv_fn(info.env_var.c_str());
    if (!value) continue;
    std::string detail;
    if (info.read_env(value, settings, detail)) {
      if (applied) applied->push_back(info.env_var);
    } else {
      errors.push_back("coex: env " + info.env_var + ": " + rejection(info, std::string(value), detail));
    }
  }
}

void check_combinations(const Settings& settings, const std::string& source, std::vector<std::string>& errors) {
  const std::string prefix = "coex: settings from " + source + ": ";
  if (settings.static_mode == "ratio" && settings.weights.empty()) {
    errors.push_back(prefix +
                     "static_mode \"ratio\" needs weights, one per device (e.g. [3, 1]), but weights is empty");
  }
  if (!settings.weights.empty() &&
      std::all_of(settings.weights.begin(), settings.weights.end(), [](double w) { return w == 0; })) {
    errors.push_back(prefix + "weights are all 0: at least one device needs a positive weight");
  }
}

LoadResult load_settings(const GetenvFn& getenv_fn) {
  LoadResult result;
  try {
    const char* config_path = getenv_fn("COEX_CONFIG");
    if (config_path && *config_path) {
      result.source_description = std::string("config ") + config_path;
      std::string text, why;
      if (read_file(config_path, text, why)) {
        apply_json_text(text, result.source_description, result.settings, result.errors);
      } else {
        result.errors.push_back("coex: " + result.source_description + " (COEX_CONFIG): " + why);
      }
    } else {
      result.source_description = "embedded default (config/default.json)";
      apply_json_text(kEmbeddedDefaultConfig, result.source_description, result.settings, result.errors);
    }
    std::vector<std::string> applied;
    apply_env(getenv_fn, result.settings, result.errors, &applied);
    for (size_t i = 0; i < applied.size(); ++i) result.source_description += (i ? ", " : ", env ") + applied[i];
    check_combinations(result.settings, result.source_description, result.errors);
  } catch (const std::exception& e) {
    // Only allocation failures can reach here; still one line, and the caller passes through.
    result.errors.push_back(std::string("coex: settings could not be loaded: ") + e.what());
  }
  return result;
}

bool set_policy_param(PolicyParams& params, const std::string& name, const nlohmann::json& value, std::string& error) {
  const SettingInfo* info = find_setting(name);
  if (!info || !info->policy_param) {
    const std::string guess = closest_key(name, true);
    error = one_line("unknown policy parameter " + quote_value(name) +
                     (guess.empty() ? "" : "; did you mean \"" + guess + "\"?") +
                     " (docs/schedulers.md, \"Parameters\", lists them)");
    return false;
  }
  // The setting's own reader, on a Settings that holds these params: the same checks and words as a
  // config file's key.
  Settings scratch;
  static_cast<PolicyParams&>(scratch) = params;
  std::string detail;
  if (!info->read_json(value, scratch, detail)) {
    error = rejection(*info, value, detail);
    return false;
  }
  params = scratch;
  return true;
}

nlohmann::json settings_to_json(const Settings& settings) {
  nlohmann::json object = nlohmann::json::object();
  for (const SettingInfo& info : setting_infos()) object[info.name] = info.to_json(settings);
  return object;
}

}  // namespace coex::config
