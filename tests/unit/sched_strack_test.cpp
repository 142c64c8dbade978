// jitp / wp / ess (Strack 2020): the update, its fixed point, the oscillation of jitp on a kernel
// whose cost grows linearly, the guards.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "launch_shapes.h"
#include "sched/history.h"
#include "sched/policy_factory.h"
#include "sched/simulator.h"
#include "sched/strack_policy.h"

namespace coex::sched {
namespace {

// Host (device 0) takes [0, p) of a range whose cost density is 2u (mean 1); the GPU the rest.
// host time p^2 / s_h, GPU time (1 - p^2) / s_g; groups p and 1 - p (as fractions).
DeviceMap<StrackMeasure> linear_measure(double p, double host_speed, double gpu_speed) {
  return {{0, {p, p * p / host_speed}}, {1, {1 - p, (1 - p * p) / gpu_speed}}};
}

double step(double p, double omega, double rho) {
  return strack_update({{0, p}, {1, 1 - p}}, linear_measure(p, rho, 1.0), omega).at(0);
}

TEST(StrackUpdate, FormulaOnOneStep) {
  // Throughputs 100/1 and 300/2 groups/s: ratio 100 / (100 + 150) = 0.4; wp with omega 0.5 from 0.5.
  const DeviceShares used{{0, 0.5}, {1, 0.5}};
  const DeviceMap<StrackMeasure> m{{0, {100, 1}}, {1, {300, 2}}};
  EXPECT_NEAR(strack_update(used, m, 0.0).at(0), 0.4, 1e-12);
  EXPECT_NEAR(strack_update(used, m, 0.5).at(0), 0.45, 1e-12);
  EXPECT_NEAR(strack_update(used, m, 0.5).at(1), 0.55, 1e-12);
}

TEST(StrackUpdate, UniformCostFixedPointIsTheSpeedRatio) {
  // Uniform cost: measured ratio = s_i / sum s whatever p is: jitp lands there in one launch,
  // wp halves the distance every launch.
  auto measure = [](double p) { return DeviceMap<StrackMeasure>{{0, {p, p / 1.0}}, {1, {1 - p, (1 - p) / 3.0}}}; };
  double jitp = 0.5, wp = 0.5;
  jitp = strack_update({{0, jitp}, {1, 1 - jitp}}, measure(jitp), 0).at(0);
  EXPECT_NEAR(jitp, 0.25, 1e-12);
  for (int k = 1; k <= 6; ++k) {
    wp = strack_update({{0, wp}, {1, 1 - wp}}, measure(wp), 0.5).at(0);
    EXPECT_NEAR(wp - 0.25, 0.25 / std::pow(2.0, k), 1e-12);
  }
}

TEST(StrackUpdate, LinearCostJitpOscillatesWpConverges) {
  // The fixed point balances p^2 / s_h = (1 - p^2) / s_g: p* = sqrt(rho / (1 + rho)), rho = s_h / s_g.
  // rho = 0.0146 gives p* = 0.12 (the host share of the seed finding). JITP's map has slope
  // -1 / ((1 + rho)(1 + p*)^2) = -0.786 there: it overshoots every launch and needs ~20 launches to
  // settle within 1%; WP(0.5)'s slope is 0.5 + 0.5 * (-0.786) = 0.107: ~5 launches.
  const double rho = 0.0144 / (1 - 0.0144);
  const double fixed = std::sqrt(rho / (1 + rho));
  ASSERT_NEAR(fixed, 0.12, 1e-12);
  EXPECT_NEAR(step(fixed, 0, rho), fixed, 1e-12);  // a fixed point of both
  EXPECT_NEAR(step(fixed, 0.5, rho), fixed, 1e-12);
  const double slope = -1 / ((1 + rho) * (1 + fixed) * (1 + fixed));
  const double h = 1e-6;
  EXPECT_NEAR((step(fixed + h, 0, rho) - step(fixed - h, 0, rho)) / (2 * h), slope, 1e-4);

  auto launches_to_settle = [&](double omega, bool* alternates) {
    double p = 0.5;
    *alternates = true;
    double last_sign = 0;
    for (int launch = 1; launch <= 100; ++launch) {
      p = step(p, omega, rho);
      const double sign = p > fixed ? 1 : -1;
      if (launch > 1 && sign == last_sign) *alternates = false;
      last_sign = sign;
      if (std::fabs(p - fixed) < 0.01 * fixed) return launch;
    }
    return 1000;
  };
  bool jitp_alternates = false, wp_alternates = false;
  const int jitp = launches_to_settle(0.0, &jitp_alternates);
  const int wp = launches_to_settle(0.5, &wp_alternates);
  EXPECT_TRUE(jitp_alternates);
  EXPECT_GE(jitp, 15);
  EXPECT_LE(jitp, 25);
  EXPECT_LE(wp, 6);
}

TEST(StrackUpdate, ZeroTimeChangesNothing) {
  const DeviceShares used{{0, 0.3}, {1, 0.7}};
  EXPECT_EQ(strack_update(used, {{0, {30, 0}}, {1, {70, 1}}}, 0), used);
  // A device that ran nothing keeps its share; the others share the rest.
  const auto next = strack_update({{0, 0.0}, {1, 0.5}, {2, 0.5}}, {{1, {50, 1}}, {2, {50, 3}}}, 0);
  EXPECT_EQ(next.at(0), 0);
  EXPECT_NEAR(next.at(1), 0.75, 1e-12);
}

Scenario two_devices(double slow_speed, int launches) {
  Scenario s;
  s.take_over = false;  // the policy on its own, as in its paper (no take-over by the executor's rules)
  s.name = "strack";
  s.devices.resize(2);
  for (int i = 0; i < 2; ++i) {
    s.devices[i].profile.index = i;
    s.devices[i].profile.name = "d" + std::to_string(i);
  }
  s.devices[0].speed = 10000;
  s.devices[1].speed = slow_speed;
  s.kernel.groups = 1000;
  s.launches = launches;
  return s;
}

TEST(StrackPolicy, DeviceAtZeroIsProbedAgain) {
  // Device 1 is 10^5 times slower: after one launch its share rounds to no group. Every
  // probe_interval (10) launches it gets probe_share (2%) again.
  const auto r = simulate_policy(two_devices(0.1, 21), "jitp");
  ASSERT_EQ(r.size(), 21u);
  EXPECT_EQ(r[0].groups_per_device[1], 500u);
  for (int l : {1, 2, 5, 9, 11, 19}) EXPECT_EQ(r[l].groups_per_device[1], 0u) << "launch " << l;
  EXPECT_EQ(r[10].groups_per_device[1], 20u);
  EXPECT_EQ(r[20].groups_per_device[1], 20u);
}

TEST(StrackPolicy, EssFreezesAfterItsLaunches) {
  auto s = two_devices(5000, 16);
  s.devices[0].noise = 0.3;
  s.devices[1].noise = 0.3;
  PolicyParams params;
  s.params = params;
  const auto r = simulate_policy(s, "ess");
  for (int l = params.ess_launches + 1; l < 16; ++l)
    EXPECT_EQ(r[l].groups_per_device, r[params.ess_launches].groups_per_device) << "launch " << l;
  // Before freezing, the noise moves the shares.
  bool moved = false;
  for (int l = 2; l < params.ess_launches; ++l) moved = moved || r[l].groups_per_device != r[l - 1].groups_per_device;
  EXPECT_TRUE(moved);
}

TEST(StrackPolicy, SharesCarryAcrossRunsThroughTheHistory) {
  auto s = two_devices(5000, 8);
  s.runs = 2;
  const auto r = simulate_policy(s, "wp");
  ASSERT_EQ(r.size(), 16u);
  // The first launch of run 0 splits equally; the first of run 1 starts where run 0 ended.
  EXPECT_EQ(r[0].groups_per_device[0], 500u);
  EXPECT_EQ(r[8].run, 1);
  EXPECT_NEAR(static_cast<double>(r[8].groups_per_device[0]), 667, 2);
  EXPECT_GT(r[8].efficiency, 0.99);
}

// Throughputs measured in other launches (device 1 ten times slower there) set wp's first shares,
// except between devices of one kind (LaunchShape::device_kinds, as auto sets them): equal shares.
TEST(StrackPolicy, DevicesOfOneKindStartFromEqualShares) {
  for (bool one_kind : {false, true}) {
    auto history = std::make_shared<History>();
    for (int d : {0, 1}) {
      ChunkTiming t;
      t.chunk = {d, 0, 100};
      t.end = d == 0 ? 0.01 : 0.1;
      history->record_chunk("k", 1000, t);
    }
    auto policy = make_policy("wp", PolicyParams{}, history, {});
    LaunchShape shape;
    shape.kernel_key = "k";
    shape.global_size = 1000;
    shape.total_groups = 1100;
    if (one_kind) shape.device_kinds = {0, 0};
    policy->begin_launch(shape, {0, 1}, 0);
    const auto first = policy->next_chunk(0, 0);
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(first->groups(), one_kind ? 550u : 1000u) << one_kind;
  }
}

// Two devices run a first wp launch of `groups` groups (of one kind or not), each chunk timed by
// `timing`; returns the groups device 0's first chunk gets at the next launch.
uint64_t home_groups_after_one_launch(bool one_kind, uint64_t groups,
                                      const std::function<ChunkTiming(int, const Chunk&)>& timing) {
  auto history = std::make_shared<History>();
  LaunchShape shape = launch_of_k(groups);
  if (one_kind) shape.device_kinds = {0, 0};
  auto first = make_policy("wp", PolicyParams{}, history, {});
  first->begin_launch(shape, {0, 1}, 0);
  for (int d : {0, 1})
    while (auto c = first->next_chunk(d, 0)) first->chunk_done(timing(d, *c));
  first->end_launch(0.02);
  auto second = make_policy("wp", PolicyParams{}, history, {});
  second->begin_launch(shape, {0, 1}, 0);
  const auto chunk = second->next_chunk(0, 0);
  EXPECT_TRUE(chunk.has_value());
  return chunk ? chunk->groups() : 0;
}

// Devices of one kind: the next launch's shares come from their chunks' time less its moves of data.
// Device 1 spent half of its chunk's time fetching rows it did not hold: equal shares stay equal.
TEST(StrackPolicy, DevicesOfOneKindMoveTheirSharesByTheirTimeLessItsMoves) {
  for (bool one_kind : {false, true}) {
    const uint64_t groups = home_groups_after_one_launch(one_kind, 1000, [](int d, const Chunk& c) {
      ChunkTiming timing{c, 0, d == 0 ? 0.01 : 0.02};
      timing.transfer_seconds = d == 0 ? 0 : 0.01;
      return timing;
    });
    // Without kinds: device 0 measured twice as fast, wp (omega 0.5) moves half way to 2/3.
    EXPECT_EQ(groups, one_kind ? 500u : 583u) << one_kind;
  }
}

// Devices of one kind keep their shares through a launch's noise: a device measured 8% slower moves
// no rows (without kinds wp moves them); one measured twice as slow gives up groups.
TEST(StrackPolicy, DevicesOfOneKindMoveTheirSharesOnlyForAGainBeyondNoise) {
  for (bool one_kind : {false, true})
    for (double slower : {1.08, 2.0}) {
      const uint64_t groups = home_groups_after_one_launch(one_kind, 64, [slower](int d, const Chunk& c) {
        return ChunkTiming{c, 0, d == 0 ? 0.01 : 0.01 * slower};
      });
      if (slower < 1.1)
        EXPECT_EQ(groups == 32u, one_kind) << one_kind << " " << groups;
      else
        EXPECT_GT(groups, 32u) << one_kind;
    }
}

// One wp launch of `shape` over `devices` (indices 0 to n - 1), each chunk taking `seconds_per_group(d)`
// a group on device d, ended at `end`; returns the groups each device ran.
std::vector<uint64_t> run_wp_launch(const std::shared_ptr<History>& history, const LaunchShape& shape,
                                    const std::vector<int>& devices,
                                    const std::function<double(int)>& seconds_per_group, double end) {
  auto policy = make_policy("wp", PolicyParams{}, history, {});
  policy->begin_launch(shape, devices, 0);
  std::vector<uint64_t> groups(devices.size(), 0);
  for (int d : devices)
    while (auto c = policy->next_chunk(d, 0)) {
      groups[size_t(d)] += c->groups();
      policy->chunk_done(ChunkTiming{*c, 0, seconds_per_group(d) * static_cast<double>(c->groups())});
    }
  policy->end_launch(end);  // the History records the chunks
  return groups;
}

// A lasting difference below the gain of one launch's update builds up in wp's running shares until
// the layout moves: device 1 20% slower at every launch (its first update alone gains 4.5%).
TEST(StrackPolicy, DevicesOfOneKindFollowALastingDifference) {
  auto history = std::make_shared<History>();
  LaunchShape shape = launch_of_k(1024);
  shape.device_kinds = {0, 0};
  std::vector<uint64_t> home_groups;
  for (int launch = 0; launch < 5; ++launch) {
    auto policy = make_policy("wp", PolicyParams{}, history, {});
    policy->begin_launch(shape, {0, 1}, 0);
    for (int d : {0, 1})
      while (auto c = policy->next_chunk(d, 0)) {
        if (d == 0) home_groups.push_back(c->groups());
        policy->chunk_done(ChunkTiming{*c, 0, 1e-5 * static_cast<double>(c->groups()) * (d == 0 ? 1.0 : 1.2)});
      }
    policy->end_launch(0.01);
  }
  ASSERT_EQ(home_groups.size(), 5u);
  EXPECT_EQ(home_groups[1], 512u) << "one launch's update: 4.5%, kept";
  EXPECT_GT(home_groups[4], 540u) << "toward 1024 x 1.2 / 2.2 = 559";
}

// Eight devices of one kind run `launches` wp launches of 64 groups; device d's pace at launch n is
// base(d) x (1 + noise(n, d)). Returns, per launch, the groups of each device.
std::vector<std::vector<uint64_t>> one_kind_layouts(int launches, const std::function<double(int)>& base,
                                                    const std::function<double(int, int)>& noise) {
  auto history = std::make_shared<History>();
  LaunchShape shape = launch_of_k(64);
  shape.device_kinds.assign(8, 0);
  const std::vector<int> devices{0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<std::vector<uint64_t>> layouts;
  for (int launch = 0; launch < launches; ++launch)
    layouts.push_back(run_wp_launch(
        history, shape, devices, [&](int d) { return 1e-4 * base(d) * (1 + noise(launch, d)); }, 0.01));
  return layouts;
}

// Up to 40% slower at random, each launch and device on its own (the device machine's
// single-threaded PoCL devices sharing cores): a pace drawn again at every launch.
double launch_noise(int launch, int device) {
  uint64_t h = uint64_t(launch) * 1000003u + uint64_t(device) * 7919u + 17;
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  return 0.4 * static_cast<double>(h % 1000) / 1000.0;
}

// Devices of one kind whose paces change from launch to launch by noise alone keep their layout: each
// move evaluates footprints again and moves rows (docs/schedulers.md, "`jitp`, `wp`, `ess`").
TEST(StrackPolicy, DevicesOfOneKindKeepTheirLayoutThroughEachLaunchsNoise) {
  const auto layouts = one_kind_layouts(
      100, [](int) { return 1.0; }, launch_noise);
  int moves = 0;
  for (size_t n = 11; n < layouts.size(); ++n) moves += layouts[n] != layouts[n - 1];
  EXPECT_LE(moves, 5) << "of 89 launches";
}

// Two devices 1.7x as fast as the others at every launch, under the same noise: a lasting
// difference, which the layout follows.
TEST(StrackPolicy, DevicesOfOneKindFollowALastingDifferenceThroughNoise) {
  const auto layouts = one_kind_layouts(
      40, [](int d) { return d < 2 ? 1 / 1.7 : 1.0; }, launch_noise);
  const auto& last = layouts.back();
  EXPECT_GE(last[0], 11u);
  EXPECT_GE(last[1], 11u);
  for (size_t d = 2; d < 8; ++d) EXPECT_LE(last[d], 8u) << d;
}

// A device that turns twice as slow for good after twenty launches, under the same noise: by then each
// device has its 16 chunks, and the layout follows once the median paces say so too (in two moves, the
// second once the first was judged: layout_may_move).
TEST(StrackPolicy, DevicesOfOneKindFollowAChangeOnceTheirMedianPacesDo) {
  const auto layouts = one_kind_layouts(
      40, [](int) { return 1.0; },
      [](int launch, int d) { return (d == 3 && launch >= 20 ? 1.0 : 0.0) + launch_noise(launch, d); });
  EXPECT_EQ(layouts[19][3], 8u) << "even shares before the change";
  EXPECT_LE(layouts[33][3], 5u) << "within 13 launches of it";
  for (size_t d = 0; d < 8; ++d) {
    if (d == 3) continue;
    EXPECT_GE(layouts[39][d], 8u) << d;
  }
}

// A probe gives a device of one kind left at no group a small share for one launch: where that launch
// does not move the layout, the device is left out again after it.
TEST(StrackPolicy, AProbesShareIsForItsLaunchOnly) {
  auto history = std::make_shared<History>();
  history->set_shares("k", 1000, {{0, 0.97}, {1, 0.03}});
  history->set_layout_shares("k", 1000, {{0, 1.0}, {1, 0.0}});
  for (int i = 0; i < 10; ++i) history->note_launch("k", 1000);  // the next launch is a probe's (10)
  LaunchShape shape = launch_of_k(1000);
  shape.device_kinds = {0, 0};
  // Device 1 runs a group 50 times as long as device 0: what the probe measures moves nothing.
  std::vector<uint64_t> device1_groups;
  for (int launch = 0; launch < 2; ++launch)
    device1_groups.push_back(run_wp_launch(
        history, shape, {0, 1}, [](int d) { return 1e-5 * (d == 0 ? 1 : 50); }, 0.02)[1]);
  EXPECT_EQ(device1_groups[0], 20u) << "the probe's 2%";
  EXPECT_EQ(device1_groups[1], 0u);
}

TEST(MedianPacedShares, AreByEachDevicesMedianPaceLessItsMoves) {
  History history;
  auto chunk = [&](int device, uint64_t groups, double seconds, double moving) {
    ChunkTiming t{{device, 0, groups}, 0, seconds};
    t.transfer_seconds = moving;
    history.record_chunk("k", 100, t);
  };
  // Device 0: 1 ms a group, three slow chunks of 50 ms a group among them; device 1: 2 ms a group
  // once its moves are left out.
  for (int i = 0; i < 8; ++i) chunk(0, 10, i % 3 == 1 ? 0.500 : 0.010, 0);
  for (int i = 0; i < 7; ++i) chunk(1, 10, 0.030, 0.010);
  EXPECT_TRUE(median_paced_shares(history, "k", 100, {0, 1}).empty()) << "7 chunks of device 1: too few";
  chunk(1, 10, 0.030, 0.010);
  const auto shares = median_paced_shares(history, "k", 100, {0, 1});
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_NEAR(shares.at(0), 2.0 / 3, 1e-9);
  EXPECT_NEAR(shares.at(1), 1.0 / 3, 1e-9);
  EXPECT_TRUE(median_paced_shares(history, "k", 100, {0, 1, 2}).empty()) << "device 2 ran nothing here";
}

TEST(WorthMoving, NoGroupForADeviceBeforeAndAfterIsNoReasonToMove) {
  EXPECT_FALSE(worth_moving({{0, 0.5}, {1, 0.5}, {2, 0.0}}, {{0, 0.515}, {1, 0.485}, {2, 0.0}}, 64));
}

TEST(WorthMoving, SameGroupsOrAGainOfFivePercent) {
  // Shares that give the same groups: stored (wp's average goes on).
  EXPECT_TRUE(worth_moving({{0, 0.5}, {1, 0.5}}, {{0, 0.501}, {1, 0.499}}, 64));
  // One group of 32 moved for a 3% pace difference: no.
  EXPECT_FALSE(worth_moving({{0, 0.5}, {1, 0.5}}, {{0, 0.515}, {1, 0.485}}, 64));
  // Eight devices, one at two thirds of the others' pace: yes.
  DeviceShares used, next;
  for (int d = 0; d < 8; ++d) {
    used[d] = 1.0 / 8;
    next[d] = d == 3 ? 2.0 / 3 : 1.0;
  }
  EXPECT_TRUE(worth_moving(used, next, 64));
}

TEST(StrackPolicy, WpTailSetsAsideTheSharesOfTheRestAndHandsTheTailOutOnDemand) {
  PolicyParams params;
  params.wp_tail = 0.4;
  auto p = make_policy("wp", params, std::make_shared<History>(), {});
  LaunchShape shape = launch_of_k(1000);
  p->begin_launch(shape, {0, 1}, 0);
  // Equal shares (nothing measured) of the 600 groups set aside: one contiguous range each.
  const auto first0 = p->next_chunk(0, 0), first1 = p->next_chunk(1, 0);
  ASSERT_TRUE(first0 && first1);
  EXPECT_EQ(first0->groups(), 300u);
  EXPECT_EQ(first1->groups(), 300u);
  // The tail goes to whichever device asks, in HGuided's shrinking chunks: device 0 alone takes it
  // when device 1 never comes back.
  std::vector<uint64_t> tail;
  while (auto c = p->next_chunk(0, 0)) tail.push_back(c->groups());
  uint64_t sum = 0;
  for (uint64_t g : tail) sum += g;
  EXPECT_EQ(sum, 400u);
  ASSERT_GE(tail.size(), 3u);
  EXPECT_EQ(tail.front(), 100u);  // 400 x 0.5 / (2 x 1)
  EXPECT_LT(tail.back(), tail.front());
}

TEST(StrackPolicy, WpTailHandsEachDeviceTheRestOfItsOwnShareFirst) {
  PolicyParams params;
  params.wp_tail = 0.4;
  auto p = make_policy("wp", params, std::make_shared<History>(), {});
  p->begin_launch(launch_of_k(1000), {0, 1}, 0);
  // Device 0's share is [0, 500): 300 set aside, its tail [300, 500). Device 1's: [500, 800) and [800, 1000).
  const auto first0 = p->next_chunk(0, 0), first1 = p->next_chunk(1, 0);
  ASSERT_TRUE(first0 && first1);
  EXPECT_EQ(first0->begin, 0u);
  EXPECT_EQ(first0->end, 300u);
  EXPECT_EQ(first1->begin, 500u);
  EXPECT_EQ(first1->end, 800u);
  // Device 0, asking alone, runs the rest of its own share front to back, then takes device 1's tail
  // from its back: what device 1 would run next stays where device 1 would run it.
  std::vector<Chunk> taken;
  while (auto c = p->next_chunk(0, 0)) taken.push_back(*c);
  uint64_t at = 300;
  size_t i = 0;
  for (; i < taken.size() && taken[i].begin < 500; ++i) {
    EXPECT_EQ(taken[i].begin, at);
    at = taken[i].end;
  }
  EXPECT_EQ(at, 500u);
  uint64_t back = 1000;
  for (; i < taken.size(); ++i) {
    EXPECT_EQ(taken[i].end, back);
    back = taken[i].begin;
  }
  EXPECT_EQ(back, 800u);
  // Device 1 asks again once it is all gone.
  EXPECT_FALSE(p->next_chunk(1, 0).has_value());
}

}  // namespace
}  // namespace coex::sched
