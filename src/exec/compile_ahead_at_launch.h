// The part of a launch's plan that PoCL's compiles made ahead in a process of coex's own decide
// (docs/design.md, "Compiled ahead, in a process of its own"; exec/compile_ahead.h): whether the
// launch runs on home while a process compiles, starts one or sends it its variants, is probed first,
// or reads the app's program binary and goes on to be planned (exec/launch_planner.h).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/repeated_launches.h"
#include "exec/services.h"
#include "kernel/kernel_analysis.h"
#include "model/records.h"

namespace coex::exec::compile_ahead {

// What the planner does with the launch after at_launch.
enum class LaunchStep {
  plan_on,    // nothing to wait for here: the plan goes on
  too_small,  // runs on home, as a launch too small to split (a read that waits for quiet)
  preparing,  // runs on home whole while the compiles are made ahead, or until they are known to pay
  probing,    // a piece of it runs on home first, timed: `decision.probe`
};

// The launch at_launch decides on, as the planner holds it.
struct PlannedLaunch {
  const std::shared_ptr<model::ProgramRecord>& program;
  model::KernelRecord& kernel;
  const kernel::KernelInfo& info;
  const std::vector<model::KernelArgValue>& args;
  const LaunchRequest& request;
  const model::QueueRecord& queue;
  int home;
  const std::vector<int>& devices;  // every device that may take part, home among them
  const std::string& home_key;      // exec/home_launch_times.h's key of the launch
  const std::string& kernel_key;    // the History's key of the kernel
  double split_floor;               // auto_split_floor_seconds times the devices (exec/size_rules.h)
  bool read_deferred;               // the program's binary's read is put off (exec/deferred_app_binary.h)
  // The launch's time on home, or by the kernel's pace there.
  const std::function<std::optional<double>()>& seconds_on_home;
};

// At a launch of a program whose binary's read is put off (exec/deferred_app_binary.h) or whose process
// builds for other kinds (pending), past the size rule: one of a kernel without loops that home's times
// cannot yet tell from one below `split_floor` (timed_to_compile_ahead) runs on home, timed, and starts
// no process, unless one started at the build waits for its variants (waits_for_variants); one nothing
// timed of a kernel that loops is probed first (exec/first_launch_probe.h); one whose process must pay
// first waits for that (first_launch_probe::held_until_process_pays); else the read is made (or a
// process compiles first: under_way) or the process of other kinds is sent its variants
// (under_way_beside_kinds). The variants are those of the app's local size, else of the one coex picks
// over `devices`. Sets `decision`'s probe and `repeat`'s by_home_times and counts_before_process as the
// plan's step needs.
LaunchStep at_launch(Services& services, const PlannedLaunch& launch, LaunchDecision& decision,
                     RepeatableDecision& repeat);

}  // namespace coex::exec::compile_ahead
