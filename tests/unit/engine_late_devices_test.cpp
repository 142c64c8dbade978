#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "config/settings.h"
#include "exec/late_devices.h"
#include "exec/split_progress.h"
#include "sched/history.h"

using coex::exec::LateDevices;
using coex::exec::SplitProgress;
using coex::sched::History;
using namespace std::chrono_literals;

TEST(LateDevices, HomeNeverWaitsAndALetInDeviceWaitsNoMore) {
  LateDevices late({1, 2}, 0.5);
  EXPECT_EQ(late.waiting_among({1}, 0), std::vector<int>{1});
  EXPECT_EQ(late.waiting_among({1}, 1), std::vector<int>{});  // device 1 as home
  EXPECT_EQ(late.waiting_among({3}, 0), std::vector<int>{});
  EXPECT_EQ(late.waiting_among({0, 1, 2, 3}, 2), std::vector<int>{1});
  EXPECT_TRUE(late.let_in(1));
  EXPECT_FALSE(late.let_in(1));  // once: the caller posts its preparation once
  EXPECT_EQ(late.waiting_among({1}, 0), std::vector<int>{});
  EXPECT_EQ(late.waiting_among({0, 1, 2, 3}, 0), std::vector<int>{2});
}

TEST(LateDevices, TheClockStartsAtTheFirstLaunchThatCouldTakeOne) {
  LateDevices late({1}, 0.5);
  const auto first = LateDevices::Clock::now() + 10s;  // whatever the process did before does not count
  EXPECT_DOUBLE_EQ(late.seconds_left(first), 0.5);
  EXPECT_NEAR(late.seconds_left(first + 200ms), 0.3, 1e-9);
  EXPECT_DOUBLE_EQ(late.seconds_left(first + 2s), 0.0);
}

TEST(LateDevices, LetInOnlyWhereTheLaunchOutlastsTheirPreparation) {
  using coex::exec::late_work_outlasts;
  // 100 of 1,000 groups in 0.5 s: 4.5 s left at that pace.
  EXPECT_TRUE(late_work_outlasts({100, 0.5}, 1000, 1.5));
  EXPECT_FALSE(late_work_outlasts({100, 0.5}, 1000, 5.0));
  // 900 of 1,000 in 0.5 s: about 0.06 s left (a launch of 0.56 s), less than a GPU's context takes.
  EXPECT_FALSE(late_work_outlasts({900, 0.5}, 1000, 1.5));
  EXPECT_TRUE(late_work_outlasts({900, 0.5}, 1000, 0.0));
  // Nothing finished yet after the wait: a long launch; everything finished: none left.
  EXPECT_TRUE(late_work_outlasts({0, 0.0}, 1000, 1.5));
  EXPECT_FALSE(late_work_outlasts({1000, 0.5}, 1000, 0.0));
}

// What a launch measured on home says of the late devices (exec/late_devices.h, judge_late_devices):
// min_split_seconds 0.01 s, auto_late_cost 1.5 s.
TEST(LateDevices, ALaunchLetsThemInOnlyWhereItOrTheProgramRanTheirPreparationsLength) {
  using coex::exec::judge_late_devices;
  using coex::exec::LateCall;
  coex::config::Settings settings;
  settings.min_split_seconds = 0.01;
  settings.auto_late_cost = 1.5;
  {
    LateDevices late({1}, 0.0);  // auto_late_after gone by at once
    EXPECT_EQ(judge_late_devices(late, settings, 0.005), LateCall::too_short);  // under min_split_seconds
    EXPECT_EQ(judge_late_devices(late, settings, 0.3), LateCall::too_short);    // the program has run ~0 s
    EXPECT_EQ(judge_late_devices(late, settings, 2.0), LateCall::let_in);       // the launch alone pays
  }
  {
    LateDevices late({1}, 0.0);
    late.seconds_left(LateDevices::Clock::now() - 2s);  // the clock started 2 s ago: the program ran that long
    EXPECT_EQ(judge_late_devices(late, settings, 0.3), LateCall::let_in);
    EXPECT_EQ(judge_late_devices(late, settings, 0.005), LateCall::too_short);
  }
  {
    LateDevices late({1}, 3600.0);  // auto_late_after not gone by
    EXPECT_EQ(judge_late_devices(late, settings, 2.0), LateCall::wait);  // long: a split of it may let them in
    EXPECT_EQ(judge_late_devices(late, settings, 0.3), LateCall::too_short);
  }
}

TEST(LateDevices, KnowsItsDevicesOnceLetIn) {
  LateDevices late({1, 2}, 0.5);
  EXPECT_TRUE(late.all_named({1, 2}));
  EXPECT_FALSE(late.all_named({1, 3}));
  EXPECT_FALSE(late.all_named({}));
  late.let_in(1);
  EXPECT_TRUE(late.all_named({1}));  // let in, still preparing: a late device all the same
}

TEST(LateDevices, KeepsTheFirstUntimedLaunchesForTheExit) {
  LateDevices late({1}, 0.5);
  EXPECT_TRUE(late.untimed().empty());
  for (size_t i = 0; i < LateDevices::kMaxUntimed + 3; ++i) late.note_untimed(i, "k" + std::to_string(i));
  const auto untimed = late.untimed();
  ASSERT_EQ(untimed.size(), LateDevices::kMaxUntimed);
  EXPECT_EQ(untimed.front(), std::make_pair(uint64_t{0}, std::string("k0")));
  EXPECT_EQ(untimed.back().first, LateDevices::kMaxUntimed - 1);
}

TEST(SplitProgressRunsAfter, TrueWhileTheLaunchRunsFalseOnceItEnds) {
  SplitProgress progress(nullptr, 0, {0, 1});
  EXPECT_TRUE(progress.runs_after(0.01));  // nobody finished: still on after the wait
  std::thread ends([&] {
    std::this_thread::sleep_for(20ms);
    progress.finished(0);
    progress.finished(1);
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(progress.runs_after(30.0));  // told at the end, long before the 30 s
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  ends.join();
  EXPECT_FALSE(progress.join(2));  // over: a late device that wakes now touches nothing of it
}

static std::filesystem::path late_temp_dir() {
  auto dir = std::filesystem::temp_directory_path() / ("coex_late_devices_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

// A program whose run let a late device in is remembered by its source hash, per device set: a later
// run prepares the device at clBuildProgram (exec/late_devices.h).
TEST(History, ProgramsThatLetALateDeviceInAreKeptInTheFile) {
  const auto dir = late_temp_dir();
  const std::string file = (dir / "history.json").string();
  History h("sig-A");
  EXPECT_FALSE(h.late_let_in(1234));
  h.note_late_let_in(1234);
  std::string error;
  ASSERT_TRUE(h.save(file, &error)) << error;
  History loaded("sig-A");
  ASSERT_TRUE(loaded.load(file, &error)) << error;
  EXPECT_TRUE(loaded.late_let_in(1234));
  EXPECT_FALSE(loaded.late_let_in(99));
  History other_set("sig-B");
  ASSERT_TRUE(other_set.load(file, &error)) << error;
  EXPECT_FALSE(other_set.late_let_in(1234));
  ASSERT_TRUE(other_set.save(file, &error)) << error;  // keeps sig-A's among the other device sets
  History again("sig-A");
  ASSERT_TRUE(again.load(file, &error)) << error;
  EXPECT_TRUE(again.late_let_in(1234));
  again.forget_late_let_in(1234);  // let in from memory: remembered again only if this run is long too
  EXPECT_FALSE(again.late_let_in(1234));
  again.note_late_let_in(1234);
  again.clear();
  EXPECT_FALSE(again.late_let_in(1234));
  std::filesystem::remove_all(dir);
}

TEST(History, KeepsTheProgramsThatLetALateDeviceInLastNoted) {
  History h;
  for (uint64_t p = 0; p <= History::kLateLetInKept; ++p) h.note_late_let_in(p);
  EXPECT_FALSE(h.late_let_in(0));  // the first noted, one too many
  EXPECT_TRUE(h.late_let_in(1));
  h.note_late_let_in(1);  // noted again: the last now
  h.note_late_let_in(History::kLateLetInKept + 1);
  EXPECT_TRUE(h.late_let_in(1));
  EXPECT_FALSE(h.late_let_in(2));
}
