// A device still building when a launch begins joins it late (Policy::add_device, TakeOver::join):
// the policies that hand out on demand take it, the others refuse; the range is covered once whether
// it comes or not.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "sched/auto_policy.h"
#include "sched/policy_factory.h"
#include "sched/take_over.h"
#include "specified_devices.h"

namespace coex::sched {
namespace {

LaunchShape shape_of(uint64_t groups) {
  LaunchShape shape;
  shape.kernel_key = "k#1";
  shape.total_groups = groups;
  shape.global_size = groups * 64;
  shape.items_per_group = 64;
  shape.home = 0;
  return shape;
}

// Runs the launch: the devices in `asking` ask in turn, each chunk done at once; `late` asks from
// round `late_round` on. Returns how many groups each device got; fails on a gap or an overlap.
std::map<int, uint64_t> drive(Policy& policy, std::vector<int> asking, int late, int late_round, uint64_t groups) {
  std::map<int, uint64_t> got;
  std::vector<bool> covered(groups, false);
  double now = 0;
  for (int round = 0; !asking.empty() || round <= late_round; ++round) {
    if (round == late_round && late >= 0) asking.push_back(late);
    std::vector<int> still;
    for (int device : asking) {
      auto chunk = policy.next_chunk(device, now);
      if (!chunk) continue;
      still.push_back(device);
      for (uint64_t g = chunk->begin; g < chunk->end; ++g) {
        EXPECT_FALSE(covered[g]) << "group " << g << " handed out twice";
        covered[g] = true;
      }
      got[device] += chunk->groups();
      now += 0.001 * double(chunk->groups());
      policy.chunk_done({*chunk, now - 0.001 * double(chunk->groups()), now, 0});
    }
    asking = still;
    if (round > 10000) break;
  }
  policy.end_launch(now);
  EXPECT_EQ(std::count(covered.begin(), covered.end(), true), int64_t(groups)) << "groups left out";
  return got;
}

TEST(LateDevice, SigmoidAndHguidedTakeADeviceThatJoinsLate) {
  for (const char* name : {"sigmoid", "hguided"}) {
    SCOPED_TRACE(name);
    auto policy = make_policy(name, PolicyParams{}, std::make_shared<History>(), specified({4, 4, 4}));
    policy->begin_launch(shape_of(3000), {0, 1}, 0);
    ASSERT_TRUE(policy->add_device(2, 0));
    const auto got = drive(*policy, {0, 1}, 2, 3, 3000);
    EXPECT_GT(got.count(2) ? got.at(2) : 0, 0u) << "the late device got work";
  }
}

TEST(LateDevice, ADeviceThatNeverComesLeavesNothingBehind) {
  for (const char* name : {"sigmoid", "hguided"}) {
    SCOPED_TRACE(name);
    auto policy = make_policy(name, PolicyParams{}, std::make_shared<History>(), specified({4, 4, 4}));
    policy->begin_launch(shape_of(3000), {0, 1}, 0);
    ASSERT_TRUE(policy->add_device(2, 0));
    const auto got = drive(*policy, {0, 1}, -1, 0, 3000);
    EXPECT_EQ(got.count(2), 0u);
  }
}

TEST(LateDevice, PoliciesThatSetSharesAsideRefuseIt) {
  for (const char* name : {"static", "wp", "boyer", "plbhec"}) {
    SCOPED_TRACE(name);
    auto policy = make_policy(name, PolicyParams{}, std::make_shared<History>(), specified({4, 4, 4}));
    policy->begin_launch(shape_of(3000), {0, 1}, 0);
    EXPECT_FALSE(policy->add_device(2, 0));
    const auto got = drive(*policy, {0, 1}, -1, 0, 3000);
    EXPECT_EQ(got.count(2), 0u);
  }
}

TEST(LateDevice, AutoPassesItToThePolicyItPicked) {
  // An empty history: auto picks sigmoid, which takes the late device.
  AutoPolicy policy(PolicyParams{}, std::make_shared<History>(), specified({4, 4, 4}));
  policy.begin_launch(shape_of(3000), {0, 1}, 0);
  ASSERT_EQ(policy.planned_by(), "auto:sigmoid");
  ASSERT_TRUE(policy.add_device(2, 0));
  const auto got = drive(policy, {0, 1}, 2, 2, 3000);
  EXPECT_GT(got.count(2) ? got.at(2) : 0, 0u);
}

TEST(LateDevice, JoinsOnlyWhileTheLaunchIsOn) {
  TakeOver t(0, {0, 1});
  EXPECT_TRUE(t.join(2));
  EXPECT_FALSE(t.join(2));  // once
  t.finished(0);
  t.finished(1);
  EXPECT_FALSE(t.all_done());  // the device that joined is waited for
  t.finished(2);
  EXPECT_TRUE(t.all_done());
  EXPECT_FALSE(t.join(3));  // the launch is over: nothing of it may be touched
}

}  // namespace
}  // namespace coex::sched
