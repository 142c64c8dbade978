// Whether the chunks of one launch may run on different devices (docs/design.md, "What is split"):
// no chunk reads a byte another chunk of the launch writes, and no two chunks write the same byte.
// Then every order of the chunks, and any split of them among devices, leaves the bytes that one
// device running the chunks in order leaves. Pure set logic over what each chunk may touch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "coherence/interval_set.h"

namespace coex::coherence {

// What one chunk may read and write, per buffer (a root buffer: arguments bound to one buffer, or
// to sub-buffers of one, share its byte offsets). Supersets are fine: they only find more conflicts.
struct BufferAccess {
  IntervalSet reads;
  IntervalSet writes;
};
using ChunkAccess = std::vector<BufferAccess>;  // by buffer

enum class ConflictKind {
  None,
  OverlappingWrites,  // two chunks may write the same byte
  CrossChunkRead,     // a chunk may read a byte another chunk writes
};

struct Conflict {
  ConflictKind kind = ConflictKind::None;
  size_t buffer = 0;       // where
  size_t first = 0;        // the chunks, by index (the reader first for CrossChunkRead)
  size_t second = 0;
  IntervalSet bytes;       // some of the bytes both touch
  explicit operator bool() const { return kind != ConflictKind::None; }
  std::string to_string() const;  // "chunks 0 and 3 may both write {[0, 12)} of buffer 1"
};

// The first conflict among the chunks, writes before reads; None when they are independent.
// Linear in the chunks but for the pair it names.
Conflict find_conflict(const std::vector<ChunkAccess>& chunks);

// The runs a launch is checked in (exec/split_safety.h): `count` work-groups cut into
// min(count, max_runs) runs of equal length, run i = [count * i / runs, count * (i + 1) / runs).
struct GroupRun {
  uint64_t g0 = 0, g1 = 0;
};
std::vector<GroupRun> even_runs(uint64_t count, uint64_t max_runs);

// The report's name of a conflict: "overlapping_writes", "cross_chunk_dependency" ("" for None).
const char* conflict_reason(ConflictKind kind);

}  // namespace coex::coherence
