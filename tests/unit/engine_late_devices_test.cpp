#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "exec/late_devices.h"
#include "exec/split_progress.h"

using coex::exec::LateDevices;
using coex::exec::SplitProgress;
using namespace std::chrono_literals;

TEST(LateDevices, HomeNeverWaitsAndALetInDeviceWaitsNoMore) {
  LateDevices late({1, 2}, 0.5);
  EXPECT_TRUE(late.waits(1, 0));
  EXPECT_FALSE(late.waits(1, 1));  // device 1 as home
  EXPECT_FALSE(late.waits(3, 0));
  EXPECT_EQ(late.waiting_among({0, 1, 2, 3}, 2), std::vector<int>{1});
  EXPECT_TRUE(late.let_in(1));
  EXPECT_FALSE(late.let_in(1));  // once: the caller posts its preparation once
  EXPECT_FALSE(late.waits(1, 0));
  EXPECT_EQ(late.waiting_among({0, 1, 2, 3}, 0), std::vector<int>{2});
}

TEST(LateDevices, TheClockStartsAtTheFirstLaunchThatCouldTakeOne) {
  LateDevices late({1}, 0.5);
  const auto first = LateDevices::Clock::now() + 10s;  // whatever the process did before does not count
  EXPECT_DOUBLE_EQ(late.seconds_left(first), 0.5);
  EXPECT_NEAR(late.seconds_left(first + 200ms), 0.3, 1e-9);
  EXPECT_DOUBLE_EQ(late.seconds_left(first + 2s), 0.0);
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
