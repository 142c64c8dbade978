#include "exec/policy_gate.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "exec/executor.h"
#include "exec/launch_shape.h"
#include "sched/history.h"

namespace coex::exec {
namespace {

// A split launch of one kernel and size, counted among the History's splits in flight while the job
// that holds it lives.
struct SplitInFlight {
  SplitInFlight(std::shared_ptr<sched::History> h, std::string k, uint64_t s)
      : history(std::move(h)), key(std::move(k)), size(s) {
    history->split_started(key, size);
  }
  ~SplitInFlight() { history->split_ended(key, size); }
  SplitInFlight(const SplitInFlight&) = delete;
  SplitInFlight& operator=(const SplitInFlight&) = delete;
  std::shared_ptr<sched::History> history;
  std::string key;
  uint64_t size;
};

}  // namespace

const char* policy_keeps_on_home(Services& services, const std::string& kernel_key, const std::string& drained_key,
                                 LaunchJob& job, const std::vector<int>& participants, int home,
                                 std::optional<report::GateRecord>& gate, std::optional<sched::LaunchShape>& asked) {
  sched::LaunchShape shape = launch_shape(job.geometry, kernel_key, home, std::nullopt, nullptr);
  shape.home_measured_seconds =
      services.executor().home_launch_times().settled_seconds(drained_key, HomeLaunchTimes::kDrainedAtLeast);
  for (const RootUse& use : job.roots) {
    std::lock_guard lock(use.root->state->mutex());
    shape.buffer_writes += use.root->state->generation();
  }
  asked = shape;
  std::vector<int> devices = participants;
  if (std::find(devices.begin(), devices.end(), home) == devices.end()) devices.push_back(home);
  sched::GateVerdict verdict;
  const char* reason = services.executor().policy().unsplit_reason(shape, devices, &verdict);
  if (!verdict.devices.empty()) {  // the policy has a gate: the report says what it saw
    gate.emplace();
    gate->launch = verdict.launch;
    gate->decision = reason ? reason : "split";
    gate->devices = verdict.devices;
    gate->probe = verdict.probe;
    gate->measured_devices = verdict.measured_devices;
    gate->split_seconds = verdict.split_seconds.value_or(-1);
    gate->home_seconds = verdict.home_seconds.value_or(-1);
    gate->measured_size = verdict.measured_size;
    gate->cold_transfers = verdict.cold_transfers;
  }
  if (reason) return reason;
  job.launch_number = shape.launch_number;
  job.follows_split = shape.follows_split;
  job.home_measured_seconds = shape.home_measured_seconds;
  if (auto history = services.executor().history(); history && shape.launch_number)
    job.in_flight = std::make_shared<SplitInFlight>(history, shape.kernel_key, shape.global_size);
  return nullptr;
}

}  // namespace coex::exec
