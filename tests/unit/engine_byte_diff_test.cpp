#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "exec/byte_diff.h"

using coex::coherence::IntervalSet;
using coex::exec::bridge_gaps;
using coex::exec::changed_bytes;

TEST(ByteDiff, IdenticalBuffersHaveNoChanges) {
  std::vector<uint8_t> a(10000, 7);
  EXPECT_TRUE(changed_bytes(a.data(), a.data(), a.size(), 0).empty());
}

TEST(ByteDiff, FindsByteExactRunsAcrossBlockBoundaries) {
  std::vector<uint8_t> a(1000, 0), b(1000, 0);
  for (size_t i = 250; i < 260; ++i) b[i] = 1;  // crosses the 256-byte block edge
  b[999] = 3;
  b[0] = 9;
  IntervalSet expected{{100, 101}, {350, 360}, {1099, 1100}};
  EXPECT_EQ(changed_bytes(a.data(), b.data(), a.size(), 100), expected);
}

TEST(ByteDiff, MatchesABytewiseModelOnRandomData) {
  std::mt19937 rng(42);
  for (int round = 0; round < 50; ++round) {
    size_t n = 1 + rng() % 3000;
    std::vector<uint8_t> a(n), b(n);
    for (size_t i = 0; i < n; ++i) a[i] = b[i] = uint8_t(rng());
    for (int k = rng() % 20; k > 0; --k) b[rng() % n] ^= uint8_t(1 + rng() % 255);
    IntervalSet model;
    for (size_t i = 0; i < n; ++i)
      if (a[i] != b[i]) model.add({i, i + 1});
    EXPECT_EQ(changed_bytes(a.data(), b.data(), n, 0), model);
  }
}

TEST(ByteDiff, BridgeGapsJoinsOnlyShortGaps) {
  IntervalSet in{{0, 10}, {12, 20}, {100, 110}};
  EXPECT_EQ(bridge_gaps(in, 3), (IntervalSet{{0, 20}, {100, 110}}));
  EXPECT_EQ(bridge_gaps(in, 1), in);
  EXPECT_EQ(bridge_gaps(in, 1000), (IntervalSet{{0, 110}}));
}
