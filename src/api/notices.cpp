#include "api/notices.h"

#include <algorithm>
#include <map>
#include <vector>

#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/program_analysis.h"
#include "report/report.h"

namespace coex::api {
namespace {

std::string device_label(const devices::Device& device) {
  return "d" + std::to_string(device.index) + " " + device.name;
}

std::string selector_text(const config::Settings& settings) { return "COEX_DEVICES \"" + settings.devices + "\""; }

}  // namespace

std::string start_notice(const devices::DeviceSet& devices, int home, const config::Settings& settings,
                         const std::string& why_no_analysis, bool& splits) {
  splits = false;
  const auto& all = devices.all();
  if (home < 0 || size_t(home) >= all.size()) return "";
  const devices::Device& app_device = all[size_t(home)];
  const std::vector<int> selected = devices.selected();
  const bool home_selected = std::find(selected.begin(), selected.end(), home) != selected.end();
  const std::string listing = "`coex devices` lists the " + std::to_string(all.size()) + " devices the loader sees";

  if (all.size() == 1) {
    std::string fix = app_device.is_pocl()
                          ? "PoCL's CPU can be two devices: POCL_DEVICES=\"pthread pthread\" (PoCL 5: \"cpu cpu\")"
                          : "install PoCL (Debian: pocl-opencl-icd) to add the CPU as a second device";
    return "coex: one OpenCL device only (" + device_label(app_device) +
           "): nothing to split, the app runs unchanged; " + fix;
  }
  if (selected.empty())
    return "coex: " + selector_text(settings) + " selects no device: nothing is split, the app runs unchanged; " +
           listing;
  if (selected.size() == 1 && home_selected)
    return "coex: " + selector_text(settings) + " selects only the app's device (" + device_label(app_device) +
           "): nothing to split; select a second device too (" + listing + ")";
  if (!home_selected) {
    // A split runs part of the launch on the app's device, in the app's context: a selection without it
    // leaves launches unsplit (devices_unavailable).
    std::string with_home = std::to_string(home);
    for (int index : selected) with_home += "," + std::to_string(index);
    return "coex: " + selector_text(settings) + " leaves out the app's device (" + device_label(app_device) +
           "): launches are not split; add its index, e.g. COEX_DEVICES=\"" + with_home + "\" (" + listing + ")";
  }
  if (!why_no_analysis.empty()) return exec::missing_libclang_notice(why_no_analysis);
  splits = true;
  std::string names;
  for (int index : selected) {
    names += (names.empty() ? "" : ", ") + device_label(all[size_t(index)]);
    if (index == home) names += " (home)";
  }
  return "coex: splitting launches across " + std::to_string(selected.size()) + " devices (policy " + settings.policy +
         "): " + names;
}

namespace {

struct Totals {
  uint64_t launches = 0, split = 0;
  std::map<std::string, uint64_t> reasons;
};

Totals totals_of(const nlohmann::json& report) {
  Totals totals;
  const auto kernels = report.find("kernels");
  if (kernels == report.end() || !kernels->is_array()) return totals;
  for (const auto& kernel : *kernels) {
    totals.launches += kernel.value("launches", uint64_t{0});
    totals.split += kernel.value("split_launches", uint64_t{0});
    const auto not_split = kernel.find("not_split");
    if (not_split != kernel.end() && not_split->is_object())
      for (const auto& [reason, count] : not_split->items())
        totals.reasons[reason] += count.is_number_unsigned() ? count.get<uint64_t>() : 0;
  }
  return totals;
}

// "too_small x4, global_atomics x2": the most frequent first.
std::string reasons_text(const std::map<std::string, uint64_t>& reasons) {
  std::vector<std::pair<std::string, uint64_t>> sorted(reasons.begin(), reasons.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text;
  for (const auto& [reason, count] : sorted) text += (text.empty() ? "" : ", ") + reason + " x" + std::to_string(count);
  return text;
}

}  // namespace

std::string exit_summary(const nlohmann::json& report, const std::string& report_path) {
  const Totals totals = totals_of(report);
  size_t devices = 0;
  const auto list = report.find("devices");
  if (list != report.end() && list->is_array()) devices = list->size();
  std::string line = "coex: " + std::to_string(totals.launches) + " launches, " + std::to_string(totals.split) +
                     " split across " + std::to_string(devices) + " devices";
  if (!totals.reasons.empty()) line += "; not split: " + reasons_text(totals.reasons);
  line += report_path.empty() ? "; no report (COEX_REPORT)" : "; report " + report_path;
  return line;
}

std::string nothing_split_notice(const nlohmann::json& report) {
  const Totals totals = totals_of(report);
  if (totals.launches == 0 || totals.split > 0 || totals.reasons.empty()) return "";
  auto most = std::max_element(totals.reasons.begin(), totals.reasons.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  const std::string meaning = report::not_split_reason_meaning(most->first);
  return "coex: none of the " + std::to_string(totals.launches) + " launches was split (" +
         reasons_text(totals.reasons) + ")" + (meaning.empty() ? "" : "; " + most->first + ": " + meaning);
}

}  // namespace coex::api
