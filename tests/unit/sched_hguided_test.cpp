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

TEST(HguidedPolicy, ChunksShrinkWithRemainingWorkAndUseMeasuredPower) {
  std::vector<DeviceProfile> profiles(2);
  profiles[1].index = 1;
  PolicyParams params;
  params.min_chunk_groups = 10;
  auto p = make_policy("hguided", params, nullptr, profiles);
  LaunchShape shape;
  shape.kernel_key = "k";
  shape.total_groups = 10000;
  p->begin_launch(shape, {0, 1}, 0);
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

}  // namespace
}  // namespace coex::sched
