#pragma once

#include <CL/cl.h>

#include "exec/launch_job.h"

namespace coex::exec {

// coex's own kernel object for the job's kernel on `device`, built on first use from the program's
// source (or its rewrite) with the app's build options. Null when that device cannot build it: it
// is dropped for that program, which is logged, and the app is unaffected.
cl_kernel device_kernel(const LaunchJob& job, int device);

// Releases what coex built for a program (when the app's program is destroyed).
void release_device_builds(model::ProgramRecord& program);

}  // namespace coex::exec
