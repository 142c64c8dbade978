// Whether a launch's chunks may run on different devices (docs/design.md, "What is split"): its
// footprints, evaluated for pieces of the launch, must show no chunk reading what another writes and
// no two chunks writing the same byte. At enqueue the pieces are the work-groups themselves when
// there are at most `split_check_pieces` of them, else that many equal runs of them; at the end of a
// split the chunks that really ran are checked again (split_runner.cpp), which covers what a piece
// of several groups hides.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "coherence/chunk_conflicts.h"
#include "exec/chunk_footprint.h"
#include "exec/data_moves.h"
#include "exec/launch_job.h"
#include "model/records.h"

namespace coex::exec {

// What a chunk may read and write, per root, from its footprint (every tier: a Whole read or a Diff
// write is the whole argument).
coherence::ChunkAccess chunk_access(const ChunkFootprint& footprint);

// The first conflict among at most `max_pieces` equal runs of the launch's work-groups.
coherence::Conflict launch_conflict(const LaunchJob& job, size_t max_pieces);

// What launch_conflict depends on besides the kernel: the geometry, the by-value arguments' bytes
// and where each buffer argument lies (its root's index among the launch's roots, origin, size).
std::string conflict_key(const LaunchJob& job);

// The verdict on the job's launch: "" when its chunks may run on different devices, else the
// report's reason. Remembered in the program's chunk_verdicts; evaluated (launch_conflict) on a miss.
std::string chunk_verdict(model::ProgramRecord& program, const std::string& kernel_name, const LaunchJob& job,
                          size_t max_pieces);

// What the end of a split found (the chunks that ran conflict): later launches of the same key are
// not split.
void remember_chunk_verdict(model::ProgramRecord& program, const std::string& kernel_name, const LaunchJob& job,
                            const char* reason);

// The net behind the footprints: the bytes the devices' read-backs found changed (or wrote in place,
// or keep resident) must not meet between two devices.
coherence::Conflict changes_conflict(const std::map<int, DeviceChanges>& changes);

}  // namespace coex::exec
