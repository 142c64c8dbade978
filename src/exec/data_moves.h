// The data steps of a split launch, one function each (STYLE.md: one move or merge step per
// function). All run inside the job (one at a time) and lock each buffer's state while they touch it.
#pragma once

#include <CL/cl.h>

#include <functional>
#include <map>
#include <vector>

#include "coherence/interval_set.h"
#include "exec/launch_job.h"

namespace coex::exec {

// Per device and root buffer, what the device's sub-launches changed, and where its bytes are.
struct DeviceChanges {
  std::vector<coherence::IntervalSet> changed;  // by root index
  std::vector<const uint8_t*> staging;          // by root index: staging[k][offset] is byte `offset`
};

// Creates the device's shadow of every root the job uses, and the shadow sub-buffers its arguments
// need. False when the device cannot hold them (out of memory, sub-buffer misaligned there).
bool ensure_shadows(LaunchJob& job, int device);

// Brings the host copy of every used range up to date from the home buffer. Returns bytes moved.
uint64_t refresh_host_copies(LaunchJob& job, cl_command_queue home_queue);

// Sends the device the used ranges its shadow lacks, from the host copy. Returns bytes moved.
uint64_t upload_missing(LaunchJob& job, int device, cl_command_queue queue, cl_int* error);

// The cl_mem a kernel argument is bound to on `device` (the app's own on the home device).
cl_mem device_mem(LaunchJob& job, const ArgBinding& binding, int device);
cl_mem device_root_mem(LaunchJob& job, size_t root, int device);

// Reads back the written ranges of every root into `staging_for(root, bytes)` and diffs them
// against the host copy (the twin). Returns bytes moved.
using StagingFn = std::function<uint8_t*(size_t root, size_t bytes)>;
uint64_t read_back_changes(LaunchJob& job, int device, cl_command_queue queue, const StagingFn& staging_for,
                           DeviceChanges& out, cl_int* error);

// Applies every device's changes to the host copy, writes what home lacks to the app's buffers,
// and updates which copies are current. Returns bytes moved.
uint64_t merge_changes(LaunchJob& job, const std::map<int, DeviceChanges>& changes, cl_command_queue home_queue,
                       cl_int* error);

// After a failed split: puts the pre-launch bytes back where the home device may have written, and
// forgets the shadows' copies of what may have been written. Returns bytes moved.
uint64_t restore_home(LaunchJob& job, cl_command_queue home_queue, cl_int* error);

}  // namespace coex::exec
