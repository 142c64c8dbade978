// predict (Dollinger & Loechner IMPACT'15): the iterative split, elimination, the transfer model.
#include <gtest/gtest.h>

#include "sched/predict_policy.h"
#include "sched/simulator.h"

namespace coex::sched {
namespace {

PredictModel model(double a, double b, double transfer = 0) {
  PredictModel m;
  m.compute = {a, b, true};
  m.transfer_per_group = transfer;
  return m;
}

TEST(PredictSplit, RefinesToEqualPredictedTimes) {
  // T_0 = 0.2 + 0.001 x, T_1 = 0.05 + (0.002 + 0.001) x over 4000 groups:
  //   (T - 0.2) / 0.001 + (T - 0.05) / 0.003 = 4000 -> T = 4216.67 / 1333.33 = 3.1625
  //   x_0 = 2962.5, x_1 = 1037.5.
  const auto s = predict_split({model(0.2, 0.001), model(0.05, 0.002, 0.001)}, {0, 0}, 4000, 15, 0.1, 0.001);
  EXPECT_NEAR(static_cast<double>(s.groups[0]), 2962.5, 1.0);
  EXPECT_NEAR(static_cast<double>(s.groups[1]), 1037.5, 1.0);
  EXPECT_EQ(s.groups[0] + s.groups[1], 4000u);
  EXPECT_LE(s.steps, 3);  // affine models: Newton lands in one step, the next confirms
  EXPECT_FALSE(s.eliminated[0] || s.eliminated[1]);
}

TEST(PredictSplit, EliminatesDeviceHundredTimesSlower) {
  const auto s = predict_split({model(0, 0.001), model(0, 0.1)}, {}, 10000, 15, 0.1, 0.01);
  EXPECT_TRUE(s.eliminated[1]);
  EXPECT_EQ(s.groups[1], 0u);
  EXPECT_EQ(s.groups[0], 10000u);
}

TEST(PredictSplit, EliminationThresholdIsTenPercentOfTheLargestShare) {
  // Throughputs 1 : 0.12 -> the second share is 12% of the first: kept. 1 : 0.08 -> 8%: eliminated.
  const auto kept = predict_split({model(0, 1.0), model(0, 1 / 0.12)}, {}, 10000, 15, 0.1, 0.01);
  EXPECT_FALSE(kept.eliminated[1]);
  EXPECT_NEAR(static_cast<double>(kept.groups[1]) / kept.groups[0], 0.12, 0.001);
  const auto dropped = predict_split({model(0, 1.0), model(0, 1 / 0.08)}, {}, 10000, 15, 0.1, 0.01);
  EXPECT_TRUE(dropped.eliminated[1]);
  // Three devices: the elimination of one leaves the split of the others equal-time.
  const auto three = predict_split({model(0, 1.0), model(0, 2.0), model(0, 50.0)}, {}, 3000, 15, 0.1, 0.01);
  EXPECT_EQ(three.groups, (std::vector<uint64_t>{2000, 1000, 0}));
}

TEST(PredictSplit, AtMostMaxSteps) {
  const auto s =
      predict_split({model(0.3, 0.001), model(0.0, 0.0017), model(0.1, 0.0031)}, {0.2, 0, 0}, 100000, 2, 0.0, 1e-12);
  EXPECT_LE(s.steps, 2);
  EXPECT_EQ(s.groups[0] + s.groups[1] + s.groups[2], 100000u);
}

TEST(PredictModel, TransferFromBandwidthWhenTheTimingsSeparateIt) {
  DeviceProfile gpu;
  gpu.h2d_gbs = 10;
  gpu.d2h_gbs = 5;
  LaunchShape shape;
  shape.bytes_in_per_group = 1e6;
  shape.bytes_out_per_group = 1e6;
  // Compute 1 ms + 0.01 ms/group; transfer measured alongside.
  std::vector<ChunkSample> samples;
  for (double g : {100.0, 200.0, 400.0}) samples.push_back({g, 0.001 + 1e-5 * g + g * 3e-4, g * 3e-4});
  const auto m = predict_model(samples, gpu, shape);
  EXPECT_NEAR(m.compute.a, 0.001, 1e-9);
  EXPECT_NEAR(m.compute.b, 1e-5, 1e-12);
  EXPECT_NEAR(m.transfer_per_group, 1e6 / 10e9 + 1e6 / 5e9, 1e-15);
  // Timings without a transfer part: the fit covers the whole time, no extra term.
  for (auto& s : samples) s.transfer_seconds = 0;
  const auto whole = predict_model(samples, gpu, shape);
  EXPECT_EQ(whole.transfer_per_group, 0);
  EXPECT_NEAR(whole.compute.b, 1e-5 + 3e-4, 1e-12);
}

TEST(PredictPolicy, CalibratesThenSplitsStaticallyAndEliminatesTheSlowDevice) {
  Scenario s;
  s.take_over = false;  // the policy on its own, as in its paper (no take-over by the executor's rules)
  s.name = "predict";
  s.devices.resize(3);
  for (int i = 0; i < 3; ++i) {
    s.devices[i].profile.index = i;
    s.devices[i].profile.name = "d" + std::to_string(i);
    s.devices[i].latency = 1e-4;
  }
  s.devices[0].speed = 10000;
  s.devices[1].speed = 5000;
  s.devices[2].speed = 100;  // 100x slower than the first
  s.kernel.groups = 200000;
  s.launches = 3;
  const auto r = simulate_policy(s, "predict");
  ASSERT_EQ(r.size(), 3u);
  for (const auto& l : r) ASSERT_TRUE(l.error.empty()) << l.error;
  // Calibration: probes of c = ceil(0.1 * 200000 / (7 * 3)) = 953 groups, doubling. The slow device
  // needs 9.5 s for its first; the others go on probing until then. When it asks again every device
  // has a model: the split eliminates it, so it ran that one probe only.
  EXPECT_GT(r[0].chunks, 3u);
  EXPECT_EQ(r[0].groups_per_device[2], 953u);
  EXPECT_EQ(r[0].eliminated, std::vector<int>{2});
  for (int l = 1; l < 3; ++l) {
    EXPECT_EQ(r[l].chunks, 2u);  // from the history: one chunk per paying device
    EXPECT_EQ(r[l].groups_per_device[2], 0u);
    EXPECT_EQ(r[l].eliminated, std::vector<int>{2});
    EXPECT_GT(r[l].load_balance, 0.999);
  }
}

}  // namespace
}  // namespace coex::sched
