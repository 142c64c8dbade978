// The app's launch arguments: bound once, when the launch is planned (a value, local memory, no
// buffer, or a buffer within its root buffer), then set on one of coex's kernel objects, each bound
// to the device's own buffers (exec/data_moves.h, device_mem), and for a rewritten kernel the trailing
// values of the original launch (kernel/kernel_analysis.h). Set before each sub-launch
// (exec/split_runner.cpp) and before a launch rerun whole on home.
#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <vector>

#include "exec/launch_job.h"
#include "kernel/kernel_analysis.h"
#include "model/records.h"

namespace coex::exec {

// Binds each of the launch's arguments in job.bindings, its buffers grouped by root buffer in
// job.roots with the ranges the launch uses and may write (as the analysis in `info` says): nullptr,
// or why the launch is not split (an argument not set, an SVM pointer, a buffer coex does not track).
const char* bind_arguments(Services& services, const kernel::KernelInfo& info,
                           const std::vector<model::KernelArgValue>& args, LaunchJob& job);

// The bytes the launch's buffer arguments may read, a root's ranges counted once.
uint64_t bytes_read(const kernel::KernelInfo& info, const LaunchJob& job);

// Of `bound` (bytes_read of the job, or its equal, which the caller has counted already), the bytes
// the footprint of all the launch's work-groups reads (exec/chunk_footprint.h; the job's footprint
// inputs captured): what its split moves, its devices' shares together. A kernel over part of large
// buffers reads that part alone. Without a model, or where the model reads an argument whole,
// `bound`; never more.
uint64_t footprint_bytes_read(const LaunchJob& job, uint64_t bound);

// Sets every argument of the app's launch on `kernel`, bound to the device's own buffers.
cl_int set_arguments(LaunchJob& job, cl_kernel kernel, int device);

// The trailing arguments of a rewritten kernel (kernel_analysis.h): the original launch's values,
// and `group_base`, the first group of the split dimension the sub-launch runs.
cl_int set_rewrite_arguments(LaunchJob& job, cl_kernel kernel, uint64_t group_base);

}  // namespace coex::exec
