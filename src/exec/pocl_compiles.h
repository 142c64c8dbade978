// PoCL compiles a kernel's work-group function for each local size (and whether the global offset
// is zero) when a command first runs, in the thread that waits for it, and builds a program in the
// thread that calls clBuildProgram. coex's device threads therefore compile at once, each in its own
// device's context: PoCL keeps one LLVM context and one compiler lock per cl_context for that, and the
// app's own thread has always compiled on home beside coex's builds. Two crashes once blamed on these
// concurrent compiles had other causes (docs/reliability.md, "Many devices, two platforms, first runs"): a taken-over
// device enqueuing objects the app had released, and exit tearing PoCL's compiler down under a build.
// With `serial_compiles` (a safety valve) one lock per platform is held around each sub-launch that
// may compile (the first of its kind on that device, run included: PoCL's compile cannot be told
// apart from the run) and around coex's program builds there. That costs a set of N devices its
// first split launch: the devices' first chunks run one after another. The wait is bounded: a device
// that never returns (a stall) must not stop the others.
#pragma once

#include <CL/cl.h>

#include <chrono>
#include <mutex>

#include "exec/launch_geometry.h"

namespace coex::exec {

inline constexpr std::chrono::seconds kCompileLockWait{10};

// With serial_compiles: held while a sub-launch of `kernel` on `device` with this geometry runs for
// the first time, when the device is PoCL's; empty (not owning) otherwise.
std::unique_lock<std::mutex> lock_first_run(int device, cl_kernel kernel, const LaunchGeometry& sub);

// With serial_compiles: held around a program build on `device`, when the device is PoCL's.
std::unique_lock<std::mutex> lock_build(int device);

// Whether compiles on one PoCL platform go one at a time (the setting serial_compiles).
bool compiles_serial();

}  // namespace coex::exec
