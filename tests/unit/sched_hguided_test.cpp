// hguided: chunk = max(min_chunk, floor(R * P_i / (k * sum P))).
#include <gtest/gtest.h>

#include "sched/hguided_policy.h"
#include "sched/policy_factory.h"

namespace coex::sched {
namespace {

TEST(HguidedChunk, Formula) {
  // R = 10000, P = 3 of 4, k = 2: floor(10000 * 3 / 8) = 3750.
  EXPECT_EQ(hguided_chunk(10000, 3, 4, 2, 1), 3750u);
  EXPECT_EQ(hguided_chunk(10000, 1, 4, 2, 1), 1250u);
  EXPECT_EQ(hguided_chunk(999, 1, 3, 2, 1), 166u);    // floor(166.5)
  EXPECT_EQ(hguided_chunk(100, 1, 4, 2, 64), 64u);    // min_chunk
  EXPECT_EQ(hguided_chunk(40, 1, 4, 2, 64), 40u);     // never more than what is left
  EXPECT_EQ(hguided_chunk(10000, 1, 4, 4, 1), 625u);  // larger k: smaller chunks
}

// hguided over two devices of `compute_units` each, begun on a launch of `groups`.
std::unique_ptr<Policy> hguided_launch(uint64_t min_chunk, uint64_t groups, unsigned compute_units = 1) {
  std::vector<DeviceProfile> profiles(2);
  profiles[1].index = 1;
  for (auto& profile : profiles) profile.compute_units = compute_units;
  PolicyParams params;
  params.min_chunk_groups = min_chunk;
  auto p = make_policy("hguided", params, nullptr, profiles);
  LaunchShape shape;
  shape.kernel_key = "k";
  shape.total_groups = groups;
  p->begin_launch(shape, {0, 1}, 0);
  return p;
}

TEST(HguidedPolicy, ChunksShrinkWithRemainingWorkAndUseMeasuredPower) {
  auto p = hguided_launch(10, 10000);
  // Nothing measured: equal device info -> floor(10000 * 1 / 4) = 2500, then floor(7500 / 4) = 1875.
  const auto a = p->next_chunk(0, 0);
  const auto b = p->next_chunk(1, 0);
  EXPECT_EQ(a->groups(), 2500u);
  EXPECT_EQ(b->groups(), 1875u);
  // Device 0 measured at 3x device 1's throughput: P = 3 : 1 once both are measured.
  p->chunk_done({*a, 0, 2500.0 / 3000});
  p->chunk_done({*b, 0, 1875.0 / 1000});
  const auto c = p->next_chunk(0, 1.0);
  EXPECT_EQ(c->groups(), 5625u * 3 / 8);  // floor(5625 * 3 / 8) = 2109
  uint64_t left = 10000 - 2500 - 1875 - c->groups();
  p->chunk_done({*c, 1.0, 1.0 + c->groups() / 3000.0});
  uint64_t last = c->groups();
  double now = 2;
  while (auto d = p->next_chunk(0, now)) {
    EXPECT_LE(d->groups(), std::max<uint64_t>(last, 10));
    EXPECT_TRUE(d->groups() >= 10 || d->groups() == left);
    left -= d->groups();
    last = d->groups();
    p->chunk_done({*d, now, now + d->groups() / 3000.0});
    now += 1;
  }
  EXPECT_EQ(left, 0u);
}

// A policy's front chunks on a CPU of several compute units come in whole rounds of them
// (sched/split_math.h, whole_rounds), but under one round or for the rest of the launch.
TEST(HguidedPolicy, HandsACpuWholeRoundsOfItsComputeUnits) {
  auto p = hguided_launch(1, 1001, 4);
  uint64_t left = 1001;
  double now = 0;
  for (int device = 0; auto c = p->next_chunk(device, now); device = 1 - device) {
    EXPECT_TRUE(c->groups() % 4 == 0 || c->groups() < 4 || c->groups() == left) << c->groups() << " of " << left;
    left -= c->groups();
    p->chunk_done({*c, now, now + 0.001 * double(c->groups())});
    now += 1;
  }
  EXPECT_EQ(left, 0u);
}

}  // namespace
}  // namespace coex::sched
