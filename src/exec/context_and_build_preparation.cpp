#include "exec/context_and_build_preparation.h"

#include <chrono>
#include <mutex>
#include <optional>
#include <vector>

#include "devices/device_set.h"
#include "exec/background_tasks.h"
#include "exec/compile_ahead.h"
#include "exec/compile_ahead_warm.h"
#include "exec/deferred_app_binary.h"
#include "exec/device_kernels.h"
#include "exec/executor.h"
#include "exec/held_back_devices.h"
#include "exec/kept_analyses.h"
#include "exec/late_devices.h"
#include "exec/shared_binaries.h"
#include "kernel/analysis_process.h"
#include "kernel/libclang_api.h"
#include "report/trace.h"

namespace coex::exec {
namespace {

// The home device of an app whose context or program has `app_devices`, and the other selected
// devices; false when there is nothing to prepare (several app devices: which one its queue will
// use is not known yet; or no other device).
bool home_and_others(devices::DeviceSet& devices, const std::vector<cl_device_id>& app_devices, int& home,
                     std::vector<int>& others) {
  if (app_devices.size() != 1) return false;
  home = devices.index_of(app_devices.front());
  if (home < 0) return false;
  others.clear();
  for (int device : devices.selected())
    if (device != home) others.push_back(device);
  return !others.empty();
}

// `others` less those held back before any launch was timed on home (devices_held_back with no home
// time): the devices coex prepares for at clCreateContext and clBuildProgram.
std::vector<int> others_not_held_back(Services& services, int home, const std::vector<int>& others) {
  std::vector<int> all = others;
  all.push_back(home);
  return devices_without(others, devices_held_back(services, home, all, std::nullopt));
}

// `kept` (others_not_held_back) less the late devices (exec/late_devices.h) still waiting: the devices
// a split could take at once, for which coex analyses a program and builds it on home at
// clBuildProgram. Beside none but late ones, nothing is prepared before a launch lets them in
// (launch_planner.cpp), unless the History remembers the program as one that let them in
// (let_in_if_remembered).
std::vector<int> without_waiting(Services& services, int home, const std::vector<int>& kept,
                                 const model::ProgramRecord* program = nullptr) {
  if (program)
    if (auto history = services.executor().history(); history && history->late_let_in(program->source_hash))
      return kept;
  return devices_without(kept, services.executor().late_devices().waiting_among(kept, home));
}

// A program of source built for one device (the home to be), with other devices selected: there is
// something to prepare for its splits.
bool worth_preparing(Services& services, const model::ProgramRecord& program,
                     const std::vector<cl_device_id>& app_devices, int& home, std::vector<int>& others) {
  return program.origin == model::ProgramOrigin::Source &&
         home_and_others(services.devices(), app_devices, home, others);
}

// The devices prebuild_program builds the program for, home first, among `kept` (others_not_held_back):
// noted as its devices_to_build (model/records.h), the list a rewrite's process picks its devices from.
std::vector<int> note_devices_to_build(Services& services, model::ProgramRecord& program, int home,
                                       const std::vector<int>& kept) {
  std::vector<int> to_build = without_waiting(services, home, kept);
  to_build.insert(to_build.begin(), home);
  std::lock_guard lock(program.mutex);
  program.devices_to_build = to_build;
  return to_build;
}

}  // namespace

void prepare_other_devices(Services& services, const std::vector<cl_device_id>& app_devices) {
  int home = -1;
  std::vector<int> others;
  if (!home_and_others(services.devices(), app_devices, home, others)) return;
  // A device held back (devices_held_back) gets its context with its first build; a late one
  // (exec/late_devices.h) once it is let in.
  const std::vector<int> ready_soon = without_waiting(services, home, others_not_held_back(services, home, others));
  for (int device : ready_soon) make_context_in_background(services, device);
  // With every other device held back or late nothing is analysed before a launch lets one in
  // (analyse_in_background): the load below would only stall the app's build and first launches.
  if (ready_soon.empty()) return;
  compile_ahead::warm::spawn_at_context(services, home, ready_soon);  // the first build's process, set up
  // libclang comes with an LLVM of its own (docs/kernel-analysis.md, "Loading libclang"): 15 to
  // 25 ms to load. Loaded now, while the app builds its programs, the analysis that clBuildProgram
  // posts to the same worker is more often done before the app's first launch, which otherwise
  // runs on home alone (`not_split: preparing`). The app's first build waits for the load to end
  // all the same: while the dynamic linker loads, every dladdr in the process waits, and PoCL
  // calls one at the start of each clBuildProgram (pocl_get_private_datadir).
  // On home's worker, as the analysis (analyse_in_background): the others' start with their
  // contexts, which on PoCL include its start (tens of milliseconds); home's has nothing to do yet.
  static std::once_flag posted;  // once per process: later contexts find it loaded
  std::call_once(posted, [&] {
    kernel::libclang::load_wanted();
    // Where this build of coex kept analyses, the run is likely a later one, whose programs' analyses
    // are read (exec/kept_analyses.h): libclang is loaded only for an analysis not kept, by the
    // analysis process that analysis starts (kernel/analysis_process.h) or by the analysis itself. A
    // process started now would load it for nothing beside the app's start: 30 ms of the wall time of
    // a later run of benchmarks/stencil1d on two cores (docs/kernel-analysis.md, "Kept analyses").
    if (analyses_kept()) return;
    // The analysis process loads it instead, where one starts (kernel/analysis_process.h).
    if (kernel::analysis_process::start()) return;
    const int loader = home;
    post_background_task(services.executor(), loader, [&services, loader] {
      const auto started = std::chrono::steady_clock::now();
      kernel::libclang::load(nullptr);
      if (auto* t = services.trace())
        t->record("load libclang", "build", loader, started, std::chrono::steady_clock::now());
    });
  });
}

void analyse_in_background(Services& services, const std::shared_ptr<model::ProgramRecord>& program,
                           const std::vector<cl_device_id>& app_devices) {
  int home = -1;
  std::vector<int> others;
  if (!worth_preparing(services, *program, app_devices, home, others)) return;
  // Beside devices all held back (a CPU beside a GPU) or late (a GPU beside a CPU) no launch is split
  // before one was timed long on home, and loading libclang holds the dynamic linker's lock for tens of
  // milliseconds, which the driver's compiles on the app's thread wait for (docs/kernel-analysis.md,
  // "Loading libclang"): the planner asks for the analysis once a launch lets a device in.
  const std::vector<int> kept = others_not_held_back(services, home, others);
  if (without_waiting(services, home, kept, program.get()).empty()) return;
  // Foreseen, for a rewrite's process the analysis may start: as prebuild_program will build (late
  // devices the History remembers are let in, and built for, once the analysis is done).
  note_devices_to_build(services, *program, home, kept);
  prepare_analysis(services, program, home);
}

void prebuild_program(Services& services, std::shared_ptr<model::ProgramRecord> program, cl_context app_context,
                      const std::vector<cl_device_id>& app_devices) {
  int home = -1;
  std::vector<int> others;
  if (!worth_preparing(services, *program, app_devices, home, others)) return;
  {
    std::lock_guard lock(program->mutex);
    if (!program->builds.empty()) return;  // built for an earlier clBuildProgram already
  }
  const std::vector<int> kept = others_not_held_back(services, home, others);
  if (kept.empty()) return;
  // Read while the app's program is sure to be there (a late device of home's kind builds from it once
  // let in), or at the first launch that may be split: decided before a task may let one in.
  if (!defer_app_program_binary(services, *program, home, kept))
    read_app_program_binary(services, *program, home, kept);
  let_in_if_remembered(services, program, app_context, home, kept);
  const std::vector<int> to_build = note_devices_to_build(services, *program, home, kept);
  compile_ahead::begin_at_build(services, *program, home, to_build);  // before the builds that wait for it
  if (to_build.size() > 1) prepare_program(services, program, app_context, home, to_build);
}

}  // namespace coex::exec
