// The data steps of a split launch, one function per move or merge step. All run inside the job (one
// job at a time) and lock each buffer's state while they touch it. Where bytes go (docs/design.md,
// "A launch"): the app's buffer on the home device is current when no launch runs; the host copy
// (staging, and the twin that diffs compare against) and each shadow hold what their interval sets
// say; a chunk gets only the part of its footprint that its device lacks, and only what was written
// comes back.
#pragma once

#include <CL/cl.h>

#include <chrono>
#include <functional>
#include <map>
#include <vector>

#include "coherence/interval_set.h"
#include "exec/chunk_footprint.h"
#include "exec/launch_job.h"
#include "exec/resident_results.h"

namespace coex::exec {

// Per device and root buffer, what the device's sub-launches changed, and where its bytes are.
struct DeviceChanges {
  std::vector<coherence::IntervalSet> changed;  // by root index: read back, new bytes in staging
  std::vector<const uint8_t*> staging;          // by root index: staging[k][offset] is byte `offset`
  // By root index: may have changed where they lie, not read back (the home device's exact writes,
  // into the app's buffers): the host copy is stale there.
  std::vector<coherence::IntervalSet> in_place;
  // By root: exact writes of a device other than home left on it, not read back (resident_results.h).
  std::vector<coherence::IntervalSet> resident;
};

// Creates the device's shadow of every root the job uses, and the shadow sub-buffers its arguments
// need. False when the device cannot hold them (out of memory, sub-buffer misaligned there).
bool ensure_shadows(LaunchJob& job, int device);

// What the host copy must hold before any device starts, per root: what the first chunks of the
// other devices lack (they are uploaded from it), the twin of every range a non-home device diffs,
// the Diff-tier ranges (the home device diffs them too), and what home's first chunk needs of bytes
// only another device holds (resident_results.h: fetched before that device runs anything); and,
// when devices other than home take part (`first_chunks`, or `joiners` still building), the launch's
// inputs that no chunk writes, when the host copy lacks at most 4 MiB of them and no device alone
// holds them (read beside home, they would wait for its running sub-launch on PoCL's CPU devices).
// Where the first chunks cover the launch (`first_chunks_cover_launch`: a policy that splits it whole
// at its start) and no device joins late, those inputs are only what the other devices' first chunks
// lack: home reads its own in place.
std::vector<coherence::IntervalSet> host_copy_wanted(LaunchJob& job, const std::map<int, ChunkFootprint>& first_chunks,
                                                     const std::vector<int>& joiners,
                                                     const ChunkFootprint& whole_launch,
                                                     bool first_chunks_cover_launch);

// A chunk's preparation asks this between pieces of its transfers: true once another device took the
// chunk over (SplitProgress::cancelled). Empty: never.
using CancelCheck = std::function<bool()>;
// Not an OpenCL code (theirs are <= 0): a preparation stopped because its chunk was taken over. Never
// reaches the app: the device's thread leaves the launch (split_runner).
inline constexpr cl_int kPreparationCancelled = 1;
// What a cancellable transfer moves between two looks at its CancelCheck: a thief that finishes
// waits at most one piece for the device it took over. With 32 MiB an H100's home waited 31 ms for
// the CPU's side read of matmul's B (pageable reads at about 1 GB/s); each piece costs a wait for
// its transfer (tens of microseconds).
inline constexpr uint64_t kCancelPieceBytes = uint64_t{8} << 20;
// A root's upload to a device other than home of at most this many bytes is queued and not waited
// for: the chunk's sub-launch follows it in the device's in-order queue, and the wait for the
// sub-launch covers both (its time then counts in the sub-launch's, not as transfer). A driver that
// runs commands on a thread of its own (a GPU's, PoCL's `cpu`) costs a round trip per wait; PoCL's
// `cpu-minimal` runs them in the enqueuing thread, where this changes nothing measurable. Larger
// uploads go in pieces (kCancelPieceBytes), each waited for, so that a take-over stops them between
// pieces.
inline constexpr uint64_t kQueuedUploadBytes = uint64_t{1} << 20;

// Reads `ranges` of `mem` into the same offsets of `host` through `queue`, and waits for them, also
// after a failed enqueue: the reads enqueued before it write into `host`, which the caller may let
// others use once this returns. Adds the bytes enqueued to `moved`. With `cancelled`, in pieces of
// kCancelPieceBytes, each waited for, and kPreparationCancelled once it says so (nothing in flight).
cl_int read_ranges(const cl_icd_dispatch& cl, cl_command_queue queue, cl_mem mem, const coherence::IntervalSet& ranges,
                   uint8_t* host, uint64_t& moved, const CancelCheck& cancelled = {});

// Reads `missing` (which the host copy lacks) of the root `use` into the host copy: from the home
// buffer, or from the device that alone holds it (resident_results.h). Not bridged: bytes the host
// copy holds may be a twin already and must not change during the launch. The caller holds the
// state's lock. Adds the bytes read from home to `moved`, from devices to `fetched`.
cl_int read_into_host_copy(Services& services, const RootUse& use, cl_command_queue home_queue,
                           const coherence::IntervalSet& missing, uint64_t& moved, uint64_t& fetched);

// What the first chunks of the devices other than home lack and only another device holds (resident
// results: a stencil's halo rows, which its neighbours wrote in the launch before), read into the
// host copy while every device is idle, when it is at most 4 MiB in all; adds the bytes to `fetched`.
// Left to each chunk, that fetch waited for the holder's running sub-launch (PoCL's CPU devices finish
// a kernel before they serve another queue) with the buffer's lock held, so that every device's
// preparation of that buffer waited behind it (docs/performance.md, "Halos fetched before the devices
// start"). Each holder reads in its own thread where that polls (fetch_sole_in_holders). A fetch that fails is left
// to the chunk.
void fetch_first_chunks_halos(LaunchJob& job, const std::map<int, ChunkFootprint>& first_chunks,
                              const RunInDeviceThread& run_in_device_thread, std::chrono::nanoseconds spin,
                              uint64_t& fetched);

// Reads `wanted` minus what the host copy holds, as read_into_host_copy does.
void refresh_host_copies(LaunchJob& job, cl_command_queue home_queue, const std::vector<coherence::IntervalSet>& wanted,
                         uint64_t& moved, uint64_t& fetched);

// Bytes of one chunk's preparation: `lacked` is the footprint the device did not hold (the report's
// bytes_minimal); the others are what moved.
struct ChunkMoves {
  uint64_t lacked = 0;
  uint64_t home_to_host = 0;
  uint64_t host_to_device = 0;
  uint64_t host_to_home = 0;    // the home device's chunk: what other devices wrote before (lazy home)
  uint64_t device_to_host = 0;  // what only another device held, fetched from it (resident results)
  // By root index: uploads left in the device's queue (kQueuedUploadBytes), not yet counted valid
  // there: queued_uploads_done counts them once the queue has run them without an error.
  std::vector<std::pair<size_t, coherence::IntervalSet>> queued;
};

// Makes the device hold what the chunk needs: the part of its footprint the device lacks (not what
// it wrote earlier in this launch), from the host copy, which first reads from home what it lacks of
// that and of the chunk's twin ranges. The bytes go through `upload_staging(slot, bytes)` (the
// device's pinned staging, filled without the host copy's lock): slot 0 for uploads waited for, slot
// k + 1 for root k's queued upload (kQueuedUploadBytes), whose bytes must stay until the device's
// queue has run it: on any return, also an exception, uploads may still be in the device's queue, and
// the caller waits on it before the slots are used again; after CL_SUCCESS and a successful wait,
// while the launch is known to go on, it calls queued_uploads_done (`moves.queued`). The home device's
// buffers are current but for what other devices wrote before (lazy home): it gets that, and keeps
// what the chunk overwrites in place (keep_home_bytes; for it the caller holds job.home_backup.mutex).
// A device other than home stops between pieces once `cancelled` says so (kPreparationCancelled):
// what it had uploaded is not counted valid there.
using UploadStagingFn = std::function<uint8_t*(size_t slot, size_t bytes)>;
cl_int prepare_chunk(LaunchJob& job, int device, cl_command_queue queue, cl_command_queue home_queue,
                     const ChunkFootprint& chunk, const std::vector<RootWrites>& written_so_far,
                     const UploadStagingFn& upload_staging, ChunkMoves& moves, const CancelCheck& cancelled = {});

// The uploads prepare_chunk queued for `device` ran without an error: they count valid there.
void queued_uploads_done(LaunchJob& job, int device, const ChunkMoves& moves);

// The cl_mem a kernel argument is bound to on `device` (the app's own on the home device).
cl_mem device_mem(LaunchJob& job, const ArgBinding& binding, int device);
cl_mem device_root_mem(LaunchJob& job, size_t root, int device);

// Reads back what the device wrote into `staging_for(root, bytes)` and works out what it changed:
// injective exact writes as they are, other writes by diff against the host copy (the twin). The
// home device wrote into the app's buffers: only its Diff-tier ranges are read (and diffed); its
// exact writes count as changed. Returns bytes moved.
using StagingFn = std::function<uint8_t*(size_t root, size_t bytes)>;
uint64_t read_back_changes(LaunchJob& job, int device, cl_command_queue queue, const StagingFn& staging_for,
                           const std::vector<RootWrites>& writes, DeviceChanges& out, cl_int* error);

// Applies every device's changes to the host copy, leaves what home lacks there (lazy home,
// home_sync.h) or writes it to the app's buffers when the app asked for home meanwhile, and updates
// which copies are current: each device keeps what it wrote, less what others changed. A root whose
// write home fails keeps what home lacks recorded, and the other roots are merged all the same;
// `error` is the first failure. Returns bytes moved home; what it fetched first from devices that
// alone held it goes to `fetched`.
uint64_t merge_changes(LaunchJob& job, const std::map<int, DeviceChanges>& changes,
                       const std::map<int, std::vector<RootWrites>>& writes, cl_command_queue home_queue,
                       uint64_t& fetched, cl_int* error);

// After a failed split: puts the pre-launch bytes back where the home device may have written (from
// its backup, keep_home_bytes, else from the host copy), and forgets the shadows' copies of what may
// have been written. Returns bytes moved.
uint64_t restore_home(LaunchJob& job, cl_command_queue home_queue, cl_int* error);

// The job's roots that the app wrote since the launch was enqueued (a command queued behind it): their
// copies made for the launch hold the bytes before that write. Asked before a rerun on home, which
// writes the roots too.
std::vector<size_t> roots_written_since_enqueue(LaunchJob& job);
// For those roots, after a split that ended without its merge: only what home lacks stays counted
// current outside home (coherence::BufferState::keep_only_what_home_lacks).
void forget_copies_before_app_writes(LaunchJob& job, const std::vector<size_t>& roots);

}  // namespace coex::exec
