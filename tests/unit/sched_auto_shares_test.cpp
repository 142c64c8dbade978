// auto's split by shares between devices: wp's shares whole at a launch's start, or with a tail
// handed out on demand (auto:wp, auto:wp+tail), and which the kernel's later launches keep.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "auto_fixtures.h"
#include "sched/auto_policy.h"
#include "sched/policy_factory.h"

namespace coex::sched {
namespace {

using auto_fixtures::record_line;
using auto_fixtures::shape;
using auto_fixtures::two_devices_on_a_line;
using auto_fixtures::two_profiles;

// How a launch went on devices 0 and 1: each chunk's seconds and seconds moving data, the launch's
// end, and its time as measured.
struct Outcome {
  double chunk_seconds[2] = {0.005, 0.005};
  double transfer_seconds[2] = {0, 0};
  double end = 0.005;
  double measured = 0.005;
};

// `launches` launches of auto over devices 0 and 1 of kernel "k" at 1000 groups, each one a policy
// object of its own as the executor makes them, with one History; `outcome` says how each went, from
// its number and what auto planned it by. What each launch was planned by.
std::vector<std::string> auto_launches(uint64_t launches,
                                       const std::function<Outcome(uint64_t, const std::string&)>& outcome) {
  LaunchShape s = shape("k", 1000);
  s.home = 0;
  auto h = two_devices_on_a_line(s, 1e-6, 1e-5);
  const std::vector<DeviceProfile> profiles = two_profiles();
  std::vector<std::string> picked;
  for (uint64_t number = 0; number < launches; ++number) {
    LaunchShape launch = s;
    launch.launch_number = number;
    launch.follows_split = number > 0;
    auto policy = make_policy("auto", PolicyParams{}, h, profiles);
    policy->begin_launch(launch, {0, 1}, 0);
    picked.push_back(policy->planned_by());
    const Outcome how = outcome(number, picked.back());
    for (int d : {0, 1})
      while (auto c = policy->next_chunk(d, 0)) {
        ChunkTiming timing{*c, 0, how.chunk_seconds[d]};
        timing.transfer_seconds = how.transfer_seconds[d];
        policy->chunk_done(timing);
      }
    policy->end_launch(how.end);
    policy->launch_measured(how.measured);
  }
  return picked;
}

// The executor makes a policy object per split launch: what auto keeps from one launch to the next
// lives in the History. Its first pick between wp and wp+tail stays, though later fits (here: chunks
// that became costly) would pick the other.
TEST(AutoPolicy, KeepsItsFirstWpPickAcrossPolicyObjects) {
  const LaunchShape s = shape("k", 1000);
  auto h = two_devices_on_a_line(s, 1e-6, 1e-5);
  const std::vector<DeviceProfile> profiles = two_profiles();
  auto first = make_policy("auto", PolicyParams{}, h, profiles);
  first->begin_launch(s, {0, 1}, 0);
  EXPECT_EQ(first->planned_by(), "auto:wp+tail");
  for (int i = 0; i < 5; ++i) {  // enough for their overhead to stand out of the earlier chunks'
    record_line(*h, "k", s.global_size, 0, 0.005, 1e-5);
    record_line(*h, "k", s.global_size, 1, 0.005, 1e-5);
  }
  EXPECT_EQ(auto_choice(*h, s, {0, 1}, PolicyParams{}), "wp");
  auto second = make_policy("auto", PolicyParams{}, h, profiles);
  second->begin_launch(s, {0, 1}, 0);
  EXPECT_EQ(second->planned_by(), "auto:wp+tail");
}

// A launch split whole at its start (plain wp: the fits say chunks are costly) that balanced worse
// than auto_rebalance_below turns the kernel's next launches to wp+tail; one that balanced does not,
// nor one where a device compiled the kernel at its first chunk (a cold launch).
TEST(AutoPolicy, APlainWpLaunchThatBalancedBadlyTurnsToTheTail) {
  for (auto [late, cold] : {std::pair{0.0051, false}, {0.0100, false}, {0.0100, true}}) {  // device 1's finish
    const LaunchShape s = shape("k", 1000);
    auto h = two_devices_on_a_line(s, 0.005, 1e-5);
    const std::vector<DeviceProfile> profiles = two_profiles();
    auto first = make_policy("auto", PolicyParams{}, h, profiles);
    first->begin_launch(s, {0, 1}, 0);
    ASSERT_EQ(first->planned_by(), "auto:wp");
    for (int d : {0, 1})
      while (auto c = first->next_chunk(d, 0)) {
        ChunkTiming timing{*c, 0, d == 0 ? 0.005 : late};
        timing.first_run = cold && d == 1;
        first->chunk_done(timing);
      }
    first->end_launch(late);
    auto second = make_policy("auto", PolicyParams{}, h, profiles);
    second->begin_launch(s, {0, 1}, 0);
    EXPECT_EQ(second->planned_by(), late > 0.0075 && !cold ? "auto:wp+tail" : "auto:wp") << late << " " << cold;
  }
}

// A wp+tail launch whose chunks away from home spent more time moving data than running turns the
// kernel's next launches to plain wp, and a badly balanced wp launch then does not turn them back.
TEST(AutoPolicy, ATailThatMostlyMovesDataTurnsToFixedShares) {
  for (double moving : {0.4, 0.6}) {  // device 1's chunks: the part of their time spent moving data
    const LaunchShape s = [] {
      LaunchShape with_home = shape("k", 1000);
      with_home.home = 0;
      return with_home;
    }();
    auto h = two_devices_on_a_line(s, 1e-6, 1e-5);
    const std::vector<DeviceProfile> profiles = two_profiles();
    auto first = make_policy("auto", PolicyParams{}, h, profiles);
    first->begin_launch(s, {0, 1}, 0);
    ASSERT_EQ(first->planned_by(), "auto:wp+tail");
    for (int d : {0, 1})  // both end at 5 ms: a balanced launch
      while (auto c = first->next_chunk(d, 0)) {
        ChunkTiming timing{*c, 0.005 - 1e-6 * double(c->groups()), 0.005};
        timing.transfer_seconds = d == 1 ? moving * (timing.end - timing.start) : 0;
        first->chunk_done(timing);
      }
    first->end_launch(0.005);
    auto second = make_policy("auto", PolicyParams{}, h, profiles);
    second->begin_launch(s, {0, 1}, 0);
    EXPECT_EQ(second->planned_by(), moving > 0.5 ? "auto:wp" : "auto:wp+tail") << moving;
    if (moving < 0.5) continue;
    // A plain wp launch that balanced badly (device 1 ends at twice home's time) right after one that
    // balanced stays plain wp: neither the tail nor sigmoid's chunks on demand, which move data alike.
    for (int d : {0, 1})
      while (auto c = second->next_chunk(d, 0)) second->chunk_done(ChunkTiming{*c, 0, d == 0 ? 0.005 : 0.01});
    second->end_launch(0.01);
    auto third = make_policy("auto", PolicyParams{}, h, profiles);
    third->begin_launch(s, {0, 1}, 0);
    EXPECT_EQ(third->planned_by(), "auto:wp");
  }
}

// wp's shares with the tail and without are timed, eight steady launches each (a tail picked first has
// plain wp timed after it), and the faster is kept for the run: a badly balanced launch turns plain wp
// to the tail no more, nor do the tail's moves of data turn it off.
TEST(AutoPolicy, TheTailAndPlainWpAreTimedAndTheFasterIsKept) {
  for (double tail_seconds : {0.004, 0.006}) {  // plain wp's launches take 5 ms
    const auto picked = auto_launches(24, [&](uint64_t number, const std::string& plan) {
      Outcome how;
      if (number >= 20) {  // device 1 ends at twice home's time, its chunks mostly moving data
        how.chunk_seconds[1] = 0.01;
        how.transfer_seconds[1] = 0.009;
        how.end = 0.01;
      }
      how.measured = plan == "auto:wp+tail" ? tail_seconds : 0.005;
      return how;
    });
    // Launch 0 is no steady measurement, 1-8 time the tail; 9 (a switch) and 10-17 plain wp.
    for (uint64_t number = 0; number < 9; ++number) EXPECT_EQ(picked[number], "auto:wp+tail") << number;
    for (uint64_t number = 9; number < 18; ++number) EXPECT_EQ(picked[number], "auto:wp") << number;
    const char* faster = tail_seconds < 0.005 ? "auto:wp+tail" : "auto:wp";
    // Launch 21 follows the first badly balanced one: sigmoid measures the devices again (remeasure), and
    // the shares choice comes back after it.
    for (uint64_t number = 18; number < 24; ++number)
      EXPECT_EQ(picked[number], number == 21 ? "auto:sigmoid" : faster) << tail_seconds << " " << number;
  }
}

// Plain wp on trial against a tail timed already, badly balanced right after a tail launch that
// balanced (device 1 ends at twice home's time under plain wp only): the tail is kept for the run at
// once, and no launch measures the devices again (sigmoid).
TEST(AutoPolicy, APlainWpTrialThatBalancesBadlyKeepsTheTail) {
  const auto picked = auto_launches(16, [](uint64_t, const std::string& plan) {
    Outcome how;
    if (plan == "auto:wp") how.chunk_seconds[1] = how.end = how.measured = 0.01;
    return how;
  });
  // Launch 0 is no steady measurement, 1-8 time the tail, 9 tries plain wp.
  for (uint64_t number = 0; number < 16; ++number)
    EXPECT_EQ(picked[number], number == 9 ? "auto:wp" : "auto:wp+tail") << number;
}

}  // namespace
}  // namespace coex::sched
