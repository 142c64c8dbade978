// The footprint of a range of work-groups, per root buffer of a launch (docs/design.md, "A launch"): what a
// device must hold current before it runs them, and where they write. kernel::FootprintModel gives it
// per argument, relative to the bound buffer; this adds each argument's origin in its root and joins
// the arguments that share a root. Pure functions: the data steps (data_moves.h) act on the result.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "coherence/interval_set.h"
#include "exec/launch_job.h"
#include "kernel/footprint.h"

namespace coex::exec {

// The tier an argument was moved with, as the report names it: "exact" (footprints), "whole" (the
// argument is replicated), "diff" (its writes are merged by diff against a twin). Ordered: a worse
// tier wins when chunks or launches disagree.
enum class ArgTier { None, Exact, Whole, Diff };
const char* arg_tier_name(ArgTier tier);

struct RootFootprint {
  coherence::IntervalSet reads;  // every byte the chunk may read
  // Must be current on the device before the chunk runs: what it reads, and what it writes where
  // the bytes it skips must keep their values (writes that are not proven to cover their ranges, and
  // Diff-tier ranges, which are diffed byte for byte).
  coherence::IntervalSet need;
  // Writes, in three kinds that are merged differently:
  coherence::IntervalSet injective_writes;  // Exact and injective: these ranges are the changed ranges
  coherence::IntervalSet diffed_writes;     // Exact but not injective: diffed, within these ranges
  coherence::IntervalSet unknown_writes;    // Diff tier: whole argument ranges, diffed
  coherence::IntervalSet writes() const;    // all three
};

struct ChunkFootprint {
  std::vector<RootFootprint> roots;  // by LaunchJob::roots index
  std::vector<ArgTier> arg_tiers;    // by argument index; None for non-buffers
};

// Per root, from one evaluated footprint (null: no model, so every buffer argument is read whole and
// every written one diffed). `bindings` says where each argument lies in its root.
ChunkFootprint root_footprint(const kernel::Footprint* footprint, const std::vector<ArgBinding>& bindings,
                              size_t root_count);

// The footprint of work-groups [g0, g1) of the job's split dimension. `keep`: the model keeps the
// answer for the same inputs (kernel/footprint_memo.cpp); false for pieces asked once.
ChunkFootprint chunk_footprint(const LaunchJob& job, uint64_t g0, uint64_t g1, bool keep = true);

// Where one device wrote over a launch (the union over its chunks), per root, in the same three kinds.
struct RootWrites {
  coherence::IntervalSet injective;
  coherence::IntervalSet diffed;
  coherence::IntervalSet unknown;
  coherence::IntervalSet all() const;
};
void add_chunk_writes(std::vector<RootWrites>& writes, const ChunkFootprint& chunk);

// The tiers of two chunks or launches of one kernel: the worse one per argument.
void merge_arg_tiers(std::vector<ArgTier>& into, const std::vector<ArgTier>& from);

// What FootprintModel::evaluate needs of this launch: its geometry as the app
// enqueued it, the bytes of the by-value arguments and the sizes of the bound
// buffers (footprints are relative to them).
void capture_footprint_inputs(const kernel::KernelInfo& info, const std::vector<model::KernelArgValue>& args,
                              LaunchJob& job);

}  // namespace coex::exec
