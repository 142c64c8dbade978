// The app's launch arguments on one of coex's kernel objects: each bound to the device's own buffers
// (exec/data_moves.h, device_mem), and for a rewritten kernel the trailing values of the original
// launch (kernel/kernel_analysis.h). Set before each sub-launch (exec/split_runner.cpp) and before a
// launch rerun whole on home.
#pragma once

#include <CL/cl.h>

#include <cstdint>

#include "exec/launch_job.h"

namespace coex::exec {

// Sets every argument of the app's launch on `kernel`, bound to the device's own buffers.
cl_int set_arguments(LaunchJob& job, cl_kernel kernel, int device);

// The trailing arguments of a rewritten kernel (kernel_analysis.h): the original launch's values,
// and `group_base`, the first group of the split dimension the sub-launch runs.
cl_int set_rewrite_arguments(LaunchJob& job, cl_kernel kernel, uint64_t group_base);

}  // namespace coex::exec
