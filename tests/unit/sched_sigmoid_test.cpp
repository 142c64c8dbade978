// sigmoid (Pérez et al. JPDC'21): package sizes at chosen G_r, the k switch, the floors.
#include <gtest/gtest.h>

#include <cmath>

#include "sched/policy_factory.h"
#include "sched/sigmoid_policy.h"
#include "sched/simulator.h"

namespace coex::sched {
namespace {

TEST(SigmoidPackage, SizesAtChosenRemainingWork) {
  // G = 1000 groups, N = 2 devices, speeds 3 : 1, k = 2: (1000 / 4) * 0.75 * tanh(6 G_r / G).
  EXPECT_NEAR(sigmoid_package(1000, 2, 3, 4, 2, 1000), 187.5 * std::tanh(6.0), 1e-9);
  EXPECT_NEAR(sigmoid_package(1000, 2, 3, 4, 2, 1000), 187.4977, 1e-4);
  EXPECT_NEAR(sigmoid_package(1000, 2, 3, 4, 2, 500), 187.5 * 0.9950548, 1e-4);  // tanh(3)
  EXPECT_NEAR(sigmoid_package(1000, 2, 3, 4, 2, 100), 187.5 * 0.5370496, 1e-4);  // tanh(0.6)
  EXPECT_NEAR(sigmoid_package(1000, 2, 1, 4, 2, 100), 62.5 * 0.5370496, 1e-4);   // the slow device
  // k = 0.5 (irregular): packages shrink much earlier: tanh(1.5) at G_r = G, tanh(0.15) at G_r = G/10.
  EXPECT_NEAR(sigmoid_package(1000, 2, 3, 4, 0.5, 1000), 187.5 * 0.9051483, 1e-4);
  EXPECT_NEAR(sigmoid_package(1000, 2, 3, 4, 0.5, 100), 187.5 * 0.1488850, 1e-4);
  EXPECT_EQ(sigmoid_package(1000, 2, 3, 4, 2, 0), 0);
}

Scenario two_devices(const std::string& cost, double noise) {
  Scenario s;
  s.take_over = false;  // the policy on its own, as in its paper (no take-over by the executor's rules)
  s.name = "sigmoid";
  s.devices.resize(2);
  for (int i = 0; i < 2; ++i) {
    s.devices[i].profile.index = i;
    s.devices[i].profile.name = "d" + std::to_string(i);
    s.devices[i].profile.is_gpu = true;
    s.devices[i].profile.compute_units = 4;
    s.devices[i].noise = noise;
  }
  s.devices[0].speed = 3000;
  s.devices[1].speed = 1000;
  s.kernel.groups = 20000;
  s.kernel.cost.kind = cost;
  if (cost == "steps") s.kernel.cost.values = {1, 8, 1, 8, 1, 8, 1, 8};
  return s;
}

TEST(SigmoidPolicy, FirstPackagesFollowTheFormulaFromDeviceInfo) {
  // Equal device info (4 CUs each): S = 1 : 1, G_r = G for the first ask: (20000 / 4) * 0.5 * tanh(6).
  auto s = two_devices("uniform", 0);
  s.kernel.groups = 200000;
  const auto r = simulate_policy(s, "sigmoid");
  ASSERT_TRUE(r[0].error.empty());
  const auto& first = r[0].trace[0];
  EXPECT_EQ(first.chunk.groups(), static_cast<uint64_t>(std::ceil(25000 * std::tanh(6.0))));
  // The second device asks at the same instant with G_r = G - the first package.
  const double left = 200000.0 - static_cast<double>(first.chunk.groups());
  EXPECT_EQ(r[0].trace[1].chunk.groups(), static_cast<uint64_t>(std::ceil(25000 * std::tanh(6.0 * left / 200000))));
  EXPECT_LT(r[0].trace[1].chunk.groups(), first.chunk.groups());
}

TEST(SigmoidPolicy, StaysRegularOnUniformCostAndSwitchesOnIrregular) {
  auto history = std::make_shared<History>();
  const auto regular = simulate_policy(two_devices("uniform", 0), "sigmoid", history);
  ASSERT_TRUE(regular[0].error.empty());
  EXPECT_EQ(history->regular("kernel"), std::optional<bool>(true));
  auto history2 = std::make_shared<History>();
  const auto irregular = simulate_policy(two_devices("steps", 0), "sigmoid", history2);
  ASSERT_TRUE(irregular[0].error.empty());
  EXPECT_EQ(history2->regular("kernel"), std::optional<bool>(false));
  // Smaller packages once k = 0.5: more of them than on the regular kernel.
  EXPECT_GT(irregular[0].chunks, regular[0].chunks);
}

TEST(SigmoidPolicy, KSwitchIsStickyAcrossLaunchesOfTheKernel) {
  auto history = std::make_shared<History>();
  history->set_regular("k", false);
  std::vector<DeviceProfile> profiles(1);
  auto p = make_policy("sigmoid", PolicyParams{}, history, profiles);
  LaunchShape shape;
  shape.kernel_key = "k";
  shape.total_groups = 1000;
  p->begin_launch(shape, {0}, 0);
  EXPECT_EQ(static_cast<SigmoidPolicy*>(p.get())->current_k(), 0.5);
  // One device: G / 2 * tanh(1.5) with k = 0.5.
  const auto c = p->next_chunk(0, 0);
  EXPECT_EQ(c->groups(), static_cast<uint64_t>(std::ceil(500 * std::tanh(1.5))));
}

TEST(SigmoidPolicy, FloorIsElapsedTimeTimesSpeed) {
  // Two devices known from the history at 1000 groups/s each. Device 1 takes its first package and
  // never reports; device 0 drains the launch at exactly 1000 groups/s. Late in the launch the formula
  // gives about 0.75 G_r, and the floor p * t * S = 0.05 * t * 1000 is chosen above it.
  auto history = std::make_shared<History>();
  const uint64_t total = 100000;
  history->record_chunk("k", total, {{0, 0, 1000}, 0, 1});
  history->record_chunk("k", total, {{1, 0, 1000}, 0, 1});
  std::vector<DeviceProfile> profiles(2);
  profiles[1].index = 1;
  auto p = make_policy("sigmoid", PolicyParams{}, history, profiles);
  LaunchShape shape;
  shape.kernel_key = "k";
  shape.total_groups = total;
  shape.global_size = total;
  p->begin_launch(shape, {0, 1}, 0);
  uint64_t left = total - p->next_chunk(1, 0)->groups();
  double now = 0;
  while (left >= 3000) {
    const auto c = p->next_chunk(0, now);
    ASSERT_TRUE(c.has_value());
    left -= c->groups();
    p->chunk_done({*c, now, now + static_cast<double>(c->groups()) / 1000});
    now += static_cast<double>(c->groups()) / 1000;
  }
  const double formula = sigmoid_package(static_cast<double>(total), 2, 1000, 2000, 2, static_cast<double>(left));
  const double t = std::floor(0.9 * static_cast<double>(left) / 50);
  ASSERT_GT(50 * t, formula);
  const auto c = p->next_chunk(0, t);
  ASSERT_TRUE(c.has_value());
  EXPECT_NEAR(static_cast<double>(c->groups()), 50 * t, 1.0);
  // Asked at t = 0 the same device gets the formula's package instead.
  auto q = make_policy("sigmoid", PolicyParams{}, history, profiles);
  q->begin_launch(shape, {0, 1}, 0);
  EXPECT_EQ(q->next_chunk(0, 0)->groups(), static_cast<uint64_t>(std::ceil(25000 * 0.5 * std::tanh(6.0))));
}

TEST(SigmoidPolicy, OccupancyFloor) {
  // A GPU with 10 CUs x 2 groups for full occupancy never gets a package under 20 groups.
  std::vector<DeviceProfile> profiles(2);
  profiles[1].index = 1;
  for (auto& p : profiles) {
    p.is_gpu = true;
    p.compute_units = 10;
    p.groups_per_cu_for_occupancy = 2;
  }
  auto p = make_policy("sigmoid", PolicyParams{}, nullptr, profiles);
  LaunchShape shape;
  shape.kernel_key = "k";
  shape.total_groups = 1000;
  p->begin_launch(shape, {0, 1}, 0);
  uint64_t left = 1000;
  double now = 0;
  while (auto c = p->next_chunk(0, now)) {
    EXPECT_GE(c->groups(), std::min<uint64_t>(left, 20));
    left -= c->groups();
    p->chunk_done({*c, now, now + 0.001});
    now += 0.001;
  }
  EXPECT_EQ(left, 0u);
}

}  // namespace
}  // namespace coex::sched
