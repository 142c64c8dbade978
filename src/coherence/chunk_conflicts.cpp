#include "coherence/chunk_conflicts.h"

#include <algorithm>

namespace coex::coherence {
namespace {

const IntervalSet& reads_of(const ChunkAccess& chunk, size_t buffer) {
  static const IntervalSet kNone;
  return buffer < chunk.size() ? chunk[buffer].reads : kNone;
}

const IntervalSet& writes_of(const ChunkAccess& chunk, size_t buffer) {
  static const IntervalSet kNone;
  return buffer < chunk.size() ? chunk[buffer].writes : kNone;
}

// The pair behind a conflict the unions found: a scan over the other chunks, on the failure path only.
Conflict name_pair(const std::vector<ChunkAccess>& chunks, ConflictKind kind, size_t buffer, size_t first) {
  const IntervalSet& mine = kind == ConflictKind::OverlappingWrites ? writes_of(chunks[first], buffer)
                                                                     : reads_of(chunks[first], buffer);
  for (size_t other = 0; other < chunks.size(); ++other) {
    if (other == first) continue;
    IntervalSet both = intersection(mine, writes_of(chunks[other], buffer));
    if (!both.empty()) return Conflict{kind, buffer, first, other, std::move(both)};
  }
  return Conflict{kind, buffer, first, first, {}};  // never: the unions said there is one
}

}  // namespace

Conflict find_conflict(const std::vector<ChunkAccess>& chunks) {
  size_t buffers = 0;
  for (const ChunkAccess& chunk : chunks) buffers = std::max(buffers, chunk.size());
  for (size_t buffer = 0; buffer < buffers; ++buffer) {
    // Writes: a chunk's writes meet the union of those before it.
    IntervalSet written;
    for (size_t i = 0; i < chunks.size(); ++i) {
      const IntervalSet& writes = writes_of(chunks[i], buffer);
      if (writes.empty()) continue;
      IntervalSet both = intersection(writes, written);
      if (!both.empty()) {
        // Name the earlier chunk first: it is the one the scan finds for chunk i.
        Conflict c = name_pair(chunks, ConflictKind::OverlappingWrites, buffer, i);
        std::swap(c.first, c.second);
        return c;
      }
      written.add(writes);
    }
    // Reads: with the writes disjoint, what the others write is the union less the chunk's own.
    for (size_t i = 0; i < chunks.size(); ++i) {
      const IntervalSet& reads = reads_of(chunks[i], buffer);
      if (reads.empty()) continue;
      IntervalSet others = written;
      others.subtract(writes_of(chunks[i], buffer));
      if (!intersection(reads, others).empty()) return name_pair(chunks, ConflictKind::CrossChunkRead, buffer, i);
    }
  }
  return {};
}

std::vector<GroupRun> even_runs(uint64_t count, uint64_t max_runs) {
  const uint64_t runs = std::min(count, std::max<uint64_t>(max_runs, 1));
  std::vector<GroupRun> out;
  out.reserve(runs);
  // count * i / runs without the product, which may pass 2^64: count = q * runs + r.
  auto bound = [&](uint64_t i) { return count / runs * i + count % runs * i / runs; };
  for (uint64_t i = 0; i < runs; ++i) out.push_back({bound(i), bound(i + 1)});
  return out;
}

const char* conflict_reason(ConflictKind kind) {
  switch (kind) {
    case ConflictKind::None: return "";
    case ConflictKind::OverlappingWrites: return "overlapping_writes";
    case ConflictKind::CrossChunkRead: return "cross_chunk_dependency";
  }
  return "";
}

std::string Conflict::to_string() const {
  // A few ranges say where; a dependency on a whole buffer would list thousands.
  std::string ranges = bytes.to_string();
  if (bytes.range_count() > 4) {
    IntervalSet first;
    for (size_t i = 0; i < 4; ++i) first.add(bytes.ranges()[i]);
    ranges = first.to_string() + " and " + std::to_string(bytes.range_count() - 4) + " more ranges";
  }
  std::string where = " " + ranges + " of buffer " + std::to_string(buffer);
  switch (kind) {
    case ConflictKind::None: return "no conflict";
    case ConflictKind::OverlappingWrites:
      return "chunks " + std::to_string(first) + " and " + std::to_string(second) + " may both write" + where;
    case ConflictKind::CrossChunkRead:
      return "chunk " + std::to_string(first) + " may read what chunk " + std::to_string(second) + " writes:" + where;
  }
  return "";
}

}  // namespace coex::coherence
