#include "report/trace.h"

#include "report/report.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

namespace coex::report {
namespace {

using nlohmann::json;

std::vector<json> events_with_phase(const json& trace, const std::string& phase) {
  std::vector<json> found;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == phase) found.push_back(e);
  }
  return found;
}

TEST(TraceRecorder, CompleteEventsOnePerDeviceTrack) {
  TraceRecorder trace;
  trace.set_track_name(0, "pthread-cpu");
  trace.set_track_name(1, "NVIDIA H100");
  trace.record("write A", "transfer", 1, 10.0, 25.5, {{"bytes", 4096}});
  trace.record("mm", "kernel", 0, 5.0, 105.0);
  trace.record("merge C", "merge", 0, 200.0, 150.0);  // end before begin: zero length, not negative

  const json j = trace.to_json();
  EXPECT_EQ(j.at("displayTimeUnit"), "ms");
  EXPECT_EQ(j.at("otherData").at("dropped_events"), 0);

  const auto complete = events_with_phase(j, "X");
  ASSERT_EQ(complete.size(), 3u);
  // In time order.
  EXPECT_EQ(complete[0].at("name"), "mm");
  EXPECT_EQ(complete[0].at("cat"), "kernel");
  EXPECT_EQ(complete[0].at("tid"), 0);
  EXPECT_EQ(complete[0].at("pid"), 1);
  EXPECT_DOUBLE_EQ(complete[0].at("ts").get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(complete[0].at("dur").get<double>(), 100.0);
  EXPECT_FALSE(complete[0].contains("args"));
  EXPECT_EQ(complete[1].at("name"), "write A");
  EXPECT_EQ(complete[1].at("tid"), 1);
  EXPECT_DOUBLE_EQ(complete[1].at("dur").get<double>(), 15.5);
  EXPECT_EQ(complete[1].at("args").at("bytes"), 4096);
  EXPECT_DOUBLE_EQ(complete[2].at("dur").get<double>(), 0.0);

  const auto metadata = events_with_phase(j, "M");
  std::map<int, std::string> thread_names;
  for (const json& m : metadata) {
    if (m.at("name") == "thread_name") thread_names[m.at("tid").get<int>()] = m.at("args").at("name");
  }
  EXPECT_EQ(thread_names, (std::map<int, std::string>{{0, "pthread-cpu"}, {1, "NVIDIA H100"}}));
}

TEST(TraceRecorder, NonObjectArgsAreWrapped) {
  TraceRecorder trace;
  trace.record("wait", "wait", 0, 0, 1, "for event 7");
  const auto complete = events_with_phase(trace.to_json(), "X");
  ASSERT_EQ(complete.size(), 1u);
  EXPECT_EQ(complete[0].at("args"), (json{{"value", "for event 7"}}));
}

TEST(TraceRecorder, ClockStartsAtZeroAndAdvances) {
  TraceRecorder trace;
  const double first = trace.now_us();
  EXPECT_GE(first, 0.0);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_GE(trace.now_us() - first, 2000.0);
  const auto later = TraceRecorder::Clock::now() + std::chrono::milliseconds(5);
  EXPECT_GE(trace.to_trace_us(later), 5000.0);
}

TEST(TraceRecorder, MemoryIsBoundedAndDropsAreCounted) {
  TraceRecorder trace(10);
  for (int i = 0; i < 25; ++i) trace.record("k", "kernel", 0, i, i + 1);
  EXPECT_EQ(trace.event_count(), 10u);
  EXPECT_EQ(trace.dropped_events(), 15u);
  const json j = trace.to_json();
  EXPECT_EQ(j.at("otherData").at("dropped_events"), 15);
  EXPECT_EQ(events_with_phase(j, "X").size(), 10u);
}

TEST(TraceRecorder, ThreadSafe) {
  TraceRecorder trace;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&trace, t] {
      for (int i = 0; i < 500; ++i) {
        const double begin = trace.now_us();
        trace.record("chunk", "kernel", t, begin, trace.now_us());
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(trace.event_count(), 2000u);
}

TEST(TraceRecorder, WritesAFileThatParses) {
  TraceRecorder trace;
  trace.set_track_name(0, "dev\xff");  // not UTF-8: replaced, the file stays valid JSON
  trace.record("k\"quoted\"", "kernel", 0, 1, 2);
  const std::string path = testing::TempDir() + "coex_trace_test_" + std::to_string(::getpid()) + ".json";
  std::string error;
  ASSERT_TRUE(trace.write(path, &error)) << error;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const json back = json::parse(text.str());
  EXPECT_EQ(events_with_phase(back, "X").at(0).at("name"), "k\"quoted\"");
  std::remove(path.c_str());

  EXPECT_FALSE(trace.write(testing::TempDir() + "coex_no_such_dir/t.json", &error));
  EXPECT_FALSE(error.empty());
}

TEST(TraceRecorder, EachLaunchTheReportCountsIsOneSliceWithItsShares) {
  TraceRecorder trace;
  ReportRecorder report;
  report.set_launch_observer(
      [&trace](const std::string& kernel, const LaunchRecord& launch) { record_launch_event(trace, kernel, launch); });
  LaunchRecord split;
  split.split = true;
  split.per_device = {{0, 3000, 0.1}, {1, 1096, 0.1}};
  report.record_launch("jacobi", split);
  LaunchRecord unsplit;
  unsplit.not_split_reason = "global_atomics";
  unsplit.per_device = {{0, 64, 0.0}};
  report.record_launch("histogram", unsplit);

  const auto slices = events_with_phase(trace.to_json(), "X");
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(slices[0].at("name"), "jacobi");
  EXPECT_EQ(slices[0].at("cat"), "launch");
  EXPECT_EQ(slices[0].at("tid"), kLaunchTrack);
  EXPECT_EQ(slices[0].at("args").at("work_items"), (json{{"0", 3000}, {"1", 1096}}));
  EXPECT_TRUE(slices[0].at("args").at("split").get<bool>());
  EXPECT_EQ(slices[1].at("args").at("not_split"), "global_atomics");
  EXPECT_LE(slices[0].at("ts").get<double>(), slices[1].at("ts").get<double>());
  // The report still sums them.
  EXPECT_EQ(report.to_json().at("totals").at("launches"), 2);
  // A launch recorded as it ends spans its longest-busy device's time (100 ms here), up to now.
  EXPECT_NEAR(slices[0].at("dur").get<double>(), std::min(1e5, slices[0].at("ts").get<double>() +
                                                                   slices[0].at("dur").get<double>()), 1.0);
}

TEST(TraceRecorder, LaunchWithAKnownSpanAndDeviceTrackNames) {
  TraceRecorder trace;
  LaunchRecord unsplit;
  unsplit.not_split_reason = "too_small";
  unsplit.per_device = {{0, 64, 0.0}};
  record_launch_event(trace, "tiny", unsplit, 10.0, 35.0);
  const auto slices = events_with_phase(trace.to_json(), "X");
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0].at("ts"), 10.0);
  EXPECT_EQ(slices[0].at("dur"), 25.0);
  EXPECT_EQ(slices[0].at("args").at("not_split"), "too_small");
  EXPECT_FALSE(slices[0].at("args").contains("gate"));
  // A launch auto's gate kept on home says what it saw.
  LaunchRecord kept;
  kept.not_split_reason = "one_device_pays";
  kept.per_device = {{0, 4096, 0.0}};
  kept.gate = GateRecord{41, "one_device_pays", {0}, false, {0, 1}, 0.004, 0.003};
  record_launch_event(trace, "jacobi", kept, 40.0, 50.0);
  const json gate = events_with_phase(trace.to_json(), "X").at(1).at("args").at("gate");
  EXPECT_EQ(gate.at("launch"), 41);
  EXPECT_EQ(gate.at("measured_devices"), (json{0, 1}));
  EXPECT_EQ(gate.at("split_seconds"), 0.004);
  EXPECT_EQ(gate.at("home_seconds"), 0.003);
  EXPECT_FALSE(gate.at("probe").get<bool>());
  // Two PoCL devices share a name: the index tells them apart.
  EXPECT_EQ(device_track_name(1, "pthread-cpu", false), "d1 pthread-cpu");
  EXPECT_EQ(device_track_name(0, "pthread-cpu", true), "d0 pthread-cpu (home)");
}

}  // namespace
}  // namespace coex::report
