#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <string>

#include "exec/launch_job.h"

namespace coex::exec {

class Executor;

// Runs one split launch to the end: chunks on every device (one worker thread each), merge, and
// the report. On a failed sub-launch the launch is redone whole on the home device from the
// pre-launch bytes. Returns CL_SUCCESS, or the driver's error when even that failed.
cl_int run_split(Executor& executor, LaunchJob& job);

}  // namespace coex::exec
