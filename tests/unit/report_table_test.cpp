#include <gtest/gtest.h>

#include <sstream>

#include "report/report.h"

namespace coex::report {
namespace {

using nlohmann::json;

// The line of the table that starts with `first_cell` (after the indentation).
std::string line_of(const std::string& table, const std::string& first_cell) {
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) {
    const size_t start = line.find_first_not_of(' ');
    if (start != std::string::npos && line.compare(start, first_cell.size(), first_cell) == 0) return line;
  }
  return "";
}

std::vector<std::string> cells(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

const json kReport = json::parse(R"({
  "mode": "layer", "policy": "static",
  "devices": [{"index": 0, "name": "pthread-cpu", "platform": "Portable Computing Language", "type": "CPU", "home": true},
              {"index": 1, "name": "basic", "platform": "Portable Computing Language", "type": "CPU", "home": false}],
  "kernels": [
    {"name": "mm", "launches": 3, "split_launches": 3, "not_split": {}, "bytes_moved": 3145728,
     "per_device": [{"index": 0, "work_items": 300, "seconds": 1.5}, {"index": 1, "work_items": 100, "seconds": 0.25}]},
    {"name": "histogram", "launches": 2, "split_launches": 0, "not_split": {"global_atomics": 2},
     "bytes_moved": 0, "per_device": [{"index": 0, "work_items": 64, "seconds": 0.125}]}
  ],
  "totals": {"launches": 5, "split_launches": 3, "bytes_moved": 3145728}
})");

TEST(ReportTable, ShowsDevicesKernelsSharesAndBusyTime) {
  const std::string table = format_report_table(kReport);
  EXPECT_NE(table.find("mode layer, policy static"), std::string::npos) << table;
  EXPECT_NE(table.find("pthread-cpu"), std::string::npos) << table;
  EXPECT_NE(table.find("Portable Computing Language"), std::string::npos) << table;

  const auto header = cells(line_of(table, "kernel"));
  const std::vector<std::string> expected_header = {"kernel", "launches", "split", "bytes", "moved", "share", "d0",
                                                    "share",  "d1",       "busy",  "d0",    "busy",  "d1"};
  EXPECT_EQ(header, expected_header) << table;
  // mm: 300 of 400 work-items on device 0, 3 MiB moved.
  EXPECT_EQ(cells(line_of(table, "mm")),
            (std::vector<std::string>{"mm", "3", "3", "3.0", "MiB", "75.0%", "25.0%", "1.500", "0.250"}))
      << table;
  EXPECT_EQ(cells(line_of(table, "histogram")),
            (std::vector<std::string>{"histogram", "2", "0", "0", "B", "100.0%", "-", "0.125", "-"}))
      << table;
  EXPECT_NE(line_of(table, "not split: global_atomics x2"), "") << table;
  EXPECT_EQ(cells(line_of(table, "(all kernels)")),
            (std::vector<std::string>{"(all", "kernels)", "5", "3", "3.0", "MiB", "78.4%", "21.6%", "1.625", "0.250"}))
      << table;
  EXPECT_NE(table.find("Totals: 5 launches, 3 split, 3.0 MiB moved"), std::string::npos) << table;
}

TEST(ReportTable, SaysWhoPlannedAndWhyAutoDecided) {
  json report = kReport;
  report["kernels"][0]["planned_by"] = {{"auto:wp", 3}};
  report["kernels"][0]["probes"] = 1;
  report["kernels"][0]["last_verdict"] = {{"launch", 9},
                                          {"decision", "one_device_pays"},
                                          {"devices", {0}},
                                          {"probe", false},
                                          {"measured_devices", {0, 1}},
                                          {"split_seconds", 0.51},
                                          {"home_seconds", nullptr}};
  const std::string table = format_report_table(report);
  EXPECT_EQ(line_of(table, "planned by"),
            "      planned by auto:wp x3; 1 probe; last verdict (launch 9): one_device_pays over d0; measured "
            "split over d0,d1 0.51 s, home alone not measured");
  EXPECT_EQ(line_of(format_report_table(kReport), "planned by"), "");  // a report without them
  report["kernels"][0]["regularity"] = {
      {"irregular", true}, {"window_spread", true}, {"packages", 18}, {"spread", 1.14}, {"range_ratio", 0.07}};
  EXPECT_EQ(line_of(format_report_table(report), "planned by"),
            "      planned by auto:wp x3; 1 probe; last verdict (launch 9): one_device_pays over d0; measured "
            "split over d0,d1 0.51 s, home alone not measured; kept irregular (18 packages, spread 1.14, range "
            "ratio 0.07)");
  // A verdict for home from a split measured at a larger size says which.
  report["kernels"][0]["last_verdict"]["home_seconds"] = 0.12;
  report["kernels"][0]["last_verdict"]["measured_size"] = 1048576;
  EXPECT_NE(line_of(format_report_table(report), "planned by")
                .find("measured split over d0,d1 0.51 s, home alone 0.12 s (at a larger size, 1048576 work-items); "
                      "kept irregular"),
            std::string::npos)
      << format_report_table(report);
  // A verdict from a cold split's wait for its data says so.
  report["kernels"][0]["last_verdict"]["measured_size"] = nullptr;
  report["kernels"][0]["last_verdict"]["cold_transfers"] = true;
  EXPECT_NE(
      line_of(format_report_table(report), "planned by")
          .find("one_device_pays over d0; a cold split over d0,d1 waited 0.51 s for its data, home alone 0.12 s;"),
      std::string::npos)
      << format_report_table(report);
}

TEST(ReportTable, NamesCoexsBuildsPerDevice) {
  json report = kReport;
  report["builds"] = {{{"device", 0}, {"builds", 1}, {"failed", 0}, {"seconds", 0.052}},
                      {{"device", 1}, {"builds", 2}, {"failed", 1}, {"seconds", 0.713}},
                      {{"device", 2}, {"builds", 1}, {"failed", 0}, {"from_binary", 1}, {"seconds", 0.0011}}};
  EXPECT_EQ(line_of(format_report_table(report), "coex's builds"),
            "coex's builds (one-time): d0 1 in 0.052 s, d1 2 in 0.713 s (1 failed), d2 1 in 0.0011 s (1 from a "
            "binary)");
  EXPECT_EQ(line_of(format_report_table(kReport), "coex's builds"), "");
}

TEST(ReportTable, SaysWhenEachLateDeviceWasLetIn) {
  json report = kReport;
  EXPECT_EQ(line_of(format_report_table(report), "late devices"), "");  // a report without them
  report["late_devices"] = {{{"device", 0}, {"let_in_after", 0.5612}}, {{"device", 2}, {"let_in_after", nullptr}}};
  EXPECT_EQ(line_of(format_report_table(report), "late devices"),
            "late devices (auto_late_devices): d0 let in after 0.561 s, d2 never (nothing made for it)");
}

TEST(ReportTable, SaysWhatCompilingAheadCost) {
  json report = kReport;
  EXPECT_EQ(line_of(format_report_table(report), "compiled ahead"), "");  // a report without it
  report["compile_ahead"] = {{"processes", 3}, {"made", 1},         {"ended_at_exit", 1}, {"served_none", 1},
                             {"at_build", 2},  {"seconds", 0.6093}, {"beyond_limit", 1},  {"other_kinds", 1}};
  EXPECT_EQ(line_of(format_report_table(report), "compiled ahead"),
            "compiled ahead (one-time, in processes of coex's own): 3 in 0.609 s (1 made, 1 ended at exit, 1 ended "
            "as their program needed none of it, 2 started at the build, 1 device of another kind built for too); "
            "1 program compiled in the app's process (compile_ahead_processes)");
  report["compile_ahead"] = {
      {"processes", 1}, {"made", 1}, {"ended_at_exit", 0}, {"seconds", 0.25}, {"beyond_limit", 0}};
  EXPECT_EQ(line_of(format_report_table(report), "compiled ahead"),
            "compiled ahead (one-time, in processes of coex's own): 1 in 0.25 s (1 made)");
  report["compile_ahead"]["probes"] = 2;
  report["compile_ahead"]["probe_seconds"] = 0.0142;
  report["compile_ahead"]["split_after_probe"] = 1;
  EXPECT_EQ(line_of(format_report_table(report), "compiled ahead"),
            "compiled ahead (one-time, in processes of coex's own): 1 in 0.25 s (1 made); 2 first launches probed "
            "on home in 0.0142 s, 1 then split at once");
  report["compile_ahead"]["held_until_paid"] = 12;
  EXPECT_EQ(line_of(format_report_table(report), "compiled ahead"),
            "compiled ahead (one-time, in processes of coex's own): 1 in 0.25 s (1 made); 2 first launches probed "
            "on home in 0.0142 s, 1 then split at once; 12 launches on the app's device until a process on the "
            "devices' cores would pay (compile_ahead_start)");
}

TEST(ReportTable, ColumnsLineUp) {
  const std::string table = format_report_table(kReport);
  const std::string mm = line_of(table, "mm");
  const std::string histogram = line_of(table, "histogram");
  const std::string header = line_of(table, "kernel");
  EXPECT_EQ(mm.size(), histogram.size()) << table;  // numbers are right-aligned to the same edge
  EXPECT_EQ(mm.size(), header.size()) << table;
}

TEST(ReportTable, ToleratesMissingAndWrongKeys) {
  EXPECT_NE(format_report_table(json::array()).find("not a coex report"), std::string::npos);
  EXPECT_NE(format_report_table(json()).find("not a coex report"), std::string::npos);

  const std::string empty = format_report_table(json::object());
  EXPECT_NE(empty.find("mode ?, policy ?"), std::string::npos) << empty;
  EXPECT_NE(empty.find("(none listed)"), std::string::npos) << empty;
  EXPECT_NE(empty.find("(no kernel launches recorded)"), std::string::npos) << empty;

  const json odd = json::parse(R"({
    "mode": 7, "devices": [{"name": "no index"}, 5, {"index": "x"}],
    "kernels": [{"name": "k", "launches": "many", "per_device": [{"index": 3, "work_items": -4}, {"work_items": 1}, 9]},
                {"launches": 1, "not_split": {"r": "x"}, "per_device": {"index": 0}},
                "not a kernel"],
    "totals": []
  })");
  const std::string table = format_report_table(odd);
  EXPECT_NE(table.find("mode 7"), std::string::npos) << table;
  EXPECT_NE(line_of(table, "k "), "") << table;
  EXPECT_NE(table.find("share d3"), std::string::npos) << table;  // device columns also come from kernels
  EXPECT_NE(line_of(table, "not split: r x0"), "") << table;
}

TEST(ReportTable, KernelNamesStayOnOneLine) {
  json report = kReport;
  report["kernels"][0]["name"] = "two\nlines";
  const std::string table = format_report_table(report);
  EXPECT_NE(line_of(table, "two lines"), "") << table;
}

TEST(ReportTable, ShowsFootprintBytesAndTiersWhereThereAreSome) {
  EXPECT_EQ(format_report_table(kReport).find("bytes minimal"), std::string::npos);  // none in kReport
  json report = kReport;
  report["kernels"][0]["bytes_minimal"] = 1048576;
  report["kernels"][0]["args"] = json::parse(R"([{"index": 0, "tier": "exact"}, {"index": 2, "tier": "diff"}])");
  const std::string table = format_report_table(report);
  const auto header = cells(line_of(table, "kernel"));
  ASSERT_GE(header.size(), 6u) << table;
  EXPECT_EQ(std::vector<std::string>(header.begin() + 3, header.begin() + 7),
            (std::vector<std::string>{"bytes", "moved", "bytes", "minimal"}))
      << table;
  EXPECT_EQ(cells(line_of(table, "mm")),
            (std::vector<std::string>{"mm", "3", "3", "3.0", "MiB", "1.0", "MiB", "75.0%", "25.0%", "1.500", "0.250"}))
      << table;
  EXPECT_EQ(cells(line_of(table, "histogram"))[5], "0") << table;
  EXPECT_NE(line_of(table, "footprints: arg 0 exact, arg 2 diff"), "") << table;
  // With the names the report has: each argument by name and position.
  report["kernels"][0]["args"][0]["name"] = "a";
  EXPECT_NE(line_of(format_report_table(report), "footprints: a (arg 0) exact, arg 2 diff"), "");
}

TEST(ReportTable, LegendExplainsEachReasonThatAppears) {
  json report = kReport;
  report["kernels"][1]["not_split"] = {{"global_atomics", 1}, {"made_up_reason", 1}};
  const std::string table = format_report_table(report);
  const size_t legend = table.find("Why launches were not split");
  ASSERT_NE(legend, std::string::npos) << table;
  EXPECT_NE(line_of(table.substr(legend), "global_atomics").find("atomics on global memory"), std::string::npos)
      << table;
  EXPECT_NE(line_of(table.substr(legend), "made_up_reason").find("does not describe"), std::string::npos) << table;
  EXPECT_EQ(line_of(table.substr(legend), "too_small"), "") << table;  // only the reasons that appear
  EXPECT_EQ(format_report_table(kReport).find("Why launches were not split") == std::string::npos, false);
}

TEST(ReportTable, EveryReasonCoexGivesHasAMeaning) {
  // The reasons the planner, the split runner, the analysis and the conflict checks give (grep
  // not_split_reason and not_split( in src/): a new one needs its line in report/reasons.cpp.
  for (const char* reason : {"single_device",
                             "too_small",
                             "one_device_pays",
                             "split_being_measured",
                             "preparing",
                             "devices_busy",
                             "device_failed",
                             "devices_unavailable",
                             "sub_launch_failed",
                             "merge_failed",
                             "unanalysable",
                             "global_atomics",
                             "image_args",
                             "sampler_args",
                             "pipe_args",
                             "svm",
                             "device_enqueue",
                             "program_scope_variables",
                             "group_builtins_in_helper",
                             "kernel_called_as_function",
                             "binary_program",
                             "il_program",
                             "builtin_kernels",
                             "linked_program",
                             "unknown_program",
                             "cross_chunk_dependency",
                             "overlapping_writes",
                             "invalid_launch",
                             "task",
                             "untracked_kernel",
                             "untracked_buffer",
                             "unknown_device",
                             "coex_error",
                             "pending_wait_list",
                             "exiting",
                             "unspecified"})
    EXPECT_FALSE(not_split_reason_meaning(reason).empty()) << reason;
}

TEST(ReportTable, NamesTheProcessHistoryAndTrace) {
  json report = kReport;
  report["pid"] = 4242;
  report["history"] = {{"file", "/tmp/h.json"}, {"state", "loaded"}, {"entries", 3}};
  report["trace"] = "/tmp/t.json";
  const std::string table = format_report_table(report);
  EXPECT_NE(table.find("process 4242"), std::string::npos) << table;
  EXPECT_NE(table.find("history: /tmp/h.json (3 entries for this device set)"), std::string::npos) << table;
  EXPECT_NE(table.find("trace: /tmp/t.json"), std::string::npos) << table;
}

TEST(ReportFormat, OnlyReportsOfThisFormatAndVersionAreRead) {
  std::string why;
  ReportRecorder recorder;
  EXPECT_TRUE(is_readable_report(recorder.to_json(), why)) << why;
  EXPECT_FALSE(is_readable_report(kReport, why));  // no format: a report of an older coex
  EXPECT_NE(why.find("without a format version"), std::string::npos) << why;
  EXPECT_FALSE(is_readable_report(json::parse(R"({"traceEvents": [], "displayTimeUnit": "ms"})"), why));
  EXPECT_NE(why.find("a trace"), std::string::npos) << why;
  EXPECT_FALSE(is_readable_report(json::parse(R"({"policy": "static"})"), why));
  EXPECT_NE(why.find("not a coex report"), std::string::npos) << why;
  EXPECT_FALSE(is_readable_report(json::parse(R"({"format": "coex-history", "version": 1})"), why));
  EXPECT_NE(why.find("history"), std::string::npos) << why;
  EXPECT_FALSE(is_readable_report(json::parse(R"({"format": "coex-report", "version": 99})"), why));
  EXPECT_NE(why.find("newer coex"), std::string::npos) << why;
  EXPECT_FALSE(is_readable_report(json::array(), why));
}

TEST(ReportFormat, PercentPIsTheProcessId) {
  EXPECT_EQ(expand_pid("r.%p.json", 123), "r.123.json");
  EXPECT_EQ(expand_pid("/a/%p/r-%p", 7), "/a/7/r-7");
  EXPECT_EQ(expand_pid("r%.json", 7), "r%.json");
  EXPECT_EQ(expand_pid("r.json%", 7), "r.json%");
  EXPECT_EQ(expand_pid("", 7), "");
}

TEST(ReportTable, RoundTripFromTheRecorder) {
  ReportRecorder recorder;
  recorder.set_mode("preload");
  recorder.set_policy("boyer");
  recorder.set_devices({{0, "a", "p", "GPU", true}, {1, "b", "p", "GPU", false}});
  LaunchRecord launch;
  launch.split = true;
  launch.bytes_moved = 2048;
  launch.per_device = {{0, 10, 1.0}, {1, 30, 2.0}};
  recorder.record_launch("vadd", launch);
  const std::string table = format_report_table(recorder.to_json());
  EXPECT_EQ(cells(line_of(table, "vadd")),
            (std::vector<std::string>{"vadd", "1", "1", "2.0", "KiB", "25.0%", "75.0%", "1.000", "2.000"}))
      << table;
}

}  // namespace
}  // namespace coex::report
