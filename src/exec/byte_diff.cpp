#include "exec/byte_diff.h"

#include <cstring>

namespace coex::exec {

coherence::IntervalSet changed_bytes(const uint8_t* before, const uint8_t* after, size_t size, uint64_t base) {
  coherence::IntervalSet out;
  // Equal blocks are skipped with memcmp (fast, vectorised); a differing block is scanned bytewise.
  constexpr size_t kBlock = 256;
  size_t run_start = SIZE_MAX;
  for (size_t block = 0; block < size; block += kBlock) {
    size_t len = size - block < kBlock ? size - block : kBlock;
    if (run_start == SIZE_MAX && std::memcmp(before + block, after + block, len) == 0) continue;
    for (size_t i = block; i < block + len; ++i) {
      bool differs = before[i] != after[i];
      if (differs && run_start == SIZE_MAX) run_start = i;
      if (!differs && run_start != SIZE_MAX) {
        out.add({base + run_start, base + i});
        run_start = SIZE_MAX;
      }
    }
  }
  if (run_start != SIZE_MAX) out.add({base + run_start, base + size});
  return out;
}

coherence::IntervalSet bridge_gaps(const coherence::IntervalSet& ranges, uint64_t max_gap) {
  coherence::IntervalSet everything{{0, UINT64_MAX}};
  return bridge_gaps_within(ranges, max_gap, everything);
}

coherence::IntervalSet bridge_gaps_within(const coherence::IntervalSet& ranges, uint64_t max_gap,
                                          const coherence::IntervalSet& fillable) {
  coherence::IntervalSet out;
  coherence::ByteRange current{};
  bool open = false;
  for (const auto& r : ranges) {
    if (open && r.begin - current.end < max_gap && fillable.contains({current.end, r.begin})) {
      current.end = r.end;
      continue;
    }
    if (open) out.add(current);
    current = r;
    open = true;
  }
  if (open) out.add(current);
  return out;
}

}  // namespace coex::exec
