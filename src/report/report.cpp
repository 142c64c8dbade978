#include "report/report.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <system_error>

namespace coex::report {

namespace {

// Reasons are counted as given; an empty one would be an empty JSON key. A string: count_not_split's
// choice between it and the reason then copies neither (it runs at every launch left on home).
const std::string kUnspecifiedReason = "unspecified";

// Tiers from best to worst: a kernel whose launches used different tiers shows the worst.
int tier_rank(const std::string& tier) {
  if (tier == "exact") return 1;
  if (tier == "whole") return 2;
  if (tier == "diff") return 3;
  return 0;
}

void add_tiers(std::vector<ArgTierRecord>& into, const std::vector<ArgTierRecord>& from) {
  for (const ArgTierRecord& arg : from) {
    auto at = std::lower_bound(into.begin(), into.end(), arg.index,
                               [](const ArgTierRecord& entry, int index) { return entry.index < index; });
    if (at == into.end() || at->index != arg.index) {
      into.insert(at, arg);
    } else if (tier_rank(arg.tier) > tier_rank(at->tier)) {
      at->tier = arg.tier;
    }
  }
}

// Counts `key` in a first-seen-order list of (key, count).
void count_in(std::vector<std::pair<std::string, uint64_t>>& counts, const std::string& key) {
  auto found = std::find_if(counts.begin(), counts.end(), [&key](const auto& entry) { return entry.first == key; });
  if (found == counts.end())
    counts.emplace_back(key, 1);
  else
    ++found->second;
}

nlohmann::json counts_json(const std::vector<std::pair<std::string, uint64_t>>& counts) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, count] : counts) out[key] = count;
  return out;
}

nlohmann::json seconds_or_null(double seconds) { return seconds < 0 ? nlohmann::json() : nlohmann::json(seconds); }

void add_steps(BytesByStep& into, const BytesByStep& from) {
  into.home_to_host += from.home_to_host;
  into.host_to_devices += from.host_to_devices;
  into.devices_to_host += from.devices_to_host;
  into.host_to_home += from.host_to_home;
}

// The kept verdict as of the launch number it was kept for (keep_latest_gate).
nlohmann::json last_verdict_json(const GateRecord& gate, uint64_t launch) {
  nlohmann::json out = gate_json(gate);
  out["launch"] = launch;
  return out;
}

}  // namespace

nlohmann::json gate_json(const GateRecord& gate) {
  return {{"launch", gate.launch},
          {"decision", gate.decision},
          {"devices", gate.devices},
          {"probe", gate.probe},
          {"measured_devices", gate.measured_devices},
          {"split_seconds", seconds_or_null(gate.split_seconds)},
          {"home_seconds", seconds_or_null(gate.home_seconds)},
          {"measured_size", gate.measured_size ? nlohmann::json(gate.measured_size) : nlohmann::json()},
          {"cold_transfers", gate.cold_transfers}};
}

nlohmann::json regularity_json(const RegularityRecord& r) {
  return {{"irregular", r.irregular},
          {"window_spread", r.window_spread},
          {"packages", r.packages},
          {"spread", r.spread},
          {"range_ratio", r.range_ratio < 0 ? nlohmann::json() : nlohmann::json(r.range_ratio)}};
}

void ReportRecorder::set_mode(const std::string& mode) {
  std::lock_guard<std::mutex> lock(mutex_);
  mode_ = mode;
}

void ReportRecorder::set_policy(const std::string& policy) {
  std::lock_guard<std::mutex> lock(mutex_);
  policy_ = policy;
}

void ReportRecorder::set_devices(const std::vector<ReportDevice>& devices) {
  std::lock_guard<std::mutex> lock(mutex_);
  devices_ = devices;
}

void ReportRecorder::set_settings(const nlohmann::json& settings) {
  std::lock_guard<std::mutex> lock(mutex_);
  settings_ = settings;
}

void ReportRecorder::set_pid(int pid) {
  std::lock_guard<std::mutex> lock(mutex_);
  pid_ = pid;
}

void ReportRecorder::set_history(const nlohmann::json& history) {
  std::lock_guard<std::mutex> lock(mutex_);
  history_ = history;
}

void ReportRecorder::set_trace_file(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  trace_file_ = path;
}

bool ReportRecorder::has_arg_names(const std::string& kernel) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return arg_names_.count(kernel) != 0;
}

void ReportRecorder::set_arg_names(const std::string& kernel, const std::vector<std::string>& names) {
  std::lock_guard<std::mutex> lock(mutex_);
  arg_names_[kernel] = names;
}

void ReportRecorder::add_device_seconds(const std::string& kernel, int device, double seconds) {
  if (!(seconds > 0)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = kernel_index_.find(kernel);
  if (it == kernel_index_.end()) return;  // only launches the report counted
  add_device_work(kernels_[it->second], device, 0, seconds);
}

void ReportRecorder::add_device_work(KernelTotals& totals, int device, uint64_t work_items, double seconds) {
  auto at = std::lower_bound(totals.per_device.begin(), totals.per_device.end(), device,
                             [](const auto& entry, int index) { return entry.first < index; });
  if (at == totals.per_device.end() || at->first != device) at = totals.per_device.insert(at, {device, DeviceTotals{}});
  at->second.work_items += work_items;
  at->second.seconds += seconds;
}

ReportRecorder::KernelTotals& ReportRecorder::totals_of(const std::string& kernel) {
  // The kernel of the launch before, without hashing its name: a program of many small launches repeats one.
  if (last_kernel_ < kernels_.size() && kernels_[last_kernel_].name == kernel) return kernels_[last_kernel_];
  auto [it, inserted] = kernel_index_.try_emplace(kernel, kernels_.size());
  if (inserted) {
    kernels_.emplace_back();
    kernels_.back().name = kernel;
  }
  last_kernel_ = it->second;
  return kernels_[it->second];
}

void ReportRecorder::set_launch_observer(LaunchObserver observer) {
  std::lock_guard<std::mutex> lock(mutex_);
  launch_observer_ = std::move(observer);
  has_launch_observer_ = static_cast<bool>(launch_observer_);
}

void ReportRecorder::record_unsplit(const std::string& kernel, const std::string& reason,
                                    const std::shared_ptr<const GateRecord>& gate, uint64_t gate_launch, int home,
                                    uint64_t work_items, bool observed) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!has_launch_observer_ || !observed) {
      KernelTotals& totals = totals_of(kernel);
      ++totals.launches;
      if (gate) keep_latest_gate(totals, gate, gate_launch);
      count_not_split(totals, reason);
      if (home >= 0) add_device_work(totals, home, work_items, 0);
      return;
    }
  }
  LaunchRecord launch;
  launch.not_split_reason = reason;
  if (gate) {
    launch.gate = *gate;
    launch.gate->launch = gate_launch;
  }
  if (home >= 0) launch.per_device.push_back({home, work_items, 0});
  record_launch(kernel, launch);
}

void ReportRecorder::record_launch(const std::string& kernel, const LaunchRecord& launch) {
  LaunchObserver observer;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    add_launch(kernel, launch);
    observer = launch_observer_;
  }
  if (observer) observer(kernel, launch);
}

// Split launches are recorded when they end, later than launches enqueued after them that ran on
// home: the verdict kept is the one of the highest launch number. The record kept is shared: held,
// its address cannot be another record's, so that a launch repeating the last one's plan (this runs
// at every launch left on home) changes no reference count.
void ReportRecorder::keep_latest_gate(KernelTotals& totals, const std::shared_ptr<const GateRecord>& gate,
                                      uint64_t launch) {
  if (totals.last_gate && launch < totals.last_gate_launch) return;
  if (totals.last_gate != gate) totals.last_gate = gate;
  totals.last_gate_launch = launch;
}

void ReportRecorder::count_not_split(KernelTotals& totals, const std::string& reason) {
  count_in(totals.not_split, reason.empty() ? kUnspecifiedReason : reason);
}

void ReportRecorder::add_launch(const std::string& kernel, const LaunchRecord& launch) {
  KernelTotals& totals = totals_of(kernel);
  ++totals.launches;
  // A split launch's record (or one the launch observer saw) is copied once, where it is the latest.
  if (launch.gate && (!totals.last_gate || launch.gate->launch >= totals.last_gate_launch))
    keep_latest_gate(totals, std::make_shared<const GateRecord>(*launch.gate), launch.gate->launch);
  if (launch.regularity) totals.last_regularity = launch.regularity;
  if (launch.split) {
    ++totals.split_launches;
    totals.cold_splits += launch.cold;
    totals.probes += launch.gate && launch.gate->probe;
    if (!launch.planned_by.empty()) count_in(totals.planned_by, launch.planned_by);
  } else {
    count_not_split(totals, launch.not_split_reason);
  }
  totals.bytes_moved += launch.bytes_moved;
  totals.bytes_minimal += launch.bytes_minimal;
  add_steps(totals.bytes_by_step, launch.bytes_by_step);
  add_tiers(totals.args, launch.args);
  for (const DeviceWork& work : launch.per_device) add_device_work(totals, work.index, work.work_items, work.seconds);
}

nlohmann::json ReportRecorder::to_json() const {
  std::lock_guard<std::mutex> lock(mutex_);
  nlohmann::json report = nlohmann::json::object();
  report["format"] = kReportFormat;
  report["version"] = kReportVersion;
  if (pid_) report["pid"] = pid_;
  report["mode"] = mode_;
  report["policy"] = policy_;
  if (!settings_.is_null()) report["settings"] = settings_;
  if (!history_.is_null()) report["history"] = history_;
  if (!trace_file_.empty()) report["trace"] = trace_file_;

  nlohmann::json devices = nlohmann::json::array();
  for (const ReportDevice& d : devices_) {
    devices.push_back(
        {{"index", d.index}, {"name", d.name}, {"platform", d.platform}, {"type", d.type}, {"home", d.home}});
    if (d.remote) devices.back()["remote"] = true;  // written only when true: local reports stay as they were
  }
  report["devices"] = std::move(devices);

  nlohmann::json kernels = nlohmann::json::array();
  uint64_t launches = 0, split_launches = 0, bytes_moved = 0, bytes_minimal = 0;
  for (const KernelTotals& k : kernels_) {
    nlohmann::json not_split = counts_json(k.not_split);
    nlohmann::json per_device = nlohmann::json::array();
    for (const auto& [index, work] : k.per_device) {
      per_device.push_back({{"index", index}, {"work_items", work.work_items}, {"seconds", work.seconds}});
    }
    nlohmann::json args = nlohmann::json::array();
    auto names = arg_names_.find(k.name);
    for (const ArgTierRecord& arg : k.args) {
      nlohmann::json entry = {{"index", arg.index}, {"tier", arg.tier}};
      if (names != arg_names_.end() && arg.index >= 0 && size_t(arg.index) < names->second.size() &&
          !names->second[size_t(arg.index)].empty())
        entry["name"] = names->second[size_t(arg.index)];
      args.push_back(std::move(entry));
    }
    const BytesByStep& steps = k.bytes_by_step;
    nlohmann::json last_verdict = k.last_gate ? last_verdict_json(*k.last_gate, k.last_gate_launch) : nlohmann::json();
    kernels.push_back({{"name", k.name},
                       {"launches", k.launches},
                       {"split_launches", k.split_launches},
                       {"cold_splits", k.cold_splits},
                       {"not_split", std::move(not_split)},
                       {"planned_by", counts_json(k.planned_by)},
                       {"probes", k.probes},
                       {"last_verdict", std::move(last_verdict)},
                       {"regularity", k.last_regularity ? regularity_json(*k.last_regularity) : nlohmann::json()},
                       {"bytes_moved", k.bytes_moved},
                       {"per_device", std::move(per_device)},
                       {"bytes_minimal", k.bytes_minimal},
                       {"bytes_by_step",
                        {{"home_to_host", steps.home_to_host},
                         {"host_to_devices", steps.host_to_devices},
                         {"devices_to_host", steps.devices_to_host},
                         {"host_to_home", steps.host_to_home}}},
                       {"args", std::move(args)}});
    launches += k.launches;
    split_launches += k.split_launches;
    bytes_moved += k.bytes_moved;
    bytes_minimal += k.bytes_minimal;
  }
  report["kernels"] = std::move(kernels);
  nlohmann::json builds = nlohmann::json::array();
  for (const auto& [device, b] : builds_)
    builds.push_back({{"device", device},
                      {"builds", b.count},
                      {"failed", b.failed},
                      {"from_binary", b.from_binary},
                      {"seconds", b.seconds}});
  report["builds"] = std::move(builds);
  if (!late_devices_.empty()) {
    nlohmann::json late = nlohmann::json::array();
    for (const auto& [device, after] : late_devices_)
      late.push_back({{"device", device}, {"let_in_after", after ? nlohmann::json(*after) : nlohmann::json()}});
    report["late_devices"] = std::move(late);
  }
  if (compile_ahead_.processes || compile_ahead_.beyond_limit || compile_ahead_.probes ||
      compile_ahead_.held_until_paid)
    report["compile_ahead"] = {{"processes", compile_ahead_.processes},
                               {"made", compile_ahead_.made},
                               {"ended_at_exit", compile_ahead_.ended_at_exit},
                               {"served_none", compile_ahead_.served_none},
                               {"at_build", compile_ahead_.at_build},
                               {"other_kinds", compile_ahead_.other_kinds},
                               {"seconds", compile_ahead_.seconds},
                               {"beyond_limit", compile_ahead_.beyond_limit},
                               {"probes", compile_ahead_.probes},
                               {"probe_seconds", compile_ahead_.probe_seconds},
                               {"split_after_probe", compile_ahead_.split_after_probe},
                               {"held_until_paid", compile_ahead_.held_until_paid}};
  report["totals"] = {{"launches", launches},
                      {"split_launches", split_launches},
                      {"bytes_moved", bytes_moved},
                      {"bytes_minimal", bytes_minimal},
                      {"bytes_home_on_demand", bytes_home_on_demand_},
                      {"bytes_fetched_on_demand", bytes_fetched_on_demand_}};
  return report;
}

void ReportRecorder::record_build(int device, double seconds, bool failed, bool from_binary) {
  std::lock_guard lock(mutex_);
  auto at = std::lower_bound(builds_.begin(), builds_.end(), device,
                             [](const auto& entry, int index) { return entry.first < index; });
  if (at == builds_.end() || at->first != device) at = builds_.insert(at, {device, Builds{}});
  ++at->second.count;
  at->second.failed += failed;
  at->second.from_binary += from_binary;
  at->second.seconds += seconds;
}

void ReportRecorder::record_late_device(int device, std::optional<double> let_in_after) {
  std::lock_guard lock(mutex_);
  if (let_in_after)
    late_devices_[device] = let_in_after;
  else
    late_devices_.try_emplace(device);  // never over a time of its let-in
}

void ReportRecorder::record_compile_ahead(double seconds, bool made, bool at_exit, bool at_build, size_t other_kinds,
                                          bool served_none) {
  std::lock_guard lock(mutex_);
  ++compile_ahead_.processes;
  compile_ahead_.made += made;
  compile_ahead_.ended_at_exit += at_exit;
  compile_ahead_.served_none += served_none;
  compile_ahead_.at_build += at_build;
  compile_ahead_.other_kinds += served_none ? 0 : other_kinds;  // a killed one built for none
  compile_ahead_.seconds += seconds;
}

void ReportRecorder::record_compile_ahead_beyond_limit() {
  std::lock_guard lock(mutex_);
  ++compile_ahead_.beyond_limit;
}

void ReportRecorder::record_first_launch_probe(double seconds) {
  std::lock_guard lock(mutex_);
  ++compile_ahead_.probes;
  compile_ahead_.probe_seconds += seconds;
}

void ReportRecorder::record_split_after_probe() {
  std::lock_guard lock(mutex_);
  ++compile_ahead_.split_after_probe;
}

void ReportRecorder::record_held_until_paid() {
  std::lock_guard lock(mutex_);
  ++compile_ahead_.held_until_paid;
}

void ReportRecorder::record_home_on_demand(uint64_t written, uint64_t fetched) {
  std::lock_guard lock(mutex_);
  bytes_home_on_demand_ += written;
  bytes_fetched_on_demand_ += fetched;
}

bool ReportRecorder::write(const std::string& path, std::string* error) const {
  try {
    // error_handler_t::replace: a kernel name is the app's bytes and need not be valid UTF-8.
    const std::string text = to_json().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    return write_file_atomically(path, text, error);
  } catch (const std::exception& e) {
    if (error) *error = std::string("cannot build the report: ") + e.what();
    return false;
  }
}

std::string expand_pid(const std::string& path, int pid) {
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 1 < path.size() && path[i + 1] == 'p') {
      out += std::to_string(pid);
      ++i;
    } else {
      out += path[i];
    }
  }
  return out;
}

bool is_readable_report(const nlohmann::json& document, std::string& why) {
  const char* const usage = "`coex report` reads the file that `coex run --report` (COEX_REPORT) wrote";
  if (!document.is_object()) {
    why = "not a coex report: the top level is not a JSON object (" + std::string(usage) + ")";
    return false;
  }
  auto format = document.find("format");
  if (format == document.end() || !format->is_string() || format->get<std::string>() != kReportFormat) {
    if (document.contains("traceEvents"))
      why =
          "a trace (COEX_TRACE), not a report: open it in https://ui.perfetto.dev, or draw it with "
          "`coex report --html OUT.html --trace TRACE REPORT`";
    else if (format != document.end() && format->is_string() && format->get<std::string>() == "coex-history")
      why = "coex's history cache (COEX_CACHE), not a report; " + std::string(usage);
    else if (document.contains("kernels") && document.contains("totals"))
      why = "a report from a coex without a format version: run the program again under this coex";
    else
      why = "not a coex report: no \"format\": \"coex-report\" (a config file?); " + std::string(usage);
    return false;
  }
  auto version = document.find("version");
  if (version == document.end() || !version->is_number_integer() || version->get<int64_t>() < 1) {
    why = "a coex report without a valid \"version\"";
    return false;
  }
  if (version->get<int64_t>() > kReportVersion) {
    why = "a coex report of version " + std::to_string(version->get<int64_t>()) +
          ", written by a newer coex; this one reads version " + std::to_string(kReportVersion);
    return false;
  }
  return true;
}

bool write_file_atomically(const std::string& path, const std::string& text, std::string* error) {
  return write_file_atomically(
      path, [&text](std::ostream& out) { out.write(text.data(), static_cast<std::streamsize>(text.size())); }, error);
}

bool write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write_content,
                           std::string* error) {
  std::string temporary;
  try {
    temporary = path + ".tmp." + std::to_string(::getpid());
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) {
      if (error) *error = temporary + ": " + std::generic_category().message(errno);
      return false;
    }
    write_content(out);
    out.close();
    if (!out) {
      if (error) *error = temporary + ": write failed";
      std::remove(temporary.c_str());
      return false;
    }
    if (std::rename(temporary.c_str(), path.c_str()) != 0) {
      if (error) *error = path + ": " + std::generic_category().message(errno);
      std::remove(temporary.c_str());
      return false;
    }
    return true;
  } catch (const std::exception& e) {
    if (error) *error = path + ": " + e.what();
    if (!temporary.empty()) std::remove(temporary.c_str());
    return false;
  }
}

}  // namespace coex::report
