// plbhec (Sant'Ana et al. CLUSTER'15): the profiling blocks, the fit, the equal-time split,
// re-profiling when finish times drift apart.
#include <gtest/gtest.h>

#include <cmath>

#include "sched/plbhec_policy.h"
#include "sched/simulator.h"

namespace coex::sched {
namespace {

TEST(PlbhecSplit, EqualPredictedFinishWithIntercepts) {
  // T_0(x) = 0.5 + 0.001 x, T_1(x) = 0.1 + 0.004 x, 2000 groups:
  //   (T - 0.5) / 0.001 + (T - 0.1) / 0.004 = 2000 -> 1250 T = 2525 -> T = 2.02
  //   x_0 = 1520, x_1 = 480.
  AffineModel a{0.5, 0.001, true}, b{0.1, 0.004, true};
  const auto split = plbhec_split({a, b}, {0, 0}, 2000);
  EXPECT_EQ(split, (std::vector<uint64_t>{1520, 480}));
  EXPECT_NEAR(a.time(1520), b.time(480), 1e-9);
  // With 1 s still committed on device 0 it takes less: (T - 1.5)/0.001 + (T - 0.1)/0.004 = 2000.
  const auto busy = plbhec_split({a, b}, {1.0, 0}, 2000);
  const double t = (2000 + 1500 + 25) / 1250.0;
  EXPECT_NEAR(static_cast<double>(busy[0]), (t - 1.5) / 0.001, 1.0);
}

Scenario two_devices() {
  Scenario s;
  s.take_over = false;  // the policy on its own, as in its paper (no take-over by the executor's rules)
  s.name = "plbhec";
  s.devices.resize(2);
  for (int i = 0; i < 2; ++i) {
    s.devices[i].profile.index = i;
    s.devices[i].profile.name = "d" + std::to_string(i);
    s.devices[i].profile.compute_units = 4;  // equal device info: round 0 blocks are equal
  }
  s.devices[0].speed = 4000;
  s.devices[0].latency = 0.002;
  s.devices[1].speed = 1000;
  s.devices[1].latency = 0.0005;
  s.kernel.groups = 100000;
  return s;
}

TEST(PlbhecPolicy, ProfilingBlocksDoubleAndFollowRelativeSpeed) {
  const auto r = simulate_policy(two_devices(), "plbhec");
  ASSERT_TRUE(r[0].error.empty()) << r[0].error;
  std::vector<std::vector<uint64_t>> sizes(2);
  for (const auto& c : r[0].trace) sizes[c.chunk.device].push_back(c.chunk.groups());
  // b0 = 1% of 100000. Round 0: equal device info -> 1000 each. Later rounds: the fastest device's
  // block doubles; the other's is scaled by the speeds measured so far (both measured after round 0).
  EXPECT_EQ(sizes[0][0], 1000u);
  EXPECT_EQ(sizes[1][0], 1000u);
  EXPECT_EQ(sizes[0][1], 2000u);
  EXPECT_EQ(sizes[0][2], 4000u);
  EXPECT_LT(sizes[1][1], sizes[0][1]);
  // Profiling rounds then one model-split chunk per device.
  EXPECT_EQ(sizes[0].size(), 4u);
  EXPECT_EQ(sizes[1].size(), 4u);
  EXPECT_GT(r[0].efficiency, 0.98);
  EXPECT_GT(r[0].load_balance, 0.99);
}

TEST(PlbhecPolicy, FitRecoversTheModelledDevice) {
  // The simulated device: time = latency + groups / speed. After a launch the History's samples fit
  // a = latency, b = 1 / speed.
  auto history = std::make_shared<History>();
  simulate_policy(two_devices(), "plbhec", history);
  std::vector<std::pair<double, double>> points;
  for (const auto& s : history->samples("kernel", 100000 * 256, 0)) points.emplace_back(s.groups, s.seconds);
  const auto m = fit_affine(points);
  EXPECT_NEAR(m.a, 0.002, 1e-9);
  EXPECT_NEAR(m.b, 1.0 / 4000, 1e-12);
}

TEST(PlbhecPolicy, ReusesModelsThenReprofilesAfterDrift) {
  auto s = two_devices();
  s.launches = 4;
  s.devices[1].changes.push_back({2, 0.0, 1.0 / 3});  // 3x slower from launch 2 on
  const auto r = simulate_policy(s, "plbhec");
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].chunks, 8u);  // profiling
  EXPECT_EQ(r[1].chunks, 2u);  // models from the history: one chunk each
  EXPECT_EQ(r[2].chunks, 2u);  // stale models: finish times drift apart ...
  EXPECT_LT(r[2].load_balance, 0.5);
  EXPECT_EQ(r[3].chunks, 8u);  // ... so launch 3 profiles again
  EXPECT_GT(r[3].load_balance, 0.95);
}

}  // namespace
}  // namespace coex::sched
