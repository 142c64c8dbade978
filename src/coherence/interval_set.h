// A set of byte offsets stored as half-open ranges [begin, end). coex keeps one per buffer and per
// device for the bytes that device holds current (docs/design.md, "A launch"), so that a transfer moves
// only what is missing.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <vector>

namespace coex::coherence {

// Bytes [begin, end) of a buffer. A range with end <= begin is empty.
struct ByteRange {
  uint64_t begin = 0;
  uint64_t end = 0;

  bool empty() const { return end <= begin; }
  uint64_t size() const { return empty() ? 0 : end - begin; }
  bool operator==(const ByteRange& other) const { return begin == other.begin && end == other.end; }
  bool operator!=(const ByteRange& other) const { return !(*this == other); }
};

// Invariant, after every operation: the ranges are non-empty, sorted by begin, and separated by at
// least one byte (overlapping or touching ranges are merged). Two sets holding the same bytes are
// therefore equal range by range, and iteration visits the fewest possible ranges.
class IntervalSet {
 public:
  using const_iterator = std::vector<ByteRange>::const_iterator;

  IntervalSet() = default;
  IntervalSet(std::initializer_list<ByteRange> ranges);

  void add(ByteRange range);
  void add(const IntervalSet& other);
  void subtract(ByteRange range);
  void subtract(const IntervalSet& other);
  // Keeps only the bytes that are also in `other`.
  void intersect(const IntervalSet& other);
  void intersect(ByteRange range);
  void clear() { ranges_.clear(); }

  // True when every byte of `range` is in the set (an empty range is always contained).
  bool contains(ByteRange range) const;
  bool contains(uint64_t offset) const;
  // True when at least one byte of `range` is in the set.
  bool overlaps(ByteRange range) const;
  // The parts of `range` that are not in the set: what a device lacks before it may use `range`.
  IntervalSet missing(ByteRange range) const;
  // The parts of `range` that are in the set.
  IntervalSet present(ByteRange range) const;

  uint64_t total() const;  // bytes in the set
  bool empty() const { return ranges_.empty(); }
  size_t range_count() const { return ranges_.size(); }
  const_iterator begin() const { return ranges_.begin(); }
  const_iterator end() const { return ranges_.end(); }
  const std::vector<ByteRange>& ranges() const { return ranges_; }

  bool operator==(const IntervalSet& other) const { return ranges_ == other.ranges_; }
  bool operator!=(const IntervalSet& other) const { return ranges_ != other.ranges_; }

  // "{[0, 4), [8, 16)}": for logs and test failure messages.
  std::string to_string() const;

 private:
  // Index of the first range whose end is >= offset: the first range that overlaps or touches
  // [offset, ...).
  size_t first_touching(uint64_t offset) const;

  std::vector<ByteRange> ranges_;
};

IntervalSet intersection(const IntervalSet& a, const IntervalSet& b);
std::ostream& operator<<(std::ostream& out, const IntervalSet& set);
std::ostream& operator<<(std::ostream& out, const ByteRange& range);

}  // namespace coex::coherence
