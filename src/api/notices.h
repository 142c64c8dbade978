// What coex tells the user on stderr without being asked (at the default log level, warn; COEX_LOG=error
// or off silences it): one line when the app's first launch shows what coex will do: split across
// which devices, or nothing, why, and what to change. At exit, one line of what it did (info), and one
// (warn) when it split nothing although it could have.
//
// Lines start "coex: ", as the configuration errors do, and are plain notices, not log records: a
// user who runs `coex run ./app` should see what coex is doing without reading a log format.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace coex::devices { class DeviceSet; }
namespace coex::config { struct Settings; }

namespace coex::api {

// The notice for the first launch with `home` as the app's device: whether launches will be split
// across the selected devices, or, when they cannot be, why and how to change it. `why_no_analysis`:
// non-empty when libclang could not be loaded (every kernel unanalysable). Empty when home is unknown.
// `splits`: set when the notice says launches will be split.
std::string start_notice(const devices::DeviceSet& devices, int home, const config::Settings& settings,
                         const std::string& why_no_analysis, bool& splits);

// "coex: 24 launches, 18 split across 2 devices; not split: too_small x4, ...; report r.json".
std::string exit_summary(const nlohmann::json& report, const std::string& report_path);
// When nothing was split although the start notice said coex would split: why, from the report's
// reasons, with what the most frequent one means; empty otherwise.
std::string nothing_split_notice(const nlohmann::json& report);

}  // namespace coex::api
