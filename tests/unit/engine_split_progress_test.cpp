#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <optional>
#include <thread>

#include "exec/device_worker.h"
#include "exec/spin_wait.h"
#include "exec/split_progress.h"
#include "specified_devices.h"

using coex::exec::SplitProgress;
using coex::sched::Chunk;
using coex::sched::redo_is_sooner;

static SplitProgress::Listener on_abandon_and_return(std::function<void(int, const Chunk&, double)> abandon,
                                                     std::function<void(int, const Chunk&, double)> returned) {
  SplitProgress::Listener listener;
  listener.on_abandon = std::move(abandon);
  listener.on_abandoned_return = std::move(returned);
  return listener;
}

// Its sub-launch returned at `now` (a range taken over: not the policy's).
static bool finish(SplitProgress& progress, int device, double now) {
  coex::sched::ChunkTiming timing;
  timing.end = now;
  return progress.chunk_finished(device, timing, false);
}

// The idle device's next step without a policy (the launch driver's take-over): the range it takes
// over first, or nothing when it is done.
static std::optional<std::vector<Chunk>> take_over(SplitProgress& progress, int device,
                                                   const std::function<double()>& now) {
  SplitProgress::Step step = progress.next(device, now);
  if (step.kind != SplitProgress::Step::Kind::Run) return std::nullopt;
  EXPECT_FALSE(step.from_policy);
  return std::vector<Chunk>{step.chunk};
}

// A chunk prepared, then its sub-launch started, at `now`.
static void start(SplitProgress& progress, int device, const Chunk& chunk, double now) {
  progress.chunk_preparing(device, chunk, now);
  ASSERT_TRUE(progress.chunk_started(device, now));
}

TEST(RedoIsSooner, AStallIsThreeRedosAndFiveSeconds) {
  // 10 groups at 100 groups/s: 0.1 s to redo; the five seconds count.
  EXPECT_FALSE(redo_is_sooner(10, 100, 10, 4.99, 0));
  EXPECT_TRUE(redo_is_sooner(10, 100, 10, 5.01, 0));
  // 200 groups: 2 s to redo, three of them.
  EXPECT_FALSE(redo_is_sooner(200, 100, 10, 5.9, 0));
  EXPECT_TRUE(redo_is_sooner(200, 100, 10, 6.1, 0));
  // A device thought fast (its pace from earlier launches) that stalls is
  // caught the same way.
  EXPECT_TRUE(redo_is_sooner(10, 100, 10, 5.01, 1e6));
}

TEST(RedoIsSooner, KnownVictimRateGivesItsTimeLeft) {
  // The victim runs 10 groups at 20 groups/s (0.5 s): after 0.4 s, 0.1 s is
  // left.
  EXPECT_FALSE(redo_is_sooner(10, 100, 10, 0.4, 20));
  // After 0.1 s, 0.4 s is left: a 0.15 s redo wins.
  EXPECT_TRUE(redo_is_sooner(10, 100, 10, 0.1, 20));
  // Its earlier chunks are redone too: 40 groups take 0.6 s with the margin.
  EXPECT_FALSE(redo_is_sooner(40, 100, 10, 0.1, 20));
}

TEST(RedoIsSooner, AThiefWithoutARateNeverTakesOver) {
  EXPECT_FALSE(redo_is_sooner(10, 0, 10, 1e9, 0));
  EXPECT_FALSE(redo_is_sooner(0, 100, 10, 1e9, 0));
}

// Device 0 is home, device 1 stalls in its sub-launch: home finishes its own
// chunk, then takes over device 1's range; the launch ends without device 1,
// which later comes back to nothing.
TEST(SplitProgress, HomeTakesOverAStalledDevice) {
  std::vector<int> abandoned, returned;
  std::atomic<bool> any_abandoned{false};  // what the mover thread reads (the vector is the lock holder's)
  SplitProgress progress(nullptr, 0, {0, 1},
                         on_abandon_and_return(
                             [&](int d, const Chunk& c, double seconds) {
                               abandoned.push_back(d);
                               any_abandoned = true;
                               EXPECT_EQ(c.begin, 50u);
                               EXPECT_GT(seconds, 1.5);  // what it ran so far
                             },
                             [&](int d, const Chunk& c, double) {
                               returned.push_back(d);
                               EXPECT_EQ(c.begin, 50u);
                             }));
  std::atomic<double> clock{0};
  auto now = [&] { return clock.load(); };
  start(progress, 1, {1, 50, 100}, 0);
  start(progress, 0, {0, 0, 50}, 0);
  clock = 0.5;
  ASSERT_TRUE(finish(progress, 0, 0.5));  // 100 groups/s
  std::thread mover([&] {                        // time passes while home waits
    for (int i = 0; i < 400 && !any_abandoned; ++i) {
      clock = clock + 0.05;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  auto ranges = take_over(progress, 0, now);
  mover.join();
  ASSERT_TRUE(ranges.has_value());
  ASSERT_EQ(ranges->size(), 1u);
  EXPECT_EQ((*ranges)[0].device, 0);  // home's now
  EXPECT_EQ((*ranges)[0].begin, 50u);
  // The redo of 50 groups takes 0.5 s; device 1's pace is unknown: a stall once
  // it ran 5 s.
  EXPECT_GT(clock.load(), 5.0);
  EXPECT_EQ(abandoned, std::vector<int>{1});
  progress.finished(0);
  progress.wait_all();  // returns without device 1
  EXPECT_EQ(progress.abandoned(), std::set<int>{1});
  EXPECT_FALSE(finish(progress, 1, 9.0));
  EXPECT_EQ(returned, std::vector<int>{1});
}

// Nothing measured of device 1, but its specification says 100 times slower
// than home: home takes it over as soon as it is idle, without waiting for a
// stall.
TEST(SplitProgress, ASlowDeviceBySpecificationIsTakenOverAtOnce) {
  SplitProgress progress(nullptr, 0, {0, 1}, {}, specified({100, 1}));
  start(progress, 1, {1, 90, 100}, 0);
  start(progress, 0, {0, 0, 90}, 0);
  ASSERT_TRUE(finish(progress, 0, 0.9));  // 100 groups/s: device 1 would need 10 s for its 10
  auto ranges = take_over(progress, 0, [] { return 0.9; });
  ASSERT_TRUE(ranges.has_value());
  EXPECT_EQ((*ranges)[0].begin, 90u);
}

// The specification says device 1 is 65 times slower: its 2 groups should take 1.3 s beside home's
// 100 groups/s. When it has run 2 s it has outrun that, and is given as long again: home redoes its
// 2 groups in 0.02 s rather than wait for it, or for the 5 s of the stall rule.
TEST(SplitProgress, ASlowDeviceThatOutrunsItsGuessIsGivenAsLongAgain) {
  SplitProgress progress(nullptr, 0, {0, 1}, {}, specified({65, 1}));
  start(progress, 1, {1, 98, 100}, 0);
  start(progress, 0, {0, 0, 98}, 1.02);
  ASSERT_TRUE(finish(progress, 0, 2.0));  // 100 groups/s
  std::thread device1([&] {                      // returns later: the wait ends either way
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (finish(progress, 1, 2.1)) progress.finished(1);
  });
  auto ranges = take_over(progress, 0, [] { return 2.0; });
  device1.join();
  ASSERT_TRUE(ranges.has_value());
  EXPECT_EQ((*ranges)[0].begin, 98u);
  // Devices of one kind (2x apart): the guess outrun is no reason, only a stall is.
  SplitProgress same(nullptr, 0, {0, 1, 2}, {}, specified({2, 2, 1}));
  start(same, 2, {2, 90, 100}, 0);
  start(same, 1, {1, 0, 90}, 0.1);
  ASSERT_TRUE(finish(same, 1, 1.0));  // 100 groups/s: device 2's 10 guessed at 0.2 s
  std::thread other([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(finish(same, 2, 1.2));
    same.finished(2);
  });
  EXPECT_FALSE(take_over(same, 1, [] { return 1.0; }).has_value());
  other.join();
}

TEST(SplitProgress, HomeIsNeverTakenOver) {
  SplitProgress progress(nullptr, 0, {0, 1});
  start(progress, 0, {0, 0, 50}, 0);
  start(progress, 1, {1, 50, 100}, 0);
  ASSERT_TRUE(finish(progress, 1, 0.01));
  // Device 1 is fast and idle, home has run for ages: device 1 still waits for
  // no one.
  auto ranges = take_over(progress, 1, [] { return 1e6; });
  EXPECT_FALSE(ranges.has_value());
  EXPECT_TRUE(progress.abandoned().empty());
}

TEST(SplitProgress, AWaitingDeviceLeavesWhenTheOtherFinishes) {
  SplitProgress progress(nullptr, 0, {0, 1, 2});
  start(progress, 1, {1, 0, 50}, 0);
  start(progress, 2, {2, 50, 100}, 0);
  ASSERT_TRUE(finish(progress, 1, 0.5));
  std::thread other([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(finish(progress, 2, 0.52));  // it had a known pace: no take-over before
    progress.finished(2);
  });
  // Device 2 has run 0.5 s of a chunk device 1 would redo in 0.5 s: not worth
  // it.
  auto ranges = take_over(progress, 1, [] { return 0.5; });
  other.join();
  EXPECT_FALSE(ranges.has_value());
  EXPECT_TRUE(progress.abandoned().empty());
}

// Device 1, 100 times slower by its specification, is still uploading its chunk when home runs out
// of work: home takes the range over at once, device 1 is cancelled (not abandoned: it has no
// sub-launch running, and is not busy after), its thread sees it at its next look, does not start the
// sub-launch, and the launch waits for it to leave.
// A waiting device that read back its writes already asks with finish_when_done: the Done that the
// other's end brings finishes its part in the same look, and the launch ends without its thread
// coming back (split_device_thread.cpp). Without it, the launch waits for finished().
TEST(SplitProgress, ADeviceDoneInItsLookIsFinishedThere) {
  for (const bool finish_when_done : {true, false}) {
    SplitProgress progress(nullptr, 0, {0, 1, 2});
    start(progress, 1, {1, 0, 50}, 0);
    start(progress, 2, {2, 50, 100}, 0);
    ASSERT_TRUE(finish(progress, 1, 0.5));
    std::atomic<bool> asked{false};
    std::thread waiting([&] {
      const SplitProgress::Step step = progress.next(
          1, [] { return 0.5; }, true, finish_when_done);
      EXPECT_EQ(step.kind, SplitProgress::Step::Kind::Done);
      asked = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(finish(progress, 2, 0.52));
    progress.finished(2);
    progress.finished(0);
    waiting.join();
    ASSERT_TRUE(asked);
    std::atomic<bool> ended{false};
    std::thread launch([&] {
      progress.wait_all();
      ended = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(ended.load(), finish_when_done) << finish_when_done;
    if (!finish_when_done) progress.finished(1);
    launch.join();
  }
}

TEST(SplitProgress, ADeviceStillPreparingIsCancelledAndTheLaunchWaitsForItToLeave) {
  std::vector<int> abandoned, cancelled;
  SplitProgress::Listener listener;
  listener.on_abandon = [&](int d, const Chunk&, double) { abandoned.push_back(d); };
  listener.on_cancel = [&](int d, const Chunk& c, double seconds) {
    cancelled.push_back(d);
    EXPECT_EQ(c.begin, 90u);
    EXPECT_DOUBLE_EQ(seconds, 0.9);  // prepared that long without computing: a bound on its time
  };
  SplitProgress progress(nullptr, 0, {0, 1}, listener, specified({100, 1}));
  progress.chunk_preparing(1, {1, 90, 100}, 0);
  start(progress, 0, {0, 0, 90}, 0);
  ASSERT_TRUE(finish(progress, 0, 0.9));
  EXPECT_FALSE(progress.cancelled(1));
  auto ranges = take_over(progress, 0, [] { return 0.9; });
  ASSERT_TRUE(ranges.has_value());
  EXPECT_EQ((*ranges)[0].begin, 90u);
  EXPECT_EQ(cancelled, std::vector<int>{1});
  EXPECT_TRUE(abandoned.empty());
  EXPECT_TRUE(progress.cancelled(1));
  EXPECT_FALSE(progress.chunk_started(1, 1.0));  // the sub-launch must not start
  progress.finished(0);
  std::atomic<bool> left{false};
  std::thread device1([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    left = true;
    progress.leave(1);
  });
  progress.wait_all();
  EXPECT_TRUE(left.load());
  device1.join();
  EXPECT_EQ(progress.cancelled_devices(), std::set<int>{1});
  EXPECT_TRUE(progress.abandoned().empty());
}

// Two devices of the same pace: one still uploading is not taken over by the other, which waits,
// until its preparation has lasted as long as a stall (TakeOverRules::stall_seconds).
TEST(SplitProgress, APreparationIsTakenOverOnlyWhenItLastsAsLongAsAStall) {
  SplitProgress progress(nullptr, 0, {0, 1, 2}, {}, specified({1, 1, 1}));
  progress.chunk_preparing(2, {2, 50, 100}, 0);
  start(progress, 1, {1, 0, 50}, 0);
  ASSERT_TRUE(finish(progress, 1, 0.5));  // 100 groups/s: device 2's 50 would take it 0.5 s
  std::atomic<double> clock{0.5};
  std::thread mover([&] {
    for (int i = 0; i < 400 && !progress.cancelled(2); ++i) {
      clock = clock + 0.05;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  auto ranges = take_over(progress, 1, [&] { return clock.load(); });
  mover.join();
  ASSERT_TRUE(ranges.has_value());
  EXPECT_GE(clock.load(), coex::sched::TakeOverRules{}.stall_seconds);
  EXPECT_TRUE(progress.cancelled(2));
}

// A device's thread that throws: still in the launch, its failed run is published and its part
// finished (the launch ends); abandoned, nothing is published (the launch may be over) and its
// return is told; cancelled, it leaves.
TEST(SplitProgress, AFailedDeviceIsPublishedOnlyWhileInTheLaunch) {
  {
    SplitProgress progress(nullptr, 0, {0, 1});
    start(progress, 0, {0, 0, 50}, 0);
    start(progress, 1, {1, 50, 100}, 0);
    ASSERT_TRUE(finish(progress, 0, 0.5));
    progress.finished(0);
    int published = 0;
    EXPECT_TRUE(progress.fail(1, 0.6, [&] { ++published; }));
    EXPECT_EQ(published, 1);
    progress.wait_all();  // returns: device 1's part is over
  }
  {
    std::vector<double> returned;
    SplitProgress progress(nullptr, 0, {0, 1},
                           on_abandon_and_return([](int, const Chunk&, double) {},
                                                 [&](int, const Chunk& c, double seconds) {
                                                   EXPECT_EQ(c.begin, 50u);
                                                   returned.push_back(seconds);
                                                 }));
    start(progress, 1, {1, 50, 100}, 0);
    start(progress, 0, {0, 0, 50}, 0);
    ASSERT_TRUE(finish(progress, 0, 0.5));
    ASSERT_TRUE(take_over(progress, 0, [] { return 10.0; }).has_value());  // a stall: abandoned
    progress.finished(0);
    progress.wait_all();
    int published = 0;
    EXPECT_FALSE(progress.fail(1, 12.0, [&] { ++published; }));
    EXPECT_EQ(published, 0);
    EXPECT_EQ(returned, std::vector<double>{12.0});     // its time from the sub-launch's start
    EXPECT_EQ(progress.abandoned(), std::set<int>{1});  // still dropped, not finished
  }
  {
    SplitProgress progress(nullptr, 0, {0, 1}, {}, specified({100, 1}));
    progress.chunk_preparing(1, {1, 90, 100}, 0);
    start(progress, 0, {0, 0, 90}, 0);
    ASSERT_TRUE(finish(progress, 0, 0.9));
    ASSERT_TRUE(take_over(progress, 0, [] { return 0.9; }).has_value());
    ASSERT_TRUE(progress.cancelled(1));
    progress.finished(0);
    int published = 0;
    EXPECT_FALSE(progress.fail(1, 1.0, [&] { ++published; }));
    EXPECT_EQ(published, 0);
    progress.wait_all();  // returns at once: it left
    EXPECT_EQ(progress.cancelled_devices(), std::set<int>{1});
  }
}

// Spin waits: only where every thread that runs kernels has a core and one is left.
TEST(SpinWait, ABudgetOnlyWithACoreToSpare) {
  using coex::exec::spin_budget;
  const auto single = specified({1, 1, 1});  // one coex thread each
  EXPECT_EQ(spin_budget(500, single, 4), std::chrono::microseconds(500));
  EXPECT_EQ(spin_budget(500, single, 3).count(), 0);  // no core left for the app
  EXPECT_EQ(spin_budget(0, single, 64).count(), 0);   // the setting's "never"
  auto threaded = single;
  threaded[0].is_cpu = true;
  threaded[0].compute_units = 4;  // PoCL's own 4 threads beside coex's
  EXPECT_EQ(spin_budget(500, threaded, 7).count(), 0);
  EXPECT_EQ(spin_budget(500, threaded, 8), std::chrono::microseconds(500));
  EXPECT_EQ(spin_budget(500, specified({1}), 64).count(), 0);  // one device: no split
}

// A waiting device that polls (spin) still sees the launch end, and the launch's thread its end.
TEST(SpinWait, AWaitingDeviceThatPollsSeesTheLaunchEnd) {
  SplitProgress progress(nullptr, 0, {0, 1, 2}, {}, {}, std::chrono::milliseconds(5));
  start(progress, 1, {1, 0, 50}, 0);
  start(progress, 2, {2, 50, 100}, 0);
  ASSERT_TRUE(finish(progress, 1, 0.5));
  std::thread waiting([&] {
    const SplitProgress::Step step = progress.next(
        1, [] { return 0.5; }, true, true);
    EXPECT_EQ(step.kind, SplitProgress::Step::Kind::Done);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(finish(progress, 2, 0.52));
  progress.finished(2);
  progress.finished(0);
  progress.wait_all();  // device 1 finished in its look
  waiting.join();
}

// A worker that polls runs what is posted, whether it is still polling or blocked by then, and stops.
TEST(SpinWait, APollingWorkerRunsEveryTask) {
  static const cl_icd_dispatch no_driver{};  // no staging is asked for
  coex::exec::DeviceWorker worker(0, no_driver, std::chrono::milliseconds(2));
  std::atomic<int> ran{0};
  for (int i = 0; i < 50; ++i) {
    worker.post([&] { ++ran; });
    if (i % 10 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(i % 20 == 0 ? 1 : 5));
  }
  worker.stop();
  EXPECT_EQ(ran.load(), 50);
}
