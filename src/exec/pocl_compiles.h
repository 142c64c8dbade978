// PoCL compiles a kernel's work-group function for each local size (and whether the global offset
// is zero) when a command first runs, in the thread that waits for it: coex's device threads then
// compile at once, and PoCL 5's compiler is not safe for that (crashes seen on the GPU machine in
// LLVM's SelectionDAG and in PoCL's own passes, with four to fifteen CPU devices). coex therefore
// holds one lock per platform around a sub-launch that may compile (the first of its kind on that
// device) and around its own program builds there. The wait is bounded: a device that never
// returns (a stall) must not stop the others.
#pragma once

#include <CL/cl.h>

#include <chrono>
#include <mutex>

#include "exec/launch_geometry.h"

namespace coex::exec {

inline constexpr std::chrono::seconds kCompileLockWait{10};

// Held while a sub-launch of `kernel` on `device` with this geometry runs for the first time, when
// the device is PoCL's; empty (not owning) otherwise.
std::unique_lock<std::mutex> lock_first_run(int device, cl_kernel kernel, const LaunchGeometry& sub);

// Held around a program build on `device`, when the device is PoCL's.
std::unique_lock<std::mutex> lock_build(int device);

}  // namespace coex::exec
