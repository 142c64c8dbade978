// The shared arithmetic: equal-finish water-filling, rounding, proportional splits, the affine fit.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "sched/split_math.h"

namespace coex::sched {
namespace {

uint64_t sum(const std::vector<uint64_t>& v) { return std::accumulate(v.begin(), v.end(), uint64_t{0}); }

TEST(EqualFinishSplit, TwoDevicesFinishTogether) {
  // 1000 groups, device 0 at 1 ms/group, device 1 at 4 ms/group: x0 = 4 x1 -> 800 / 200, T = 0.8 s.
  double t = 0;
  const auto x = equal_finish_split({{0.001, 0, 0}, {0.004, 0, 0}}, 1000, &t);
  EXPECT_NEAR(x[0], 800, 1e-9);
  EXPECT_NEAR(x[1], 200, 1e-9);
  EXPECT_NEAR(t, 0.8, 1e-12);
}

TEST(EqualFinishSplit, BusyTimeAndOverheadShiftWork) {
  // Device 0 is busy 0.3 s more: T solves (T-0.3)/0.001 + T/0.001 = 1000 -> T = 0.65.
  double t = 0;
  const auto x = equal_finish_split({{0.001, 0.3, 0}, {0.001, 0, 0}}, 1000, &t);
  EXPECT_NEAR(t, 0.65, 1e-12);
  EXPECT_NEAR(x[0], 350, 1e-9);
  EXPECT_NEAR(x[1], 650, 1e-9);
  // An overhead acts like busy time, but only for a device that gets work.
  const auto y = equal_finish_split({{0.001, 0, 0.3}, {0.001, 0, 0}}, 1000);
  EXPECT_NEAR(y[0], 350, 1e-9);
}

TEST(EqualFinishSplit, DropsDevicesThatWouldGetNegativeShares) {
  // Device 2 is busy for 10 s; 100 groups take the others 0.05 s: it must get nothing.
  double t = 0;
  const auto x = equal_finish_split({{0.001, 0, 0}, {0.001, 0, 0}, {0.001, 10, 0}}, 100, &t);
  EXPECT_NEAR(x[0], 50, 1e-9);
  EXPECT_NEAR(x[1], 50, 1e-9);
  EXPECT_EQ(x[2], 0);
  EXPECT_NEAR(t, 0.05, 1e-12);
}

TEST(EqualFinishSplit, InvalidModelsGetNothing) {
  const auto x = equal_finish_split({{0, 0, 0}, {0.002, 0, 0}}, 10);
  EXPECT_EQ(x[0], 0);
  EXPECT_NEAR(x[1], 10, 1e-12);
}

TEST(RoundSplit, SumsToTotalAndRoundsTowardsEarlierFinish) {
  // Shares 566.67 / 433.33 (lambda 0.3 on device 0): flooring leaves one group; giving it to device 0
  // ends at 0.3 + 0.567 = 0.867 s, to device 1 at 0.868 s: device 0 takes it.
  const std::vector<FinishModel> m{{0.001, 0.3, 0}, {0.002, 0, 0}};
  const auto shares = equal_finish_split(m, 1000);
  const auto g = round_split(m, shares, 1000);
  EXPECT_EQ(g[0], 567u);
  EXPECT_EQ(g[1], 433u);
}

TEST(ProportionalSplit, LargestRemainderAndDeterministic) {
  const auto a = proportional_split({1, 1, 1}, 10);
  EXPECT_EQ(sum(a), 10u);
  EXPECT_EQ(a, (std::vector<uint64_t>{4, 3, 3}));  // ties go to the lower index
  EXPECT_EQ(proportional_split({1, 1, 1}, 10), a);
  EXPECT_EQ(proportional_split({0, 2, 6}, 8), (std::vector<uint64_t>{0, 2, 6}));
  EXPECT_EQ(proportional_split({0, 0}, 8), (std::vector<uint64_t>{0, 0}));
}

TEST(FitAffine, RecoversExactLine) {
  const auto m = fit_affine({{10, 2 + 0.5 * 10}, {20, 2 + 0.5 * 20}, {40, 2 + 0.5 * 40}});
  ASSERT_TRUE(m.valid);
  EXPECT_NEAR(m.a, 2, 1e-9);
  EXPECT_NEAR(m.b, 0.5, 1e-12);
}

TEST(FitAffine, NoisyLineIsLeastSquares) {
  // y = 1 + 2x with residuals +0.1, -0.1, -0.1, +0.1 at x = 1..4: symmetric, so slope 2 is kept
  // and the intercept stays 1.
  const auto m = fit_affine({{1, 3.1}, {2, 4.9}, {3, 6.9}, {4, 9.1}});
  EXPECT_NEAR(m.b, 2.0, 1e-9);
  EXPECT_NEAR(m.a, 1.0, 1e-9);
}

TEST(FitAffine, ConstrainedIncreasingAndNonNegative) {
  // A negative intercept is refitted through the origin: b = sum(xy) / sum(x^2).
  const auto neg = fit_affine({{10, 0.5}, {20, 2.5}});
  EXPECT_EQ(neg.a, 0);
  EXPECT_NEAR(neg.b, (10 * 0.5 + 20 * 2.5) / (100.0 + 400.0), 1e-12);
  // A falling line (noise) becomes the mean time per group.
  const auto fall = fit_affine({{10, 3}, {20, 2}});
  EXPECT_EQ(fall.a, 0);
  EXPECT_NEAR(fall.b, 5.0 / 30.0, 1e-12);
  // One size only: through the origin.
  const auto one = fit_affine({{8, 4}, {8, 6}});
  EXPECT_NEAR(one.b, 10.0 / 16.0, 1e-12);
  EXPECT_FALSE(fit_affine({}).valid);
}

TEST(OverheadBeyondNoise, AnExactLinesInterceptStandsAndAChanceOneDoesNot) {
  // No noise: the intercept itself.
  EXPECT_NEAR(overhead_beyond_noise({{10, 2 + 0.5 * 10}, {20, 2 + 0.5 * 20}, {40, 2 + 0.5 * 40}}), 2, 1e-9);
  // Chunks of 8 to 10 groups at about 1 ms a group, each slowed by up to a half: the least-squares
  // line says 6.3 ms a chunk (above 1% of a 0.25 s launch), within its noise (standard error 6.1 ms).
  const std::vector<std::pair<double, double>> noisy = {{8, 0.0100}, {9, 0.0120}, {10, 0.0105},
                                                        {9, 0.0090}, {8, 0.0110}, {10, 0.0125}};
  ASSERT_GT(fit_affine(noisy).a, 0.006);
  EXPECT_EQ(overhead_beyond_noise(noisy), 0);
  // The same scatter about a line with 30 ms more a chunk: it stands out.
  std::vector<std::pair<double, double>> costly = noisy;
  for (auto& [x, y] : costly) y += 0.030;
  EXPECT_NEAR(overhead_beyond_noise(costly), 0.0363 - 2 * 0.0061, 0.0002);
  // Two chunks measure no noise: no overhead is taken from them.
  EXPECT_EQ(overhead_beyond_noise({{10, 0.030}, {20, 0.040}}), 0);
}

TEST(FitAffineBeyondNoise, TheSlopeGoesThroughTheInterceptThatStands) {
  const auto exact = fit_affine_beyond_noise({{10, 2 + 0.5 * 10}, {20, 2 + 0.5 * 20}, {40, 2 + 0.5 * 40}});
  EXPECT_NEAR(exact.a, 2, 1e-9);
  EXPECT_NEAR(exact.b, 0.5, 1e-12);
  // The noisy chunks of OverheadBeyondNoise: no overhead, and the slope through the origin (1.2 ms a
  // group, where the chance line said 0.5 ms and 6.3 ms a chunk).
  const std::vector<std::pair<double, double>> noisy = {{8, 0.0100}, {9, 0.0120}, {10, 0.0105},
                                                        {9, 0.0090}, {8, 0.0110}, {10, 0.0125}};
  const auto m = fit_affine_beyond_noise(noisy);
  ASSERT_TRUE(m.valid);
  EXPECT_EQ(m.a, 0);
  double sxy = 0, sxx = 0;
  for (const auto& [x, y] : noisy) {
    sxy += x * y;
    sxx += x * x;
  }
  EXPECT_NEAR(m.b, sxy / sxx, 1e-12);
  EXPECT_NEAR(fit_affine(noisy).b, 0.0005, 1e-9);
}

TEST(OccupancyFloor, CpuOneGroupPerComputeUnitGpuFullOccupancy) {
  DeviceProfile cpu;
  cpu.is_cpu = true;
  cpu.compute_units = 16;
  cpu.groups_per_cu_for_occupancy = 4;  // ignored on CPUs
  EXPECT_EQ(occupancy_floor(cpu), 16u);
  DeviceProfile gpu;
  gpu.is_gpu = true;
  gpu.compute_units = 80;
  gpu.groups_per_cu_for_occupancy = 4;
  EXPECT_EQ(occupancy_floor(gpu), 320u);
}

TEST(OccupancyFloor, SplitGroupsOfManyWorkGroupsEachCountForAll) {
  DeviceProfile gpu;
  gpu.is_gpu = true;
  gpu.compute_units = 132;
  gpu.groups_per_cu_for_occupancy = 4;
  // A 2-D launch of 1024 x 1024 work-groups: one split group is a row of 1024 work-groups, more
  // than the 528 the GPU needs to be busy.
  EXPECT_EQ(occupancy_floor(gpu, 1024), 1u);
  EXPECT_EQ(occupancy_floor(gpu, 100), 6u);  // 528 / 100, rounded up
  DeviceProfile cpu;
  cpu.compute_units = 16;
  EXPECT_EQ(occupancy_floor(cpu, 3), 6u);
  EXPECT_EQ(occupancy_floor(cpu, 0), 16u);  // no slice size known: one work-group per split group
}

TEST(WholeRounds, ACpuChunkIsAWholeNumberOfRoundsOfItsComputeUnits) {
  DeviceProfile cpu;
  cpu.compute_units = 4;
  EXPECT_EQ(whole_rounds(5, cpu), 4u);  // the nearest whole round, not two rounds with three units idle
  EXPECT_EQ(whole_rounds(6, cpu), 8u);
  EXPECT_EQ(whole_rounds(3, cpu), 3u);  // less than a round: one round anyway, left as asked
  EXPECT_EQ(whole_rounds(12, cpu), 12u);
  EXPECT_EQ(whole_rounds(0, cpu), 0u);
  EXPECT_EQ(whole_rounds(UINT64_MAX, cpu), UINT64_MAX / 4 * 4);  // no wrap-around
  // Split groups of two work-groups each: two of them make a round of four.
  EXPECT_EQ(whole_rounds(3, cpu, 2), 4u);
  EXPECT_EQ(whole_rounds(1, cpu, 2), 1u);
  EXPECT_EQ(whole_rounds(5, cpu, 4), 5u);  // every split group is a whole round already
  DeviceProfile single;
  single.compute_units = 1;
  EXPECT_EQ(whole_rounds(5, single), 5u);
  DeviceProfile gpu;
  gpu.is_gpu = true;
  gpu.compute_units = 132;
  EXPECT_EQ(whole_rounds(5, gpu), 5u);
}

// A remote device (PoCL's remote driver) counts for kRemoteSpecShare of its specification, whether
// the kernel is judged by compute or by memory bandwidth: its first chunks are kept smaller.
TEST(SpecWeight, RemoteDeviceCountsForLess) {
  DeviceProfile local;
  local.is_cpu = true;
  local.compute_units = 8;
  local.clock_mhz = 3000;
  local.mem_bandwidth_gbs = 100;
  DeviceProfile remote = local;
  remote.remote = true;
  EXPECT_DOUBLE_EQ(spec_weight(remote, false), spec_weight(local, false) * kRemoteSpecShare);
  EXPECT_DOUBLE_EQ(spec_weight(remote, true), spec_weight(local, true) * kRemoteSpecShare);
  EXPECT_LT(kRemoteSpecShare, 1.0);
}

TEST(MinSplitItems, CpuHomeAsConfiguredGpuHomeForEveryCoreItCountsFor) {
  DeviceProfile cpu;
  cpu.is_cpu = true;
  cpu.compute_units = 16;
  EXPECT_EQ(min_split_items_on(cpu, 4096), 4096u);
  DeviceProfile h100;
  h100.is_gpu = true;
  h100.compute_units = 132;
  // 132 multiprocessors x 8 CPU cores each: benchmarks/lu's 2048 x 2048 update (4,194,304 items) is timed first.
  EXPECT_EQ(min_split_items_on(h100, 4096), 4325376u);
  EXPECT_GT(min_split_items_on(h100, 4096), uint64_t{2048} * 2048);
  EXPECT_EQ(min_split_items_on(h100, 0), 0u);  // 0 still splits every launch
  EXPECT_EQ(min_split_items_on(h100, uint64_t{1} << 62), uint64_t{9000000000000000000u});  // no overflow
}

TEST(OthersTransferSeconds, TheirShareOfTheBytesAtTheNominalRateTheSlowestLast) {
  DeviceProfile gpu;
  gpu.is_gpu = true;
  gpu.compute_units = 132;
  gpu.clock_mhz = 1980;
  std::vector<DeviceProfile> profiles(2, gpu);
  profiles[1].index = 1;
  const uint64_t bytes = uint64_t{2} << 30;  // saxpy's x and y
  // Two equal GPUs: the other receives half, 1 GiB at 8 GB/s.
  EXPECT_NEAR(others_transfer_seconds(profiles, 0, {0, 1}, bytes), (1u << 30) / (kNominalTransferGBs * 1e9), 1e-12);
  profiles[1].h2d_gbs = 16;  // measured: twice as fast
  EXPECT_NEAR(others_transfer_seconds(profiles, 0, {0, 1}, bytes), (1u << 30) / 16e9, 1e-12);
  EXPECT_EQ(others_transfer_seconds(profiles, 0, {0}, bytes), 0.0);  // home alone moves nothing
  EXPECT_EQ(others_transfer_seconds(profiles, 0, {}, bytes), 0.0);
}

TEST(OthersTransferSeconds, ACpuDeviceReceivesIntoFreshMemoryAtItsSpeedWhereThatIsSlower) {
  DeviceProfile cpu;
  cpu.is_cpu = true;
  cpu.compute_units = 1;
  std::vector<DeviceProfile> profiles(3, cpu);
  profiles[1].index = 1;
  profiles[2].index = 2;
  const uint64_t bytes = uint64_t{3} << 27;  // 384 MiB: a third each, 128 MiB
  const double third = double(uint64_t{1} << 27);
  // Into new memory the host copy's fill of the others' two thirds comes first, on one thread.
  const double host_copy = 2 * third / 0.74e9;
  // saxpy's first split over PoCL devices on the 2-core machine: new pages at 0.74 GB/s.
  EXPECT_NEAR(others_transfer_seconds(profiles, 0, {0, 1, 2}, bytes, 0.74), host_copy + third / 0.74e9, 1e-12);
  // Fresh memory faster than the nominal rate: the devices' nominal rate stays.
  EXPECT_NEAR(others_transfer_seconds(profiles, 0, {0, 1, 2}, bytes, 100),
              2 * third / 100e9 + third / (kNominalTransferGBs * 1e9), 1e-12);
  // Not given: the nominal rate, and no host copy to fill.
  EXPECT_NEAR(others_transfer_seconds(profiles, 0, {0, 1, 2}, bytes), third / (kNominalTransferGBs * 1e9), 1e-12);
  // A GPU's buffers are its own memory, a remote device's its server's: neither takes the speed; the
  // host copy on the way to them is new memory all the same.
  profiles[1].is_cpu = false;
  profiles[1].is_gpu = true;
  profiles[2].remote = true;
  const double all = spec_weight_of(profiles, 0) + spec_weight_of(profiles, 1) + spec_weight_of(profiles, 2);
  const double others_copy = double(bytes) * (all - spec_weight_of(profiles, 0)) / all / 0.74e9;
  EXPECT_NEAR(others_transfer_seconds(profiles, 0, {0, 1, 2}, bytes, 0.74),
              others_copy + others_transfer_seconds(profiles, 0, {0, 1, 2}, bytes), 1e-12);
  EXPECT_GT(others_transfer_seconds(profiles, 0, {0, 1, 2}, bytes), 0.0);
}

TEST(OthersTransferSeconds, TheHostCopyOfAllTheOthersBytesComesFirstAndAddsUpWhereTheDevicesReceiveAtOnce) {
  // benchmarks/saxpy's x and y (128 MiB) over eight single-threaded PoCL devices of the device machine,
  // new memory at 1.6 GB/s: each device receives its 16 MiB at once (about 10 ms), after home's thread
  // filled the host copy with the seven others' 112 MiB (about 73 ms). By the largest receipt alone, a
  // launch of 18 ms on home was long enough to split: two splits cost that program 0.3 s.
  DeviceProfile cpu;
  cpu.is_cpu = true;
  cpu.compute_units = 1;
  std::vector<DeviceProfile> profiles(8, cpu);
  std::vector<int> all;
  for (int d = 0; d < 8; ++d) {
    profiles[size_t(d)].index = d;
    all.push_back(d);
  }
  const uint64_t bytes = uint64_t{128} << 20;
  const double eighth = double(bytes) / 8;
  EXPECT_NEAR(others_transfer_seconds(profiles, 0, all, bytes, 1.6), 7 * eighth / 1.6e9 + eighth / 1.6e9, 1e-12);
  EXPECT_GT(others_transfer_seconds(profiles, 0, all, bytes, 1.6), 0.018);
  // Two devices: one share each way, the host copy and the receipt of the same half.
  EXPECT_NEAR(others_transfer_seconds(profiles, 0, {0, 1}, bytes, 1.6), 2 * (double(bytes) / 2) / 1.6e9, 1e-12);
}

TEST(CoefficientOfVariation, PopulationSigmaOverMean) {
  EXPECT_NEAR(coefficient_of_variation({1, 2, 3}), std::sqrt(2.0 / 3.0) / 2.0, 1e-12);
  EXPECT_EQ(coefficient_of_variation({5}), 0);
}

}  // namespace
}  // namespace coex::sched
