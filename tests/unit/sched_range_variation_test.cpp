// sched/range_variation.h: von Neumann's ratio, the residuals against each device's or kind's mean
// pace, and the range test's verdict.
#include <gtest/gtest.h>

#include <cmath>

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
  // No profiles: each device is a kind of its own. Device 0: 1 s per group on chunks of 1 to 4
  // groups; device 1 twice as fast per group, but its chunk at 30 took twice its pace. Device 2 ran
  // one chunk: nothing to compare it with.
  const std::vector<ChunkTiming> chunks = {
      chunk(0, 40, 1, 1.0), chunk(1, 0, 2, 1.0),  chunk(0, 10, 2, 2.0), chunk(1, 30, 4, 4.0),
      chunk(0, 20, 3, 3.0), chunk(1, 50, 6, 3.0), chunk(2, 80, 5, 9.0),
  };
  const std::vector<double> r = range_ordered_residuals(chunks, {});
  ASSERT_EQ(r.size(), 6u);
  // Device 1: 8 s over 12 groups, 2/3 s per group: its chunks at 0 and 50 are 0.75 of it, at 30 1.5.
  const std::vector<double> expected = {0.75, 1.0, 1.0, 1.5, 1.0, 0.75};  // begins 0 10 20 30 40 50
  for (size_t i = 0; i < r.size(); ++i) EXPECT_NEAR(r[i], expected[i], 1e-12) << i;
}

TEST(RangeResiduals, DevicesOfFewChunksAreMeasuredAgainstTheirKind) {
  // Devices 0 and 1 share a profile; device 2 has twice the compute units; device 3 is device 0 under
  // another name (another driver).
  std::vector<DeviceProfile> profiles(4);
  for (int i = 0; i < 4; ++i) {
    profiles[i].index = i;
    profiles[i].name = "cpu-minimal";
    profiles[i].is_cpu = true;
  }
  profiles[2].compute_units = 2;
  profiles[3].name = "cpu";
  EXPECT_EQ(device_kind(profiles, 0), device_kind(profiles, 1));
  EXPECT_NE(device_kind(profiles, 0), device_kind(profiles, 2));
  EXPECT_NE(device_kind(profiles, 0), device_kind(profiles, 3));
  EXPECT_NE(device_kind(profiles, 7), device_kind(profiles, 0));  // not listed: a kind of its own
  EXPECT_EQ(device_kinds(profiles), (std::vector<int>{0, 0, 2, 3}));
  EXPECT_EQ(kind_of(device_kinds(profiles), 9), -10);                 // past the list: a kind of its own
  const std::vector<DeviceProfile> gap = {profiles[0], profiles[2]};  // no device 1
  EXPECT_EQ(device_kinds(gap), (std::vector<int>{0, -2, 2}));
  // Two chunks each, device 1 at half device 0's pace: against their kind's mean (6 s over 4 groups)
  // device 0's chunks read 2/3 and device 1's 4/3; device 2, alone in its kind, reads 1.
  const std::vector<ChunkTiming> chunks = {chunk(0, 0, 1, 1.0), chunk(1, 1, 1, 2.0), chunk(0, 2, 1, 1.0),
                                           chunk(1, 3, 1, 2.0), chunk(2, 4, 1, 4.0), chunk(2, 5, 1, 4.0)};
  const std::vector<double> r = range_ordered_residuals(chunks, profiles);
  const std::vector<double> expected = {2.0 / 3, 4.0 / 3, 2.0 / 3, 4.0 / 3, 1.0, 1.0};
  ASSERT_EQ(r.size(), expected.size());
  for (size_t i = 0; i < r.size(); ++i) EXPECT_NEAR(r[i], expected[i], 1e-12) << i;
  // Four chunks or more: a device is measured against its own mean.
  std::vector<ChunkTiming> more;
  for (uint64_t i = 0; i < 8; ++i) more.push_back(chunk(int(i % 2), i, 1, i % 2 ? 2.0 : 1.0));
  for (double v : range_ordered_residuals(more, profiles)) EXPECT_NEAR(v, 1.0, 1e-12);
}

TEST(RangeTest, ASmoothProfileDoesAndAnAlternatingOneDoesNot) {
  // Two devices taking turns along the range, equal chunks; the cost per group rises and falls once
  // across the range (a hill), or alternates chunk by chunk.
  std::vector<ChunkTiming> hill, alternating;
  for (uint64_t i = 0; i < 12; ++i) {
    const double cost = 1.0 + (i < 6 ? static_cast<double>(i) : static_cast<double>(11 - i));
    hill.push_back(chunk(int(i % 2), i * 10, 10, 10 * cost));
    alternating.push_back(chunk(int(i % 2), i * 10, 10, 10 * (i % 4 < 2 ? 1.0 : 3.0)));
  }
  const RegularityVerdict hill_verdict = range_test(hill, {}, 0.25);
  EXPECT_TRUE(hill_verdict.irregular);
  EXPECT_EQ(hill_verdict.packages, 12u);
  EXPECT_FALSE(hill_verdict.window_spread);
  ASSERT_TRUE(hill_verdict.range_ratio.has_value());
  EXPECT_LT(*hill_verdict.range_ratio, 1.0);
  EXPECT_GT(hill_verdict.spread, 0.25);
  EXPECT_FALSE(range_test(alternating, {}, 0.25, true).irregular);
  // Too few chunks to tell the range from the devices: the caller's window spread decides alone.
  EXPECT_TRUE(range_test({alternating.begin(), alternating.begin() + 5}, {}, 0.25, true).irregular);
  EXPECT_FALSE(range_test({hill.begin(), hill.begin() + 5}, {}, 0.25, false).irregular);
  // At 6 packages the ratio must also be under its one-sided 5% point for random values (0.89): a
  // sequence whose ratio is 0.95 is not enough there.
  {
    const std::vector<double> costs = {1, 1, 1, 2, 2, 1.5};
    std::vector<ChunkTiming> six;
    for (uint64_t i = 0; i < costs.size(); ++i) six.push_back(chunk(0, i, 1, costs[i]));
    std::vector<double> logs;
    for (double c : costs) logs.push_back(std::log(c));
    const auto ratio = von_neumann_ratio(logs);
    ASSERT_TRUE(ratio.has_value());
    ASSERT_GT(*ratio, 0.89);
    ASSERT_LT(*ratio, 1.0);
    EXPECT_FALSE(range_test(six, {}, 0.25, true).irregular);
  }
  // A spread too small, unless the caller saw one.
  EXPECT_FALSE(range_test(hill, {}, 1.0).irregular);
  EXPECT_TRUE(range_test(hill, {}, 1.0, true).irregular);
}

}  // namespace
}  // namespace coex::sched
