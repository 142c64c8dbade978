#pragma once

#include <CL/cl_icd.h>

#include <memory>
#include <optional>
#include <vector>

#include "exec/launch_job.h"

namespace coex::exec {

// coex's own kernel object for the job's kernel on `device`, built on first use from the program's
// source (or its rewrite) with the app's build options. Null when that device cannot build it: it
// is dropped for that program, which is logged, and the app is unaffected.
// A build under way (a prebuild on that device's worker) is waited for.
cl_kernel device_kernel(const LaunchJob& job, int device);

// What the driver says of the app's kernel on `device` (work-group limits), asked once per kernel and
// device and kept in `record` (the app's kernel); asked every time without a record.
model::KernelGroupInfo kernel_group_info(const cl_icd_dispatch& cl, cl_kernel kernel, model::KernelRecord* record,
                                         cl_device_id device);

// Records that the job's kernel runs a sub-launch on `device` from coex's build there; true the first
// time. A driver that compiles a kernel at its first launch (PoCL: the work-group function for the
// local size) makes that sub-launch slow once.
bool first_launch_from_build(const LaunchJob& job, int device);

// At the app's clBuildProgram, before the driver builds: the analysis (a libclang parse of tens of
// milliseconds) starts on home's worker, so that the app's first launch, right after its
// build, finds it done and can be split (docs/design.md, "One-time costs"). Same conditions as
// prebuild_program.
void analyse_in_background(Services& services, const std::shared_ptr<model::ProgramRecord>& program,
                           const std::vector<cl_device_id>& app_devices);

// Whether a launch stays on home, and coex's builds for the devices other than home wait, until a
// launch of its kernel and size is measured longer on home (`home_seconds`, the shortest measured;
// none yet: nullopt). Under a policy that does not wait for preparation (auto), where every other
// device promises, by its specification, more than TakeOverRules::slow_by_specification times less
// than home (a CPU beside a GPU): they could save at most the share of the launch their
// specification promises, so a split may pay only where that share of home's time is at least
// min_split_seconds (beside an H100 the CPU promises 1.5%: launches of 0.66 s and more). A build
// begun before would cost CPU time beside the app's device and hold the app's exit, for nothing when
// no launch is that long (docs/design.md, "Size by time").
bool builds_wait_for_home_times(Services& services, int home, const std::vector<int>& devices,
                                std::optional<double> home_seconds);

// At the app's successful clBuildProgram: analyses the program and builds it for every device coex
// would split its kernels over, each on that device's worker thread, so that the first split launch
// finds them ready instead of building them one after another. Only for a program built for one
// device (the home); nothing when the program has no kernel that may be split, nor while the builds
// wait for home's times (builds_wait_for_home_times).
void prebuild_program(Services& services, std::shared_ptr<model::ProgramRecord> program, cl_context app_context,
                      const std::vector<cl_device_id>& app_devices);

// Posts the analysis and the builds of the program for `devices` (home's into the app's context,
// the others' into their shadow contexts) to those devices' workers, each once: they run there,
// off the app's path, home's first on its platform.
void prepare_program(Services& services, const std::shared_ptr<model::ProgramRecord>& program, cl_context app_context,
                     int home, const std::vector<int>& devices);

// Posts the analysis alone of the program, once, to the worker of `device`: for launches that run on
// home while the builds wait (builds_wait_for_home_times).
void prepare_analysis(Services& services, const std::shared_ptr<model::ProgramRecord>& program, int device);

// The devices of `devices` whose build of the program has finished (built or failed), after
// prepare_program for the others; none while the analysis has not run. Never waits.
std::vector<int> devices_ready(Services& services, const std::shared_ptr<model::ProgramRecord>& program,
                               cl_context app_context, int home, const std::vector<int>& devices);

// On an app thread that holds the program (a launch of its kernel): when the analysis rewrote none of
// its kernels, the app's own program becomes home's build (retained; coex makes its own kernel objects
// of it), and true is returned; no build of coex's own is needed there.
bool use_app_program_on_home(Services& services, model::ProgramRecord& program, int home);

// Waits up to `seconds` for `device`'s build of the program (in the app's context or not) to finish,
// built or failed; true when it has.
bool wait_for_build(model::ProgramRecord& program, int device, bool in_app_context, double seconds);

// At the app's clCreateContext with one device (the home to be): makes coex's context and queue on
// every other selected device, each on that device's worker thread (an NVIDIA context takes about
// 100 ms), so that the first split launch does not wait for them.
void prepare_other_devices(Services& services, const std::vector<cl_device_id>& app_devices);

// Releases what coex built for a program (when the app's program is destroyed).
void release_device_builds(const cl_icd_dispatch& cl, model::ProgramRecord& program);

}  // namespace coex::exec
