// History: throughput per (kernel, size, device), split launch times, launch numbers, invalidation,
// eviction, thread safety (its file: sched_history_file_test.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "history_fixtures.h"
#include "sched/history.h"
#include "sched/policy_factory.h"

namespace coex::sched {
namespace {

using namespace history_fixtures;

TEST(History, ThroughputPerKernelSizeAndDevice) {
  History h;
  h.record_chunk("k", 1024, timing(0, 100, 0.5));
  h.record_chunk("k", 1024, timing(1, 300, 0.5));
  h.record_chunk("k", 2048, timing(0, 100, 1.0));
  EXPECT_NEAR(*h.throughput("k", 1024, 0), 200, 1e-9);
  EXPECT_NEAR(*h.throughput("k", 1024, 1), 600, 1e-9);
  EXPECT_NEAR(*h.throughput("k", 2048, 0), 100, 1e-9);
  EXPECT_FALSE(h.throughput("k", 4096, 0).has_value());
  EXPECT_FALSE(h.throughput("other", 1024, 0).has_value());
}

// A device's first run of a kernel (PoCL compiles or loads its work-group function then) reaches the
// policy but not the History: a line through it and the later chunks had a large per-chunk cost.
TEST(History, PoliciesKeepNoSampleOfAFirstRun) {
  auto history = std::make_shared<History>();
  auto policy = make_policy("static", PolicyParams{}, history, {});
  LaunchShape shape;
  shape.kernel_key = "k";
  shape.global_size = 100;
  shape.total_groups = 100;
  policy->begin_launch(shape, {0}, 0);
  auto first = policy->next_chunk(0, 0);
  ASSERT_TRUE(first.has_value());
  ChunkTiming cold{*first, 0, 0.5, 0, true};
  policy->chunk_done(cold);
  EXPECT_TRUE(history->samples("k", 100, 0).empty());
  ChunkTiming warm{*first, 0, 0.1, 0, false};
  policy->chunk_done(warm);
  EXPECT_EQ(history->samples("k", 100, 0).size(), 1u);
}

TEST(History, RecentLaunchesWeighMore) {
  // Within a launch chunks count by their size; each finished launch ages the sums by 0.3. A device
  // that ran at 1000 groups/s and then, in the next launch, at 250 groups/s:
  //   (0.3 * 100 + 300) / (0.3 * 0.1 + 1.2) = 268.3 groups/s.
  History h;
  h.record_chunk("k", 1, timing(0, 100, 0.1));
  h.note_launch("k", 1);
  for (int i = 0; i < 3; ++i) h.record_chunk("k", 1, timing(0, 100, 0.4));
  EXPECT_NEAR(*h.throughput("k", 1, 0), 330 / 1.23, 1e-9);
}

// The decay of many launches at once (History::settle_decay) is the decay launch by launch: two launches
// between the samples weigh the first 0.09; after thousands the first counts for nothing, and a split
// set measured once keeps its time and stays measured (the weights stop decaying before they vanish),
// in memory and through the file.
TEST(History, TheDecayOfManyLaunchesIsTheDecayOfEach) {
  History h("sig");
  h.record_chunk("k", 1, timing(0, 100, 0.1));
  h.note_launch("k", 1);
  h.note_launch("k", 1);
  h.record_chunk("k", 1, timing(0, 100, 0.4));
  EXPECT_NEAR(*h.throughput("k", 1, 0), (0.09 * 100 + 100) / (0.09 * 0.1 + 0.4), 1e-9);
  h.record_split_launch("k", 1, {0, 1}, 0.02, 0.01);
  for (int i = 0; i < 5000; ++i) h.note_launch("k", 1);
  h.record_chunk("k", 1, timing(0, 100, 0.2));
  EXPECT_NEAR(*h.throughput("k", 1, 0), 500.0, 1e-9);
  ASSERT_TRUE(h.split_launch_seconds("k", 1, {0, 1}).has_value());
  EXPECT_NEAR(*h.split_launch_seconds("k", 1, {0, 1}), 0.02, 1e-12);
  const std::string file = ::testing::TempDir() + "coex_history_decay_" + std::to_string(::getpid()) + ".json";
  ASSERT_TRUE(h.save(file));
  History loaded("sig");
  ASSERT_TRUE(loaded.load(file));
  std::remove(file.c_str());
  EXPECT_NEAR(*loaded.throughput("k", 1, 0), 500.0, 1e-9);
  EXPECT_NEAR(*loaded.split_launch_seconds("k", 1, {0, 1}), 0.02, 1e-12);
  const auto above = loaded.split_above("k", 0, {0, 1});
  ASSERT_TRUE(above.has_value());
  EXPECT_NEAR(above->alone, 0.01, 1e-12);  // home alone's mean, from weights decayed 5,000 launches
}

TEST(History, SamplesLaunchesSharesRegularity) {
  History h;
  for (int i = 1; i <= 40; ++i) h.record_chunk("k", 8, timing(2, static_cast<uint64_t>(i), 0.01 * i, 0.001));
  const auto s = h.samples("k", 8, 2);
  ASSERT_EQ(s.size(), History::kMaxSamples);
  EXPECT_EQ(s.back().groups, 40);  // newest last
  EXPECT_EQ(s.front().groups, 40 - static_cast<double>(History::kMaxSamples) + 1);
  EXPECT_NEAR(s.back().transfer_seconds, 0.001, 1e-15);
  h.record_chunk("k", 16, timing(2, 5, 0.1));
  EXPECT_EQ(h.samples_any_size("k", 2).size(), History::kMaxSamples + 1);
  EXPECT_EQ(h.launches("k", 8), 0u);
  h.note_launch("k", 8);
  h.note_launch("k", 8);
  EXPECT_EQ(h.launches("k", 8), 2u);
  h.set_shares("k", 8, {{0, 0.25}, {2, 0.75}});
  EXPECT_EQ(h.shares("k", 8).at(2), 0.75);
  EXPECT_FALSE(h.regular("k").has_value());
  h.set_regular("k", false);
  EXPECT_EQ(h.regular("k"), std::optional<bool>(false));
}

// A kernel known to be irregular is taken as regular at the second regular judgement in a row; an
// irregular one counts at once, and starts the count again.
TEST(History, AKnownIrregularKernelTurnsRegularOnlyAtTheSecondRegularJudgementInARow) {
  History h;
  h.judge_regular("k", true);
  EXPECT_EQ(h.regular("k"), std::optional<bool>(true));  // nothing known: the judgement stands
  h.judge_regular("k", false);
  EXPECT_EQ(h.regular("k"), std::optional<bool>(false));
  h.judge_regular("k", true);
  EXPECT_EQ(h.regular("k"), std::optional<bool>(false));
  h.judge_regular("k", false);
  h.judge_regular("k", true);
  EXPECT_EQ(h.regular("k"), std::optional<bool>(false));
  h.judge_regular("k", true);
  EXPECT_EQ(h.regular("k"), std::optional<bool>(true));
  h.judge_regular("k", false);
  EXPECT_EQ(h.regular("k"), std::optional<bool>(false));
  EXPECT_EQ(h.regular("other"), std::nullopt);
}

TEST(History, ProbesOfALoadedRunCountFromItsFirstLaunch) {
  const auto dir = temp_dir("probes");
  const std::string file = (dir / "history.json").string();
  History h("sig-A");
  h.record_chunk("k", 8, timing(0, 10, 1));
  for (int i = 0; i < 300; ++i) h.note_launch("k", 8);
  h.plan_split("k", 8, 250, {0, 1});
  h.restart_probes("k", 8, 251);
  EXPECT_EQ(h.probe_origin("k", 8), 251u);
  std::string error;
  ASSERT_TRUE(h.save(file, &error)) << error;
  History loaded("sig-A");
  ASSERT_TRUE(loaded.load(file, &error)) << error;
  EXPECT_EQ(loaded.probe_origin("k", 8), 300u);
  EXPECT_EQ(loaded.plan_launch("k", 8), 300u);
  EXPECT_EQ(loaded.probe_origin("k", 16), 0u);  // a size the file does not hold
  std::filesystem::remove_all(dir);
}

TEST(History, SplitLaunchTimesPerDeviceSetAreTheLowerMedianOfTheLastThree) {
  History h;
  EXPECT_FALSE(h.split_launch_seconds("k", 8, {0, 1}).has_value());
  h.record_split_launch("k", 8, {1, 0}, 0.004);  // any order: the set is what counts
  EXPECT_NEAR(*h.split_launch_seconds("k", 8, {0, 1}), 0.004, 1e-15);
  EXPECT_FALSE(h.split_launch_seconds("k", 8, {0, 1, 2}).has_value());  // another set of devices
  EXPECT_FALSE(h.split_launch_seconds("k", 16, {0, 1}).has_value());    // another size
  h.note_launch("k", 8);
  h.record_split_launch("k", 8, {0, 1}, 0.001);  // of two, the smaller
  EXPECT_NEAR(*h.split_launch_seconds("k", 8, {0, 1}), 0.001, 1e-15);
  h.record_split_launch("k", 8, {0, 1}, 0.005);  // 4, 1, 5 ms: one slow launch does not move it
  EXPECT_NEAR(*h.split_launch_seconds("k", 8, {0, 1}), 0.004, 1e-15);
  h.record_split_launch("k", 8, {0, 1}, 0.006);  // 1, 5, 6 ms: a second one does
  EXPECT_NEAR(*h.split_launch_seconds("k", 8, {0, 1}), 0.005, 1e-15);
  // Unsplit launches do not age the last times: only new splits replace them.
  for (int i = 0; i < 1000; ++i) h.note_launch("k", 8);
  EXPECT_NEAR(*h.split_launch_seconds("k", 8, {0, 1}), 0.005, 1e-15);
  h.record_split_launch("k", 8, {0, 1}, -1);  // not a time
  h.record_split_launch("k", 8, {0, 1}, std::nan(""));
  EXPECT_NEAR(*h.split_launch_seconds("k", 8, {0, 1}), 0.005, 1e-15);
}

TEST(History, ASplitThatFollowsASplitIsWhatSplittingCosts) {
  History h;
  // Launch 4 split over {0, 1} after launch 3 ran on home: every device's part moves to it first.
  EXPECT_FALSE(h.plan_split("k", 8, 4, {1, 0}));
  EXPECT_TRUE(h.plan_split("k", 8, 5, {0, 1}));       // the launch before it was split over that set
  EXPECT_FALSE(h.plan_split("k", 8, 6, {0, 1, 2}));   // over another set
  EXPECT_FALSE(h.plan_split("k", 8, 8, {0, 1, 2}));   // launch 7 was not split
  EXPECT_FALSE(h.plan_split("k", 16, 9, {0, 1, 2}));  // per size
  EXPECT_FALSE(h.plan_split("k", 8, 0, {0, 1, 2}));
  // The app (or a launch on home) wrote the launch's buffers in between: the data moves whole.
  EXPECT_FALSE(h.plan_split("k", 32, 1, {0, 1}, false, 7));
  EXPECT_FALSE(h.plan_split("k", 32, 2, {0, 1}, false, 9));
  EXPECT_TRUE(h.plan_split("k", 32, 3, {0, 1}, false, 9));
  h.record_split_launch("k", 8, {0, 1}, 0.004);
  h.record_split_launch("k", 8, {0, 1}, 0.006);
  EXPECT_NEAR(*h.split_launch_seconds("k", 8, {0, 1}), 0.004, 1e-15);
  EXPECT_EQ(h.steady_splits_measured("k", 8, {0, 1}), 0u);
  // Once one followed a split, those are the measurement; the switches are not.
  h.record_split_launch("k", 8, {0, 1}, 0.001, std::nullopt, true);
  EXPECT_NEAR(*h.split_launch_seconds("k", 8, {0, 1}), 0.001, 1e-15);
  h.record_split_launch("k", 8, {0, 1}, 0.007);
  EXPECT_NEAR(*h.split_launch_seconds("k", 8, {0, 1}), 0.001, 1e-15);
  h.record_split_launch("k", 8, {0, 1}, 0.003, std::nullopt, true);
  h.record_split_launch("k", 8, {0, 1}, 0.002, std::nullopt, true);
  EXPECT_NEAR(*h.split_launch_seconds("k", 8, {0, 1}), 0.002, 1e-15);
  EXPECT_EQ(h.steady_splits_measured("k", 8, {0, 1}), 3u);
  h.record_split_launch("k", 8, {0, 1}, 0.0025, std::nullopt, true);  // three at most
  EXPECT_EQ(h.steady_splits_measured("k", 8, {0, 1}), 3u);
  EXPECT_NEAR(*h.split_launch_seconds("k", 8, {0, 1}), 0.0025, 1e-15);
}

TEST(History, ProbesCountAgainFromAVerdictThatTurnedAfterASplitThatWasNoProbe) {
  History h;
  EXPECT_EQ(h.probe_origin("k", 8), 0u);
  h.plan_split("k", 8, 40, {0, 1}, true);  // a probe's
  h.restart_probes("k", 8, 41);
  EXPECT_EQ(h.probe_origin("k", 8), 0u);
  h.plan_split("k", 8, 50, {0, 1});
  h.restart_probes("k", 8, 52);  // launch 51 was not split
  EXPECT_EQ(h.probe_origin("k", 8), 0u);
  h.restart_probes("k", 8, 51);
  EXPECT_EQ(h.probe_origin("k", 8), 51u);
  EXPECT_EQ(h.probe_origin("k", 16), 0u);  // per size
  // count_unsplit_launch hands `declines` the number counted from there.
  for (int i = 0; i < 60; ++i) h.plan_launch("k", 8);
  uint64_t asked = 0;
  ASSERT_TRUE(h.count_unsplit_launch("k", 8, [&](uint64_t n) { return asked = n, false; }).has_value());
  EXPECT_EQ(asked, 60u - 51u);
}

TEST(History, LaunchNumbersCountLaunchesPlannedAndNotYetEnded) {
  History h;
  EXPECT_EQ(h.plan_launch("k", 8), 0u);
  EXPECT_EQ(h.plan_launch("k", 8), 1u);  // the first has not ended: the second is not taken for it
  h.note_launch("k", 8);
  h.note_launch("k", 8);
  EXPECT_EQ(h.plan_launch("k", 8), 2u);
  for (int i = 0; i < 5; ++i) h.note_launch("k", 8);  // counted without a number (e.g. a policy's own)
  EXPECT_EQ(h.plan_launch("k", 8), 7u);
  EXPECT_EQ(h.plan_launch("k", 16), 0u);  // per size
  EXPECT_EQ(h.splits_in_flight("k", 8), 0u);
  h.split_started("k", 8);
  h.split_started("k", 8);
  h.split_ended("k", 8);
  EXPECT_EQ(h.splits_in_flight("k", 8), 1u);
  EXPECT_EQ(h.splits_in_flight("k", 16), 0u);
  // Of the kernel at any size: not of another whose key begins alike.
  EXPECT_TRUE(h.kernel_split_in_flight("k"));
  EXPECT_FALSE(h.kernel_split_in_flight("j"));
  h.split_ended("k", 8);
  h.split_ended("k", 8);  // one too many: stays at 0
  EXPECT_EQ(h.splits_in_flight("k", 8), 0u);
  EXPECT_FALSE(h.kernel_split_in_flight("k"));
  h.split_started("kk", 4);
  EXPECT_FALSE(h.kernel_split_in_flight("k"));
  EXPECT_TRUE(h.kernel_split_in_flight("kk"));
}

TEST(History, EvidenceVersionChangesWithWhatFitsReadNotWithLaunchCounts) {
  History h;
  uint64_t v = h.evidence_version();
  auto changed = [&] {
    const uint64_t now = h.evidence_version();
    const bool moved = now != v;
    v = now;
    return moved;
  };
  h.plan_launch("k", 8);
  // A launch run unsplit is numbered and counted at once, unless its number is declined.
  EXPECT_FALSE(h.count_unsplit_launch("k", 8, [](uint64_t n) { return n == 1; }).has_value());
  EXPECT_EQ(h.launches("k", 8), 0u);
  EXPECT_EQ(h.count_unsplit_launch("k", 8, [](uint64_t) { return false; }), std::optional<uint64_t>(1));
  EXPECT_EQ(h.launches("k", 8), 1u);
  EXPECT_EQ(h.plan_launch("k", 8), 2u);
  h.note_launch("k", 8);
  h.split_started("k", 8);
  h.split_ended("k", 8);
  EXPECT_FALSE(changed());
  ChunkTiming t;
  t.chunk = {0, 0, 10};
  t.end = 0.01;
  h.record_chunk("k", 8, t);
  EXPECT_TRUE(changed());
  h.record_split_launch("k", 8, {0, 1}, 0.02);
  EXPECT_TRUE(changed());
  h.note_launch("k", 8);  // decays the sums alike: every mean stays as it was
  EXPECT_FALSE(changed());
  EXPECT_NEAR(*h.split_launch_seconds("k", 8, {0, 1}), 0.02, 1e-12);
  h.set_regular("k", true);
  EXPECT_TRUE(changed());
  // Entries with launch counts only go first when over capacity, and change nothing a fit reads.
  for (size_t i = 0; i <= History::kMaxEntries; ++i) h.plan_launch("other" + std::to_string(i), 8);
  EXPECT_FALSE(changed());
  EXPECT_TRUE(h.split_launch_seconds("k", 8, {0, 1}).has_value());
  for (size_t i = 0; i <= History::kMaxEntries; ++i) h.record_chunk("measured" + std::to_string(i), 8, t);
  EXPECT_TRUE(changed());  // "k", the least recently used of the entries with evidence, was dropped
  EXPECT_FALSE(h.split_launch_seconds("k", 8, {0, 1}).has_value());
  h.clear();
  EXPECT_TRUE(changed());
}

TEST(History, SplitAboveIsTheNearestLargerSizeMeasuredBesideHomeAlone) {
  History h;
  h.record_split_launch("k", 64, {1, 0}, 0.02, 0.01);
  h.record_split_launch("k", 128, {0, 1}, 0.05, 0.04);
  h.record_split_launch("k", 256, {0, 1}, 0.07);        // no estimate of home alone: not taken
  h.record_split_launch("k", 512, {0, 2}, 0.09, 0.08);  // another set
  h.record_split_launch("j", 1024, {0, 1}, 0.3, 0.2);   // another kernel
  auto above = h.split_above("k", 32, {0, 1});
  ASSERT_TRUE(above.has_value());
  EXPECT_DOUBLE_EQ(above->seconds, 0.02);
  EXPECT_DOUBLE_EQ(above->alone, 0.01);
  EXPECT_EQ(above->global_size, 64u);
  EXPECT_EQ(above->devices, (std::vector<int>{0, 1}));
  above = h.split_above("k", 64, {0, 1});  // above, not at
  ASSERT_TRUE(above.has_value());
  EXPECT_DOUBLE_EQ(above->seconds, 0.05);
  EXPECT_EQ(above->global_size, 128u);
  EXPECT_FALSE(h.split_above("k", 128, {0, 1}).has_value());
  EXPECT_TRUE(h.split_above("k", 128, {2, 0}).has_value());
  // A set of fewer devices takes the verdict of the smallest superset measured there.
  h.record_split_launch("k", 2048, {0, 1, 2, 3}, 0.5, 0.4);
  h.record_split_launch("k", 2048, {0, 1, 2}, 0.3, 0.4);
  above = h.split_above("k", 1024, {1, 0});
  ASSERT_TRUE(above.has_value());
  EXPECT_DOUBLE_EQ(above->seconds, 0.3);
  EXPECT_EQ(above->devices, (std::vector<int>{0, 1, 2}));
  EXPECT_FALSE(h.split_above("k", 1024, {0, 4}).has_value());
  // Decayed alike, and kept in the file.
  h.note_launch("k", 64);
  h.record_split_launch("k", 64, {0, 1}, 0.04, 0.03);
  const std::string path = ::testing::TempDir() + "coex_history_split_above.json";
  ASSERT_TRUE(h.save(path));
  History loaded;
  ASSERT_TRUE(loaded.load(path));
  above = loaded.split_above("k", 32, {0, 1});
  ASSERT_TRUE(above.has_value());
  EXPECT_NEAR(above->seconds, 0.02, 1e-12);  // of 20 and 40 ms, the smaller
  EXPECT_NEAR(above->alone, (0.01 * History::kLaunchDecay + 0.03) / (History::kLaunchDecay + 1), 1e-12);
  std::remove(path.c_str());
}

TEST(History, ChangedKernelSourceFindsNothing) {
  // The kernel key carries the source hash: the same kernel name with another hash is another key.
  History h;
  h.record_chunk("vadd#aaaa", 64, timing(0, 10, 1));
  EXPECT_FALSE(h.throughput("vadd#bbbb", 64, 0).has_value());
}

TEST(History, ASplitAtALargeSizeOutlivesThousandsOfSmallerSizesLaunchedSince) {
  // A factorization's launches shrink one size at a time (benchmarks/lu: 2,047 sizes per kernel):
  // the split measured at its first size keeps deciding for the smaller ones, whose entries hold
  // launch counts only, and the evidence version stays put while those come and go.
  History h;
  h.record_split_launch("lu_update", 1u << 22, {0, 1}, 0.05, 0.01);
  const uint64_t v = h.evidence_version();
  for (uint64_t size = (1u << 22) - 1; size > (1u << 22) - 3 * History::kMaxEntries; --size) {
    ASSERT_TRUE(h.split_above("lu_update", size, {0, 1}).has_value()) << size;
    ASSERT_TRUE(h.count_unsplit_launch("lu_update", size, [](uint64_t) { return false; }).has_value());
  }
  EXPECT_EQ(h.entry_count(), History::kMaxEntries);
  EXPECT_EQ(h.evidence_version(), v);
}

TEST(History, ANewEntryAmongEntriesWithEvidenceKeepsItsLaunchCounts) {
  // Over capacity with every other entry holding evidence, the entry of the launch at hand stays:
  // its launch numbers (which auto's probes follow) go on from one launch to the next.
  History h;
  for (size_t i = 0; i < History::kMaxEntries; ++i) h.record_chunk("measured" + std::to_string(i), 8, timing(0, 1, 1));
  for (uint64_t n = 0; n < 4; ++n) EXPECT_EQ(h.plan_launch("new", 8), n);
  EXPECT_EQ(h.count_unsplit_launch("new", 8, [](uint64_t) { return false; }), std::optional<uint64_t>(4));
  EXPECT_EQ(h.launches("new", 8), 1u);
  EXPECT_EQ(h.entry_count(), History::kMaxEntries);
}

TEST(History, EvictsLeastRecentlyUsedOverCapacity) {
  History h;
  for (size_t i = 0; i < History::kMaxEntries + 10; ++i) {
    h.record_chunk("k" + std::to_string(i), 1, timing(0, 1, 1));
    h.record_chunk("k0", 1, timing(0, 1, 1));  // k0 stays in use
  }
  EXPECT_EQ(h.entry_count(), History::kMaxEntries);
  EXPECT_TRUE(h.throughput("k0", 1, 0).has_value());
  EXPECT_FALSE(h.throughput("k1", 1, 0).has_value());
}

TEST(History, ConcurrentRecordAndRead) {
  History h;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&h, t] {
      for (int i = 0; i < 2000; ++i) {
        h.record_chunk("k", 1, timing(t, 100, 0.1));
        (void)h.throughput("k", 1, (t + 1) % 4);
        (void)h.samples_any_size("k", t);
        if (i % 100 == 0) h.note_launch("k", 1);
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_NEAR(*h.throughput("k", 1, t), 1000, 1e-6);
  EXPECT_EQ(h.launches("k", 1), 80u);
}

}  // namespace
}  // namespace coex::sched
