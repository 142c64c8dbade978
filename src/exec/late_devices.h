// Devices whose context and builds wait until the program has run a while (docs/design.md,
// "One-time costs"): under auto, those `auto_late_devices` names (GPUs by default) beside another home.
// A GPU's context and first build of a program take up to 2 s, which a short program never gets back,
// and which its exit waits for where they are under way (docs/design.md, "Exit"): PoCL's CPU as home
// beside an H200, every short program's first run took 0.8 to 1.6 s longer to exit under coex. A late
// device is let in once `auto_late_after` seconds have gone by since the first launch coex could split
// over it, where the work left can outlast its preparation (`auto_late_cost`): at a launch planned then
// that is measured that long on home, or after the program's launches that could take it ran that long,
// or by a split launch still running then with that long left (split_runner.cpp), which it then joins;
// and only once coex's analysis says some kernel of the program may be split. A launch nothing has
// timed, with none but late devices to take part, runs on home whole, and beside none but them nothing
// is prepared for a split before they are let in: no analysis, no build on home (launch_planner.cpp).
#pragma once

#include <CL/cl.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace coex::config {
struct Settings;
}
namespace coex::model {
struct ProgramRecord;
}

namespace coex::exec {

class Services;

class LateDevices {
 public:
  using Clock = std::chrono::steady_clock;
  // `named`: the devices the setting names (none under a policy that waits for preparation: its user
  // asked for every device); `after_seconds`: auto_late_after.
  LateDevices(std::set<int> named, double after_seconds)
      : named_(named), waiting_(std::move(named)), after_(after_seconds) {}

  // The devices of `devices` that still wait for their context and builds (never home).
  std::vector<int> waiting_among(const std::vector<int>& devices, int home) const;
  // How long until the waiting devices are let in: the first call starts the clock (the first launch
  // that could take one); 0 once auto_late_after has gone by since.
  double seconds_left(Clock::time_point now = Clock::now());
  // Starts the clock (seconds_left) where nothing has yet.
  void start_clock(Clock::time_point now = Clock::now());
  // Takes `device` off the waiting list: true at the first call for it.
  bool let_in(int device);
  // Whether `devices` is not empty and each of them a late device, let in or not.
  bool all_named(const std::vector<int>& devices) const;
  // Seconds since the first launch that could take a late device (0 before it).
  double seconds_since_first(Clock::time_point now = Clock::now()) const;
  // Whether some late device was let in at clBuildProgram from the History's memory (let_in_if_remembered):
  // the run then checks again whether the program runs long enough to be remembered.
  bool any_remembered() const { return remembered_.load(std::memory_order_relaxed); }
  void set_remembered() { remembered_.store(true, std::memory_order_relaxed); }
  // A launch of the program `program_hash` that none but late devices could have taken ran on home
  // whole, nothing timed of it before (launch_planner.cpp), timed there under `home_key`: it starts the
  // clock (seconds_left), and at exit one measured long enough has the History remember the program
  // (Executor::stop). The first kMaxUntimed launches, each once.
  void note_untimed(uint64_t program_hash, const std::string& home_key);
  std::vector<std::pair<uint64_t, std::string>> untimed() const;
  static constexpr size_t kMaxUntimed = 64;

 private:
  const std::set<int> named_;
  mutable std::mutex mutex_;
  std::set<int> waiting_;
  std::optional<Clock::time_point> first_;
  const double after_;
  std::atomic<bool> remembered_{false};
  std::vector<std::pair<uint64_t, std::string>> untimed_;  // note_untimed's
};

// Whether a split launch still running has work left for `cost` seconds
// (auto_late_cost: a late device's context and build) at the pace of its chunks so far: `finished` is
// the work-groups finished of `total_groups` and when the last of them ended (SplitProgress::finished_work).
// A launch none of whose chunks has ended yet counts as long. Letting a device in for less would only
// make the exit wait for its preparation: a launch of 0.56 s on PoCL's CPU beside an H200 exited 1.7 s
// later (benchmarks/nbody, docs/gpu.md).
bool late_work_outlasts(std::pair<uint64_t, double> finished, uint64_t total_groups, double cost);

// What a launch measured `on_home` seconds on home says of the late devices still waiting (the clock
// starts at one of min_split_seconds or more: LateDevices::seconds_left):
// - let_in: auto_late_after has gone by, and the launch or the program's launches so far have run
//   auto_late_cost, the devices' expected preparation (one shorter may be the program's last, and the
//   exit would wait for it);
// - too_short: not, and the launch is shorter than auto_late_cost (or min_split_seconds): it gives
//   them nothing to join;
// - wait: a launch that long, before auto_late_after: a split of it on home may let them in while it
//   runs (split_runner.cpp).
enum class LateCall { let_in, too_short, wait };
LateCall judge_late_devices(LateDevices& late, const config::Settings& settings, double on_home);

// The devices of the app's devices the auto_late_devices setting names, under a policy that does not
// wait for preparation (auto); none otherwise.
std::set<int> named_late_devices(Services& services, bool policy_waits_for_preparation);

// The program ran long enough to let late devices in (at a launch measured long enough once its
// analysis said some kernel may be split, or by a split that ran long enough, past auto_late_after):
// the History remembers it, and `devices` (late ones not let in yet, none or some) are let in now,
// each once: its context is made on its worker, then the program's build for them is posted there,
// and home's, which beside none but late devices waited for them (exec/device_kernels.h,
// prepare_program, in one call: devices of one kind build from one binary); a launch of another
// program posts that program's as usual. Recorded in the report and in the trace, on each device's track.
void let_in_late_devices(Services& services, const std::shared_ptr<model::ProgramRecord>& program,
                         cl_context app_context, int home, const std::vector<int>& devices);

// At the app's clBuildProgram: where an earlier run of the program let a late device in (the History,
// sched::History::note_late_let_in), the late devices among `others` are let in as soon as the
// program's analysis (posted beside the app's build) says some kernel of it may be split, as the
// program ran long enough for them; the report says so (let in after 0 s). A program none of whose
// kernels may be split makes no context for them. The History forgets the program then, until this
// run too runs long enough (let_in_late_devices): a program that turned short is not prepared for at
// every run after.
void let_in_if_remembered(Services& services, const std::shared_ptr<model::ProgramRecord>& program,
                          cl_context app_context, int home, const std::vector<int>& others);

// What let_in_if_remembered does once the analysis says so: `devices` are let in (after 0 s, each
// once: its context on its worker), and the program's builds for them and for home are posted.
void let_in_remembered(Services& services, const std::shared_ptr<model::ProgramRecord>& program, cl_context app_context,
                       int home, const std::vector<int>& devices);

}  // namespace coex::exec
