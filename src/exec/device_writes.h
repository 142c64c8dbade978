#pragma once

#include "exec/launch_job.h"

namespace coex::exec {

// The device's shadows may hold writes coex drops (a chunk abandoned by the policy and done again
// elsewhere): every range the launch may write is no longer current there. Not for the home device,
// which wrote into the app's own buffer: restore_home() puts its pre-launch bytes back.
void forget_device_writes(LaunchJob& job, int device);

}  // namespace coex::exec
