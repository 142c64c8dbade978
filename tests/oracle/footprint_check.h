// The oracle's comparison (docs/testing.md): what a range of work-groups really loaded and stored (an
// Oclgrind run, access_log.h) against coex's footprint of that range (kernel/footprint.h):
//   (a) every byte loaded lies in the read footprint, every byte stored in the write footprint
//       (a Whole read or a Diff write holds anything; a None tier holds nothing);
//   (b) an Exact footprint is at most 10% larger than the bytes touched, unless the argument is
//       known to be loose (a bounded superset by design, say a grid-stride loop's hull);
//   (c) writes_cover: every byte of the write footprint is stored (coex then uploads none of it);
//   (d) writes_injective: no byte is stored by two work-groups (checked over the whole launch;
//       two work-items of one group are not told apart here);
//   (e) cross-chunk dependencies: where the pieces coex checks at enqueue (piece_rule.h) really
//       conflict (one loads what another stores, or two store one byte), coex's verdict must
//       refuse the split; where coex refuses and they do not, it is over-conservative (reported,
//       as a loose footprint is, not failed).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "access_log.h"
#include "kernel/footprint.h"
#include "piece_rule.h"

namespace coex::oracle {

// Work-groups [g0, g1) along dimension dim, every group of the other dimensions.
struct Chunk {
  uint32_t dim = 0;
  uint64_t g0 = 0, g1 = 0;
  std::string to_string() const;
};

// What the chunk's work-groups touched, per argument (args entries; missing ones touched nothing).
std::vector<ArgAccess> touched_by(const KernelRun& run, const Chunk& chunk, size_t args);

// The bytes of an Exact footprint that lie inside the buffer, as an interval set.
coherence::IntervalSet footprint_bytes(const std::vector<kernel::ByteBand>& bands);

struct ArgRatio {
  size_t arg = 0;
  bool write = false;
  uint64_t footprint = 0, touched = 0;
  bool too_large() const { return footprint * 10 > touched * 11; }
};

struct ChunkCheck {
  std::vector<std::string> violations;  // (a), and (b) where asked for
  std::vector<ArgRatio> ratios;         // every Exact footprint, loose ones included
};

// Checks (a) and (c) for every argument of the footprint and, when tightness is true, (b) for the
// Exact ones not in loose. names label the messages.
ChunkCheck check_chunk(const kernel::Footprint& footprint, const std::vector<ArgAccess>& touched,
                       const std::vector<std::string>& names, bool tightness, const std::set<size_t>& loose);

// (d): the bytes that more than one work-group of the run stored, per argument.
std::vector<coherence::IntervalSet> stored_by_several_groups(const KernelRun& run, size_t args);

// (e): what a piece really did, as find_conflict takes it: per argument, its loads as reads and its
// stores as writes.
coherence::ChunkAccess actual_access(const std::vector<ArgAccess>& touched);

struct DependencyCheck {
  coherence::Conflict modelled;         // coex's verdict (verdict.conflict)
  coherence::Conflict actual;           // the recorded accesses of the same pieces
  std::vector<std::string> violations;  // a conflict coex's verdict misses; a verdict not the expected one
  std::string over_conservative;        // coex refuses, the accesses do not conflict: why it refuses
};

// (e) for one launch: `verdict` is coex's (piece_verdict) on the split dimension `dim` of the run.
// `expected`, when not empty, is the verdict the sidecar states: "independent", "overlapping_writes"
// or "cross_chunk_dependency". names label the messages.
DependencyCheck check_dependencies(const KernelRun& run, uint32_t dim, const PieceVerdict& verdict,
                                   const std::vector<std::string>& names, const std::string& expected);

// A conflict in words, with the pieces' work-groups and the argument's name.
std::string describe(const coherence::Conflict& conflict, const std::vector<GroupRun>& pieces,
                     const std::vector<std::string>& names);

}  // namespace coex::oracle
