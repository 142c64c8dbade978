#pragma once

#include <CL/cl_icd.h>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "exec/held_back_devices.h"
#include "exec/launch_geometry.h"
#include "exec/launch_job.h"

namespace coex::devices {
class DeviceSet;
}

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

// The most work-items per group that every device of `participants` may run for the app's kernel, and
// in `compiled` the group size the kernel was compiled for (reqd_work_group_size), where it has one.
size_t max_group_size(const cl_icd_dispatch& cl, const devices::DeviceSet& devices, model::KernelRecord& kernel,
                      cl_device_id home, const std::vector<int>& participants, size_t compiled[3]);

// A split's geometry over `devices`: the app's local size, else the kernel's compiled one, else coex's
// pick (make_geometry), within the devices' and the kernel's limit (max_group_size). False: the driver
// would reject it.
bool split_geometry(Services& services, model::KernelRecord& kernel, cl_device_id home, const std::vector<int>& devices,
                    cl_uint work_dim, const size_t* offset, const size_t* global, const size_t* local,
                    LaunchGeometry& out);

// Records that the job's kernel runs a sub-launch on `device` from coex's build there; true the first
// time. A driver that compiles a kernel at its first launch (PoCL: the work-group function for the
// local size) makes that sub-launch slow once.
bool first_launch_from_build(const LaunchJob& job, int device);

// Posts the analysis and the builds of the program for `devices` (home's into the app's context,
// the others' into their shadow contexts) to those devices' workers, each once: they run there,
// off the app's path, home's first on its platform (at the app's clBuildProgram: prebuild_program,
// exec/context_and_build_preparation.h).
void prepare_program(Services& services, const std::shared_ptr<model::ProgramRecord>& program, cl_context app_context,
                     int home, const std::vector<int>& devices);

// Posts the analysis alone of the program, once, to the worker of `device`: for launches that run on
// home while every other device is held back (devices_held_back) or late (exec/late_devices.h).
void prepare_analysis(Services& services, const std::shared_ptr<model::ProgramRecord>& program, int device);

// analyse_program, and the trace shows the analysis on the track `track` (a device's) where this call
// made it (one that finds it made, or under way on another thread, waits for its end): on a device's
// worker, or on the app's thread (`app_thread`) where a launch long enough to wait for a split's
// preparation asks for it first. Whether some kernel of the program may be split.
bool analyse_traced(Services& services, model::ProgramRecord& program, int track, bool app_thread = false);

// Posts to the worker of `device` the program's analysis (made there, or waited for where another
// thread made it), then `then` where some kernel of the program may be split.
void when_splittable(Services& services, const std::shared_ptr<model::ProgramRecord>& program, int device,
                     std::function<void()> then);

// The app's context, retained until the last copy goes: a task posted for later may outlive the app's
// own reference (the app may release its context and program right after clBuildProgram). Empty where
// the retain failed.
std::shared_ptr<void> hold_app_context(Services& services, cl_context app_context);

// The devices of `devices` whose build of the program has finished (built or failed), after
// prepare_program for the others; none while the analysis has not run. Never waits.
std::vector<int> devices_ready(Services& services, const std::shared_ptr<model::ProgramRecord>& program,
                               cl_context app_context, int home, const std::vector<int>& devices);

// On an app thread that holds the program (a launch of its kernel): when the analysis rewrote none of
// its kernels, the app's own program becomes home's build (retained; coex makes its own kernel objects
// of it), and true is returned; no build of coex's own is needed there.
bool use_app_program_on_home(Services& services, model::ProgramRecord& program, int home);

// How long a launch that would be split waits for home's build of the rewritten program: the
// setting auto_home_build_wait, or twice the app's own clBuildProgram of the program (successful,
// without a callback) where that is longer, up to kLongestBuildWait: the app's enqueue is what waits,
// and a launch worth a longer wait is not known before it ran. That build starts as the app's returns and compiles the
// same source for the same device: on the device machine it took 40 to 77 ms where the app's took 39 to 76
// (benchmarks/binomial over eight single-threaded PoCL devices), and a first launch that gave up at 0.1 s ran on home
// alone, 2.14x over one device where hguided made 5.80x (docs/testbed.md).
inline constexpr double kLongestBuildWait = 1.0;
double home_build_wait(double setting_seconds, const model::ProgramRecord& program);

// Launches timed on home wait for home's build of the rewrite no longer in all than `budget`
// seconds, what a split could save of one such launch (docs/design.md, "One-time costs"): what is left
// of it (ProgramRecord::home_build_waited_ns), and such a wait, whose time counts against it; true when
// the build has finished.
double home_build_budget_left(const model::ProgramRecord& program, double budget);
bool wait_for_home_build_within(model::ProgramRecord& program, int home, double budget);

// Waits up to `seconds` for `device`'s build of the program (in the app's context or not) to finish,
// built or failed; true when it has.
bool wait_for_build(model::ProgramRecord& program, int device, bool in_app_context, double seconds);

// Releases what coex built for a program (when the app's program is destroyed).
void release_device_builds(const cl_icd_dispatch& cl, model::ProgramRecord& program);

}  // namespace coex::exec
