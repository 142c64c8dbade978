// `coex report [--html OUT] [--trace TRACE] REPORT`: the report as tables, or as a page with a timeline.
#include <cstdio>
#include <fstream>
#include <iostream>

#include "commands.h"
#include "options.h"
#include "report/report.h"

namespace coex::launcher {
namespace {

constexpr const char* kUsage = "usage: coex report [--html OUT.html] [--trace TRACE.json] REPORT.json";

// The JSON document in `path`, or nothing with the line to print.
bool read_json(const std::string& path, const char* what, nlohmann::json& document, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = "cannot read the " + std::string(what) + " " + path;
    return false;
  }
  document = nlohmann::json::parse(in, nullptr, false);
  if (document.is_discarded()) {
    error = path + " is not valid JSON";
    return false;
  }
  return true;
}

}  // namespace

int print_report(const Args& args) {
  const ParsedOptions parsed = parse_options(args, {{"html", true}, {"trace", true}}, false);
  if (!parsed.error.empty()) {
    std::fprintf(stderr, "coex report: %s (%s)\n", parsed.error.c_str(), kUsage);
    return 2;
  }
  if (parsed.help) {
    std::string text;
    if (command_help("report", text)) std::fputs(text.c_str(), stdout);
    return 0;
  }
  if (parsed.operands.size() != 1) {
    std::fprintf(stderr, "coex report: %s\n", kUsage);
    return 2;
  }
  std::string html, trace_path;
  for (const auto& [name, value] : parsed.options) (name == "html" ? html : trace_path) = value;
  const std::string& path = parsed.operands[0];
  nlohmann::json report;
  std::string error;
  // Exit status 2 for anything that is not a report this coex reads: a script that runs `coex report`
  // on the wrong file must not carry on with empty tables.
  if (!read_json(path, "report", report, error)) {
    std::fprintf(stderr, "coex report: %s\n", error.c_str());
    return 2;
  }
  if (!report::is_readable_report(report, error)) {
    std::fprintf(stderr, "coex report: %s is %s\n", path.c_str(), error.c_str());
    return 2;
  }
  if (html.empty()) {
    if (!trace_path.empty()) {
      std::fprintf(stderr, "coex report: --trace draws the timeline of --html; give --html OUT.html too\n");
      return 2;
    }
    std::cout << report::format_report_table(report);
    return 0;
  }
  // The trace the report names (COEX_TRACE of the same run) when none is given and it is still there.
  bool named_by_report = false;
  if (trace_path.empty() && report.contains("trace") && report["trace"].is_string()) {
    trace_path = report["trace"].get<std::string>();
    named_by_report = std::ifstream(trace_path).good();
    if (!named_by_report) trace_path.clear();
  }
  nlohmann::json trace;
  if (!trace_path.empty()) {
    if (!read_json(trace_path, "trace", trace, error)) {
      std::fprintf(stderr, "coex report: %s\n", error.c_str());
      return 2;
    }
    if (!trace.is_object() || !trace.contains("traceEvents")) {
      std::fprintf(stderr, "coex report: %s is not a trace (no \"traceEvents\"; COEX_TRACE writes one)\n",
                   trace_path.c_str());
      return 2;
    }
  }
  if (!report::write_file_atomically(html, report::format_report_html(report, trace_path.empty() ? nullptr : &trace),
                                     &error)) {
    std::fprintf(stderr, "coex report: cannot write %s\n", error.c_str());
    return 1;
  }
  std::printf("coex report: wrote %s%s%s\n", html.c_str(), trace_path.empty() ? " (no trace: no timeline)" : " with the timeline of ",
              trace_path.c_str());
  return 0;
}

}  // namespace coex::launcher
