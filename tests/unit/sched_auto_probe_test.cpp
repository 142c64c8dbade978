// auto's probes: the launches at which it splits what it measured not to pay, so that the
// measurement is renewed (docs/schedulers.md, "Probes"), and what they may cost.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "auto_split_fixtures.h"
#include "sched/auto_policy.h"

namespace coex::sched {
namespace {

using namespace split_fixtures;

TEST(AutoSplitCost, ProbesFollowTheLaunchNumberGivenAtEnqueue) {
  History h;
  for (int i = 0; i < 14; ++i) h.note_launch("k", kSize);
  EXPECT_FALSE(auto_probe(h, shape(0), PolicyParams{}));     // the History's count: 14
  EXPECT_TRUE(auto_probe(h, shape(0, 10), PolicyParams{}));  // planned as launch 10, counted later
  // A probe is a streak of auto_probe_streak (3) launches: 10, 11, 12.
  EXPECT_TRUE(auto_probe(h, shape(0, 11), PolicyParams{}));
  EXPECT_TRUE(auto_probe(h, shape(0, 12), PolicyParams{}));
  EXPECT_FALSE(auto_probe(h, shape(0, 13), PolicyParams{}));
  PolicyParams one;
  one.auto_probe_streak = 1;
  EXPECT_FALSE(auto_probe(h, shape(0, 11), one));
  EXPECT_TRUE(auto_probe(h, shape(0, 20), PolicyParams{}));
  EXPECT_TRUE(auto_probe(h, shape(0, 22), PolicyParams{}));
  EXPECT_FALSE(auto_probe(h, shape(0, 30), PolicyParams{}));  // gaps double: 10, 20, 40, ...
  EXPECT_TRUE(auto_probe(h, shape(0, 40), PolicyParams{}));
}

// The probes' launches by their definition (probe_interval x 1, 2, 4, ... each starting a streak of
// auto_probe_streak), against is_probe_number's one division.
TEST(AutoSplitCost, ProbeNumbersAreTheStreaksFromEachDoublingOfTheInterval) {
  for (int64_t interval : {1, 3, 10, 64}) {
    for (int64_t streak : {1, 3, 5, 20}) {
      PolicyParams params;
      params.probe_interval = interval;
      params.auto_probe_streak = streak;
      std::vector<bool> probe(5000, false);
      for (uint64_t start = uint64_t(interval); start < probe.size(); start *= 2)
        for (uint64_t n = start; n < start + uint64_t(streak) && n < probe.size(); ++n) probe[n] = true;
      for (uint64_t n = 0; n < probe.size(); ++n)
        ASSERT_EQ(is_probe_number(n, params), probe[n])
            << "launch " << n << ", interval " << interval << ", streak " << streak;
    }
  }
}

TEST(AutoSplitCost, AProbeMakesTheSplitThatWasMeasuredNotToPay) {
  // Two GPUs and a CPU 300x slower: the models leave the CPU out (under auto_min_share).
  History h;
  record_models_predicting_a_gain(h);
  record_line(h, 2, {0, 300e-6});
  ASSERT_EQ(auto_paying_devices(h, shape(0, 9), {0, 1, 2}, PolicyParams{}), (std::vector<int>{0, 1}));
  // Nothing against the two GPUs: a probe tries every device.
  EXPECT_EQ(auto_paying_devices(h, shape(0, 10), {0, 1, 2}, PolicyParams{}), (std::vector<int>{0, 1, 2}));
  record_steady_splits(h, {0, 1}, 4 * kHomeAlone);
  EXPECT_EQ(auto_paying_devices(h, shape(0, 9), {0, 1, 2}, PolicyParams{}), std::vector<int>{0});
  EXPECT_EQ(auto_paying_devices(h, shape(0, 15), {0, 1, 2}, PolicyParams{}), std::vector<int>{0});
  // The probe makes that split again, so that its measurement is renewed: a probe of all three would
  // measure another set and leave the verdict on these two as it was. (Probes that cost anything:
  // the cost rule is the next test's.)
  PolicyParams free_probes;
  free_probes.auto_probe_cost = 1000;
  EXPECT_EQ(auto_paying_devices(h, shape(0, 10), {0, 1, 2}, free_probes), (std::vector<int>{0, 1}));
  EXPECT_EQ(auto_paying_devices(h, shape(0, 20), {0, 1, 2}, free_probes), (std::vector<int>{0, 1}));
}

// A set of equal devices never measured whose part, home with another device, was measured hopeless (3x
// home alone, steadily): more devices only add their fixed costs, so the launch stays on home, with
// the verdict on that part's measurement; its probe waits as that part's cost says. A part that was
// not hopeless, or devices of unequal kinds, say nothing of the whole: the whole is split, to be
// measured.
TEST(AutoSplitCost, ASetWithinTheDevicesMeasuredHopelessKeepsTheLaunchOnHome) {
  History h;
  record_models_predicting_a_gain(h);
  record_line(h, 2, kSlower);
  record_steady_splits(h, {0, 1}, 4 * kHomeAlone);
  const std::vector<int> all{0, 1, 2};
  // Three devices of one kind (the rule holds among equal devices only; below, another kind).
  auto equal = [](std::optional<uint64_t> number) {
    LaunchShape s = shape(0, number);
    s.device_kinds = {0, 0, 0};
    return s;
  };
  const GateVerdict verdict = auto_gate(h, equal(9), all, PolicyParams{});
  EXPECT_EQ(verdict.devices, std::vector<int>{0});
  EXPECT_EQ(verdict.measured_devices, (std::vector<int>{0, 1}));
  ASSERT_TRUE(verdict.split_seconds.has_value());
  EXPECT_NEAR(*verdict.split_seconds, 4 * kHomeAlone, 1e-12);
  EXPECT_FALSE(verdict.probe);
  // Its probes: as for {0, 1} itself (AProbeWaitsUntilTheLaunchesSinceTheLastOnePayForIt).
  EXPECT_EQ(auto_paying_devices(h, equal(320), all, PolicyParams{}), std::vector<int>{0});
  EXPECT_EQ(auto_paying_devices(h, equal(640), all, PolicyParams{}), all);
  // Devices of unequal kinds: the part says nothing of the whole.
  LaunchShape unequal = shape(0, 9);
  unequal.device_kinds = {0, 1, 0};
  EXPECT_EQ(auto_paying_devices(h, unequal, all, PolicyParams{}), all);
  // A part measured at 2x home alone (steadily): no verdict on the whole.
  History near;
  record_models_predicting_a_gain(near);
  record_line(near, 2, kSlower);
  record_steady_splits(near, {0, 1}, 2 * kHomeAlone);
  EXPECT_EQ(auto_paying_devices(near, equal(9), all, PolicyParams{}), all);
  // Nor a part without home, however slow.
  History other;
  record_models_predicting_a_gain(other);
  record_line(other, 2, kSlower);
  record_steady_splits(other, {1, 2}, 20 * kHomeAlone);
  EXPECT_EQ(auto_paying_devices(other, equal(9), all, PolicyParams{}), all);
}

TEST(AutoSplitCost, AProbeWaitsUntilTheLaunchesSinceTheLastOnePayForIt) {
  History h;
  record_models_predicting_a_gain(h);
  // The split took 4x home alone: a probe, a streak of three such splits, costs 9x home alone, 180
  // launches' worth of 5% each.
  record_steady_splits(h, {0, 1}, 4 * kHomeAlone);
  const std::vector<int> home_only{0}, split{0, 1};
  EXPECT_EQ(auto_paying_devices(h, shape(0, 10), {0, 1}, PolicyParams{}), home_only);   // 10 launches since
  EXPECT_EQ(auto_paying_devices(h, shape(0, 80), {0, 1}, PolicyParams{}), home_only);   // 40
  EXPECT_EQ(auto_paying_devices(h, shape(0, 160), {0, 1}, PolicyParams{}), home_only);  // 80
  EXPECT_EQ(auto_paying_devices(h, shape(0, 320), {0, 1}, PolicyParams{}), home_only);  // 160
  EXPECT_EQ(auto_paying_devices(h, shape(0, 640), {0, 1}, PolicyParams{}), split);      // 320: 16 ms for 9 ms of probes
  EXPECT_EQ(auto_paying_devices(h, shape(0, 642), {0, 1}, PolicyParams{}), split);      // its streak
  EXPECT_EQ(auto_paying_devices(h, shape(0, 643), {0, 1}, PolicyParams{}), home_only);  // not a probe
  // One split a probe: the launches since it pay for a third as much.
  PolicyParams single;
  single.auto_probe_streak = 1;
  EXPECT_EQ(auto_paying_devices(h, shape(0, 80), {0, 1}, single), home_only);  // 40
  EXPECT_EQ(auto_paying_devices(h, shape(0, 160), {0, 1}, single), split);     // 80: 4 ms for 3 ms of probe
  // A split measured cheap costs nothing to probe again.
  History cheap;
  record_models_predicting_a_gain(cheap);
  record_steady_splits(cheap, {0, 1}, 0.98 * kHomeAlone);  // faster, but under auto_min_gain
  EXPECT_EQ(auto_paying_devices(cheap, shape(0, 9), {0, 1}, PolicyParams{}), home_only);
  EXPECT_EQ(auto_paying_devices(cheap, shape(0, 10), {0, 1}, PolicyParams{}), split);
  // Never measured: nothing says the probe is dear.
  History unmeasured;
  record_models_predicting_a_gain(unmeasured);
  record_line(unmeasured, 2, {0, 300e-6});
  EXPECT_EQ(auto_paying_devices(unmeasured, shape(0, 10), {0, 1, 2}, PolicyParams{}), (std::vector<int>{0, 1, 2}));
}

// Asks auto's gate for launches `first` to `last` of the kernel over devices 0 (home) and 1: those
// `probe` names are probes, split over both; the others stay on home.
void expect_probes(const AutoPolicy& policy, uint64_t first, uint64_t last,
                   const std::function<bool(uint64_t)>& probe) {
  for (uint64_t n = first; n <= last; ++n) {
    LaunchShape s = shape(0);
    GateVerdict verdict;
    const char* reason = policy.unsplit_reason(s, {0, 1}, &verdict);
    ASSERT_EQ(verdict.launch, n);
    EXPECT_EQ(reason == nullptr, probe(n)) << n;
    EXPECT_EQ(verdict.probe, probe(n)) << n;
  }
}

// A verdict that turned against splits that paid (launch 101 split, no probe; the splits since measured
// 1.1 x home alone: its probes, three splits 0.1 x home beyond it each, fit the 5% of ten launches) keeps launch 102 on
// home, and the probes count again from it: launch 112 is one, where counted from the kernel's first launch the next
// would be 160. A verdict for home after a probe's streak leaves the count as it was: the next probe is at 122.
TEST(AutoGate, AVerdictThatTurnedIsProbedAgainSoon) {
  auto h = std::make_shared<History>();
  record_models_predicting_a_gain(*h);
  for (int i = 0; i < 2; ++i) h->record_split_launch("k", kSize, {0, 1}, 1.1 * kHomeAlone, kHomeAlone, true);
  AutoPolicy policy(PolicyParams{}, h, {});
  for (uint64_t n = 0; n <= 101; ++n) h->plan_launch("k", kSize);
  h->plan_split("k", kSize, 101, {0, 1});
  expect_probes(policy, 102, 122, [](uint64_t n) { return (n >= 112 && n <= 114) || n == 122; });
  EXPECT_EQ(h->probe_origin("k", kSize), 102u);
}

// A run that loads a History in which the splits did not pay (300 launches of the kernel) probes at
// its own launches 10 (a streak of three) and 20, as a first run does: counted from the kernel's first
// launch in the file, its only probe would be at 320 and the next at 640.
TEST(AutoGate, ALaterRunProbesFromItsOwnFirstLaunch) {
  const std::string file = ::testing::TempDir() + "coex_auto_later_run_" + std::to_string(::getpid()) + ".json";
  {
    History first("sig");
    record_models_predicting_a_gain(first);
    for (int i = 0; i < 2; ++i) first.record_split_launch("k", kSize, {0, 1}, 1.1 * kHomeAlone, kHomeAlone, true);
    for (int i = 0; i < 300; ++i) first.note_launch("k", kSize);
    ASSERT_TRUE(first.save(file));
  }
  auto h = std::make_shared<History>("sig");
  ASSERT_TRUE(h->load(file));
  AutoPolicy policy(PolicyParams{}, h, {});
  expect_probes(policy, 300, 320, [](uint64_t n) { return (n >= 310 && n <= 312) || n == 320; });
  std::remove(file.c_str());
}

}  // namespace
}  // namespace coex::sched
