// The launch driver (sched/launch_driver.h) on a fake clock: the policy's chunks, take-over, and what
// the policy hears of it.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "launch_shapes.h"
#include "sched/launch_driver.h"
#include "sched/policy_factory.h"
#include "specified_devices.h"

using coex::sched::Chunk;
using coex::sched::ChunkTiming;
using coex::sched::LaunchDriver;
using coex::sched::LaunchShape;
using coex::sched::Policy;
using coex::sched::PolicyParams;
using Kind = LaunchDriver::Step::Kind;

namespace {

// Runs `step`'s chunk on `device` from `start` to `end` (prepared and started at `start`).
bool run(LaunchDriver& driver, int device, const LaunchDriver::Step& step, double start, double end) {
  driver.chunk_preparing(device, step.chunk, start);
  EXPECT_TRUE(driver.chunk_started(device, start));
  ChunkTiming timing{step.chunk, start, end, 0};
  return driver.chunk_finished(device, timing, step.from_policy);
}

}  // namespace

// static gives each of two devices half; the fast one (100 groups/s) is idle while the other has run
// its half for 5 s: a stall. It takes the range over, owes it, and is done after the redo.
TEST(LaunchDriver, AnIdleDeviceTakesOverAStalledOneAndRedoesItsRange) {
  auto policy = coex::sched::make_policy("static", PolicyParams{}, nullptr, specified({1, 1}));
  policy->begin_launch(launch_of_k(100), {0, 1}, 0);
  LaunchDriver driver(policy.get(), 0, {0, 1}, specified({1, 1}));
  const LaunchDriver::Step home = driver.next(0, 0);
  const LaunchDriver::Step other = driver.next(1, 0);
  ASSERT_EQ(home.kind, Kind::Run);
  ASSERT_EQ(other.kind, Kind::Run);
  EXPECT_TRUE(home.from_policy);
  driver.chunk_preparing(1, other.chunk, 0);
  ASSERT_TRUE(driver.chunk_started(1, 0));
  ASSERT_TRUE(run(driver, 0, home, 0, 0.5));
  // Not yet a stall: home waits, and is told when to look again.
  LaunchDriver::Step wait = driver.next(0, 1.0);
  ASSERT_EQ(wait.kind, Kind::Wait);
  EXPECT_DOUBLE_EQ(wait.look_again, 5.0);  // stall_seconds after device 1 started
  LaunchDriver::Step redo = driver.next(0, 5.01);
  ASSERT_EQ(redo.kind, Kind::Run);
  EXPECT_FALSE(redo.from_policy);
  EXPECT_EQ(redo.chunk.device, 0);
  EXPECT_EQ(redo.chunk.begin, other.chunk.begin);
  EXPECT_EQ(redo.chunk.end, other.chunk.end);
  const auto out = driver.take_taken_out();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].device, 1);
  EXPECT_EQ(out[0].by, 0);
  EXPECT_FALSE(out[0].by_policy);
  ASSERT_TRUE(run(driver, 0, redo, 5.01, 5.5));
  EXPECT_EQ(driver.next(0, 5.5).kind, Kind::Done);
  driver.finished(0);
  EXPECT_TRUE(driver.all_done());
  EXPECT_EQ(driver.dropped(), std::set<int>{1});
  // Device 1 comes back late: nothing of it counts.
  ChunkTiming late{other.chunk, 0, 9, 0};
  EXPECT_FALSE(driver.chunk_finished(1, late, true));
}

// plbhec holds the model split back until every device has a finished block, then reserves each
// device's share. A device taken over after that had its share set aside: the policy hears of the
// take-over, and hands that share to whoever asks next, so that the launch is covered.
TEST(LaunchDriver, WhatThePolicySetAsideForADeviceTakenOverGoesToTheOthers) {
  PolicyParams params;
  auto policy = coex::sched::make_policy("plbhec", params, nullptr, specified({1, 1}));
  const uint64_t groups = 1000;
  policy->begin_launch(launch_of_k(groups), {0, 1}, 0);
  LaunchDriver driver(policy.get(), 0, {0, 1}, specified({1, 1}));
  std::vector<bool> covered(groups, false);
  auto cover = [&](const Chunk& c) {
    for (uint64_t g = c.begin; g < c.end; ++g) {
      EXPECT_FALSE(covered[g]) << g;
      covered[g] = true;
    }
  };
  // Both probe; device 1 completes its first block, then stalls in its second.
  double now = 0;
  LaunchDriver::Step d1 = driver.next(1, now);
  ASSERT_EQ(d1.kind, Kind::Run);
  ASSERT_TRUE(run(driver, 1, d1, 0, 0.01));
  cover(d1.chunk);
  d1 = driver.next(1, 0.01);
  ASSERT_EQ(d1.kind, Kind::Run);
  driver.chunk_preparing(1, d1.chunk, 0.01);
  ASSERT_TRUE(driver.chunk_started(1, 0.01));
  // Home runs whatever it is given, at 1000 groups/s, until the launch is over for it.
  bool redid = false;
  for (int i = 0; i < 1000; ++i) {
    LaunchDriver::Step step = driver.next(0, now);
    if (step.kind == Kind::Done) break;
    if (step.kind == Kind::Wait) {
      now = std::max(now + 0.01, std::isfinite(step.look_again) ? step.look_again + 1e-6 : now);
      continue;
    }
    redid |= !step.from_policy;
    if (!step.from_policy) {  // device 1's ranges: its stalled block is dropped with its results
      for (uint64_t g = step.chunk.begin; g < step.chunk.end; ++g) covered[g] = false;
    }
    const double end = now + double(step.chunk.groups()) / 1000.0;
    ASSERT_TRUE(run(driver, 0, step, now, end));
    cover(step.chunk);
    now = end;
  }
  EXPECT_TRUE(redid);
  EXPECT_EQ(driver.dropped(), std::set<int>{1});
  for (uint64_t g = 0; g < groups; ++g) ASSERT_TRUE(covered[g]) << "group " << g << " was never run";
}

// With take-over off (a paper's system), a device the policy has nothing more for is done at once.
TEST(LaunchDriver, WithoutTakeOverAnIdleDeviceIsDone) {
  auto policy = coex::sched::make_policy("static", PolicyParams{}, nullptr, specified({1, 1}));
  policy->begin_launch(launch_of_k(10), {0, 1}, 0);
  LaunchDriver driver(policy.get(), 0, {0, 1}, {}, {}, false);
  const LaunchDriver::Step home = driver.next(0, 0);
  ASSERT_EQ(home.kind, Kind::Run);
  const LaunchDriver::Step other = driver.next(1, 0);
  driver.chunk_preparing(1, other.chunk, 0);
  ASSERT_TRUE(driver.chunk_started(1, 0));
  ASSERT_TRUE(run(driver, 0, home, 0, 0.1));
  EXPECT_EQ(driver.next(0, 100).kind, Kind::Done);
  EXPECT_TRUE(driver.take_taken_out().empty());
}
