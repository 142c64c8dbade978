// PoCL compiles a kernel's work-group function for each local size (and whether the global offset
// is zero) when a command first runs, in the thread that waits for it, and builds a program in the
// thread that calls clBuildProgram. Each device has its own PoCL context, and PoCL keeps an LLVM
// context and a compiler lock per cl_context; the app's own thread has always compiled on home beside
// coex's threads. Two crashes once blamed on concurrent compiles had other causes (docs/reliability.md,
// "Many devices, two platforms, first runs"): a taken-over device enqueuing objects the app had
// released, and exit tearing PoCL's compiler down under a build.
// - coex's builds of a program take turns on a platform (one lock per platform). PoCL 5 interleaves
//   concurrent builds inside its compiler, so that all of them end together, late, and the app's own
//   first compile on home waits behind all of them (docs/testbed.md); in turn, devices become ready
//   one by one and the app's thread waits for one build at most.
// - The devices' first runs go at once. With `serial_compiles` (a safety valve) the lock is also held
//   around each sub-launch that may compile (the first of its kind on that device), run included:
//   PoCL's compile cannot be told apart from the run, so the devices' first chunks then run one after
//   another.
// The wait is bounded: a device that never returns (a stall) must not stop the others.
#pragma once

#include <CL/cl.h>

#include <chrono>
#include <mutex>
#include <vector>

#include "exec/launch_geometry.h"
#include "exec/services.h"

namespace coex::devices {
struct Device;
class DeviceSet;
}  // namespace coex::devices

namespace coex::exec {

inline constexpr std::chrono::seconds kCompileLockWait{10};

// Whether `device`'s builds and work-group functions are compiled in this process: one of PoCL's CPU
// devices, not served by its remote driver.
bool compiles_in_this_process(const devices::Device& device);
// Whether home and each of `others` compile in this process and each of `others` is of another kind
// than home's (it builds from source, not from home's binary): their builds hold PoCL's compiler
// while home's first runs wait for it.
bool others_build_beside_home(const devices::DeviceSet& set, int home, const std::vector<int>& others);

// Whether a sub-launch of `kernel` on `device` with this geometry is the first of its kind: of its
// local size, of whether its offset is zero and of whether its grid is small
// (pocl_kernel_cache::small_grid), for each of which PoCL compiles (cold cache) or loads a work-group
// function as it first runs. True once per kind and process. Its time includes
// that one-time work: the History does not learn the device's pace from it.
bool first_run_of(int device, cl_kernel kernel, const LaunchGeometry& sub);
// Whether first_run_of would say so now, without marking the run.
bool first_run_pending(int device, cl_kernel kernel, const LaunchGeometry& sub);
// Called as coex releases one of its kernel objects: a later one at the same address is new.
void forget_first_runs(cl_kernel kernel);

// With serial_compiles: held while a first run (first_run_of) on `device` runs, when the device is
// PoCL's; empty (not owning) otherwise.
std::unique_lock<std::mutex> lock_first_run(Services& services, int device, bool first_run);

// Held around a program build on `device`, when the device is PoCL's.
std::unique_lock<std::mutex> lock_build(Services& services, int device);

}  // namespace coex::exec
