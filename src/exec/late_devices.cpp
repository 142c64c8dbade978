#include "exec/late_devices.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/background_tasks.h"
#include "exec/device_kernels.h"
#include "exec/executor.h"
#include "model/records.h"
#include "report/report.h"
#include "report/trace.h"

namespace coex::exec {

std::vector<int> LateDevices::waiting_among(const std::vector<int>& devices, int home) const {
  std::vector<int> out;
  std::lock_guard lock(mutex_);
  if (waiting_.empty()) return out;
  for (int device : devices)
    if (device != home && waiting_.count(device)) out.push_back(device);
  return out;
}

void LateDevices::start_clock(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  if (!first_) first_ = now;
}

double LateDevices::seconds_left(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  if (!first_) first_ = now;
  return std::max(0.0, after_ - std::chrono::duration<double>(now - *first_).count());
}

bool LateDevices::let_in(int device) {
  std::lock_guard lock(mutex_);
  return waiting_.erase(device) > 0;
}

bool LateDevices::all_named(const std::vector<int>& devices) const {
  return !devices.empty() &&
         std::all_of(devices.begin(), devices.end(), [this](int device) { return named_.count(device) > 0; });
}

double LateDevices::seconds_since_first(Clock::time_point now) const {
  std::lock_guard lock(mutex_);
  return first_ ? std::chrono::duration<double>(now - *first_).count() : 0.0;
}

void LateDevices::note_untimed(uint64_t program_hash, const std::string& home_key) {
  start_clock();
  std::lock_guard lock(mutex_);
  const std::pair<uint64_t, std::string> launch{program_hash, home_key};
  if (untimed_.size() < kMaxUntimed && std::find(untimed_.begin(), untimed_.end(), launch) == untimed_.end())
    untimed_.push_back(launch);
}

std::vector<std::pair<uint64_t, std::string>> LateDevices::untimed() const {
  std::lock_guard lock(mutex_);
  return untimed_;
}

bool late_work_outlasts(std::pair<uint64_t, double> finished, uint64_t total_groups, double cost) {
  const auto [groups, last_end] = finished;
  if (groups == 0 || groups >= total_groups) return groups == 0;
  const double left = double(total_groups - groups) * std::max(last_end, 0.0) / double(groups);
  return left >= cost;
}

LateCall judge_late_devices(LateDevices& late, const config::Settings& settings, double on_home) {
  const double min_seconds = settings.min_split_seconds;
  const double cost = settings.auto_late_cost;
  if (on_home >= min_seconds && late.seconds_left() <= 0 && std::max(on_home, late.seconds_since_first()) >= cost)
    return LateCall::let_in;
  return on_home < std::max(min_seconds, cost) ? LateCall::too_short : LateCall::wait;
}

std::set<int> named_late_devices(Services& services, bool policy_waits_for_preparation) {
  if (policy_waits_for_preparation) return {};
  // The setting was checked when it was read (config/settings.cpp): a bad one never gets here.
  return services.devices().named(services.settings().auto_late_devices);
}

namespace {

// Takes the late `device` off the waiting list, `after` seconds after the first launch that could take
// it, and makes its context on its worker; nothing where it was let in already.
void let_in_one(Services& services, int device, double after) {
  if (!services.executor().late_devices().let_in(device)) return;
  services.report().record_late_device(device, after);
  spdlog::debug("device {}: let in {:.3f} s after the first launch that could take it (auto_late_after)", device,
                after);
  if (auto* trace = services.trace()) {
    const auto now = std::chrono::steady_clock::now();
    trace->record("let in (auto_late_after)", "build", device, now, now);
  }
  make_context_in_background(services, device);
}

// Posts the program's builds for the late devices just let in and for home, each once.
void prepare_let_in(Services& services, const std::shared_ptr<model::ProgramRecord>& program, cl_context app_context,
                    int home, const std::vector<int>& devices) {
  std::vector<int> to_prepare = devices;
  to_prepare.insert(to_prepare.begin(), home);  // posted once: a build posted already is not again
  prepare_program(services, program, app_context, home, to_prepare);
}

}  // namespace

void let_in_late_devices(Services& services, const std::shared_ptr<model::ProgramRecord>& program,
                         cl_context app_context, int home, const std::vector<int>& devices) {
  if (auto history = services.executor().history()) history->note_late_let_in(program->source_hash);
  const double after = services.executor().late_devices().seconds_since_first();
  for (int device : devices) let_in_one(services, device, after);
  if (!devices.empty()) prepare_let_in(services, program, app_context, home, devices);
}

void let_in_if_remembered(Services& services, const std::shared_ptr<model::ProgramRecord>& program,
                          cl_context app_context, int home, const std::vector<int>& others) {
  auto history = services.executor().history();
  if (!history || !history->late_let_in(program->source_hash)) return;
  LateDevices& late = services.executor().late_devices();
  const std::vector<int> waiting = late.waiting_among(others, home);
  if (waiting.empty()) return;
  history->forget_late_let_in(program->source_hash);
  late.set_remembered();
  program->late_devices_remembered.store(true);
  // Once the analysis (posted at the app's clBuildProgram, beside its build) says some kernel may be
  // split: a program that never splits makes no context for them. Home's worker runs it; a launch
  // planned meanwhile may let them in first (launch_planner.cpp).
  when_splittable(services, program, home,
                  [&services, program, app_context, home, waiting, held = hold_app_context(services, app_context)] {
                    if (held) let_in_remembered(services, program, app_context, home, waiting);
                  });
}

void let_in_remembered(Services& services, const std::shared_ptr<model::ProgramRecord>& program, cl_context app_context,
                       int home, const std::vector<int>& devices) {
  for (int device : devices) let_in_one(services, device, 0.0);
  prepare_let_in(services, program, app_context, home, devices);
}

}  // namespace coex::exec
