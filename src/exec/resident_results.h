// Resident results (docs/design.md, "Resident results"): what a device other
// than home writes in a split launch (its exact, injective writes) is not read back at the end of the
// launch. It stays in that device's shadow, which is then the only current copy (ShadowCopy::sole),
// until something needs it elsewhere:
//   - another device's chunk, or home's, whose footprint reaches into it (a stencil's halo): the
//     host copy fetches that part from the device, then it moves on as before;
//   - the app's commands that read the buffer on home, and everything else lazy home serves
//     (home_sync.h): those bytes are fetched first, then written home;
//   - a merge that writes home at once (the app asked for home, USE_HOST_PTR buffers): everything.
// Fetches go through a second queue of the device (DeviceSet::fetch_queue), so that they never wait
// behind that device's own chunks of a launch in flight.
//
// A device that fails or is abandoned keeps its resident bytes readable: the rerun fetches them from
// it. A sub-launch only ever writes positions its kernel writes, with the values the kernel computes,
// and the rerun writes all of those again; what must not be overwritten before a rerun is what the
// launch also reads there (an in-place kernel), so those bytes are fetched before the device runs
// the chunk (prepare_chunk). A device that stops answering while it holds the only copy of some bytes
// makes the command that needs them fail with the driver's error (the app, on that device alone,
// would not have got them either). Off with the setting resident_results (or lazy_home).
#pragma once

#include <CL/cl.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "coherence/buffer_state.h"
#include "exec/launch_job.h"

namespace coex::exec {

// Reads the bytes of `ranges` that only a device holds from that device into the host copy, which
// then holds them (they stay valid on the device). The caller holds the state's lock. Adds the bytes
// read to `moved`. Returns the driver's error of a failed read.
cl_int fetch_sole(Services& services, coherence::BufferState& state, const coherence::IntervalSet& ranges,
                  uint64_t& moved);

// Runs `task` in device `device`'s own thread where that thread is idle and polling for a task (true,
// the task moved from: DeviceWorker::post_if_polling); false: the caller runs it. Never throws.
using RunInDeviceThread = std::function<bool(int device, std::function<void()>& task)>;

// Reads what only a device holds of `ranges[k]` (in `states[k]`) into the host copies, as fetch_sole
// does, but each holder's reads in that device's own polling thread where several devices hold some: PoCL's
// single-threaded CPU device runs a queue's commands in the thread that waits for them, so reads waited
// for in one thread ran one holder after another (jacobi over 15 devices: 14 halos, 0.06 to 0.11 ms a
// launch before any device started). The states' locks are not held while the devices read: only reads
// of a holder's `sole` bytes write those bytes of a host copy (an app thread's lazy-home fetch of the
// same bytes at once writes the same values), and a root the app wrote meanwhile (its generation moved)
// marks nothing. A read that fails is left, logged, to whatever needs the bytes next,
// which then meets the driver's error. Adds the bytes read to `moved`.
void fetch_sole_in_holders(Services& services, const std::vector<coherence::BufferState*>& states,
                           const std::vector<coherence::IntervalSet>& ranges,
                           const RunInDeviceThread& run_in_device_thread, std::chrono::nanoseconds spin,
                           uint64_t& moved);

// Whether a device's exact writes to this root may stay on the device at the end of the split (the
// merge may still fetch them, when it writes home at once). Never on a remote device: when its server
// goes, PoCL's remote driver waits for it forever, and so would every read of bytes only it held
// (docs/remote.md). The caller holds the state's lock.
bool results_may_stay(Services& services, const coherence::BufferState& state, int device);

}  // namespace coex::exec
