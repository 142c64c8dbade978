// `coex report --html`: the page's parts, escaping, and a bounded size for a large trace. That the page
// is well-formed XML is checked with Python's parser by layer.report_html.
#include <gtest/gtest.h>

#include <string>

#include "report/report.h"
#include "report/trace.h"

namespace coex::report {
namespace {

using nlohmann::json;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

json sample_report() {
  ReportRecorder recorder;
  recorder.set_mode("layer");
  recorder.set_policy("static");
  recorder.set_devices({{0, "cpu <a>", "PoCL", "CPU", true}, {1, "cpu & b", "PoCL", "CPU", false}});
  LaunchRecord split;
  split.split = true;
  split.per_device = {{0, 300, 0.5}, {1, 100, 0.25}};
  recorder.record_launch("vadd<float>", split);
  LaunchRecord unsplit;
  unsplit.not_split_reason = "global_atomics";
  unsplit.per_device = {{0, 64, 0.0}};
  recorder.record_launch("histogram", unsplit);
  return recorder.to_json();
}

TEST(ReportHtml, PageWithoutATraceShowsBusyBarsKernelsAndReasons) {
  const std::string page = format_report_html(sample_report(), nullptr);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("<html xmlns=\"http://www.w3.org/1999/xhtml\""), std::string::npos);
  EXPECT_NE(page.find("Busy time per device"), std::string::npos);
  EXPECT_NE(page.find("vadd&lt;float&gt;"), std::string::npos);  // escaped
  EXPECT_EQ(page.find("vadd<float>"), std::string::npos);
  EXPECT_NE(page.find("cpu &amp; b"), std::string::npos);
  EXPECT_NE(page.find("<dt>global_atomics (1)</dt>"), std::string::npos);
  EXPECT_NE(page.find("atomics on global memory"), std::string::npos);
  EXPECT_EQ(count(page, "<svg"), count(page, "</svg>"));
  EXPECT_GE(count(page, "<svg"), 3u);  // the busy bars and one share bar per kernel
  EXPECT_NE(page.find("</html>"), std::string::npos);
}

TEST(ReportHtml, TimelineFromATraceStaysSmallForManyEvents) {
  TraceRecorder trace;
  trace.set_track_name(0, device_track_name(0, "cpu", true));
  trace.set_track_name(1, device_track_name(1, "cpu", false));
  // 100,000 kernel slices of 1 us every 2 us on two tracks: merged into runs of at most a pixel apart.
  for (int i = 0; i < 50000; ++i) {
    trace.record("k", "kernel", i % 2, 2.0 * i, 2.0 * i + 1);
    trace.record("copy", "transfer", 1, 2.0 * i + 1, 2.0 * i + 1.5);
  }
  const json events = trace.to_json();
  const std::string page = format_report_html(sample_report(), &events);
  EXPECT_NE(page.find("<h2>Timeline</h2>"), std::string::npos);
  EXPECT_NE(page.find("d1 cpu"), std::string::npos);
  EXPECT_NE(page.find("d0 cpu (home)"), std::string::npos);
  EXPECT_LT(page.size(), 200000u);
  EXPECT_LT(count(page, "<rect"), 5000u);
  EXPECT_EQ(count(page, "<svg"), count(page, "</svg>"));
}

TEST(ReportHtml, ToleratesAnEmptyOrOddReport) {
  const json odd = json::parse(R"({"format": "coex-report", "version": 1, "kernels": [{"name": 7}], "devices": 3})");
  const std::string page = format_report_html(odd, nullptr);
  EXPECT_NE(page.find("</html>"), std::string::npos);
  const json no_events = json::parse(R"({"traceEvents": [{"ph": "X"}]})");
  EXPECT_NE(format_report_html(json::object(), &no_events).find("</html>"), std::string::npos);
}

}  // namespace
}  // namespace coex::report
