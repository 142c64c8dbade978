#include "coherence/interval_set.h"

#include <gtest/gtest.h>

#include <bitset>
#include <random>
#include <vector>

namespace coex::coherence {
namespace {

using Ranges = std::vector<ByteRange>;

Ranges ranges_of(const IntervalSet& set) { return Ranges(set.begin(), set.end()); }

TEST(IntervalSet, StartsEmpty) {
  IntervalSet set;
  EXPECT_TRUE(set.empty());
  EXPECT_EQ(set.total(), 0u);
  EXPECT_EQ(set.range_count(), 0u);
  EXPECT_EQ(set.to_string(), "{}");
}

TEST(IntervalSet, IgnoresEmptyAndReversedRanges) {
  IntervalSet set;
  set.add({5, 5});
  set.add({9, 3});
  EXPECT_TRUE(set.empty());
  set.add({0, 10});
  set.subtract({4, 4});
  set.subtract({8, 2});
  EXPECT_EQ(ranges_of(set), (Ranges{{0, 10}}));
}

TEST(IntervalSet, MergesOverlappingAndTouchingRanges) {
  IntervalSet set;
  set.add({10, 20});
  set.add({30, 40});
  EXPECT_EQ(set.range_count(), 2u);
  set.add({20, 25});  // touches [10, 20): merged, half-open ranges share no byte but are adjacent
  EXPECT_EQ(ranges_of(set), (Ranges{{10, 25}, {30, 40}}));
  set.add({24, 31});  // bridges the gap
  EXPECT_EQ(ranges_of(set), (Ranges{{10, 40}}));
  set.add({0, 5});
  set.add({50, 60});
  set.add({5, 10});
  EXPECT_EQ(ranges_of(set), (Ranges{{0, 40}, {50, 60}}));
  EXPECT_EQ(set.total(), 50u);
}

TEST(IntervalSet, AddSwallowsSeveralRanges) {
  IntervalSet set{{0, 2}, {4, 6}, {8, 10}, {12, 14}};
  set.add({3, 11});
  EXPECT_EQ(ranges_of(set), (Ranges{{0, 2}, {3, 11}, {12, 14}}));
}

TEST(IntervalSet, SubtractSplitsAndTrims) {
  IntervalSet set{{0, 100}};
  set.subtract({40, 60});
  EXPECT_EQ(ranges_of(set), (Ranges{{0, 40}, {60, 100}}));
  set.subtract({30, 70});
  EXPECT_EQ(ranges_of(set), (Ranges{{0, 30}, {70, 100}}));
  set.subtract({0, 10});
  set.subtract({95, 200});
  EXPECT_EQ(ranges_of(set), (Ranges{{10, 30}, {70, 95}}));
  set.subtract({30, 70});  // touches both, removes nothing
  EXPECT_EQ(set.total(), 45u);
  set.subtract({0, 1000});
  EXPECT_TRUE(set.empty());
}

TEST(IntervalSet, ContainsNeedsEveryByte) {
  IntervalSet set{{10, 20}, {21, 30}};
  EXPECT_TRUE(set.contains(ByteRange{10, 20}));
  EXPECT_TRUE(set.contains(ByteRange{12, 15}));
  EXPECT_FALSE(set.contains(ByteRange{15, 25}));  // byte 20 is missing
  EXPECT_FALSE(set.contains(ByteRange{9, 11}));
  EXPECT_TRUE(set.contains(ByteRange{100, 100}));  // empty range
  EXPECT_TRUE(set.contains(uint64_t{10}));
  EXPECT_FALSE(set.contains(uint64_t{20}));
  EXPECT_TRUE(set.contains(uint64_t{29}));
  EXPECT_FALSE(set.contains(uint64_t{30}));
}

TEST(IntervalSet, OverlapsNeedsOneByte) {
  IntervalSet set{{10, 20}};
  EXPECT_TRUE(set.overlaps({19, 40}));
  EXPECT_FALSE(set.overlaps({20, 40}));
  EXPECT_FALSE(set.overlaps({0, 10}));
  EXPECT_TRUE(set.overlaps({0, 11}));
  EXPECT_FALSE(set.overlaps({15, 15}));
}

TEST(IntervalSet, MissingListsTheGapsOfARange) {
  IntervalSet set{{10, 20}, {30, 40}};
  EXPECT_EQ(ranges_of(set.missing({0, 50})), (Ranges{{0, 10}, {20, 30}, {40, 50}}));
  EXPECT_EQ(ranges_of(set.missing({15, 35})), (Ranges{{20, 30}}));
  EXPECT_TRUE(set.missing({12, 18}).empty());
  EXPECT_EQ(ranges_of(set.missing({20, 30})), (Ranges{{20, 30}}));
  EXPECT_TRUE(set.missing({7, 7}).empty());
  EXPECT_EQ(ranges_of(IntervalSet{}.missing({3, 9})), (Ranges{{3, 9}}));
  EXPECT_EQ(ranges_of(set.present({15, 35})), (Ranges{{15, 20}, {30, 35}}));
}

TEST(IntervalSet, SetOperations) {
  IntervalSet a{{0, 10}, {20, 30}, {40, 50}};
  IntervalSet b{{5, 25}, {45, 60}};

  IntervalSet united = a;
  united.add(b);
  EXPECT_EQ(ranges_of(united), (Ranges{{0, 30}, {40, 60}}));

  IntervalSet difference = a;
  difference.subtract(b);
  EXPECT_EQ(ranges_of(difference), (Ranges{{0, 5}, {25, 30}, {40, 45}}));

  EXPECT_EQ(ranges_of(intersection(a, b)), (Ranges{{5, 10}, {20, 25}, {45, 50}}));

  IntervalSet clipped = a;
  clipped.intersect(ByteRange{8, 42});
  EXPECT_EQ(ranges_of(clipped), (Ranges{{8, 10}, {20, 30}, {40, 42}}));
}

TEST(IntervalSet, SubtractSetWhoseRangeSpansSeveralOfMine) {
  IntervalSet a{{0, 10}, {20, 30}, {40, 50}};
  a.subtract(IntervalSet{{5, 45}});
  EXPECT_EQ(ranges_of(a), (Ranges{{0, 5}, {45, 50}}));
}

TEST(IntervalSet, EqualityIsByBytes) {
  IntervalSet a{{0, 5}, {5, 10}};
  IntervalSet b{{0, 10}};
  EXPECT_EQ(a, b);
  b.subtract({3, 4});
  EXPECT_NE(a, b);
  a.clear();
  EXPECT_EQ(a, IntervalSet{});
}

TEST(IntervalSet, HandlesTheTopOfTheAddressSpace) {
  const uint64_t top = UINT64_MAX;
  IntervalSet set{{top - 10, top}};
  EXPECT_TRUE(set.contains(top - 1));
  EXPECT_FALSE(set.contains(top));
  EXPECT_EQ(set.total(), 10u);
  EXPECT_EQ(ranges_of(set.missing({top - 20, top})), (Ranges{{top - 20, top - 10}}));
}

// The randomised tests compare every operation with a bitmap of the same bytes.
constexpr size_t kUniverse = 192;
using Bitmap = std::bitset<kUniverse>;

Bitmap bitmap_of(const IntervalSet& set) {
  Bitmap bits;
  for (const ByteRange& r : set) {
    for (uint64_t b = r.begin; b < r.end; ++b) bits.set(b);
  }
  return bits;
}

Bitmap bitmap_of(ByteRange range) {
  Bitmap bits;
  for (uint64_t b = range.begin; b < range.end; ++b) bits.set(b);
  return bits;
}

// Non-empty, sorted, neither overlapping nor touching.
void expect_normalised(const IntervalSet& set) {
  const ByteRange* previous = nullptr;
  for (const ByteRange& r : set) {
    EXPECT_LT(r.begin, r.end) << set;
    if (previous) {
      EXPECT_LT(previous->end, r.begin) << set;
    }
    previous = &r;
  }
}

ByteRange random_range(std::mt19937_64& rng) {
  std::uniform_int_distribution<uint64_t> offset(0, kUniverse);
  uint64_t a = offset(rng), b = offset(rng);
  if (a > b) std::swap(a, b);
  // Mostly short ranges, so that sets keep many pieces.
  if (rng() % 4 != 0 && b - a > 12) b = a + rng() % 12;
  return {a, b};
}

IntervalSet random_set(std::mt19937_64& rng) {
  IntervalSet set;
  const int pieces = static_cast<int>(rng() % 8);
  for (int i = 0; i < pieces; ++i) set.add(random_range(rng));
  return set;
}

TEST(IntervalSetRandomised, AgreesWithABitmap) {
  std::mt19937_64 rng(20240611);
  for (int round = 0; round < 200; ++round) {
    IntervalSet set;
    Bitmap model;
    for (int step = 0; step < 60; ++step) {
      const ByteRange r = random_range(rng);
      const Bitmap bits = bitmap_of(r);
      switch (rng() % 6) {
        case 0:
        case 1:
          set.add(r);
          model |= bits;
          break;
        case 2:
          set.subtract(r);
          model &= ~bits;
          break;
        case 3: {
          const IntervalSet other = random_set(rng);
          set.add(other);
          model |= bitmap_of(other);
          break;
        }
        case 4: {
          const IntervalSet other = random_set(rng);
          set.subtract(other);
          model &= ~bitmap_of(other);
          break;
        }
        default: {
          if (rng() % 3 != 0) break;  // intersecting often would keep the set nearly empty
          const IntervalSet other = random_set(rng);
          set.intersect(other);
          model &= bitmap_of(other);
          break;
        }
      }
      ASSERT_EQ(bitmap_of(set), model) << "round " << round << " step " << step << ": " << set;
      expect_normalised(set);
      ASSERT_EQ(set.total(), model.count());

      const ByteRange probe = random_range(rng);
      const Bitmap probe_bits = bitmap_of(probe);
      EXPECT_EQ(set.contains(probe), (probe_bits & ~model).none()) << set << " contains " << probe;
      EXPECT_EQ(set.overlaps(probe), (probe_bits & model).any()) << set << " overlaps " << probe;
      const IntervalSet gaps = set.missing(probe);
      expect_normalised(gaps);
      EXPECT_EQ(bitmap_of(gaps), probe_bits & ~model) << set << " missing " << probe;
      const IntervalSet inside = set.present(probe);
      expect_normalised(inside);
      EXPECT_EQ(bitmap_of(inside), probe_bits & model) << set << " present " << probe;
      const uint64_t offset = rng() % kUniverse;
      EXPECT_EQ(set.contains(offset), model.test(offset));
    }
  }
}

TEST(IntervalSetRandomised, EqualSetsAreEqualWhateverTheOrderOfAdds) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<ByteRange> pieces;
    for (int i = 0; i < 10; ++i) pieces.push_back(random_range(rng));
    IntervalSet forward, backward;
    for (const ByteRange& r : pieces) forward.add(r);
    for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) backward.add(*it);
    EXPECT_EQ(forward, backward);
    EXPECT_EQ(forward == backward, bitmap_of(forward) == bitmap_of(backward));
  }
}

}  // namespace
}  // namespace coex::coherence
