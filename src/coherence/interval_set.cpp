#include "coherence/interval_set.h"

#include <algorithm>
#include <ostream>
#include <sstream>

namespace coex::coherence {

namespace {

// Index of the first range whose end is > offset: the first range holding a byte at or after it.
size_t first_ending_after(const std::vector<ByteRange>& ranges, uint64_t offset) {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), offset,
                             [](uint64_t value, const ByteRange& r) { return value < r.end; });
  return static_cast<size_t>(it - ranges.begin());
}

// Appends `range` to a list sorted by begin, merging it with the last range when they overlap or
// touch. Appending sorted input this way yields a normalised list.
void append_merging(std::vector<ByteRange>& out, ByteRange range) {
  if (range.empty()) return;
  if (!out.empty() && range.begin <= out.back().end) {
    out.back().end = std::max(out.back().end, range.end);
  } else {
    out.push_back(range);
  }
}

}  // namespace

IntervalSet::IntervalSet(std::initializer_list<ByteRange> ranges) {
  for (const ByteRange& r : ranges) add(r);
}

size_t IntervalSet::first_touching(uint64_t offset) const {
  auto it = std::lower_bound(ranges_.begin(), ranges_.end(), offset,
                             [](const ByteRange& r, uint64_t value) { return r.end < value; });
  return static_cast<size_t>(it - ranges_.begin());
}

void IntervalSet::add(ByteRange range) {
  if (range.empty()) return;
  const size_t first = first_touching(range.begin);
  size_t last = first;  // one past the last range that overlaps or touches `range`
  while (last < ranges_.size() && ranges_[last].begin <= range.end) ++last;
  if (first == last) {
    ranges_.insert(ranges_.begin() + static_cast<std::ptrdiff_t>(first), range);
    return;
  }
  ByteRange merged{std::min(range.begin, ranges_[first].begin), std::max(range.end, ranges_[last - 1].end)};
  ranges_[first] = merged;
  ranges_.erase(ranges_.begin() + static_cast<std::ptrdiff_t>(first) + 1,
                ranges_.begin() + static_cast<std::ptrdiff_t>(last));
}

void IntervalSet::subtract(ByteRange range) {
  if (range.empty() || ranges_.empty()) return;  // the usual case of a launch left on home (app_wrote)
  const size_t first = first_ending_after(ranges_, range.begin);
  size_t last = first;  // one past the last range that shares a byte with `range`
  while (last < ranges_.size() && ranges_[last].begin < range.end) ++last;
  if (first == last) return;
  std::vector<ByteRange> remainders;
  if (ranges_[first].begin < range.begin) remainders.push_back({ranges_[first].begin, range.begin});
  if (ranges_[last - 1].end > range.end) remainders.push_back({range.end, ranges_[last - 1].end});
  auto at = ranges_.erase(ranges_.begin() + static_cast<std::ptrdiff_t>(first),
                          ranges_.begin() + static_cast<std::ptrdiff_t>(last));
  ranges_.insert(at, remainders.begin(), remainders.end());
}

void IntervalSet::add(const IntervalSet& other) {
  if (other.empty()) return;
  std::vector<ByteRange> merged;
  merged.reserve(ranges_.size() + other.ranges_.size());
  size_t i = 0, j = 0;
  while (i < ranges_.size() || j < other.ranges_.size()) {
    const bool take_mine =
        j == other.ranges_.size() || (i < ranges_.size() && ranges_[i].begin <= other.ranges_[j].begin);
    append_merging(merged, take_mine ? ranges_[i++] : other.ranges_[j++]);
  }
  ranges_ = std::move(merged);
}

void IntervalSet::subtract(const IntervalSet& other) {
  if (other.empty() || empty()) return;
  std::vector<ByteRange> kept;
  size_t j = 0;
  for (const ByteRange& r : ranges_) {
    uint64_t cursor = r.begin;
    while (j < other.ranges_.size() && other.ranges_[j].end <= cursor) ++j;
    // other.ranges_[j] may reach past r, into the next range of this set: it is not consumed here.
    for (size_t k = j; k < other.ranges_.size() && other.ranges_[k].begin < r.end; ++k) {
      if (other.ranges_[k].begin > cursor) kept.push_back({cursor, other.ranges_[k].begin});
      cursor = std::max(cursor, other.ranges_[k].end);
      if (cursor >= r.end) break;
    }
    if (cursor < r.end) kept.push_back({cursor, r.end});
  }
  ranges_ = std::move(kept);
}

void IntervalSet::intersect(const IntervalSet& other) {
  std::vector<ByteRange> common;
  size_t i = 0, j = 0;
  while (i < ranges_.size() && j < other.ranges_.size()) {
    const ByteRange& a = ranges_[i];
    const ByteRange& b = other.ranges_[j];
    ByteRange both{std::max(a.begin, b.begin), std::min(a.end, b.end)};
    if (!both.empty()) common.push_back(both);
    // Pieces of two normalised sets are separated by gaps, so `common` needs no merging.
    if (a.end < b.end)
      ++i;
    else
      ++j;
  }
  ranges_ = std::move(common);
}

void IntervalSet::intersect(ByteRange range) { *this = present(range); }

bool IntervalSet::contains(ByteRange range) const {
  if (range.empty()) return true;
  const size_t i = first_ending_after(ranges_, range.begin);
  // Normalised ranges never touch, so a contained range lies inside a single stored range.
  return i < ranges_.size() && ranges_[i].begin <= range.begin && ranges_[i].end >= range.end;
}

bool IntervalSet::contains(uint64_t offset) const {
  const size_t i = first_ending_after(ranges_, offset);
  return i < ranges_.size() && ranges_[i].begin <= offset;
}

bool IntervalSet::overlaps(ByteRange range) const {
  if (range.empty()) return false;
  const size_t i = first_ending_after(ranges_, range.begin);
  return i < ranges_.size() && ranges_[i].begin < range.end;
}

IntervalSet IntervalSet::missing(ByteRange range) const {
  IntervalSet gaps;
  if (range.empty()) return gaps;
  uint64_t cursor = range.begin;
  for (size_t i = first_ending_after(ranges_, range.begin); i < ranges_.size() && ranges_[i].begin < range.end; ++i) {
    if (ranges_[i].begin > cursor) gaps.ranges_.push_back({cursor, ranges_[i].begin});
    cursor = ranges_[i].end;
  }
  if (cursor < range.end) gaps.ranges_.push_back({cursor, range.end});
  return gaps;
}

IntervalSet IntervalSet::present(ByteRange range) const {
  IntervalSet inside;
  if (range.empty()) return inside;
  for (size_t i = first_ending_after(ranges_, range.begin); i < ranges_.size() && ranges_[i].begin < range.end; ++i) {
    inside.ranges_.push_back({std::max(ranges_[i].begin, range.begin), std::min(ranges_[i].end, range.end)});
  }
  return inside;
}

uint64_t IntervalSet::total() const {
  uint64_t bytes = 0;
  for (const ByteRange& r : ranges_) bytes += r.size();
  return bytes;
}

std::string IntervalSet::to_string() const {
  std::ostringstream out;
  out << *this;
  return out.str();
}

IntervalSet intersection(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet result = a;
  result.intersect(b);
  return result;
}

std::ostream& operator<<(std::ostream& out, const ByteRange& range) {
  return out << '[' << range.begin << ", " << range.end << ')';
}

std::ostream& operator<<(std::ostream& out, const IntervalSet& set) {
  out << '{';
  const char* separator = "";
  for (const ByteRange& r : set) {
    out << separator << r;
    separator = ", ";
  }
  return out << '}';
}

}  // namespace coex::coherence
