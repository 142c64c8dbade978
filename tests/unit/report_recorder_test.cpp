#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "report/report.h"

namespace coex::report {
namespace {

using nlohmann::json;

LaunchRecord split_launch(uint64_t bytes, std::vector<DeviceWork> work) {
  LaunchRecord r;
  r.split = true;
  r.bytes_moved = bytes;
  r.per_device = std::move(work);
  return r;
}

LaunchRecord unsplit_launch(const std::string& reason, std::vector<DeviceWork> work) {
  LaunchRecord r;
  r.not_split_reason = reason;
  r.per_device = std::move(work);
  return r;
}

TEST(ReportRecorder, EmptyReportHasTheDocumentedShape) {
  ReportRecorder recorder;
  recorder.set_mode("layer");
  recorder.set_policy("static");
  const json j = recorder.to_json();
  EXPECT_EQ(j.at("mode"), "layer");
  EXPECT_EQ(j.at("policy"), "static");
  EXPECT_TRUE(j.at("devices").is_array());
  EXPECT_TRUE(j.at("kernels").is_array());
  EXPECT_EQ(j.at("totals"), (json{{"launches", 0},
                                  {"split_launches", 0},
                                  {"bytes_moved", 0},
                                  {"bytes_minimal", 0},
                                  {"bytes_home_on_demand", 0},
                                  {"bytes_fetched_on_demand", 0}}));
  EXPECT_FALSE(j.contains("settings"));  // only when set
  EXPECT_EQ(j.at("format"), "coex-report");
  EXPECT_EQ(j.at("version"), 1);
  EXPECT_FALSE(j.contains("history"));
  EXPECT_FALSE(j.contains("trace"));
}

TEST(ReportRecorder, NamesTheProcessHistoryAndTrace) {
  ReportRecorder recorder;
  recorder.set_pid(77);
  recorder.set_history({{"file", "/h.json"}, {"state", "loaded"}});
  recorder.set_trace_file("/t.77.json");
  const json j = recorder.to_json();
  EXPECT_EQ(j.at("pid"), 77);
  EXPECT_EQ(j.at("history").at("file"), "/h.json");
  EXPECT_EQ(j.at("trace"), "/t.77.json");
}

TEST(ReportRecorder, UnsplitLaunchTimeIsAddedWhenItCompletes) {
  // A launch not split is counted when the app enqueues it; its time on home comes with its completion.
  ReportRecorder recorder;
  recorder.record_launch("histogram", unsplit_launch("global_atomics", {{0, 64, 0}}));
  recorder.add_device_seconds("histogram", 0, 0.5);
  recorder.add_device_seconds("histogram", 0, 0.25);
  recorder.add_device_seconds("never_launched", 0, 1.0);  // ignored: not a launch the report counted
  const json j = recorder.to_json();
  ASSERT_EQ(j.at("kernels").size(), 1u);
  EXPECT_EQ(j.at("kernels")[0].at("per_device"),
            (json::array({{{"index", 0}, {"work_items", 64}, {"seconds", 0.75}}})));
}

TEST(ReportRecorder, ArgumentNamesGoBesideTheTiers) {
  ReportRecorder recorder;
  LaunchRecord launch = split_launch(8, {{0, 4, 0.1}, {1, 4, 0.1}});
  launch.args = {{0, "exact"}, {2, "whole"}};
  recorder.record_launch("k", launch);
  EXPECT_FALSE(recorder.has_arg_names("k"));
  recorder.set_arg_names("k", {"in", "n", "out"});
  EXPECT_TRUE(recorder.has_arg_names("k"));
  const json args = recorder.to_json().at("kernels")[0].at("args");
  EXPECT_EQ(args, (json::array({{{"index", 0}, {"tier", "exact"}, {"name", "in"}},
                                {{"index", 2}, {"tier", "whole"}, {"name", "out"}}})));
}

TEST(ReportRecorder, Devices) {
  ReportRecorder recorder;
  recorder.set_devices(
      {{0, "pthread", "Portable Computing Language", "CPU", true}, {1, "H100", "NVIDIA CUDA", "GPU", false}});
  const json devices = recorder.to_json().at("devices");
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0], (json{{"index", 0},
                              {"name", "pthread"},
                              {"platform", "Portable Computing Language"},
                              {"type", "CPU"},
                              {"home", true}}));
  EXPECT_EQ(devices[1].at("type"), "GPU");
  EXPECT_EQ(devices[1].at("home"), false);
}

TEST(ReportRecorder, AggregatesPerKernelInFirstSeenOrder) {
  ReportRecorder recorder;
  recorder.record_launch("mm", split_launch(1000, {{1, 600, 0.5}, {0, 400, 0.25}}));
  recorder.record_launch("sum", unsplit_launch("global_atomics", {{0, 64, 0.125}}));
  recorder.record_launch("mm", split_launch(24, {{0, 500, 0.25}, {1, 500, 0.5}}));
  recorder.record_launch("sum", unsplit_launch("global_atomics", {{0, 64, 0.125}}));
  recorder.record_launch("mm", unsplit_launch("too_small", {{0, 16, 0.0}}));
  recorder.record_launch("tiny", unsplit_launch("", {}));

  const json j = recorder.to_json();
  const json& kernels = j.at("kernels");
  ASSERT_EQ(kernels.size(), 3u);
  EXPECT_EQ(kernels[0].at("name"), "mm");
  EXPECT_EQ(kernels[1].at("name"), "sum");
  EXPECT_EQ(kernels[2].at("name"), "tiny");

  const json& mm = kernels[0];
  EXPECT_EQ(mm.at("launches"), 3);
  EXPECT_EQ(mm.at("split_launches"), 2);
  EXPECT_EQ(mm.at("not_split"), (json{{"too_small", 1}}));
  EXPECT_EQ(mm.at("bytes_moved"), 1024);
  ASSERT_EQ(mm.at("per_device").size(), 2u);
  EXPECT_EQ(mm.at("per_device")[0].at("index"), 0);  // sorted by index
  EXPECT_EQ(mm.at("per_device")[0].at("work_items"), 400 + 500 + 16);
  EXPECT_DOUBLE_EQ(mm.at("per_device")[0].at("seconds").get<double>(), 0.5);
  EXPECT_EQ(mm.at("per_device")[1].at("index"), 1);
  EXPECT_EQ(mm.at("per_device")[1].at("work_items"), 1100);
  EXPECT_DOUBLE_EQ(mm.at("per_device")[1].at("seconds").get<double>(), 1.0);

  const json& sum = kernels[1];
  EXPECT_EQ(sum.at("launches"), 2);
  EXPECT_EQ(sum.at("split_launches"), 0);
  EXPECT_EQ(sum.at("not_split"), (json{{"global_atomics", 2}}));
  EXPECT_EQ(sum.at("bytes_moved"), 0);

  EXPECT_EQ(kernels[2].at("not_split"), (json{{"unspecified", 1}}));
  EXPECT_TRUE(kernels[2].at("per_device").empty());

  EXPECT_EQ(j.at("totals"), (json{{"launches", 6},
                                  {"split_launches", 2},
                                  {"bytes_moved", 1024},
                                  {"bytes_minimal", 0},
                                  {"bytes_home_on_demand", 0},
                                  {"bytes_fetched_on_demand", 0}}));
}

// Lazy home: bytes written to the app's buffers when it needed them add up in the totals.
// Which policy planned the split launches, auto's probes, and the last launch's verdict.
TEST(ReportRecorder, PlannersProbesAndTheLastVerdict) {
  ReportRecorder recorder;
  LaunchRecord first = split_launch(0, {});
  first.planned_by = "auto:sigmoid";
  first.gate = GateRecord{0, "split", {0, 1}, false, {0, 1}, -1, -1};
  recorder.record_launch("k", first);
  LaunchRecord probe = split_launch(0, {});
  probe.planned_by = "auto:wp";
  probe.gate = GateRecord{10, "split", {0, 1}, true, {0, 1}, 0.5, 0.3};
  recorder.record_launch("k", probe);
  LaunchRecord home = unsplit_launch("one_device_pays", {});
  home.gate = GateRecord{11, "one_device_pays", {0}, false, {0, 1}, 0.5, 0.3, 4096};
  recorder.record_launch("k", home);
  recorder.record_launch("k", unsplit_launch("preparing", {}));  // no gate asked: the verdict stays
  LaunchRecord late = split_launch(0, {});                       // launch 9, recorded when it ended, after launch 11
  late.gate = GateRecord{9, "split", {0, 1}, false, {0, 1}, 0.5, 0.3};
  recorder.record_launch("k", late);
  const json k = recorder.to_json().at("kernels").at(0);
  EXPECT_EQ(k.at("planned_by"), (json{{"auto:sigmoid", 1}, {"auto:wp", 1}}));  // `late` names no planner
  EXPECT_EQ(k.at("probes"), 1);
  EXPECT_EQ(k.at("last_verdict"), (json{{"launch", 11},
                                        {"decision", "one_device_pays"},
                                        {"devices", {0}},
                                        {"probe", false},
                                        {"measured_devices", {0, 1}},
                                        {"split_seconds", 0.5},
                                        {"home_seconds", 0.3},
                                        {"measured_size", 4096},
                                        {"cold_transfers", false}}));
  ReportRecorder none;
  none.record_launch("k", split_launch(0, {}));
  EXPECT_TRUE(none.to_json().at("kernels").at(0).at("last_verdict").is_null());
  EXPECT_TRUE(none.to_json().at("kernels").at(0).at("regularity").is_null());
}

// sigmoid's judgement of the kernel's regularity: the last launch that judged it counts.
TEST(ReportRecorder, TheLastJudgementOfRegularity) {
  ReportRecorder recorder;
  LaunchRecord first = split_launch(0, {});
  first.regularity = RegularityRecord{true, true, 18, 1.14, 0.07};
  recorder.record_launch("k", first);
  LaunchRecord second = split_launch(0, {});
  second.regularity = RegularityRecord{false, true, 4, 0.5, -1};
  recorder.record_launch("k", second);
  recorder.record_launch("k", split_launch(0, {}));  // wp: no judgement, the last one stays
  EXPECT_EQ(
      recorder.to_json().at("kernels").at(0).at("regularity"),
      (json{
          {"irregular", false}, {"window_spread", true}, {"packages", 4}, {"spread", 0.5}, {"range_ratio", nullptr}}));
}

TEST(ReportRecorder, AnUnsplitLaunchCountsAsItsLaunchRecordWould) {
  const auto gate = std::make_shared<const GateRecord>(GateRecord{4, "one_device_pays", {0}, false, {0, 1}, 0.5, 0.3});
  auto by_record = [&](ReportRecorder& recorder) {
    LaunchRecord home = unsplit_launch("one_device_pays", {{1, 4096, 0}});
    home.gate = *gate;
    recorder.record_launch("k", home);
    recorder.record_launch("k", unsplit_launch("too_small", {{1, 64, 0}}));
    recorder.record_launch("k", unsplit_launch("", {}));
  };
  auto by_count = [&](ReportRecorder& recorder) {
    recorder.record_unsplit("k", "one_device_pays", gate, gate->launch, 1, 4096);
    recorder.record_unsplit("k", "too_small", nullptr, 0, 1, 64);
    recorder.record_unsplit("k", "", nullptr, 0, -1, 0);  // home unknown
  };
  ReportRecorder recorded, counted, observed;
  by_record(recorded);
  by_count(counted);
  EXPECT_EQ(counted.to_json(), recorded.to_json());
  // With a launch observer (the trace), each launch still reaches it, as a LaunchRecord.
  std::vector<std::string> seen;
  observed.set_launch_observer([&](const std::string& kernel, const LaunchRecord& launch) {
    seen.push_back(kernel + ":" + launch.not_split_reason + ":" + std::to_string(launch.per_device.size()));
  });
  by_count(observed);
  EXPECT_EQ(observed.to_json(), recorded.to_json());
  EXPECT_EQ(seen, (std::vector<std::string>{"k:one_device_pays:1", "k:too_small:1", "k::0"}));
  // A launch the observer does not want (a report alone times one in hundreds) is counted the same,
  // and the observer does not see it.
  ReportRecorder unwanted;
  unwanted.set_launch_observer([&](const std::string& kernel, const LaunchRecord&) { seen.push_back(kernel); });
  unwanted.record_unsplit("k", "one_device_pays", gate, gate->launch, 1, 4096, false);
  unwanted.record_unsplit("k", "too_small", nullptr, 0, 1, 64, false);
  unwanted.record_unsplit("k", "", nullptr, 0, -1, 0, true);
  EXPECT_EQ(unwanted.to_json(), recorded.to_json());
  EXPECT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen.back(), "k");
}

// Launches that repeat one kept on home share its gate record, each with a number of its own: the
// report keeps the verdict of the highest number, whatever order the launches are counted in.
TEST(ReportRecorder, AnUnsplitLaunchKeepsTheVerdictOfTheHighestLaunchNumber) {
  const auto gate = std::make_shared<const GateRecord>(GateRecord{4, "one_device_pays", {0}, false, {0, 1}, 0.5, 0.3});
  ReportRecorder recorder;
  recorder.record_unsplit("k", "one_device_pays", gate, 9, 0, 64);
  recorder.record_unsplit("k", "one_device_pays", gate, 7, 0, 64);  // an earlier launch, counted late
  const json verdict = recorder.to_json().at("kernels").at(0).at("last_verdict");
  EXPECT_EQ(verdict.at("launch"), 9);
  EXPECT_EQ(verdict.at("decision"), "one_device_pays");
  EXPECT_EQ(verdict.at("measured_devices"), json::array({0, 1}));
  EXPECT_EQ(gate->launch, 4u);  // the shared record itself is left as it was
  // A split launch's verdict of a lower number does not replace it; one of a higher number does, and a
  // later repeat of the earlier record with a higher number takes its place again.
  LaunchRecord split;
  split.split = true;
  split.gate = GateRecord{8, "split", {0, 1}, true, {0, 1}, 0.2, 0.3};
  recorder.record_launch("k", split);
  EXPECT_EQ(recorder.to_json().at("kernels").at(0).at("last_verdict").at("launch"), 9);
  split.gate->launch = 10;
  recorder.record_launch("k", split);
  EXPECT_EQ(recorder.to_json().at("kernels").at(0).at("last_verdict").at("decision"), "split");
  EXPECT_EQ(recorder.to_json().at("kernels").at(0).at("last_verdict").at("launch"), 10);
  recorder.record_unsplit("k", "one_device_pays", gate, 11, 0, 64);
  const json last = recorder.to_json().at("kernels").at(0).at("last_verdict");
  EXPECT_EQ(last.at("decision"), "one_device_pays");
  EXPECT_EQ(last.at("launch"), 11);
}

// coex's builds per device: a one-time cost the report names with its device.
TEST(ReportRecorder, BuildsPerDevice) {
  ReportRecorder recorder;
  EXPECT_EQ(recorder.to_json().at("builds"), json::array());
  recorder.record_build(1, 0.75, false, false);
  recorder.record_build(0, 0.25, false, true);
  recorder.record_build(1, 0.5, true, false);
  EXPECT_EQ(recorder.to_json().at("builds"),
            (json{{{"device", 0}, {"builds", 1}, {"failed", 0}, {"from_binary", 1}, {"seconds", 0.25}},
                  {{"device", 1}, {"builds", 2}, {"failed", 1}, {"from_binary", 0}, {"seconds", 1.25}}}));
}

// The compile-ahead processes: a one-time cost paid in processes of their own, and the programs that
// compiled in the app's process because as many ran as compile_ahead_processes allows.
TEST(ReportRecorder, CompileAheadProcesses) {
  ReportRecorder recorder;
  EXPECT_FALSE(recorder.to_json().contains("compile_ahead"));  // none ran nor was refused
  recorder.record_compile_ahead(0.25, true, false, true, 1);
  recorder.record_compile_ahead(0.5, false, true, false);
  recorder.record_compile_ahead(0.125, false, false, true, 1, true);  // killed: built for no device
  recorder.record_compile_ahead_beyond_limit();
  EXPECT_EQ(recorder.to_json().at("compile_ahead"), (json{{"processes", 3},
                                                          {"made", 1},
                                                          {"ended_at_exit", 1},
                                                          {"served_none", 1},
                                                          {"at_build", 2},
                                                          {"other_kinds", 1},
                                                          {"seconds", 0.875},
                                                          {"beyond_limit", 1},
                                                          {"probes", 0},
                                                          {"probe_seconds", 0.0},
                                                          {"split_after_probe", 0},
                                                          {"held_until_paid", 0}}));
}

// The first launches probed on home (exec/first_launch_probe.h): a cost in the app's process, and
// how many were split at once after it. A probe alone makes the entry.
TEST(ReportRecorder, FirstLaunchProbes) {
  ReportRecorder recorder;
  recorder.record_first_launch_probe(0.004);
  recorder.record_first_launch_probe(0.002);
  recorder.record_split_after_probe();
  const json ahead = recorder.to_json().at("compile_ahead");
  EXPECT_EQ(ahead.at("processes"), 0);
  EXPECT_EQ(ahead.at("probes"), 2);
  EXPECT_DOUBLE_EQ(ahead.at("probe_seconds").get<double>(), 0.006);
  EXPECT_EQ(ahead.at("split_after_probe"), 1);
}

// Launches held on home until a process on the devices' cores would pay (first_launch_probe.h,
// process_pays): counted, and they alone make the entry.
TEST(ReportRecorder, LaunchesHeldUntilAProcessPays) {
  ReportRecorder recorder;
  EXPECT_FALSE(recorder.to_json().contains("compile_ahead"));
  recorder.record_held_until_paid();
  recorder.record_held_until_paid();
  const json ahead = recorder.to_json().at("compile_ahead");
  EXPECT_EQ(ahead.at("processes"), 0);
  EXPECT_EQ(ahead.at("held_until_paid"), 2);
}

TEST(ReportRecorder, BytesWrittenHomeOnDemandAddUp) {
  ReportRecorder r;
  r.record_home_on_demand(100);
  r.record_home_on_demand(28, 16);
  EXPECT_EQ(r.to_json().at("totals").at("bytes_home_on_demand"), 128);
  EXPECT_EQ(r.to_json().at("totals").at("bytes_fetched_on_demand"), 16);
}

// Per kernel, what the footprints say the devices lacked, where the bytes went, and the worst
// tier each buffer argument was moved with.
TEST(ReportRecorder, FootprintFiguresAddUpAndTheWorstTierWins) {
  ReportRecorder recorder;
  LaunchRecord first = split_launch(700, {{0, 10, 0.1}, {1, 10, 0.1}});
  first.bytes_minimal = 300;
  first.bytes_by_step = {100, 300, 200, 100};
  first.args = {{2, "exact"}, {0, "exact"}};
  LaunchRecord second = split_launch(70, {{0, 10, 0.1}, {1, 10, 0.1}});
  second.bytes_minimal = 30;
  second.bytes_by_step = {10, 30, 20, 10};
  second.args = {{0, "whole"}, {2, "exact"}, {3, "diff"}};
  recorder.record_launch("stencil", first);
  recorder.record_launch("stencil", second);
  recorder.record_launch("other", split_launch(5, {{0, 1, 0.0}}));

  const json j = recorder.to_json();
  const json& stencil = j.at("kernels")[0];
  EXPECT_EQ(stencil.at("bytes_moved"), 770);
  EXPECT_EQ(stencil.at("bytes_minimal"), 330);
  EXPECT_EQ(stencil.at("bytes_by_step"),
            (json{{"home_to_host", 110}, {"host_to_devices", 330}, {"devices_to_host", 220}, {"host_to_home", 110}}));
  EXPECT_EQ(stencil.at("args"),
            (json::array({json{{"index", 0}, {"tier", "whole"}}, json{{"index", 2}, {"tier", "exact"}},
                          json{{"index", 3}, {"tier", "diff"}}})));
  EXPECT_TRUE(j.at("kernels")[1].at("args").empty());
  EXPECT_EQ(j.at("totals").at("bytes_minimal"), 330);
  EXPECT_EQ(j.at("totals").at("bytes_moved"), 775);
}

TEST(ReportRecorder, SettingsAreIncludedWhenSet) {
  ReportRecorder recorder;
  recorder.set_settings({{"policy", "boyer"}, {"weights", json::array()}});
  EXPECT_EQ(recorder.to_json().at("settings").at("policy"), "boyer");
}

TEST(ReportRecorder, ThreadSafe) {
  ReportRecorder recorder;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&recorder, t] {
      for (int i = 0; i < 1000; ++i) {
        recorder.record_launch("k" + std::to_string(i % 3), split_launch(1, {{t % 2, 10, 0.001}}));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const json j = recorder.to_json();
  EXPECT_EQ(j.at("totals").at("launches"), 4000);
  EXPECT_EQ(j.at("totals").at("bytes_moved"), 4000);
  uint64_t items = 0;
  for (const json& k : j.at("kernels")) {
    for (const json& d : k.at("per_device")) items += d.at("work_items").get<uint64_t>();
  }
  EXPECT_EQ(items, 40000u);
}

std::string temp_path(const std::string& name) {
  return testing::TempDir() + "coex_report_test_" + std::to_string(::getpid()) + "_" + name;
}

TEST(ReportRecorder, WritesTheFileAndLeavesNoTemporary) {
  ReportRecorder recorder;
  recorder.set_mode("preload");
  recorder.record_launch("bad\xff name", split_launch(8, {{0, 1, 0.5}}));  // not UTF-8: still written
  const std::string path = temp_path("report.json");
  std::string error;
  ASSERT_TRUE(recorder.write(path, &error)) << error;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const json back = json::parse(text.str());
  EXPECT_EQ(back.at("mode"), "preload");
  EXPECT_EQ(back.at("totals").at("bytes_moved"), 8);
  for (const auto& entry : std::filesystem::directory_iterator(testing::TempDir())) {
    EXPECT_EQ(entry.path().string().find(path + ".tmp"), std::string::npos) << entry.path();
  }
  std::remove(path.c_str());
}

TEST(ReportRecorder, WriteFailureIsReportedNotThrown) {
  ReportRecorder recorder;
  std::string error;
  EXPECT_FALSE(recorder.write(temp_path("no_such_dir/report.json"), &error));
  EXPECT_NE(error.find("No such file or directory"), std::string::npos) << error;
  EXPECT_FALSE(recorder.write(testing::TempDir(), &error));  // a directory cannot be replaced by a file
  EXPECT_FALSE(error.empty());
}

}  // namespace
}  // namespace coex::report
