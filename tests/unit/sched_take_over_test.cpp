// The take-over rules on a fake clock (sched/take_over.h): no threads, the time passed in.
#include <gtest/gtest.h>

#include <cmath>

#include "sched/take_over.h"
#include "specified_devices.h"

namespace coex::sched {
namespace {

using State = TakeOver::State;

void run(TakeOver& t, int device, const Chunk& chunk, double from) {
  t.chunk_preparing(device, chunk, from);
  ASSERT_TRUE(t.chunk_started(device, from));
}

TEST(TakeOver, ASlowDeviceBySpecificationIsTakenOverAtOnce) {
  TakeOver t(0, {0, 1}, specified({100, 1}));
  run(t, 1, {1, 90, 100}, 0);
  run(t, 0, {0, 0, 90}, 0);
  ASSERT_TRUE(t.chunk_finished(0, 0.9));  // 100 groups/s; device 1 would need 10 s for its 10
  TakeOver::Idle idle = t.idle(0, 0.9);
  EXPECT_EQ(idle.victim, 1);
  EXPECT_EQ(idle.victim_state, State::Abandoned);
  ASSERT_EQ(idle.ranges.size(), 1u);
  EXPECT_EQ(idle.ranges[0].begin, 90u);
  EXPECT_FALSE(t.chunk_finished(1, 20));  // its late return counts for nothing
}

// A device that outruns the time its specification gave it is given as long again only where the
// specification promises more than slow_by_specification (4) times less than the thief, as a device
// is held back (docs/design.md, "Size by time"). The mixed testbed's single-threaded devices beside a
// 4-thread one (exactly 4x by specification, about that in fact) were taken over when their shares
// of a wp launch ran a little past the guess: home redid 535 groups in 0.13 s where the device had
// 0.04 s left (the simulator). At 5x the rule holds.
TEST(TakeOver, OutrunningTheGuessCountsOnlyBeyondFourTimesSlower) {
  TakeOverRules rules;
  rules.stall_seconds = 100;  // the stall rule out of it: only the outrun rule takes device 1 over
  for (unsigned ratio : {4u, 5u}) {
    TakeOver t(0, {0, 1}, specified({ratio, 1}), rules);
    run(t, 1, {1, 400, 500}, 0);
    run(t, 0, {0, 0, 400}, 0);
    ASSERT_TRUE(t.chunk_finished(0, 4.0));  // 100 groups/s: device 1's 100 guessed at 100 x ratio / 100 s
    const double outrun = 1.02 * ratio;     // just past the guess
    EXPECT_EQ(t.idle(0, outrun).victim, ratio > 4 ? 1 : -1) << ratio;
  }
}

TEST(TakeOver, WithoutSpecificationsOnlyAStallIsTakenOver) {
  TakeOver t(-1, {0, 1});  // no home: the simulator's case
  run(t, 0, {0, 0, 50}, 0);
  run(t, 1, {1, 50, 100}, 0);
  ASSERT_TRUE(t.chunk_finished(0, 0.5));  // 100 groups/s: the redo of 50 takes 0.5 s
  TakeOver::Idle idle = t.idle(0, 0.5);
  EXPECT_EQ(idle.victim, -1);
  EXPECT_TRUE(idle.others_work);
  // The stall rule: three redos and at least 5 s since device 1 started.
  EXPECT_DOUBLE_EQ(t.next_stall_check(0), 5.0);
  EXPECT_EQ(t.idle(0, 4.99).victim, -1);
  idle = t.idle(0, 5.0);
  EXPECT_EQ(idle.victim, 1);
  EXPECT_DOUBLE_EQ(idle.victim_seconds, 5.0);
  EXPECT_TRUE(std::isinf(t.next_stall_check(0)));  // nobody else works
}

TEST(TakeOver, ACancelledUploadNeverStartsItsSubLaunch) {
  TakeOver t(0, {0, 1}, specified({100, 1}));
  t.chunk_preparing(1, {1, 90, 100}, 0);  // still uploading
  run(t, 0, {0, 0, 90}, 0);
  ASSERT_TRUE(t.chunk_finished(0, 0.9));
  TakeOver::Idle idle = t.idle(0, 0.9);
  EXPECT_EQ(idle.victim, 1);
  EXPECT_EQ(idle.victim_state, State::Cancelled);
  EXPECT_DOUBLE_EQ(idle.victim_seconds, 0.9);
  EXPECT_FALSE(t.chunk_started(1, 1.0));
  t.finished(0);
  EXPECT_FALSE(t.all_done());  // until the cancelled device has left
  t.leave(1);
  EXPECT_TRUE(t.all_done());
}

TEST(TakeOver, AThiefTakenOverPassesOnWhatItOwes) {
  TakeOver t(-1, {0, 1, 2});
  run(t, 0, {0, 0, 10}, 0);
  run(t, 1, {1, 10, 20}, 0);
  run(t, 2, {2, 20, 30}, 0);
  ASSERT_TRUE(t.chunk_finished(0, 1));  // 10 groups/s
  ASSERT_TRUE(t.chunk_finished(1, 1));
  ASSERT_TRUE(t.chunk_finished(2, 1));
  t.finished(1);
  // Device 2 stalls in its second chunk: device 0 takes both its ranges over by the stall rule.
  run(t, 2, {2, 30, 40}, 1);
  TakeOver::Idle first = t.idle(0, 7);
  ASSERT_EQ(first.victim, 2);
  ASSERT_EQ(first.ranges.size(), 2u);
  // ... starts the first of the two ranges and stalls in it: a device taken over now redoes that one
  // and the one not started yet.
  run(t, 0, {0, 20, 30}, 7);
  TakeOver::Idle second = t.idle(1, 20);
  ASSERT_EQ(second.victim, 0);
  uint64_t groups = 0;
  for (const Chunk& c : second.ranges) groups += c.groups();
  EXPECT_EQ(groups, 30u);  // its own [0, 10), the redo it ran [20, 30) and the one it owed [30, 40)
}

TEST(TakeOver, HomeIsNeverTakenOver) {
  TakeOver t(0, {0, 1});
  run(t, 0, {0, 0, 50}, 0);
  run(t, 1, {1, 50, 100}, 0);
  ASSERT_TRUE(t.chunk_finished(1, 0.01));
  TakeOver::Idle idle = t.idle(1, 1e6);
  EXPECT_EQ(idle.victim, -1);
  EXPECT_FALSE(idle.others_work);  // home is not waited for
  EXPECT_FALSE(t.abandon_if_running(0, 1e6));
}

}  // namespace
}  // namespace coex::sched
