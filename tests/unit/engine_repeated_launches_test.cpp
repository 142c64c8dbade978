// RepeatedLaunches (exec/repeated_launches.h; docs/design.md, "Repeated launches"): which launches take
// an earlier plan over. The plan's versions come from a real Executor, so the test runs on this
// machine's OpenCL driver (local_services.h). Without an OpenCL device the test is skipped.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "exec/repeated_launches.h"
#include "local_services.h"

namespace coex::exec {
namespace {

class RepeatedLaunchesTest : public ::testing::Test {
 protected:
  explicit RepeatedLaunchesTest(std::chrono::microseconds preparing_hold = RepeatedLaunches::kPreparingHold)
      : repeated_(preparing_hold) {}
  void SetUp() override {
    std::string why;
    if (!services_.start(&why)) GTEST_SKIP() << why;
    const cl_icd_dispatch& cl = services_.next();
    cl_device_id device = services_.devices().at(0).id;
    cl_int err = CL_SUCCESS;
    context_ = cl.clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
    for (cl_command_queue& queue : queues_) {
      queue = cl.clCreateCommandQueue(context_, device, 0, &err);
      ASSERT_EQ(err, CL_SUCCESS);
    }
    kernel_->name = "step";
    kernel_->args = {value_arg(7), value_arg(8)};
  }
  void TearDown() override {
    const cl_icd_dispatch& cl = services_.next();
    for (cl_command_queue queue : queues_)
      if (queue) cl.clReleaseCommandQueue(queue);
    if (context_) cl.clReleaseContext(context_);
  }

  LaunchRequest request(cl_command_queue queue) const { return LaunchRequest{queue, 1, nullptr, &global_, &local_}; }

  // The planner's side: a launch of the kernel with its current arguments, planned unsplit as too small
  // (a reason that lasts), with the versions as they are now.
  // With `preparing`, kept on home as "preparing" instead, counting each launch under that History key;
  // `home`, the decision's home (a mark of which plan a repeat took over).
  // `any_values`: the reason reads none of the plain values (RepeatableDecision::any_values).
  void planned(const LaunchRequest& launch, bool by_home_times = false, std::vector<bool> written = {false, false},
               const char* preparing = nullptr, int home = -1, bool any_values = false) {
    LaunchDecision decision;
    decision.not_split_reason = preparing ? "preparing" : "too_small";
    decision.kernel_name = kernel_->name;
    decision.home = home;
    RepeatableDecision repeatable;
    repeatable.keep = true;
    repeatable.versions = PlanVersions::now(services_);
    repeatable.by_home_times = by_home_times;
    repeatable.written = std::move(written);
    repeatable.any_values = any_values;
    if (preparing) repeatable.counts_launch.emplace(preparing, global_);
    repeated_.remember(services_, kernel_, launch, kernel_->args, decision, repeatable);
  }
  bool taken_over(const LaunchRequest& launch) {
    LaunchDecision decision;
    const bool found = repeated_.find(services_, kernel_, launch, decision);
    if (found) {
      EXPECT_EQ(decision.not_split_reason, "too_small");
      EXPECT_EQ(decision.kernel_name, "step");
      EXPECT_FALSE(decision.job);
    }
    return found;
  }

  LocalServices services_;
  cl_context context_ = nullptr;
  cl_command_queue queues_[2] = {nullptr, nullptr};
  std::shared_ptr<model::KernelRecord> kernel_ = std::make_shared<model::KernelRecord>();
  size_t global_ = 1024, local_ = 64;
  RepeatedLaunches repeated_;
};

TEST_F(RepeatedLaunchesTest, APlanIsKeptFromTheSecondLaunchWithTheSameQueueGeometryAndArguments) {
  planned(request(queues_[0]));
  EXPECT_FALSE(taken_over(request(queues_[0])));  // the first launch is only noted
  planned(request(queues_[0]));
  EXPECT_TRUE(taken_over(request(queues_[0])));
  EXPECT_TRUE(taken_over(request(queues_[0])));  // and kept
  // Another queue or geometry is another launch.
  EXPECT_FALSE(taken_over(request(queues_[1])));
  size_t other_global = 2048;
  EXPECT_FALSE(taken_over(LaunchRequest{queues_[0], 1, nullptr, &other_global, &local_}));
  EXPECT_FALSE(taken_over(LaunchRequest{queues_[0], 1, nullptr, &global_, nullptr}));
}

TEST_F(RepeatedLaunchesTest, OneLaunchOfEachQueueIsNotARepeat) {
  planned(request(queues_[0]));
  planned(request(queues_[1]));
  EXPECT_FALSE(taken_over(request(queues_[0])));
  EXPECT_FALSE(taken_over(request(queues_[1])));
}

TEST_F(RepeatedLaunchesTest, ALaunchWhoseArgumentsChangedDoesNotTakeThePlanOver) {
  planned(request(queues_[0]));
  planned(request(queues_[0]));
  ASSERT_TRUE(taken_over(request(queues_[0])));
  kernel_->args[1] = value_arg(9);  // clSetKernelArg: a column index, say
  EXPECT_FALSE(taken_over(request(queues_[0])));
  // Its own first launch is only noted, though the queue and geometry were kept before.
  planned(request(queues_[0]));
  EXPECT_FALSE(taken_over(request(queues_[0])));
  planned(request(queues_[0]));
  EXPECT_TRUE(taken_over(request(queues_[0])));
  // The earlier arguments' plan is still there (ping-pong buffers alternate between two).
  kernel_->args[1] = value_arg(8);
  EXPECT_TRUE(taken_over(request(queues_[0])));
  // An argument the same in its bytes but set another way (a __local size) is another launch.
  kernel_->args[1].local = true;
  EXPECT_FALSE(taken_over(request(queues_[0])));
}

// A plan whose reason reads no plain value ("too_small" by size, "preparing") serves the launches that
// differ from it in those values alone (a factorization's column index), from the second launch with
// its geometry on, whatever the values; not one whose argument became a buffer coex tracks (its writes
// must be seen), nor one whose __local size changed, nor a plan whose reason read the values.
TEST_F(RepeatedLaunchesTest, APlanThatReadsNoValueServesLaunchesWithOtherValues) {
  auto plan_at = [&](int column) {
    kernel_->args[1] = value_arg(column);
    planned(request(queues_[0]), false, {false, false}, nullptr, -1, true);
  };
  plan_at(1);
  kernel_->args[1] = value_arg(2);
  EXPECT_FALSE(taken_over(request(queues_[0])));  // the first launch is only noted
  plan_at(2);                                     // another value, the same launch otherwise
  for (int column : {2, 3, 4, 1000}) {
    kernel_->args[1] = value_arg(column);
    EXPECT_TRUE(taken_over(request(queues_[0]))) << "column " << column;
  }
  // Another geometry is another launch still.
  size_t other_global = 2048;
  EXPECT_FALSE(taken_over(LaunchRequest{queues_[0], 1, nullptr, &other_global, &local_}));
  // A value of another size is another launch.
  const cl_mem handle = reinterpret_cast<cl_mem>(uintptr_t{0x2000});
  kernel_->args[1] = value_arg(handle);
  EXPECT_FALSE(taken_over(request(queues_[0]))) << "another size";
  // A value of a handle's size: plain while no tracked buffer has it.
  kernel_->args[0] = value_arg(handle);
  kernel_->args[1] = value_arg(5);
  for (int i = 0; i < 2; ++i) planned(request(queues_[0]), false, {false, false}, nullptr, -1, true);
  uintptr_t other_bits = 0x3000;
  std::memcpy(kernel_->args[0].bytes.data(), &other_bits, sizeof other_bits);
  EXPECT_TRUE(taken_over(request(queues_[0]))) << "an untracked value of a handle's size";
  services_.registries().buffers.insert(reinterpret_cast<cl_mem>(other_bits), std::make_shared<model::BufferRecord>());
  EXPECT_FALSE(taken_over(request(queues_[0]))) << "a buffer now";
  services_.registries().buffers.erase(reinterpret_cast<cl_mem>(other_bits));
  // A __local size is no plain value.
  kernel_->args[0] = value_arg(7);
  kernel_->args[1].local = true;
  kernel_->args[1].bytes.clear();
  for (int i = 0; i < 2; ++i) planned(request(queues_[0]), false, {false, false}, nullptr, -1, true);
  ASSERT_TRUE(taken_over(request(queues_[0])));
  kernel_->args[1].size = 2 * kernel_->args[1].size;
  EXPECT_FALSE(taken_over(request(queues_[0]))) << "another __local size";
  // A plan whose reason read the values serves its own values alone (on the other queue: the plans
  // above serve the first whatever the values).
  kernel_->args[1] = value_arg(8);
  for (int i = 0; i < 2; ++i) planned(request(queues_[1]));
  ASSERT_TRUE(taken_over(request(queues_[1])));
  kernel_->args[1] = value_arg(9);
  EXPECT_FALSE(taken_over(request(queues_[1])));
}

// The search starts at the entry after the last one taken over (ping-pong buffers alternate between
// two): whatever the order of the launches, each takes its own plan over, and the decision's list of
// written buffers (the app thread's, passed on from its launch before) holds only this launch's.
TEST_F(RepeatedLaunchesTest, LaunchesInAnyOrderTakeTheirOwnPlansOver) {
  auto plan_with_home = [&](int value, int home) {
    kernel_->args[0] = value_arg(value);
    for (int i = 0; i < 2; ++i) planned(request(queues_[0]), false, {false, false}, nullptr, home);
  };
  plan_with_home(10, 0);
  plan_with_home(11, 1);
  plan_with_home(12, 2);
  auto home_taken_over = [&](int value) {
    kernel_->args[0] = value_arg(value);
    LaunchDecision decision;
    decision.written_buffers.push_back(std::make_shared<model::BufferRecord>());  // left from a launch before
    if (!repeated_.find(services_, kernel_, request(queues_[0]), decision)) return -1;
    EXPECT_TRUE(decision.written_buffers.empty());
    return decision.home;
  };
  for (int value : {10, 11, 10, 11, 12, 12, 11, 10, 12, 10, 11, 12}) EXPECT_EQ(home_taken_over(value), value - 10);
  EXPECT_EQ(home_taken_over(13), -1);  // never planned
}

TEST_F(RepeatedLaunchesTest, AnEntryGoneStaleIsReplacedAtOnce) {
  planned(request(queues_[0]));
  planned(request(queues_[0]));
  ASSERT_TRUE(taken_over(request(queues_[0])));
  // A device left out and back: what the plan read changed.
  services_.executor().set_busy(1, true);
  services_.executor().set_busy(1, false);
  EXPECT_FALSE(taken_over(request(queues_[0])));
  // Planned again, the launch is kept at once: it was a repeat already.
  planned(request(queues_[0]));
  EXPECT_TRUE(taken_over(request(queues_[0])));
}

// A launch kept on home while the analysis or a build is under way ("preparing"): nothing versions
// the end of the preparation, so the plan is taken over for RepeatedLaunches::kPreparingHold only, and
// each launch that takes it over counts in the History as the planned one did. The test's hold is
// longer than kPreparingHold (1 ms): under ASan on a loaded 2-core machine the find after remember came
// later than 1 ms.
class PreparingHoldTest : public RepeatedLaunchesTest {
 protected:
  static constexpr std::chrono::milliseconds kHold{500};
  PreparingHoldTest() : RepeatedLaunchesTest(kHold) {}
};

TEST_F(PreparingHoldTest, APreparingPlanIsTakenOverForAMomentAndCountsEachLaunch) {
  planned(request(queues_[0]), false, {false, false}, "step@test");
  planned(request(queues_[0]), false, {false, false}, "step@test");
  auto history = services_.executor().history();
  ASSERT_TRUE(history);
  const uint64_t before = history->launches("step@test", 1024);
  for (int launch = 1; launch <= 2; ++launch) {
    LaunchDecision decision;
    ASSERT_TRUE(repeated_.find(services_, kernel_, request(queues_[0]), decision));
    EXPECT_EQ(decision.not_split_reason, "preparing");
    EXPECT_EQ(history->launches("step@test", 1024), before + launch);
  }
  std::this_thread::sleep_for(kHold + std::chrono::milliseconds(1));
  LaunchDecision later;
  EXPECT_FALSE(repeated_.find(services_, kernel_, request(queues_[0]), later)) << "planned again after the hold";
  EXPECT_EQ(history->launches("step@test", 1024), before + 2);
}

TEST_F(RepeatedLaunchesTest, HomeTimingsMatterOnlyToAPlanThatReadThem) {
  planned(request(queues_[0]), /*by_home_times=*/true);
  planned(request(queues_[0]), /*by_home_times=*/true);
  planned(request(queues_[1]));
  planned(request(queues_[1]));
  ASSERT_TRUE(taken_over(request(queues_[0])));
  ASSERT_TRUE(taken_over(request(queues_[1])));
  // A launch on home timed: a user event stands for it, complete at once.
  const cl_icd_dispatch& cl = services_.next();
  cl_int err = CL_SUCCESS;
  cl_event event = cl.clCreateUserEvent(context_, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  HomeLaunchTimes& times = services_.executor().home_launch_times();
  const uint64_t before = times.version();
  times.time("step/1024", event, std::chrono::steady_clock::now());  // takes the event's reference over
  ASSERT_EQ(cl.clSetUserEventStatus(event, CL_COMPLETE), CL_SUCCESS);
  times.settle("step/1024");
  ASSERT_NE(times.version(), before);
  EXPECT_FALSE(taken_over(request(queues_[0])));
  EXPECT_TRUE(taken_over(request(queues_[1])));
  times.release_done();
}

// Home's time of a kernel and size (HomeLaunchTimes): the shortest of its first kTimedLaunches timed
// launches; renew() times the next ones again, and the shortest of them replaces it once two are in
// (one alone only lowers it). A launch timed before the renew() that completes after it is not counted.
TEST_F(RepeatedLaunchesTest, HomesTimeRenewedIsTheNextLaunchesOwn) {
  const cl_icd_dispatch& cl = services_.next();
  HomeLaunchTimes& times = services_.executor().home_launch_times();
  const std::string key = "step@1024/drained";
  // A launch enqueued `ms` milliseconds ago, timed; complete() ends it now.
  auto enqueue = [&](int ms) {
    cl_int err = CL_SUCCESS;
    cl_event event = cl.clCreateUserEvent(context_, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    times.time(key, event, std::chrono::steady_clock::now() - std::chrono::milliseconds(ms));
    return event;
  };
  auto complete = [&](cl_event event) {
    ASSERT_EQ(cl.clSetUserEventStatus(event, CL_COMPLETE), CL_SUCCESS);
    times.settle(key);
  };
  times.renew(key);  // nothing measured yet: nothing to renew
  for (int ms : {30, 20}) complete(enqueue(ms));
  cl_event late = enqueue(5);  // completes only after the renew()
  ASSERT_TRUE(times.seconds(key).has_value());
  EXPECT_NEAR(*times.seconds(key), 0.020, 0.005);
  EXPECT_FALSE(times.wants_timing(key));
  times.renew(key);
  EXPECT_TRUE(times.wants_timing(key));
  complete(late);
  EXPECT_NEAR(*times.seconds(key), 0.020, 0.005);  // of the round before: not counted
  complete(enqueue(60));
  EXPECT_NEAR(*times.seconds(key), 0.020, 0.005);  // one new time alone does not raise it
  times.renew(key);                                // still being timed again: no change
  complete(enqueue(50));
  EXPECT_NEAR(*times.seconds(key), 0.050, 0.005);  // the shortest of the two new ones
  complete(enqueue(55));
  EXPECT_NEAR(*times.seconds(key), 0.050, 0.005);
  EXPECT_FALSE(times.wants_timing(key));
  times.renew(key);
  complete(enqueue(10));  // one new time lowers it at once
  EXPECT_NEAR(*times.seconds(key), 0.010, 0.005);
  times.release_done();
}

// A timed launch still running is a time to come (HomeLaunchTimes::time_to_come): once home times no
// more launches of a size, what it has stands for it only when none is (launch_planner.cpp, a kernel
// without loops holds its compile-ahead process until then). A launch that failed brings no time and
// is no longer awaited.
TEST_F(RepeatedLaunchesTest, ATimedLaunchStillRunningIsATimeToCome) {
  const cl_icd_dispatch& cl = services_.next();
  HomeLaunchTimes& times = services_.executor().home_launch_times();
  const std::string key = home_launch_key("step", 4096);
  EXPECT_FALSE(times.time_to_come(key));
  std::vector<cl_event> events;
  for (int i = 0; i < HomeLaunchTimes::kTimedLaunches; ++i) {
    cl_int err = CL_SUCCESS;
    events.push_back(cl.clCreateUserEvent(context_, &err));
    ASSERT_EQ(err, CL_SUCCESS);
    ASSERT_EQ(cl.clRetainEvent(events.back()), CL_SUCCESS);  // time() takes one reference over
    times.time(key, events.back(), std::chrono::steady_clock::now());
  }
  EXPECT_FALSE(times.wants_timing(key));
  EXPECT_TRUE(times.time_to_come(key));
  ASSERT_EQ(cl.clSetUserEventStatus(events[0], CL_COMPLETE), CL_SUCCESS);
  ASSERT_EQ(cl.clSetUserEventStatus(events[1], CL_COMPLETE), CL_SUCCESS);
  EXPECT_TRUE(times.time_to_come(key));
  EXPECT_EQ(times.seconds(key, HomeLaunchTimes::kTimedLaunches), std::nullopt);
  ASSERT_EQ(cl.clSetUserEventStatus(events[2], CL_OUT_OF_RESOURCES), CL_SUCCESS);  // failed: no time
  EXPECT_FALSE(times.time_to_come(key));
  EXPECT_TRUE(times.seconds(key, 2).has_value());
  EXPECT_EQ(times.seconds(key, HomeLaunchTimes::kTimedLaunches), std::nullopt);
  for (cl_event event : events) cl.clReleaseEvent(event);
  times.release_done();
}

// A split that home ran alone (HomeLaunchTimes::record_alone) is a time of the launch on home at its
// size, and the kernel's pace: a timed launch that waited behind a deep queue does not raise it.
TEST_F(RepeatedLaunchesTest, ASplitHomeRanAloneIsATimeOfTheLaunchOnHome) {
  const cl_icd_dispatch& cl = services_.next();
  HomeLaunchTimes& times = services_.executor().home_launch_times();
  const std::string key = home_launch_key("step", 1024);
  EXPECT_FALSE(times.seconds(key).has_value());
  times.record_alone(key, 0.002);
  ASSERT_TRUE(times.seconds(key).has_value());
  EXPECT_DOUBLE_EQ(*times.seconds(key), 0.002);
  ASSERT_TRUE(times.pace("step").has_value());
  EXPECT_DOUBLE_EQ(*times.pace("step"), 0.002 / 1024);
  EXPECT_TRUE(times.wants_timing(key));  // not a timed launch
  // A launch enqueued behind 300 ms of the queue's earlier commands.
  cl_int err = CL_SUCCESS;
  cl_event event = cl.clCreateUserEvent(context_, &err);
  ASSERT_EQ(err, CL_SUCCESS);
  times.time(key, event, std::chrono::steady_clock::now() - std::chrono::milliseconds(300));
  ASSERT_EQ(cl.clSetUserEventStatus(event, CL_COMPLETE), CL_SUCCESS);
  times.settle(key);
  EXPECT_DOUBLE_EQ(*times.seconds(key), 0.002);
  EXPECT_TRUE(times.seconds(key, 2).has_value());
  times.release_done();
}

// A launch timed behind a start marker (HomeLaunchTimes::time's `started`) is timed from the marker's
// completion, not from its enqueue: the commands queued before it are not its time. User events stand
// for the marker and the launch.
TEST_F(RepeatedLaunchesTest, ALaunchBehindAStartMarkerIsTimedFromTheMarker) {
  const cl_icd_dispatch& cl = services_.next();
  HomeLaunchTimes& times = services_.executor().home_launch_times();
  auto user_event = [&] {
    cl_int err = CL_SUCCESS;
    cl_event event = cl.clCreateUserEvent(context_, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    return event;
  };
  // Enqueued 300 ms ago, behind commands that ran until now; then 5 ms of its own.
  auto measure = [&](const std::string& key, bool with_marker) {
    cl_event launch = user_event(), marker = with_marker ? user_event() : nullptr;
    times.time(key, launch, std::chrono::steady_clock::now() - std::chrono::milliseconds(300), marker);
    if (marker) {
      EXPECT_EQ(cl.clSetUserEventStatus(marker, CL_COMPLETE), CL_SUCCESS);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(cl.clSetUserEventStatus(launch, CL_COMPLETE), CL_SUCCESS);
    times.settle(key);
    return times.seconds(key);
  };
  const std::optional<double> behind_marker = measure(home_launch_key("step", 1024), true);
  ASSERT_TRUE(behind_marker.has_value());
  EXPECT_GE(*behind_marker, 0.004);
  EXPECT_LT(*behind_marker, 0.1);
  const std::optional<double> from_enqueue = measure(home_launch_key("step", 2048), false);
  ASSERT_TRUE(from_enqueue.has_value());
  EXPECT_GE(*from_enqueue, 0.3);
  times.release_done();
}

TEST_F(RepeatedLaunchesTest, AQueueMadeOrReleasedMakesEveryEntryStale) {
  planned(request(queues_[0]));
  planned(request(queues_[0]));
  ASSERT_TRUE(taken_over(request(queues_[0])));
  // A queue released and another made may share a handle on another device: plan again.
  cl_command_queue handle = reinterpret_cast<cl_command_queue>(uintptr_t{0x2000});
  services_.registries().queues.insert(handle, std::make_shared<model::QueueRecord>());
  EXPECT_FALSE(taken_over(request(queues_[0])));
  planned(request(queues_[0]));
  EXPECT_TRUE(taken_over(request(queues_[0])));
  services_.registries().queues.erase(handle);
  EXPECT_FALSE(taken_over(request(queues_[0])));
}

TEST_F(RepeatedLaunchesTest, ARepeatsWrittenBuffersFollowTheBufferRegistry) {
  // The kernel's second argument is a buffer it writes.
  cl_mem handle = reinterpret_cast<cl_mem>(uintptr_t{0x1000});
  kernel_->args[1] = value_arg(handle);
  auto first = std::make_shared<model::BufferRecord>();
  first->handle = handle;
  services_.registries().buffers.insert(handle, first);
  auto written = [&]() -> std::vector<std::shared_ptr<model::BufferRecord>> {
    LaunchDecision decision;
    const bool found = repeated_.find(services_, kernel_, request(queues_[0]), decision);
    EXPECT_TRUE(found);
    return decision.written_buffers;
  };
  for (int i = 0; i < 2; ++i) planned(request(queues_[0]), false, {false, true});
  EXPECT_EQ(written(), std::vector<std::shared_ptr<model::BufferRecord>>{first});
  EXPECT_EQ(written(), std::vector<std::shared_ptr<model::BufferRecord>>{first});  // from the entry's records
  // The app releases the buffer: the repeat writes nothing coex tracks.
  services_.registries().buffers.erase(handle);
  EXPECT_TRUE(written().empty());
  // A new buffer at the same address is the one written, not the released one an entry remembered.
  auto second = std::make_shared<model::BufferRecord>();
  second->handle = handle;
  services_.registries().buffers.insert(handle, second);
  EXPECT_EQ(written(), std::vector<std::shared_ptr<model::BufferRecord>>{second});
  EXPECT_EQ(written(), std::vector<std::shared_ptr<model::BufferRecord>>{second});
  services_.registries().buffers.erase(handle);
}

}  // namespace
}  // namespace coex::exec
