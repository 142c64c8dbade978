// auto's split-cost rule: a split whose whole launches were measured no faster than the home device
// alone is not made, whatever the chunk-time models predict; probes measure it again.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

#include "auto_split_fixtures.h"
#include "sched/auto_policy.h"
#include "sched/policy_factory.h"

namespace coex::sched {
namespace {

using namespace split_fixtures;

TEST(AutoSplitCost, ModelsPredictAGainButSplitLaunchesTookLongerHomeGetsEverything) {
  History h;
  record_models_predicting_a_gain(h);
  ASSERT_EQ(auto_paying_devices(h, shape(0), {0, 1}, PolicyParams{}), (std::vector<int>{0, 1}));  // the premise
  // Whole split launches took 4 ms (host copies, hand-offs, merge), 4x home alone.
  h.record_split_launch("k", kSize, {0, 1}, 4 * kHomeAlone);
  EXPECT_EQ(auto_paying_devices(h, shape(0), {0, 1}, PolicyParams{}), std::vector<int>{0});
  // Home is the other device: it alone (3.02 ms) beats the 4 ms split too.
  EXPECT_EQ(auto_paying_devices(h, shape(1), {0, 1}, PolicyParams{}), std::vector<int>{1});
  // No home (the simulator): nothing runs unsplit, the models decide as before.
  EXPECT_EQ(auto_paying_devices(h, shape(-1), {0, 1}, PolicyParams{}), (std::vector<int>{0, 1}));
  // The time of another set of devices says nothing of this one.
  History other;
  record_models_predicting_a_gain(other);
  other.record_split_launch("k", kSize, {0, 1, 2}, 4 * kHomeAlone);
  EXPECT_EQ(auto_paying_devices(other, shape(0), {0, 1}, PolicyParams{}), (std::vector<int>{0, 1}));
}

TEST(AutoSplitCost, SplitLaunchesMeasuredFasterKeepTheSplit) {
  History h;
  record_models_predicting_a_gain(h);
  h.record_split_launch("k", kSize, {0, 1}, 0.6 * kHomeAlone);
  EXPECT_EQ(auto_paying_devices(h, shape(0), {0, 1}, PolicyParams{}), (std::vector<int>{0, 1}));
  // 2% faster than home alone is under auto_min_gain (5%): not worth a split.
  History close;
  record_models_predicting_a_gain(close);
  close.record_split_launch("k", kSize, {0, 1}, 0.98 * kHomeAlone);
  EXPECT_EQ(auto_paying_devices(close, shape(0), {0, 1}, PolicyParams{}), std::vector<int>{0});
  PolicyParams small_gain;
  small_gain.auto_min_gain = 0.01;
  EXPECT_EQ(auto_paying_devices(close, shape(0), {0, 1}, small_gain), (std::vector<int>{0, 1}));
}

TEST(AutoSplitCost, TwoEqualDevicesOnALongKernelStillSplit) {
  History h;
  const Line gpu{50e-6, 1e-3};  // 1 s for the whole launch on one device
  record_line(h, 0, gpu);
  record_line(h, 1, gpu);
  h.record_split_launch("k", kSize, {0, 1}, 0.52 * gpu.time(kGroups));
  EXPECT_EQ(auto_paying_devices(h, shape(0), {0, 1}, PolicyParams{}), (std::vector<int>{0, 1}));
  EXPECT_EQ(auto_paying_devices(h, shape(1), {0, 1}, PolicyParams{}), (std::vector<int>{0, 1}));
}

TEST(AutoSplitCost, HomeAloneLeavesOutTheTransferPartOfHomesChunks) {
  // Home's chunks in a split spent 2 ms each before their sub-launch (moves, other devices' reads
  // from the home queue): 3.02 ms for the whole launch with it, 1.02 ms without. An unsplit launch
  // pays neither: split launches of 2 ms do not pay.
  History h;
  for (uint64_t g : {100, 400, 1600}) {
    ChunkTiming t;
    t.chunk = {0, 0, g};
    t.transfer_seconds = 2e-3;
    t.end = kHome.time(static_cast<double>(g)) + t.transfer_seconds;
    h.record_chunk("k", kSize, t);
  }
  record_line(h, 1, kSlower);
  h.record_split_launch("k", kSize, {0, 1}, 2e-3);
  EXPECT_EQ(auto_paying_devices(h, shape(0), {0, 1}, PolicyParams{}), std::vector<int>{0});
  h.record_split_launch("k", kSize, {0, 1}, 1.5e-3);  // the smaller of two: still more than 0.95 x 1.02 ms
  EXPECT_EQ(auto_paying_devices(h, shape(0), {0, 1}, PolicyParams{}), std::vector<int>{0});
  h.record_split_launch("k", kSize, {0, 1}, 0.5e-3);  // the median of three: 1.5 ms
  EXPECT_EQ(auto_paying_devices(h, shape(0), {0, 1}, PolicyParams{}), std::vector<int>{0});
  h.record_split_launch("k", kSize, {0, 1}, 0.5e-3);  // now it is 0.5 ms
  EXPECT_EQ(auto_paying_devices(h, shape(0), {0, 1}, PolicyParams{}), (std::vector<int>{0, 1}));
}

// Steady splits of 0.6 x home alone, then one of 1.5 x: one slow launch among them does not keep the
// next launches on home (nothing would measure a split again until a probe); a second one does.
TEST(AutoSplitCost, OneSlowSplitAmongSteadyOnesIsNoVerdict) {
  History h;
  record_models_predicting_a_gain(h);
  for (double times_home : {0.6, 0.6, 1.5}) {
    h.note_launch("k", kSize);  // each launch ends before the next
    h.record_split_launch("k", kSize, {0, 1}, times_home * kHomeAlone, std::nullopt, true);
    EXPECT_EQ(auto_paying_devices(h, shape(0), {0, 1}, PolicyParams{}), (std::vector<int>{0, 1})) << times_home;
  }
  h.record_split_launch("k", kSize, {0, 1}, 1.5 * kHomeAlone, std::nullopt, true);
  EXPECT_EQ(auto_paying_devices(h, shape(0), {0, 1}, PolicyParams{}), std::vector<int>{0});
}

TEST(AutoSplitCost, ASlowFirstChunkOfHomeDoesNotMakeHomeAloneLookSlow) {
  // Home's first chunk took 20 ms (its kernel built at the first launch): the least-squares line
  // through it would put home alone near 10 ms. Its 1600-group chunk, scaled to the launch, says
  // 1.01 ms: split launches of 2 ms do not pay.
  History h;
  ChunkTiming cold;
  cold.chunk = {0, 0, 100};
  cold.end = 0.02;
  h.record_chunk("k", kSize, cold);
  record_line(h, 0, kHome);
  record_line(h, 1, kSlower);
  ASSERT_EQ(auto_paying_devices(h, shape(0), {0, 1}, PolicyParams{}), (std::vector<int>{0, 1}));  // the premise
  h.record_split_launch("k", kSize, {0, 1}, 2e-3);
  EXPECT_EQ(auto_paying_devices(h, shape(0), {0, 1}, PolicyParams{}), std::vector<int>{0});
  // Home's chunks at another global size are other work-groups: they say nothing of home alone here.
  History other_size;
  record_line(other_size, 1, kSlower);
  for (uint64_t g : {100, 400, 1600}) {
    ChunkTiming t;
    t.chunk = {0, 0, g};
    t.end = kHome.time(static_cast<double>(g));
    other_size.record_chunk("k", 2 * kSize, t);
  }
  other_size.record_split_launch("k", kSize, {0, 1}, 2e-3);
  EXPECT_EQ(auto_paying_devices(other_size, shape(0), {0, 1}, PolicyParams{}), (std::vector<int>{0, 1}));
}

TEST(AutoSplitCost, HomeAloneIsNotExtrapolatedFromChunksOfNearlyOneSize) {
  // A 4-thread CPU home beside single-threaded devices (benchmarks/nbody, 64 groups): its chunks in
  // split launches of nearly one size, here 2 and 4 groups, 25 to 34 ms (two groups run on two of its
  // threads at once, as long as one alone; the others' threads came and went). A line through them meets the whole
  // launch near 0.19 s; the chunks scaled up say 0.46 s at best. Split launches of 0.25 s pay.
  constexpr uint64_t kFew = 64;
  LaunchShape s = shape(0);
  s.total_groups = kFew;
  const std::pair<uint64_t, double> home_chunks[] = {{4, 0.034},  {4, 0.0305}, {4, 0.0291}, {4, 0.0339},
                                                     {4, 0.0287}, {4, 0.0298}, {4, 0.0300}, {2, 0.0255}};
  History h;
  for (const auto& [groups, seconds] : home_chunks) {
    ChunkTiming t;
    t.chunk = {0, 0, groups};
    t.end = seconds;
    h.record_chunk("k", kSize, t);
  }
  for (uint64_t g : {1, 1, 1, 2}) {
    ChunkTiming t;
    t.chunk = {1, 0, g};
    t.end = 0.028 * static_cast<double>(g);
    h.record_chunk("k", kSize, t);
  }
  const GateEvidence evidence = gate_evidence(h, s, {0, 1}, PolicyParams{});
  ASSERT_TRUE(evidence.home_seconds.has_value());
  EXPECT_NEAR(*evidence.home_seconds, 0.0287 / 4 * kFew, 1e-9);  // the best chunk, scaled up
  h.record_split_launch("k", kSize, {0, 1}, 0.25);
  EXPECT_EQ(auto_paying_devices(h, s, {0, 1}, PolicyParams{}), (std::vector<int>{0, 1}));
}

TEST(AutoSplitCost, HomeAloneOfAnIrregularKernelIsItsChunksMeanPace) {
  // benchmarks/mandel_uniform on two basic PoCL devices (16 group rows, 2 to 8 ms each): home's chunks
  // in two split launches; the cheapest row scaled up says 34 ms, where home alone took 83 ms. Once
  // the kernel is known to be irregular, home alone is the chunks' mean pace (60 ms here), and the
  // split launches of 38 ms pay.
  constexpr uint64_t kRows = 16;
  LaunchShape s = shape(0);
  s.total_groups = kRows;
  const std::pair<uint64_t, double> home_chunks[] = {{2, 0.0063}, {1, 0.0021}, {1, 0.0021}, {1, 0.0021}, {3, 0.0090},
                                                     {2, 0.0166}, {1, 0.0062}, {1, 0.0026}, {1, 0.0021}};
  History h;
  double groups = 0, seconds = 0;
  for (const auto& [g, t] : home_chunks) {
    ChunkTiming timing;
    timing.chunk = {0, 0, g};
    timing.end = t;
    h.record_chunk("k", kSize, timing);
    groups += static_cast<double>(g);
    seconds += t;
  }
  for (uint64_t g : {2, 3, 1, 2}) {
    ChunkTiming timing;
    timing.chunk = {1, 0, g};
    timing.end = 0.005 * static_cast<double>(g);
    h.record_chunk("k", kSize, timing);
  }
  h.record_split_launch("k", kSize, {0, 1}, 0.038);
  const GateEvidence regular_or_unknown = gate_evidence(h, s, {0, 1}, PolicyParams{});
  ASSERT_TRUE(regular_or_unknown.home_seconds.has_value());
  EXPECT_NEAR(*regular_or_unknown.home_seconds, 0.0021 * kRows, 1e-9);  // the best chunk, scaled up
  EXPECT_EQ(auto_paying_devices(h, s, {0, 1}, PolicyParams{}), (std::vector<int>{0}));

  h.set_regular("k", false);
  const GateEvidence irregular = gate_evidence(h, s, {0, 1}, PolicyParams{});
  ASSERT_TRUE(irregular.home_seconds.has_value());
  EXPECT_NEAR(*irregular.home_seconds, seconds / groups * kRows, 1e-9);
  EXPECT_EQ(auto_paying_devices(h, s, {0, 1}, PolicyParams{}), (std::vector<int>{0, 1}));
}

// benchmarks/mandelbrot over 8 single-threaded devices of one kind: sigmoid hands the 64 rows out in
// order, so home's few chunks (its first, a first run, left out) fell on the image's cheap last rows
// and the others' on its costly middle. Each device by its own chunks, home alone came to a few
// milliseconds and no other device paid (`one_device_pays`: the launch then took 530 ms where the
// split took 80). Pooled by kind, the chunks cover the range: home alone is their mean pace over the
// launch, and every device pays.
TEST(AutoSplitCost, AnIrregularKernelPoolsTheChunksOfDevicesOfOneKind) {
  constexpr uint64_t kRows = 64;
  LaunchShape s = shape(0);
  s.total_groups = kRows;
  History h;
  h.set_regular("k", false);
  double groups = 0, seconds = 0;
  auto chunk = [&](int device, uint64_t g, double t) {
    ChunkTiming timing;
    timing.chunk = {device, 0, g};
    timing.end = t;
    h.record_chunk("k", kSize, timing);
    groups += static_cast<double>(g);
    seconds += t;
  };
  chunk(0, 2, 0.0004);  // home: the last rows, almost outside the set
  for (int d = 1; d < 8; ++d) chunk(d, 4, 0.030 + 0.002 * d);
  const std::vector<int> all = {0, 1, 2, 3, 4, 5, 6, 7};
  const GateEvidence apart = gate_evidence(h, s, all, PolicyParams{});
  ASSERT_TRUE(apart.home_seconds.has_value());
  EXPECT_NEAR(*apart.home_seconds, 0.0004 / 2 * kRows, 1e-9);
  EXPECT_EQ(auto_paying_devices(h, s, all, PolicyParams{}), std::vector<int>{0});

  s.device_kinds.assign(8, 0);  // one kind, as device_kinds(profiles) makes of equal profiles
  const GateEvidence pooled = gate_evidence(h, s, all, PolicyParams{});
  ASSERT_TRUE(pooled.home_seconds.has_value());
  EXPECT_NEAR(*pooled.home_seconds, seconds / groups * kRows, 1e-9);
  EXPECT_EQ(auto_paying_devices(h, s, all, PolicyParams{}), all);
}

// Runs one launch of `policy` over `lines` (device -> its chunk time), chunk after chunk in time
// order, and returns the groups each device got.
std::map<int, uint64_t> run_launch(Policy& policy, const std::map<int, Line>& lines) {
  std::map<int, uint64_t> groups;
  std::map<int, std::optional<ChunkTiming>> running;
  std::map<int, double> idle_at;
  for (const auto& [device, line] : lines) idle_at[device] = 0;
  double now = 0;
  while (!idle_at.empty()) {
    // The device idle first asks; one that has a chunk reports it first.
    auto next = idle_at.begin();
    for (auto it = idle_at.begin(); it != idle_at.end(); ++it)
      if (it->second < next->second) next = it;
    const int device = next->first;
    now = next->second;
    if (running[device]) {
      policy.chunk_done(*running[device]);
      running[device].reset();
    }
    auto chunk = policy.next_chunk(device, now);
    if (!chunk) {
      idle_at.erase(device);
      continue;
    }
    groups[device] += chunk->groups();
    ChunkTiming t;
    t.chunk = *chunk;
    t.start = now;
    t.end = now + lines.at(device).time(static_cast<double>(chunk->groups()));
    running[device] = t;
    next->second = t.end;
  }
  policy.end_launch(now);
  return groups;
}

TEST(AutoSplitCost, AProbesMeasurementRenewsTheVerdict) {
  auto h = std::make_shared<History>();
  record_models_predicting_a_gain(*h);
  const std::map<int, Line> lines{{0, kHome}, {1, kSlower}};
  // Launch 0 was split and took 12x home alone (a switch past hope: auto_gate); launches 1-9 then
  // run on home alone, unsplit (the executor counts them).
  h->note_launch("k", kSize);
  h->record_split_launch("k", kSize, {0, 1}, 12 * kHomeAlone);
  for (uint64_t n = 1; n < 10; ++n) {
    EXPECT_EQ(auto_paying_devices(*h, shape(0, n), {0, 1}, PolicyParams{}), std::vector<int>{0}) << n;
    h->note_launch("k", kSize);
  }
  // Launch 10, the probe (made although it cost 11x home last time: auto_probe_cost raised): split again,
  // and this time (the machine changed) it took 0.5 ms.
  PolicyParams free_probes;
  free_probes.auto_probe_cost = 1000;
  auto policy = make_policy("auto", free_probes, h, {});
  policy->begin_launch(shape(0, 10), {0, 1}, 0);
  EXPECT_TRUE(policy->eliminated().empty());
  const auto groups = run_launch(*policy, lines);
  EXPECT_GT(groups.at(0), 0u);
  EXPECT_GT(groups.at(1), 0u);
  policy->launch_measured(0.5 * kHomeAlone);
  EXPECT_LT(*h->split_launch_seconds("k", kSize, {0, 1}), (1 - PolicyParams{}.auto_min_gain) * kHomeAlone);
  EXPECT_EQ(auto_paying_devices(*h, shape(0, 11), {0, 1}, PolicyParams{}), (std::vector<int>{0, 1}));
}

TEST(AutoSplitCost, ALaunchOnHomeAloneIsNoSplitMeasurement) {
  auto h = std::make_shared<History>();
  record_models_predicting_a_gain(*h);
  record_steady_splits(*h, {0, 1}, 4 * kHomeAlone);
  const double before = *h->split_launch_seconds("k", kSize, {0, 1});
  auto policy = make_policy("auto", PolicyParams{}, h, {});
  policy->begin_launch(shape(0, 11), {0, 1}, 0);
  EXPECT_EQ(policy->eliminated(), std::vector<int>{1});
  const auto groups = run_launch(*policy, {{0, kHome}, {1, kSlower}});
  EXPECT_EQ(groups.at(0), kGroups);
  EXPECT_EQ(groups.count(1), 0u);
  policy->launch_measured(0.1 * kHomeAlone);
  EXPECT_DOUBLE_EQ(*h->split_launch_seconds("k", kSize, {0, 1}), before);
  EXPECT_FALSE(h->split_launch_seconds("k", kSize, {0}).has_value());
}

// Two devices of one kind whose chunks take a + b x groups, the kernel counted once at kSize: auto
// picks wp over them.
std::shared_ptr<History> two_devices_on_a_line(double a, double b) {
  auto h = std::make_shared<History>();
  h->note_launch("k", kSize);
  for (int device : {0, 1}) record_line(*h, device, Line{a, b});
  return h;
}

const std::vector<DeviceProfile> kTwoOfOneKind = [] {
  std::vector<DeviceProfile> profiles(2);
  profiles[1].index = 1;
  return profiles;
}();

// A split right after a split whose devices compiled the kernel (a cold one) is not measured: the
// cold one's chunks, handed out on demand, left the data where the next one's shares do not want it.
// The split after that one is.
TEST(AutoPolicy, TheSplitAfterAColdOneIsNotMeasured) {
  LaunchShape s = shape(0);
  auto h = two_devices_on_a_line(1e-6, 1e-5);
  const std::vector<DeviceProfile>& profiles = kTwoOfOneKind;
  for (uint64_t number : {0, 1, 2}) {
    LaunchShape launch = s;
    launch.launch_number = number;
    launch.follows_split = h->plan_split("k", s.global_size, number, {0, 1});
    auto policy = make_policy("auto", PolicyParams{}, h, profiles);
    policy->begin_launch(launch, {0, 1}, 0);
    for (int d : {0, 1})
      while (auto c = policy->next_chunk(d, 0)) {
        ChunkTiming timing{*c, 0, 0.001};
        timing.first_run = number == 0 && d == 1;
        policy->chunk_done(timing);
      }
    policy->end_launch(0.001);
    if (number > 0) policy->launch_measured(number == 1 ? 0.5 : 0.002);  // the executor skips cold ones
    if (number == 1) {
      EXPECT_FALSE(h->split_launch_seconds("k", s.global_size, {0, 1}).has_value());
    }
  }
  ASSERT_TRUE(h->split_launch_seconds("k", s.global_size, {0, 1}).has_value());
  EXPECT_NEAR(*h->split_launch_seconds("k", s.global_size, {0, 1}), 0.002, 1e-12);
}

// A split by wp's shares right after one by other chunks (sigmoid's, handed out on demand) found the
// data where those left it: its time is a switch's, not what splitting costs launch after launch. The
// next one by the same shares is.
TEST(AutoPolicy, ASplitAfterOneByOtherChunksIsNoSteadyMeasurement) {
  LaunchShape s = shape(0);
  auto h = two_devices_on_a_line(0.005, 1e-5);
  const std::vector<DeviceProfile>& profiles = kTwoOfOneKind;
  History::AutoTrack track;
  track.last_split_choice = "sigmoid";
  h->set_auto_track("k", s.global_size, track);
  for (uint64_t number : {1, 2}) {
    LaunchShape launch = s;
    launch.launch_number = number;
    launch.follows_split = true;
    auto policy = make_policy("auto", PolicyParams{}, h, profiles);
    policy->begin_launch(launch, {0, 1}, 0);
    ASSERT_EQ(policy->planned_by(), "auto:wp");
    for (int d : {0, 1})
      while (auto c = policy->next_chunk(d, 0)) policy->chunk_done(ChunkTiming{*c, 0, 0.01});
    policy->end_launch(0.01);
    policy->launch_measured(number == 1 ? 0.016 : 0.010);
    EXPECT_EQ(h->steady_splits_measured("k", s.global_size, {0, 1}), number == 2 ? 1u : 0u) << number;
  }
  EXPECT_NEAR(*h->split_launch_seconds("k", s.global_size, {0, 1}), 0.010, 1e-12);
}

// Among a kernel's first splits at a size (six over the set, three where none was steady; those still
// running count), a split measured slower than home only as a switch, or by one steady split, is
// split again (a probe) so that two are measured after a split by their own shares; past them, where
// a steady split took three times home's time or switches alone ten times, or where probes may cost
// nothing (auto_probe_cost 0), home keeps the launch.
TEST(AutoGate, FewerThanTwoSteadySplitsAreNoVerdictAmongTheFirstSplits) {
  LaunchShape s = shape(0);
  GateEvidence evidence;
  evidence.paying = {0, 1};
  evidence.not_worth_it = true;
  evidence.home_seconds = 0.0024;
  History h;
  for (size_t steady : {0, 1})
    for (uint64_t splits : {1, 3, 5, 6, 25})
      for (double split : {0.0029, 0.0060, 0.0075, 0.0230, 0.0250}) {
        // Counted in splits, whatever the launch's number: launches kept on home in between measure nothing.
        s.launch_number = 45;  // no probe of the regular schedule (auto_probe)
        evidence.steady_splits = steady;
        evidence.splits = splits;
        evidence.split_seconds = split;
        const GateVerdict verdict = auto_gate(h, s, {0, 1}, PolicyParams{}, evidence);
        // Hopeless at 3x home by a steady split, at 10x by switches alone; three switches at most.
        const bool again = splits < (steady > 0 ? 6u : 3u) && split < (steady > 0 ? 0.0072 : 0.024);
        EXPECT_EQ(verdict.devices, again ? std::vector<int>({0, 1}) : std::vector<int>({0}))
            << steady << " " << splits << " " << split;
        EXPECT_EQ(verdict.probe, again) << steady << " " << splits << " " << split;
      }
  evidence.splits = 2;
  evidence.split_seconds = 0.0029;
  evidence.steady_splits = 1;
  // Splits still running count: launches enqueued before the first split ends are not all probes.
  for (int running = 0; running < 4; ++running) {
    EXPECT_EQ(auto_gate(h, s, {0, 1}, PolicyParams{}, evidence).probe, 2 + running < 6) << running;
    h.split_started(s.kernel_key, s.global_size);
  }
  PolicyParams free_probes_only;
  free_probes_only.auto_probe_cost = 0;
  EXPECT_EQ(auto_gate(h, s, {0, 1}, free_probes_only, evidence).devices, std::vector<int>({0}));
  // Two steady measurements decide at once.
  evidence.steady_splits = 2;
  EXPECT_EQ(auto_gate(h, s, {0, 1}, PolicyParams{}, evidence).devices, std::vector<int>({0}));
}

TEST(AutoGate, TheEvidenceCountsTheSplitsMeasuredOverThePayingSet) {
  History h;
  LaunchShape s = shape(0);
  for (int i = 0; i < 4; ++i) h.record_split_launch(s.kernel_key, s.global_size, {1, 0}, 0.002, 0.001, i > 0);
  h.record_split_launch(s.kernel_key, s.global_size, {0, 1, 2}, 0.002, 0.001, false);
  EXPECT_EQ(h.splits_measured(s.kernel_key, s.global_size, {0, 1}), 4u);
  EXPECT_EQ(h.splits_measured(s.kernel_key, s.global_size, {0, 2}), 0u);
  EXPECT_EQ(h.splits_measured(s.kernel_key, s.global_size + 1, {0, 1}), 0u);
  // The gate's evidence counts those of the devices the models say pay (a CPU 300x slower beside two
  // GPUs is left out: the splits over all three are not theirs).
  History three;
  record_models_predicting_a_gain(three);
  record_line(three, 2, {0, 300e-6});
  for (int i = 0; i < 4; ++i) three.record_split_launch("k", kSize, {0, 1}, 0.002, 0.001, i > 0);
  three.record_split_launch("k", kSize, {0, 1, 2}, 0.002, 0.001, false);
  const GateEvidence evidence = gate_evidence(three, shape(0, 9), {0, 1, 2}, PolicyParams{});
  ASSERT_EQ(evidence.paying, (std::vector<int>{0, 1}));
  EXPECT_EQ(evidence.splits, 4u);
  EXPECT_EQ(evidence.steady_splits, 3u);
}

}  // namespace
}  // namespace coex::sched
