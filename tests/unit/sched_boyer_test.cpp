// boyer (Boyer et al. CF'13): the lambda-aware final split, the growth phase, the stuck-device rule.
#include <gtest/gtest.h>

#include <cmath>

#include "sched/boyer_policy.h"
#include "sched/policy_factory.h"
#include "sched/simulator.h"

namespace coex::sched {
namespace {

TEST(BoyerLambda, TimeLeftOnTheRunningChunk) {
  // Omega 1 ms/group, 400 groups running for 0.1 s: 0.3 s left.
  EXPECT_NEAR(boyer_lambda({0.001, 400, 0.1}), 0.3, 1e-12);
  EXPECT_EQ(boyer_lambda({0.001, 400, 0.5}), 0);  // late: taken to end now
  EXPECT_EQ(boyer_lambda({0.001, 0, 0}), 0);      // idle
}

TEST(BoyerFinalSplit, WorkedExampleCountsTheRunningChunk) {
  // 1000 groups left. The fast device (1 ms/group) still runs 400 groups started 0.1 s ago
  // (lambda = 0.3 s); the slow one (2 ms/group) is idle. Equal finish:
  //   (T - 0.3) / 0.001 + T / 0.002 = 1000  ->  T = 1.3 / 1.5 = 0.8667 s
  //   x_fast = 566.67, x_slow = 433.33; the one group left by flooring goes to the fast device
  //   (0.3 + 0.567 = 0.867 s < 0.868 s).
  std::vector<double> lambdas;
  const auto split = boyer_final_split({{0.001, 400, 0.1}, {0.002, 0, 0}}, 1000, true, &lambdas);
  EXPECT_NEAR(lambdas[0], 0.3, 1e-12);
  EXPECT_EQ(split, (std::vector<uint64_t>{567, 433}));
  // The slower device gets 43% of the rest; by speed alone it would get a third:
  const auto naive = boyer_final_split({{0.001, 400, 0.1}, {0.002, 0, 0}}, 1000, false);
  EXPECT_EQ(naive, (std::vector<uint64_t>{667, 333}));
}

TEST(BoyerFinalSplit, WaterFillingDropsDeviceBusyPastTheFinish) {
  // Device 2 runs 10000 groups at 1 ms/group (10 s left); 300 groups take the other two 0.15 s.
  const auto split = boyer_final_split({{0.001, 0, 0}, {0.001, 0, 0}, {0.001, 10000, 0}}, 300, true);
  EXPECT_EQ(split, (std::vector<uint64_t>{150, 150, 0}));
}

// Hand-driven devices with fixed speeds, to watch the chunk sequence.
struct Device {
  int index;
  double seconds_per_group;
  std::optional<Chunk> running;
  double start = 0;
  bool done = false;
};

TEST(BoyerPolicy, ChunksGrowByDeltaUntilGammaThenOneFinalChunkEach) {
  PolicyParams params;  // beta 0.07, delta 1.5, gamma 2
  std::vector<DeviceProfile> profiles(2);
  profiles[0].index = 0;
  profiles[1].index = 1;
  auto p = make_policy("boyer", params, nullptr, profiles);
  LaunchShape shape;
  shape.kernel_key = "k";
  shape.total_groups = 10000;
  shape.global_size = 10000;
  p->begin_launch(shape, {0, 1}, 0);
  std::vector<Device> devs{{0, 0.001, std::nullopt, 0, false}, {1, 0.003, std::nullopt, 0, false}};
  std::vector<std::vector<uint64_t>> sizes(2);
  double now = 0;
  auto ask = [&](Device& d) {
    if (auto c = p->next_chunk(d.index, now)) {
      d.running = c;
      d.start = now;
      sizes[d.index].push_back(c->groups());
    } else {
      d.done = true;
    }
  };
  ask(devs[0]);
  ask(devs[1]);
  uint64_t covered = 0;
  while (devs[0].running || devs[1].running) {
    Device* next = nullptr;
    for (auto& d : devs)
      if (d.running && (!next || d.start + d.running->groups() * d.seconds_per_group <
                                     next->start + next->running->groups() * next->seconds_per_group))
        next = &d;
    now = next->start + next->running->groups() * next->seconds_per_group;
    p->chunk_done({*next->running, next->start, now});
    covered += next->running->groups();
    next->running.reset();
    ask(*next);
  }
  EXPECT_EQ(covered, 10000u);
  // First chunk: ceil(0.07 * 10000) = 700 on each; later ones 1.5x the device's last.
  EXPECT_EQ(sizes[0][0], 700u);
  EXPECT_EQ(sizes[1][0], 700u);
  EXPECT_EQ(sizes[0][1], 1050u);
  EXPECT_EQ(sizes[1][1], 1050u);
  // The fast device finishes its second chunk (t = 1.75 s) before the slow one its first (2.1 s), so it
  // grows again: 1575. The slow device completes its second chunk at 5.25 s: then the final split.
  EXPECT_EQ(sizes[0][2], 1575u);
  // After the final split each device gets exactly one more chunk.
  const uint64_t before_final = 700 + 700 + 1050 + 1050;
  uint64_t growth_total = before_final;
  for (size_t i = 2; i + 1 < sizes[0].size(); ++i) growth_total += sizes[0][i];
  EXPECT_EQ(sizes[1].size(), 3u);
  const uint64_t rest = 10000 - growth_total;
  EXPECT_EQ(sizes[0].back() + sizes[1].back(), rest);
}

TEST(BoyerPolicy, StuckDeviceLosesItsChunkToTheDeviceThatClaimsTheRest) {
  std::vector<DeviceProfile> profiles(2);
  profiles[0].index = 0;
  profiles[1].index = 1;
  auto p = make_policy("boyer", PolicyParams{}, nullptr, profiles);
  LaunchShape shape;
  shape.kernel_key = "k";
  shape.total_groups = 1000;
  p->begin_launch(shape, {0, 1}, 0);
  const auto stuck = p->next_chunk(1, 0);  // device 1 never completes this
  ASSERT_TRUE(stuck.has_value());
  double now = 0;
  std::vector<Chunk> got;
  while (auto c = p->next_chunk(0, now)) {
    EXPECT_TRUE(p->take_abandoned().empty() || c->begin == stuck->begin);
    got.push_back(*c);
    now += 0.001 * c->groups();
    p->chunk_done({*c, now - 0.001 * c->groups(), now});
  }
  // Device 0 ran everything, the stuck chunk last; device 1 gets nothing more.
  uint64_t total = 0;
  for (const auto& c : got) total += c.groups();
  EXPECT_EQ(total, 1000u);
  EXPECT_EQ(got.back().begin, stuck->begin);
  EXPECT_EQ(got.back().end, stuck->end);
  EXPECT_EQ(got.back().device, 0);
  EXPECT_FALSE(p->next_chunk(1, now).has_value());
  // A late chunk_done for the abandoned chunk is ignored rather than counted.
  p->chunk_done({*stuck, 0, now});
  p->end_launch(now);
}

TEST(BoyerPolicy, SimulatedStallIsReassignedNotHung) {
  Scenario s;
  s.take_over = false;  // the policy on its own, as in its paper (no take-over by the executor's rules)
  s.name = "stall";
  s.devices.resize(2);
  for (int i = 0; i < 2; ++i) {
    s.devices[i].profile.index = i;
    s.devices[i].profile.name = "d" + std::to_string(i);
    s.devices[i].speed = 1000;
  }
  s.devices[1].changes.push_back({0, 0.0, 0.0});  // stalled from the start
  s.kernel.groups = 5000;
  s.launches = 2;
  const auto results = simulate_policy(s, "boyer");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].error.empty()) << results[0].error;
  EXPECT_FALSE(results[0].stalled);
  EXPECT_EQ(results[0].abandoned, 1u);
  EXPECT_EQ(results[0].groups_per_device[0], 5000u);
  // The stalled device still holds its abandoned kernel: the next launch runs without it.
  EXPECT_EQ(results[1].excluded, std::vector<int>{1});
  EXPECT_NEAR(results[1].makespan, 5.0, 1e-9);
}

}  // namespace
}  // namespace coex::sched
