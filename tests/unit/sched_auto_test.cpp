// auto: the choice per launch and the elimination of devices that would not pay.
#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "auto_fixtures.h"
#include "sched/auto_policy.h"
#include "sched/policy_factory.h"
#include "sched/simulator.h"
#include "sched/split_math.h"

namespace coex::sched {
namespace {

using auto_fixtures::record_line;
using auto_fixtures::shape;
using auto_fixtures::two_profiles;

// Device 0 (home): 1 us/group. Device 1: 50 ms per chunk: at 10^4 groups ("k", `home_shape`) home
// alone takes 10 ms, and only home pays.
std::shared_ptr<History> history_where_only_home_pays() {
  auto history = std::make_shared<History>();
  record_line(*history, "k", 10000 * 64, 0, 0, 1e-6);
  record_line(*history, "k", 10000 * 64, 1, 0.05, 0.5e-6);
  return history;
}

LaunchShape home_shape() {
  LaunchShape s = shape("k", 10000);
  s.home = 0;
  return s;
}

TEST(AutoChoice, NoHistorySigmoidRepeatedLaunchWp) {
  History h;
  const auto s = shape("k", 1000);
  EXPECT_EQ(auto_choice(h, s, {0, 1}, PolicyParams{}), "sigmoid");
  h.note_launch("k", s.global_size);
  // Launches counted, nothing measured (an iterative app enqueues many before the first one runs):
  // wp would start from equal shares, so it waits for every device's model.
  EXPECT_EQ(auto_choice(h, s, {0, 1}, PolicyParams{}), "sigmoid");
  record_line(h, "k", s.global_size, 0, 1e-6, 1e-5);
  EXPECT_EQ(auto_choice(h, s, {0, 1}, PolicyParams{}), "sigmoid");  // device 1 still unknown
  record_line(h, "k", s.global_size, 1, 1e-6, 1e-5);
  // Cheap chunks (1 us on a predicted 5 ms): wp with its tail on demand; none when auto_wp_tail is 0.
  EXPECT_EQ(auto_choice(h, s, {0, 1}, PolicyParams{}), "wp+tail");
  PolicyParams no_tail;
  no_tail.auto_wp_tail = 0;
  EXPECT_EQ(auto_choice(h, s, {0, 1}, no_tail), "wp");
  // Costly chunks (5 ms each): one chunk per device.
  History costly;
  costly.note_launch("k", s.global_size);
  record_line(costly, "k", s.global_size, 0, 0.005, 1e-5);
  record_line(costly, "k", s.global_size, 1, 0.005, 1e-5);
  EXPECT_EQ(auto_choice(costly, s, {0, 1}, PolicyParams{}), "wp");
  PolicyParams two;
  two.auto_repeat_launches = 2;
  EXPECT_EQ(auto_choice(h, s, {0, 1}, two), "sigmoid");
}

TEST(AutoChoice, CostlyChunksAtANewSizeGoToBoyerUnlessIrregular) {
  History h;
  // At another size: 5 ms per chunk, 10 us per group on each of two devices. Predicted launch of 1000
  // groups: 1000 / (2 / 1e-5) = 5 ms; overhead 5 ms > 1% of it.
  record_line(h, "k", 999, 0, 0.005, 1e-5);
  record_line(h, "k", 999, 1, 0.005, 1e-5);
  EXPECT_EQ(auto_choice(h, shape("k", 1000), {0, 1}, PolicyParams{}), "boyer");
  h.set_regular("k", false);
  EXPECT_EQ(auto_choice(h, shape("k", 1000), {0, 1}, PolicyParams{}), "sigmoid");
  // Cheap chunks (1 us overhead on a 5 ms launch is 0.02%): sigmoid.
  History cheap;
  record_line(cheap, "c", 999, 0, 1e-6, 1e-5);
  record_line(cheap, "c", 999, 1, 1e-6, 1e-5);
  EXPECT_EQ(auto_choice(cheap, shape("c", 1000), {0, 1}, PolicyParams{}), "sigmoid");
}

TEST(AutoPaying, DeviceThatDoesNotPayForItsOverheadGetsNothing) {
  History h;
  // Device 0: 1 us/group, no overhead. Device 1: 0.5 us/group but 50 ms per chunk. 10000 groups take
  // device 0 alone 10 ms < 50 ms: device 1 would finish later than the whole launch without it.
  record_line(h, "k", 7, 0, 0, 1e-6);
  record_line(h, "k", 7, 1, 0.05, 0.5e-6);
  EXPECT_EQ(auto_paying_devices(h, shape("k", 10000), {0, 1}, PolicyParams{}), std::vector<int>{0});
  // 10^6 groups: 1 s on device 0 alone; device 1 pays now.
  EXPECT_EQ(auto_paying_devices(h, shape("k", 1000000), {0, 1}, PolicyParams{}), (std::vector<int>{0, 1}));
  // A device without samples is kept.
  EXPECT_EQ(auto_paying_devices(h, shape("k", 10000), {0, 1, 2}, PolicyParams{}), (std::vector<int>{0, 2}));
}

TEST(AutoPaying, DeviceWhoseShareIsUnderTheMinimumGetsNothing) {
  History h;
  // Two GPUs (1 us/group) and a CPU 300x slower: the CPU's equal-finish share of 10^6 groups is about
  // 1,660 groups (0.17%), well over one group but under auto_min_share (5%).
  record_line(h, "k", 7, 0, 0, 1e-6);
  record_line(h, "k", 7, 1, 0, 1e-6);
  record_line(h, "k", 7, 2, 0, 300e-6);
  EXPECT_EQ(auto_paying_devices(h, shape("k", 1000000), {0, 1, 2}, PolicyParams{}), (std::vector<int>{0, 1}));
  PolicyParams any_share;
  any_share.auto_min_share = 0;
  EXPECT_EQ(auto_paying_devices(h, shape("k", 1000000), {0, 1, 2}, any_share), (std::vector<int>{0, 1, 2}));
  // One GPU and the CPU: the GPU alone.
  EXPECT_EQ(auto_paying_devices(h, shape("k", 1000000), {0, 2}, PolicyParams{}), std::vector<int>{0});
}

TEST(AutoPaying, SharesAreComputedAgainAfterADeviceIsLeftOut) {
  History h;
  // Throughputs 9 : 7 : 4 give shares 45%, 35%, 20%. With a minimum of 30% the third goes; the
  // other two then get 56% and 44%, both over it, and stay.
  record_line(h, "k", 7, 0, 0, 1.0 / 9);
  record_line(h, "k", 7, 1, 0, 1.0 / 7);
  record_line(h, "k", 7, 2, 0, 1.0 / 4);
  PolicyParams p;
  p.auto_min_share = 0.3;
  EXPECT_EQ(auto_paying_devices(h, shape("k", 1000), {0, 1, 2}, p), (std::vector<int>{0, 1}));
  // With 50%, the 44% device goes too.
  p.auto_min_share = 0.5;
  EXPECT_EQ(auto_paying_devices(h, shape("k", 1000), {0, 1, 2}, p), std::vector<int>{0});
}

TEST(AutoPaying, AnIrregularKernelWeighsADeviceByItsMeanPaceNotALineThroughItsChunks) {
  History h;
  record_line(h, "k", 7, 0, 0, 1e-5);
  // Device 1's small chunk fell on costly rows: a line through its chunks has a 19.6 ms fixed cost,
  // more than device 0's whole launch of 1000 groups (10 ms). Its mean pace, 68 ms for 2100 groups,
  // gives it 24% of the launch.
  for (auto [groups, seconds] : {std::pair{100, 0.020}, {400, 0.022}, {1600, 0.026}}) {
    ChunkTiming t;
    t.chunk = {1, 0, static_cast<uint64_t>(groups)};
    t.end = seconds;
    h.record_chunk("k", 7, t);
  }
  EXPECT_EQ(auto_paying_devices(h, shape("k", 1000), {0, 1}, PolicyParams{}), std::vector<int>{0});
  h.set_regular("k", false);
  EXPECT_EQ(auto_paying_devices(h, shape("k", 1000), {0, 1}, PolicyParams{}), (std::vector<int>{0, 1}));
}

// Devices of one kind pay alike: whether a device pays is judged by the line through the chunks of
// its whole kind. Device 1's own line (its chunks in a slow stretch: 50 ms a chunk) would give it no
// share of 1000 groups beside devices 0 and 2 (0.1 ms a group, 0.05 s each for half the launch).
TEST(AutoPaying, ADeviceOfAKindThatPaysIsJudgedByItsKind) {
  History h;
  record_line(h, "k", 7, 0, 0, 1e-4);
  record_line(h, "k", 7, 2, 0, 1e-4);
  record_line(h, "k", 7, 1, 0.05, 1e-5);
  LaunchShape s = shape("k", 1000);
  EXPECT_EQ(auto_paying_devices(h, s, {0, 1, 2}, PolicyParams{}), (std::vector<int>{0, 2}));  // no kinds known
  s.device_kinds = {0, 0, 0};
  EXPECT_EQ(auto_paying_devices(h, s, {0, 1, 2}, PolicyParams{}), (std::vector<int>{0, 1, 2}));
  // Of another kind, its own line decides.
  s.device_kinds = {0, 1, 0};
  EXPECT_EQ(auto_paying_devices(h, s, {0, 1, 2}, PolicyParams{}), (std::vector<int>{0, 2}));
}

// The gate reads the devices' kinds from the profiles auto was made with (LaunchShape::device_kinds):
// two equal devices and a third with more compute units.
TEST(AutoGate, TheShapeCarriesTheDevicesKinds) {
  std::vector<DeviceProfile> profiles(3);
  for (int i = 0; i < 3; ++i) profiles[i].index = i;
  profiles[2].compute_units = 4;
  AutoPolicy policy(PolicyParams{}, std::make_shared<History>(), profiles);
  LaunchShape s = shape("k", 10000);
  s.home = 0;
  policy.unsplit_reason(s, {0, 1, 2});
  EXPECT_EQ(s.device_kinds, (std::vector<int>{0, 0, 2}));
}

// The gate before a split (AutoPolicy::unsplit_reason), as the executor's planner asks it.
TEST(AutoGate, ColdHistorySplitsAndNumbersTheLaunch) {
  auto history = std::make_shared<History>();
  AutoPolicy policy(PolicyParams{}, history, {});
  LaunchShape s = shape("k", 10000);
  s.home = 0;
  EXPECT_EQ(policy.unsplit_reason(s, {0, 1}), nullptr);  // nothing known against the others
  ASSERT_TRUE(s.launch_number.has_value());
  EXPECT_EQ(*s.launch_number, 0u);
  // While that split is in flight and no split over these devices was measured, the next launch
  // runs on home: it would be split on what was known before the first one.
  history->split_started("k", s.global_size);
  LaunchShape next = shape("k", 10000);
  next.home = 0;
  EXPECT_STREQ(policy.unsplit_reason(next, {0, 1}), "split_being_measured");
  EXPECT_FALSE(next.launch_number.has_value());
  // Once a split over them was measured, launches are split again while another is in flight.
  history->record_split_launch("k", s.global_size, {0, 1}, 0.5);
  LaunchShape third = shape("k", 10000);
  third.home = 0;
  EXPECT_EQ(policy.unsplit_reason(third, {0, 1}), nullptr);
  history->split_ended("k", s.global_size);
}

// A cold split (its devices' first runs of the kernel) is not the set's verdict, but what its devices
// waited for their data recurs at the next split where the app wrote the launch's buffers since. Home
// alone takes 10 ms; device 1 waited `transfer` seconds in all for its chunks' data in the cold split.
TEST(AutoGate, AColdSplitsWaitForDataTheAppWroteAgainKeepsTheNextLaunchOnHome) {
  auto second_launch = [](double transfer, uint64_t writes_since, GateVerdict* verdict) {
    auto history = std::make_shared<History>();
    record_line(*history, "k", 10000 * 64, 0, 0, 1e-6);  // home's chunks: 10 ms for the whole launch
    AutoPolicy policy(PolicyParams{}, history, two_profiles());
    LaunchShape first = home_shape();
    first.buffer_writes = 5;
    EXPECT_EQ(policy.unsplit_reason(first, {0, 1}), nullptr);
    policy.begin_launch(first, {0, 1}, 0);
    bool waited = false;
    for (bool handed = true; handed;) {
      handed = false;
      for (int device : {0, 1})
        if (auto chunk = policy.next_chunk(device, 0)) {
          handed = true;
          ChunkTiming timing;
          timing.chunk = *chunk;
          timing.first_run = true;
          timing.transfer_seconds = device == 1 && !waited ? transfer : 0;
          waited = waited || device == 1;
          timing.end = 0.005 + timing.transfer_seconds;
          policy.chunk_done(timing);
        }
    }
    policy.end_launch(transfer + 0.01);
    LaunchShape next = home_shape();
    next.buffer_writes = 5 + writes_since;
    return policy.unsplit_reason(next, {0, 1}, verdict);
  };
  // Fifteen times home alone, the inputs written again: home keeps the launch, no split made to measure.
  GateVerdict verdict;
  EXPECT_STREQ(second_launch(0.15, 2, &verdict), "one_device_pays");
  EXPECT_TRUE(verdict.cold_transfers);
  EXPECT_FALSE(verdict.probe);
  EXPECT_EQ(verdict.measured_devices, (std::vector<int>{0, 1}));
  ASSERT_TRUE(verdict.split_seconds && verdict.home_seconds);
  EXPECT_DOUBLE_EQ(*verdict.split_seconds, 0.15);
  EXPECT_NEAR(*verdict.home_seconds, 0.010, 1e-9);
  // Nothing written since: each device's part lies where the cold split left it. Five times home
  // alone: not hopeless by a switch, the split is made and measured.
  GateVerdict resident, shorter;
  EXPECT_EQ(second_launch(0.15, 0, &resident), nullptr);
  EXPECT_FALSE(resident.cold_transfers);
  EXPECT_EQ(second_launch(0.05, 2, &shorter), nullptr);
  EXPECT_FALSE(shorter.cold_transfers);
}

TEST(AutoGate, WarmHistoryWhereOnlyHomePaysRunsOnHome) {
  auto history = history_where_only_home_pays();
  AutoPolicy policy(PolicyParams{}, history, {});
  LaunchShape s = home_shape();
  EXPECT_STREQ(policy.unsplit_reason(s, {0, 1}), "one_device_pays");
  EXPECT_FALSE(s.launch_number.has_value());
  // Still counted among the kernel's launches, so that the periodic probe comes round.
  EXPECT_EQ(history->plan_launch("k", s.global_size), 1u);
  // Another home: the device that pays is not home, so the launch is split (home gets nothing).
  LaunchShape elsewhere = shape("k", 10000);
  elsewhere.home = 1;
  EXPECT_EQ(policy.unsplit_reason(elsewhere, {0, 1}), nullptr);
}

TEST(AutoGate, ASplitThatDidNotPayAtALargerSizeKeepsTheSmallerSizesOnHome) {
  // Both devices pay by their chunk lines (the same pace); at 10^4 groups the split was measured.
  auto history = std::make_shared<History>();
  record_line(*history, "k", 10000 * 64, 0, 0, 1e-6);
  record_line(*history, "k", 10000 * 64, 1, 0, 1e-6);
  AutoPolicy policy(PolicyParams{}, history, {});
  auto reason_at = [&](uint64_t groups) {
    LaunchShape s = shape("k", groups);
    s.home = 0;
    const char* reason = policy.unsplit_reason(s, {0, 1});
    return std::string(reason ? reason : "split");
  };
  EXPECT_EQ(reason_at(5000), "split");                                  // nothing measured yet
  history->record_split_launch("k", 10000 * 64, {0, 1}, 0.004, 0.010);  // paid
  EXPECT_EQ(reason_at(5000), "split");
  auto lost = std::make_shared<History>();
  record_line(*lost, "k", 10000 * 64, 0, 0, 1e-6);
  record_line(*lost, "k", 10000 * 64, 1, 0, 1e-6);
  lost->record_split_launch("k", 10000 * 64, {0, 1}, 0.015, 0.010);  // took longer than home alone
  AutoPolicy after_loss(PolicyParams{}, lost, {});
  LaunchShape smaller = shape("k", 5000);
  smaller.home = 0;
  GateVerdict verdict;
  EXPECT_STREQ(after_loss.unsplit_reason(smaller, {0, 1}, &verdict), "one_device_pays");
  // The verdict gives the figures it stood on, and the size they were measured at.
  EXPECT_EQ(verdict.measured_devices, (std::vector<int>{0, 1}));
  ASSERT_TRUE(verdict.split_seconds.has_value());
  ASSERT_TRUE(verdict.home_seconds.has_value());
  EXPECT_DOUBLE_EQ(*verdict.split_seconds, 0.015);
  EXPECT_DOUBLE_EQ(*verdict.home_seconds, 0.010);
  EXPECT_EQ(verdict.measured_size, 10000u * 64);
  LaunchShape larger = shape("k", 20000);  // nothing measured above it
  larger.home = 0;
  EXPECT_EQ(after_loss.unsplit_reason(larger, {0, 1}), nullptr);
}

TEST(AutoGate, AVerdictForHomeStandsForRepeatedLaunchesUntilAProbe) {
  auto history = history_where_only_home_pays();
  PolicyParams params;
  AutoPolicy policy(params, history, {});
  LaunchShape s = home_shape();
  GateVerdict first;
  ASSERT_STREQ(policy.unsplit_reason(s, {0, 1}, &first), "one_device_pays");
  EXPECT_EQ(first.launch, 0u);
  // Launches 1 .. probe_interval - 1 repeat it, each counted and numbered as the gate would.
  const auto interval = static_cast<uint64_t>(params.probe_interval);
  for (uint64_t launch = 1; launch < interval; ++launch) {
    LaunchShape again = home_shape();
    GateVerdict verdict;
    ASSERT_TRUE(policy.unsplit_again(again, "one_device_pays", &verdict)) << launch;
    EXPECT_EQ(verdict.launch, launch);
    EXPECT_FALSE(again.launch_number.has_value());
  }
  EXPECT_EQ(history->launches("k", s.global_size), interval);
  // The probe's launch goes to the gate, and so does any reason that is not the gate's verdict.
  LaunchShape probe = home_shape();
  EXPECT_FALSE(policy.unsplit_again(probe, "one_device_pays", nullptr));
  EXPECT_EQ(history->launches("k", s.global_size), interval);  // not counted: the gate counts it
  EXPECT_FALSE(policy.unsplit_again(probe, "split_being_measured", nullptr));
  GateVerdict at_probe;
  EXPECT_EQ(policy.unsplit_reason(probe, {0, 1}, &at_probe), nullptr);
  EXPECT_TRUE(at_probe.probe);
  EXPECT_FALSE(probe.follows_split);  // the launch before it ran on home
  // The probe's streak: the next auto_probe_streak - 1 launches are split too, while the probe is in
  // flight, each after a split, so that what they measure is a split's own cost.
  history->split_started("k", s.global_size);
  for (int i = 1; i < params.auto_probe_streak; ++i) {
    LaunchShape streak = home_shape();
    GateVerdict verdict;
    EXPECT_FALSE(policy.unsplit_again(streak, "one_device_pays", nullptr));
    EXPECT_EQ(policy.unsplit_reason(streak, {0, 1}, &verdict), nullptr) << i;
    EXPECT_TRUE(verdict.probe);
    EXPECT_TRUE(streak.follows_split);
    history->split_started("k", s.global_size);
  }
  LaunchShape after = home_shape();
  EXPECT_STREQ(policy.unsplit_reason(after, {0, 1}), "one_device_pays");
}

TEST(AutoGate, KeptFitsAreFittedAgainWhenTheHistoryLearnsSomething) {
  auto history = history_where_only_home_pays();
  AutoPolicy policy(PolicyParams{}, history, {});
  LaunchShape s = home_shape();
  ASSERT_STREQ(policy.unsplit_reason(s, {0, 1}), "one_device_pays");
  // Device 1 turns out fast: 1 ms a chunk and a tenth of home's time per group.
  for (int i = 0; i < static_cast<int>(History::kMaxSamples); ++i)
    for (uint64_t g : {100, 400, 1600}) {
      ChunkTiming t;
      t.chunk = {1, 0, g};
      t.end = 0.001 + 1e-7 * static_cast<double>(g);
      history->record_chunk("k", 10000 * 64, t);
    }
  LaunchShape next = home_shape();
  EXPECT_EQ(policy.unsplit_reason(next, {0, 1}), nullptr);
}

// Two devices on home's line (1 us a group: home alone 10 ms at 10^4 groups), and splits over both
// measured at `split` seconds: a switch, then two steady ones.
void record_splits(History& h, double split) {
  for (int i = 0; i < 3; ++i) h.record_split_launch("k", 10000 * 64, {0, 1}, split, 0.010, i > 0);
}

// The gate's fits stand for up to seven more launches while the split paid by a margin (0.8 x what
// auto_min_gain asks: 7.6 ms against 10 ms here), as fitted and as the History has it since; a split
// measured past the margin is fitted again at once.
TEST(AutoGate, EvidenceOfASplitThatPaysWellStandsForAFewLaunches) {
  auto history = std::make_shared<History>();
  for (int device : {0, 1}) record_line(*history, "k", 10000 * 64, device, 0, 1e-6);
  record_splits(*history, 0.004);
  AutoPolicy policy(PolicyParams{}, history, {});
  auto gate = [&] {
    LaunchShape s = home_shape();
    GateVerdict verdict;
    EXPECT_EQ(policy.unsplit_reason(s, {0, 1}, &verdict), nullptr);
    return verdict.split_seconds.value_or(-1);
  };
  EXPECT_DOUBLE_EQ(gate(), 0.004);
  record_splits(*history, 0.0075);  // still under 7.6 ms
  for (int launch = 0; launch < 7; ++launch) EXPECT_DOUBLE_EQ(gate(), 0.004) << launch;
  EXPECT_DOUBLE_EQ(gate(), 0.0075);  // fitted again
  record_splits(*history, 0.009);    // pays, but not by the margin: seen at the next launch
  EXPECT_DOUBLE_EQ(gate(), 0.009);
  record_splits(*history, 0.0085);
  EXPECT_DOUBLE_EQ(gate(), 0.0085);  // the last fit did not pay by the margin: no launch reuses it
}

TEST(AutoGate, HomesMeasuredTimeStandsUnlessFarAboveItsChunksEstimate) {
  // Home's chunks at this size on the line 1 us per group: the launch of 10^4 groups is estimated at
  // 10 ms from them. A measured time (from an idle queue) beats the estimate: 30 ms (a cache effect the
  // chunks miss) stands; 100 ms, more than kSuspectMeasured (4) times the estimate, is no time of the
  // launch's own work (a first run's load, a thread descheduled): the estimate stands instead. Without
  // chunks of home to estimate from, the measurement stands whatever it is.
  const auto history = history_where_only_home_pays();
  LaunchShape s = home_shape();
  ASSERT_NEAR(*home_alone_seconds(*history, s), 0.01, 1e-9);
  s.home_measured_seconds = 0.03;
  EXPECT_DOUBLE_EQ(*home_alone_seconds(*history, s), 0.03);
  s.home_measured_seconds = 0.1;
  EXPECT_NEAR(*home_alone_seconds(*history, s), 0.01, 1e-9);
  History empty;
  EXPECT_DOUBLE_EQ(*home_alone_seconds(empty, s), 0.1);
  s.home = -1;
  EXPECT_FALSE(home_alone_seconds(*history, s).has_value());
}

TEST(AutoPolicy, NamesThePolicyItPickedAndGivesNothingToDroppedDevices) {
  auto h = std::make_shared<History>();
  record_line(*h, "k", 7, 0, 0, 1e-6);
  record_line(*h, "k", 7, 1, 0.05, 0.5e-6);
  std::vector<DeviceProfile> profiles(2);
  profiles[1].index = 1;
  profiles[1].compute_units = 4;  // of another kind: its own line says whether it pays
  auto p = make_policy("auto", PolicyParams{}, h, profiles);
  p->begin_launch(shape("k", 10000), {0, 1}, 0);
  EXPECT_EQ(p->planned_by(), "auto:sigmoid");
  EXPECT_EQ(p->eliminated(), std::vector<int>{1});
  EXPECT_FALSE(p->next_chunk(1, 0).has_value());
  uint64_t total = 0;
  double now = 0;
  while (auto c = p->next_chunk(0, now)) {
    total += c->groups();
    p->chunk_done({*c, now, now + 1e-6 * c->groups()});
    now += 1e-6 * c->groups();
  }
  EXPECT_EQ(total, 10000u);
  p->end_launch(now);
  p->begin_launch(shape("k", 10000), {0, 1}, 0);
  EXPECT_EQ(p->planned_by(), "auto:wp+tail");
}

// A second run finds its History (auto picks wp) while the devices other than home still build: wp
// would set every group aside for home at begin_launch. Told they are coming, auto picks a policy
// that takes them, and each gets work once it joins.
TEST(AutoPolicy, DevicesStillBuildingJoinEvenWhereTheHistoryWouldPickWp) {
  auto h = std::make_shared<History>();
  record_line(*h, "k", 640000, 0, 0, 1e-5);
  record_line(*h, "k", 640000, 1, 0, 1e-5);
  record_line(*h, "k", 640000, 2, 0, 1e-5);
  h->note_launch("k", 640000);
  std::vector<DeviceProfile> profiles(3);
  for (int d = 0; d < 3; ++d) profiles[size_t(d)].index = d;
  for (bool told : {false, true}) {
    auto p = make_policy("auto", PolicyParams{}, h, profiles);
    if (told) p->expect_late_devices({1, 2});
    p->begin_launch(shape("k", 10000), {0}, 0);
    EXPECT_EQ(p->planned_by(), told ? "auto:sigmoid" : "auto:wp+tail");
    EXPECT_EQ(p->add_device(1, 0), told);
    EXPECT_EQ(p->add_device(2, 0), told);
    std::map<int, uint64_t> groups;
    double now = 0;
    for (bool more = true; more;) {
      more = false;
      for (int d : {0, 1, 2})
        if (auto c = p->next_chunk(d, now)) {
          more = true;
          groups[d] += c->groups();
          now += 1e-5 * double(c->groups());
          p->chunk_done({*c, now - 1e-5 * double(c->groups()), now});
        }
    }
    EXPECT_EQ(groups[0] + groups[1] + groups[2], 10000u);
    EXPECT_EQ(groups[1] > 0 && groups[2] > 0, told) << groups[0] << " " << groups[1] << " " << groups[2];
  }
}

// `devices` modelled devices d0, d1, ... with 10 us between sub-launches, and the policy on its own, as
// in its paper (no take-over by the executor's rules).
Scenario policy_alone(const std::string& name, int devices) {
  Scenario s;
  s.take_over = false;
  s.name = name;
  s.devices.resize(size_t(devices));
  for (int i = 0; i < devices; ++i) {
    s.devices[size_t(i)].profile.index = i;
    s.devices[size_t(i)].profile.name = "d" + std::to_string(i);
    s.devices[size_t(i)].latency = 1e-5;
  }
  return s;
}

TEST(AutoPolicy, SimulatedSequenceSigmoidThenWp) {
  Scenario s = policy_alone("auto", 2);
  s.devices[0].speed = 6000;
  s.devices[1].speed = 1000;
  s.kernel.groups = 50000;
  s.launches = 3;
  s.params.auto_wp_tail = 0;
  s.params.wp_tail = 0.4;  // the user's, for plain wp: auto's wp has its own (auto_wp_tail)
  const auto r = simulate_policy(s, "auto");
  EXPECT_EQ(r[0].planned_by, "auto:sigmoid");
  EXPECT_EQ(r[1].planned_by, "auto:wp");
  EXPECT_EQ(r[2].planned_by, "auto:wp");
  // wp starts from the throughputs sigmoid measured: balanced at once, one chunk per device.
  EXPECT_EQ(r[1].chunks, 2u);
  EXPECT_GT(r[1].efficiency, 0.99);
  // With its tail (the default): the shares of half the launch at its start, the rest on demand.
  s.params.auto_wp_tail = 0.5;
  const auto tail = simulate_policy(s, "auto");
  EXPECT_EQ(tail[1].planned_by, "auto:wp+tail");
  EXPECT_EQ(tail[2].planned_by, "auto:wp+tail");
  EXPECT_GT(tail[1].chunks, 2u);
  EXPECT_GT(tail[1].efficiency, 0.98);
}

// Plain wp only for an overhead that stands out of a device's noise: chunks of 8 to 10 groups whose
// line has an intercept of chance (6.3 ms, its standard error 6.1 ms) get the tail; the same chunks
// 30 ms dearer each get plain wp.
TEST(AutoPolicy, ANoisyInterceptIsNoCostlyChunk) {
  const std::vector<std::pair<double, double>> noisy = {{8, 0.0100}, {9, 0.0120}, {10, 0.0105},
                                                        {9, 0.0090}, {8, 0.0110}, {10, 0.0125}};
  for (double extra : {0.0, 0.030}) {
    History h;
    const LaunchShape s = shape("k", 250);
    h.note_launch("k", s.global_size);
    for (int device = 0; device < 2; ++device)
      for (const auto& [groups, seconds] : noisy) {
        ChunkTiming t;
        t.chunk = {device, 0, static_cast<uint64_t>(groups)};
        t.end = seconds + extra;
        h.record_chunk("k", s.global_size, t);
      }
    EXPECT_GT(fit_affine(noisy).a, 0.01 * 0.0625);  // above 1% of the launch its line predicts
    EXPECT_EQ(auto_choice(h, s, {0, 1}, PolicyParams{}), extra > 0 ? "wp" : "wp+tail") << extra;
  }
}

// Devices of one kind share a chunk's overhead: the median of their lines' intercepts stands for it,
// not the largest (the device whose pace moved during the launch measured). One of four devices with
// 5 ms a chunk on a predicted 2.5 ms launch gets the tail; three of four, or devices each of its own
// kind, get plain wp.
TEST(AutoChoice, DevicesOfOneKindShareTheirChunkOverhead) {
  LaunchShape s = shape("k", 1000);
  for (int costly : {1, 3}) {
    for (bool one_kind : {true, false}) {
      History h;
      h.note_launch("k", s.global_size);
      for (int device = 0; device < 4; ++device)
        record_line(h, "k", s.global_size, device, device < costly ? 0.005 : 0, 1e-5);
      s.device_kinds = one_kind ? std::vector<int>{0, 0, 0, 0} : std::vector<int>{};
      EXPECT_EQ(auto_choice(h, s, {0, 1, 2, 3}, PolicyParams{}), one_kind && costly == 1 ? "wp+tail" : "wp")
          << costly << " " << one_kind;
    }
  }
}

// begin_launch splits over the devices the planner's gate picked, those of them that are ready: it
// does not weigh the evidence again. Device 1's chunks are 100 times slower: the models leave it out,
// unless the gate kept it; with only home of the gate's devices ready, the models decide.
TEST(AutoPolicy, BeginLaunchTakesTheDevicesTheGatePicked) {
  LaunchShape s = shape("k", 1000);
  s.home = 0;
  auto h = std::make_shared<History>();
  h->note_launch("k", s.global_size);
  record_line(*h, "k", s.global_size, 0, 1e-6, 1e-5);
  record_line(*h, "k", s.global_size, 1, 1e-6, 1e-3);
  std::vector<DeviceProfile> profiles = two_profiles();
  profiles[1].name = "another kind";
  for (const std::vector<int>& gate : {std::vector<int>{}, std::vector<int>{0, 1}, std::vector<int>{0, 2}}) {
    LaunchShape launch = s;
    launch.gate_devices = gate;
    auto policy = make_policy("auto", PolicyParams{}, h, profiles);
    policy->begin_launch(launch, {0, 1}, 0);
    EXPECT_EQ(policy->next_chunk(1, 0).has_value(), gate == std::vector<int>({0, 1})) << gate.size();
  }
}

// A device that slows down between launches (its core now shared): wp's shares, measured before,
// hold the launch up by the whole slowdown; with the tail the others take part of its share.
TEST(AutoPolicy, WpTailEvensOutADeviceThatSlowedDown) {
  Scenario s = policy_alone("auto-slowdown", 4);
  for (auto& device : s.devices) device.speed = 1000;
  s.devices[3].changes.push_back({1, 0.0, 0.5});  // from launch 1 on, half its speed
  s.kernel.groups = 4000;
  s.launches = 2;
  s.params.auto_wp_tail = 0;
  const auto whole = simulate_policy(s, "auto");
  s.params.auto_wp_tail = 0.5;
  const auto tail = simulate_policy(s, "auto");
  ASSERT_EQ(whole[1].planned_by, "auto:wp");
  ASSERT_EQ(tail[1].planned_by, "auto:wp+tail");
  // wp: d3's quarter at half speed, 2 s against 1 s for the others. With the tail, about 1.15 s.
  EXPECT_GT(whole[1].makespan, 1.9);
  EXPECT_LT(tail[1].makespan, 1.3);
}

}  // namespace
}  // namespace coex::sched
