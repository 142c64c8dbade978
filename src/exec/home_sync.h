// Lazy home (docs/design.md, "Lazy home"): a split launch leaves what the other
// devices wrote in coex's host copy; the app's buffer on its home device receives those bytes when
// something needs them there. What needs them:
//   - the app's commands that read a buffer on home (read, map, copy from, an unsplit kernel): the
//     API handlers call app_reads() before passing the command on;
//   - the home device's own chunks of a later split (bring_chunk_home), and a launch run whole on
//     home (bring_job_home);
//   - a split that ends while the app has asked for home (BufferState::want_home): it writes
//     everything home before its event completes (merge_changes, end_buffer_uses).
// Buffers made with CL_MEM_USE_HOST_PTR, and every buffer with the setting lazy_home off, are written
// home at the end of each split, as before.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <cstdint>

#include "coherence/buffer_state.h"
#include "exec/chunk_footprint.h"
#include "exec/launch_job.h"

namespace coex::exec {

// Writes `ranges` (within home_lacks) into `mem`, whose byte 0 is byte `origin` of the root, on
// `queue`, blocking, and takes them out of home_lacks; what only a device holds is fetched into the
// host copy first (resident_results.h). The caller holds the state's lock. Adds the bytes written to
// `moved`, the bytes fetched to `fetched`.
cl_int write_lacks_home(Services& services, coherence::BufferState& state, cl_command_queue queue, cl_mem mem,
                        uint64_t origin, const coherence::IntervalSet& ranges, uint64_t& moved, uint64_t& fetched);

// Before an app command on `queue` that reads bytes [offset, offset + size) of `mem` on its device
// (SIZE_MAX: to the end): writes home what home lacks of them, or, while a split that uses the
// buffer is in flight, asks the splits the command runs after to write everything home before they
// end. Returns the driver's error when a write failed (the app's command is then not enqueued),
// CL_SUCCESS otherwise (untracked buffers too).
cl_int app_reads(Services& services, const char* call, cl_command_queue queue, cl_mem mem, size_t offset, size_t size);
// The same before an app command that may write those bytes (BufferState::app_wrote follows its
// enqueue), except that every split in flight on the buffer writes home before it ends, not only the
// last one the command runs after: app_wrote forgets what home lacks of the range, and a split that
// merged lazily between this call and app_wrote would have its bytes forgotten while a later split
// ahead of the command still needs them on home (tests/apps/volume3d under auto: init3d's split
// merged lazily while the app enqueued the second smooth3d, which writes the volume, on home; the
// first smooth3d's split then read the volume on home without init3d's part, about one run in 150
// on two PoCL pthread devices under load).
cl_int app_will_write(Services& services, const char* call, cl_command_queue queue, cl_mem mem, size_t offset,
                      size_t size);

// Whether the split's changes stay out of home (lazy) for this root, decided under its lock at the merge.
bool merge_lazily(const Services& services, const coherence::BufferState& state, const RootUse& use);

// The home device's chunk: writes home what home lacks of the chunk's footprint (reads and writes),
// on the split's home queue. Adds to `moved`.
cl_int bring_chunk_home(LaunchJob& job, cl_command_queue home_queue, const ChunkFootprint& chunk, uint64_t& moved,
                        uint64_t& fetched);

// Before the launch runs whole on home: writes home everything home lacks of the job's buffers.
cl_int bring_job_home(LaunchJob& job, cl_command_queue home_queue, uint64_t& moved, uint64_t& fetched);

// The job is over (ran, failed, or never started): each of its buffers has one split fewer in flight,
// and gets home everything it lacks when the app asked for that meanwhile. Call before the app's
// event completes. Idempotent.
void end_buffer_uses(LaunchJob& job);

}  // namespace coex::exec
