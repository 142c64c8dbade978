// coex's split-safety rule (src/exec/split_safety.cpp), restated from the footprint model alone so
// that the oracle and the fuzzer can apply it without the engine: the launch's work-groups along
// the split dimension are cut into P = min(groups, max_pieces) equal runs, each run's footprint is
// evaluated, and coherence::find_conflict looks for a run that reads what another writes or two
// runs that write one byte. Each buffer argument is its own buffer here (argument index = buffer
// index): the corpus launches bind no buffer twice.
#pragma once

#include <cstdint>
#include <vector>

#include "coherence/chunk_conflicts.h"
#include "kernel/footprint.h"

namespace coex::oracle {

// The pieces coex checks at enqueue (split_check_pieces' default).
constexpr uint64_t kSplitCheckPieces = 64;

using coherence::GroupRun;
// coex's own runs (coherence::even_runs), at the default number of pieces.
inline std::vector<GroupRun> split_pieces(uint64_t groups, uint64_t max_pieces = kSplitCheckPieces) {
  return coherence::even_runs(groups, max_pieces);
}

// What coex lets one piece read and write, per argument, from its evaluated footprint: the Exact
// bands, or the whole argument ([0, buffer_sizes[i])) for a Whole read, a Diff write, or an argument
// the analysis did not prove read-only (`written`) whose write is not modelled. Arguments whose
// buffer size is 0 (scalars, __local) hold nothing.
coherence::ChunkAccess modelled_access(const kernel::Footprint& footprint, const std::vector<uint64_t>& buffer_sizes,
                                       const std::vector<bool>& written);

// coex's verdict on a launch: the pieces' modelled accesses and their first conflict (None: split).
struct PieceVerdict {
  std::vector<GroupRun> pieces;
  std::vector<coherence::ChunkAccess> accesses;  // by piece
  coherence::Conflict conflict;
};
PieceVerdict piece_verdict(const kernel::FootprintModel& model, const kernel::LaunchGeometry& geometry,
                           const kernel::ArgValues& values, const std::vector<bool>& written,
                           uint64_t max_pieces = kSplitCheckPieces);

}  // namespace coex::oracle
