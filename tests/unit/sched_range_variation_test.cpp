// sched/range_variation.h: von Neumann's ratio, the residuals against each device's time line, and
// the verdict that a variation follows the range.
#include <gtest/gtest.h>

#include "sched/range_variation.h"

namespace coex::sched {
namespace {

ChunkTiming chunk(int device, uint64_t begin, uint64_t groups, double seconds) {
  return ChunkTiming{Chunk{device, begin, begin + groups}, 0, seconds};
}

TEST(VonNeumannRatio, SuccessiveDifferencesOverTheVariance) {
  // 1 2 3 4: mean 2.5, squares about it 2.25 + 0.25 + 0.25 + 2.25 = 5; successive differences 3 x 1.
  EXPECT_NEAR(*von_neumann_ratio({1, 2, 3, 4}), 3.0 / 5.0, 1e-12);
  // 1 4 1 4: squares 4 x 2.25 = 9; differences 3 x 9 = 27.
  EXPECT_NEAR(*von_neumann_ratio({1, 4, 1, 4}), 3.0, 1e-12);
  EXPECT_FALSE(von_neumann_ratio({2, 2, 2}).has_value());
  EXPECT_FALSE(von_neumann_ratio({1}).has_value());
}

TEST(RangeResiduals, EachChunkAgainstItsDevicesMeanPaceInRangeOrder) {
  // Device 0: 1 s per group on chunks of 1 to 4 groups; device 1 twice as fast per group, but its
  // chunk at 30 took twice its pace. Device 2 ran one chunk: nothing to compare it with.
  const std::vector<ChunkTiming> chunks = {
      chunk(0, 40, 1, 1.0), chunk(1, 0, 2, 1.0),  chunk(0, 10, 2, 2.0), chunk(1, 30, 4, 4.0),
      chunk(0, 20, 3, 3.0), chunk(1, 50, 6, 3.0), chunk(2, 80, 5, 9.0),
  };
  const std::vector<double> r = range_ordered_residuals(chunks);
  ASSERT_EQ(r.size(), 6u);
  // Device 1: 8 s over 12 groups, 2/3 s per group: its chunks at 0 and 50 are 0.75 of it, at 30 1.5.
  const std::vector<double> expected = {0.75, 1.0, 1.0, 1.5, 1.0, 0.75};  // begins 0 10 20 30 40 50
  for (size_t i = 0; i < r.size(); ++i) EXPECT_NEAR(r[i], expected[i], 1e-12) << i;
}

TEST(VariationFollowsRange, ASmoothProfileDoesAndAnAlternatingOneDoesNot) {
  // Two devices taking turns along the range, equal chunks; the cost per group rises and falls once
  // across the range (a hill), or alternates chunk by chunk.
  std::vector<ChunkTiming> hill, alternating;
  for (uint64_t i = 0; i < 12; ++i) {
    const double cost = 1.0 + (i < 6 ? static_cast<double>(i) : static_cast<double>(11 - i));
    hill.push_back(chunk(int(i % 2), i * 10, 10, 10 * cost));
    alternating.push_back(chunk(int(i % 2), i * 10, 10, 10 * (i % 4 < 2 ? 1.0 : 3.0)));
  }
  EXPECT_TRUE(variation_follows_range(hill, 0.25));
  EXPECT_FALSE(variation_follows_range(alternating, 0.25, true));
  // Too few chunks to tell: not taken as following the range.
  EXPECT_FALSE(variation_follows_range({hill.begin(), hill.begin() + 5}, 0.25, true));
  // A spread too small, unless the caller saw one.
  EXPECT_FALSE(variation_follows_range(hill, 1.0));
  EXPECT_TRUE(variation_follows_range(hill, 1.0, true));
}

}  // namespace
}  // namespace coex::sched
