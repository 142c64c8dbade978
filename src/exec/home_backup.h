// The home device's chunks write into the app's buffers in place. After a failed split the launch runs
// again whole on home (split_runner), which must find the bytes it reads as they were before the launch.
// Instead of reading them all into the host copy first (host traffic on every launch of an in-place
// kernel, for a failure that rarely comes), the home device copies them within its own memory, right
// before the chunk that overwrites them: data stays where it is.
#pragma once

#include <CL/cl.h>

#include "exec/chunk_footprint.h"
#include "exec/data_moves.h"
#include "exec/launch_job.h"

namespace coex::exec {

// Before the home device runs `chunk`: keeps the bytes it may write that the launch may read and that
// neither the host copy nor the backup holds yet, in the root's backup buffer (enqueued on home_queue,
// before the chunk's kernel). Where no backup buffer can be had, reads them into the host copy. The
// caller holds job.home_backup.mutex (it drives the home queue); this takes each state's mutex.
cl_int keep_home_bytes(LaunchJob& job, cl_command_queue home_queue, const ChunkFootprint& chunk, ChunkMoves& moves);

// While chunks run, from another device's thread: reads into the host copy what it lacks of `wanted`
// (root `root`) that no chunk of the launch writes (HomeBackup::launch_writes). These hold their
// pre-launch values on home all launch long, so they are read through home's SideReads queue while
// home computes, without its mutex, and without the state's lock while the read runs (home's chunks
// take it): an app write meanwhile leaves them not counted valid. Bytes only a device holds are
// fetched from it. Takes job.home_backup.side_reads_mutex, then the state's.
cl_int read_untouched_bytes(LaunchJob& job, size_t root, const coherence::IntervalSet& wanted, uint64_t& moved,
                            uint64_t& fetched, const CancelCheck& cancelled = {});

// While chunks run: reads into the host copy what it lacks of `wanted` (root `root`) as it was before the
// launch: first what no chunk writes (read_untouched_bytes), then, under the home queue's mutex, kept
// bytes from the backup, the rest from the app's buffer (bytes home overwrote without
// keeping them are read by no work-item but their writer's: where another device redoes that chunk,
// it writes them again), or from the device that alone holds them (resident_results.h: `fetched`).
// Takes job.home_backup.mutex, then the state's: the caller holds neither. `cancelled` stops the side
// read between pieces (kPreparationCancelled).
cl_int read_pre_launch_bytes(LaunchJob& job, size_t root, cl_command_queue home_queue,
                             const coherence::IntervalSet& wanted, uint64_t& moved, uint64_t& fetched,
                             const CancelCheck& cancelled = {});

// Puts the kept bytes of `written` back into the app's buffer of root `root`. Returns the bytes copied
// (within the device: not counted as moved).
uint64_t restore_kept_bytes(LaunchJob& job, size_t root, const coherence::IntervalSet& written,
                            cl_command_queue home_queue, cl_int* error);

}  // namespace coex::exec
