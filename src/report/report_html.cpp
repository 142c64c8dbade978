// `coex report --html OUT REPORT`: one self-contained page, written as well-formed XHTML (every tag
// closed, every text escaped) so that any XML parser reads it and tests can check it with Python's
// standard library. No script and no external file: it opens from a mail attachment or a CI artifact.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "report/report.h"
#include "report/report_json.h"

namespace coex::report {

namespace {

using namespace detail;

std::string escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    }
  }
  return out;
}

// At most `bytes` bytes of `text`, never cutting a UTF-8 sequence (the page must stay valid UTF-8).
std::string shortened(const std::string& text, size_t bytes) {
  if (text.size() <= bytes) return text;
  size_t end = bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + "...";
}

// One colour per device index (the shares and the busy bars) and per event category (the timeline).
const char* device_colour(int index) {
  static const char* const palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
                                        "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  return palette[static_cast<size_t>(std::max(0, index)) % (sizeof palette / sizeof *palette)];
}

const char* category_colour(const std::string& category) {
  if (category == "kernel") return "#4e79a7";
  if (category == "transfer" || category == "upload" || category == "read") return "#f28e2b";
  if (category == "merge") return "#59a14f";
  if (category == "build") return "#9c755f";
  if (category == "wait") return "#bab0ac";
  if (category == "launch") return "#76b7b2";
  if (category == "launch_not_split") return "#e15759";
  if (category == "api") return "#b07aa1";
  return "#edc948";
}

// A tick of the time axis: "0", "50 ms", "1.5 s".
std::string tick_text(double seconds) {
  if (seconds == 0) return "0";
  if (seconds >= 1) return format("%g s", seconds);
  if (seconds >= 1e-3) return format("%g ms", seconds * 1e3);
  return format("%g us", seconds * 1e6);
}

std::string seconds_text(double seconds) {
  if (seconds >= 1) return format("%.3f s", seconds);
  if (seconds >= 1e-3) return format("%.3f ms", seconds * 1e3);
  return format("%.1f us", seconds * 1e6);
}

const char* const kStyle = R"(
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1em 0; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.note { color: #555; font-size: 90%; }
svg text { font-family: sans-serif; font-size: 11px; }
dt { font-family: monospace; font-weight: bold; }
dd { margin: 0 0 0.4em 1.5em; }
)";

struct Event {
  double begin = 0, end = 0;  // microseconds
  std::string name, category;
};

// The trace's slices by track, and the tracks' names (trace.h: tid = device index, the launch track, the
// app's threads).
struct Tracks {
  std::map<int, std::vector<Event>> events;
  std::map<int, std::string> names;
  double first = 0, last = 0;
};

Tracks tracks_of(const json& trace) {
  Tracks tracks;
  const json& events = member(trace, "traceEvents");
  if (!events.is_array()) return tracks;
  bool any = false;
  for (const json& e : events) {
    double tid = 0;
    if (!number_of(member(e, "tid"), tid)) continue;
    const std::string phase = text_of(member(e, "ph"));
    if (phase == "M" && text_of(member(e, "name")) == "thread_name") {
      tracks.names[static_cast<int>(tid)] = text_of(member(member(e, "args"), "name"));
      continue;
    }
    double ts = 0, dur = 0;
    if (phase != "X" || !number_of(member(e, "ts"), ts)) continue;
    number_of(member(e, "dur"), dur);
    Event event{ts, ts + std::max(0.0, dur), text_of(member(e, "name")), text_of(member(e, "cat"))};
    if (event.category == "launch") {
      const json& split = member(member(e, "args"), "split");
      if (split.is_boolean() && !split.get<bool>()) event.category = "launch_not_split";
    }
    tracks.first = any ? std::min(tracks.first, event.begin) : event.begin;
    tracks.last = any ? std::max(tracks.last, event.end) : event.end;
    any = true;
    tracks.events[static_cast<int>(tid)].push_back(std::move(event));
  }
  return tracks;
}

// A tick step of 1, 2 or 5 times a power of ten giving about `wanted` ticks over `span`.
double tick_step(double span, int wanted) {
  const double raw = span / std::max(1, wanted);
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * power >= raw) return m * power;
  return 10 * power;
}

// The timeline: one row per track, one rectangle per run of slices of one category closer than half a
// pixel, so that a trace of a million slices stays a page of a few thousand rectangles.
void timeline_svg(std::ostream& out, const Tracks& tracks) {
  const double label_width = 270, plot_width = 920, row = 22, top = 24, legend = 24;
  const double span = std::max(1.0, tracks.last - tracks.first);
  const double height = top + row * static_cast<double>(tracks.events.size()) + 8 + legend;
  // Scaled to the page's width (viewBox), so that the whole span shows in any window.
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100%\" viewBox=\"0 0 " << label_width + plot_width + 10
      << " " << height << "\" style=\"max-width: " << label_width + plot_width + 10
      << "px\" role=\"img\" aria-label=\"timeline of the devices\">\n";
  const double step = tick_step(span, 8);
  for (double t = 0; t <= span + 1e-9; t += step) {
    const double x = label_width + t / span * plot_width;
    out << "<line x1=\"" << x << "\" y1=\"" << top - 6 << "\" x2=\"" << x << "\" y2=\"" << height - 8 - legend
        << "\" stroke=\"#ddd\"/><text x=\"" << x + 2 << "\" y=\"" << top - 10 << "\">"
        << escape(tick_text(std::round(t / step) * step / 1e6)) << "</text>\n";
  }
  double y = top;
  for (const auto& [track, events] : tracks.events) {
    auto name = tracks.names.find(track);
    const std::string label = name != tracks.names.end() && !name->second.empty() ? name->second
                                                                                  : "track " + std::to_string(track);
    out << "<text x=\"4\" y=\"" << y + row * 0.65 << "\">" << escape(shortened(label, 44)) << "<title>"
        << escape(label) << "</title></text>\n";
    std::map<std::string, std::vector<const Event*>> by_category;
    for (const Event& e : events) by_category[e.category].push_back(&e);
    for (auto& [category, list] : by_category) {
      std::sort(list.begin(), list.end(), [](const Event* a, const Event* b) { return a->begin < b->begin; });
      size_t i = 0;
      while (i < list.size()) {
        double x0 = (list[i]->begin - tracks.first) / span * plot_width;
        double x1 = (list[i]->end - tracks.first) / span * plot_width;
        double busy = list[i]->end - list[i]->begin;
        size_t j = i + 1;
        for (; j < list.size() && (list[j]->begin - tracks.first) / span * plot_width <= x1 + 0.5; ++j) {
          x1 = std::max(x1, (list[j]->end - tracks.first) / span * plot_width);
          busy += list[j]->end - list[j]->begin;
        }
        const std::string title = j - i == 1 ? list[i]->name + " (" + category + "), " + seconds_text(busy / 1e6)
                                             : std::to_string(j - i) + " " + category + " slices, " +
                                                   seconds_text(busy / 1e6) + " in all, from " + list[i]->name;
        out << "<rect x=\"" << label_width + x0 << "\" y=\"" << y + 3 << "\" width=\"" << std::max(1.0, x1 - x0)
            << "\" height=\"" << row - 6 << "\" fill=\"" << category_colour(category) << "\"><title>"
            << escape(title) << "</title></rect>\n";
        i = j;
      }
    }
    y += row;
  }
  // The colours' legend, under the tracks.
  double x = label_width;
  for (const auto& [category, text] : std::vector<std::pair<const char*, const char*>>{
           {"kernel", "kernel"}, {"transfer", "transfer"}, {"merge", "merge"}, {"build", "build"},
           {"wait", "wait"}, {"launch", "launch split"}, {"launch_not_split", "launch not split"},
           {"api", "app's OpenCL call"}}) {
    out << "<rect x=\"" << x << "\" y=\"" << y + 10 << "\" width=\"10\" height=\"10\" fill=\""
        << category_colour(category) << "\"/><text x=\"" << x + 14 << "\" y=\"" << y + 19 << "\">" << text
        << "</text>\n";
    x += 14 + 7.0 * static_cast<double>(std::strlen(text)) + 18;
  }
  out << "</svg>\n";
}

// Without a trace: one bar per device of its busy seconds over all kernels (the report keeps sums only).
void busy_svg(std::ostream& out, const json& kernels) {
  std::map<int, DeviceColumn> all;
  if (kernels.is_array())
    for (const json& kernel : kernels)
      for (const auto& [index, column] : per_device_of(kernel)) {
        all[index].seconds += column.seconds;
        all[index].work_items += column.work_items;
      }
  double longest = 0;
  for (const auto& [index, column] : all) longest = std::max(longest, column.seconds);
  const double row = 24, width = 600;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << 120 + width + 120 << "\" height=\""
      << row * static_cast<double>(all.size()) + 8 << "\" role=\"img\" aria-label=\"busy time per device\">\n";
  double y = 4;
  for (const auto& [index, column] : all) {
    const double w = longest > 0 ? column.seconds / longest * width : 0;
    out << "<text x=\"4\" y=\"" << y + row * 0.65 << "\">device " << index << "</text><rect x=\"120\" y=\"" << y + 3
        << "\" width=\"" << std::max(1.0, w) << "\" height=\"" << row - 6 << "\" fill=\"" << device_colour(index)
        << "\"><title>" << escape(seconds_text(column.seconds)) << "</title></rect><text x=\"" << 126 + w << "\" y=\""
        << y + row * 0.65 << "\">" << escape(seconds_text(column.seconds)) << "</text>\n";
    y += row;
  }
  out << "</svg>\n";
}

// A kernel's shares of work-items per device, as one stacked bar.
void shares_svg(std::ostream& out, const std::map<int, DeviceColumn>& work) {
  uint64_t all = 0;
  for (const auto& [index, column] : work) all += column.work_items;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"160\" height=\"14\">";
  double x = 0;
  for (const auto& [index, column] : work) {
    if (!all || !column.work_items) continue;
    const double share = static_cast<double>(column.work_items) / static_cast<double>(all);
    out << "<rect x=\"" << x << "\" y=\"1\" width=\"" << share * 160 << "\" height=\"12\" fill=\""
        << device_colour(index) << "\"><title>device " << index << ": " << format("%.1f%%", share * 100)
        << "</title></rect>";
    x += share * 160;
  }
  out << "</svg>";
}

void devices_table(std::ostream& out, const json& devices) {
  out << "<h2>Devices</h2>\n";
  if (!devices.is_array() || devices.empty()) {
    out << "<p>(none listed)</p>\n";
    return;
  }
  out << "<table><tr><th>index</th><th>type</th><th>home</th><th>name</th><th>platform</th></tr>\n";
  for (const json& device : devices) {
    double index = -1;
    number_of(member(device, "index"), index);
    const json& home = member(device, "home");
    out << "<tr><td class=\"n\"><span style=\"color:" << device_colour(static_cast<int>(index)) << "\">&#9632;</span> "
        << static_cast<int>(index) << "</td><td>" << escape(text_of(member(device, "type"))) << "</td><td>"
        << (home.is_boolean() && home.get<bool>() ? "home" : "") << "</td><td>" << escape(text_of(member(device, "name")))
        << "</td><td>" << escape(text_of(member(device, "platform"))) << "</td></tr>\n";
  }
  out << "</table>\n";
}

void kernels_table(std::ostream& out, const json& kernels, std::map<std::string, uint64_t>& reasons) {
  out << "<h2>Kernels</h2>\n";
  if (!kernels.is_array() || kernels.empty()) {
    out << "<p>(no kernel launches recorded)</p>\n";
    return;
  }
  out << "<table><tr><th>kernel</th><th>launches</th><th>split</th><th>shares of work-items</th><th>busy "
         "seconds per device</th><th>bytes moved</th><th>not split</th><th>footprints</th></tr>\n";
  for (const json& kernel : kernels) {
    const auto work = per_device_of(kernel);
    out << "<tr><td>" << escape(text_of(member(kernel, "name"))) << "</td><td class=\"n\">"
        << count_of(member(kernel, "launches")) << "</td><td class=\"n\">" << count_of(member(kernel, "split_launches"))
        << "</td><td>";
    shares_svg(out, work);
    out << "</td><td>";
    for (const auto& [index, column] : work)
      out << "d" << index << " " << escape(seconds_text(column.seconds)) << "<br/>";
    out << "</td><td class=\"n\">" << escape(format_bytes(count_of(member(kernel, "bytes_moved")))) << "</td><td>";
    const json& not_split = member(kernel, "not_split");
    if (not_split.is_object())
      for (const auto& [reason, count] : not_split.items()) {
        reasons[reason] += count_of(count);
        out << "<span title=\"" << escape(not_split_reason_meaning(reason)) << "\">" << escape(reason) << " x"
            << count_of(count) << "</span><br/>";
      }
    out << "</td><td>" << escape(arg_tiers_of(kernel)) << "</td></tr>\n";
  }
  out << "</table>\n<p class=\"note\">Shares: each device's part of the kernel's work-items (launches not split "
         "run on the app's device). Busy: in split launches a device's transfers, runs and merges; in launches "
         "not split, from when each could start on the app's device to its end.</p>\n";
}

}  // namespace

std::string format_report_html(const json& report, const json* trace) {
  std::ostringstream out;
  try {
    const std::string mode = text_of(member(report, "mode")), policy = text_of(member(report, "policy"));
    out << "<!DOCTYPE html>\n"
           "<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head><meta charset=\"utf-8\"/>"
           "<title>coex report</title><style>"
        << kStyle << "</style></head>\n<body>\n<h1>coex report</h1>\n<p>mode " << escape(mode.empty() ? "?" : mode)
        << ", policy " << escape(policy.empty() ? "?" : policy);
    double pid = 0;
    if (number_of(member(report, "pid"), pid)) out << ", process " << static_cast<long long>(pid);
    const json& totals = member(report, "totals");
    out << ": " << count_of(member(totals, "launches")) << " launches, " << count_of(member(totals, "split_launches"))
        << " split, " << escape(format_bytes(count_of(member(totals, "bytes_moved")))) << " moved.</p>\n";
    const std::string history = text_of(member(member(report, "history"), "file"));
    if (!history.empty()) out << "<p class=\"note\">history: " << escape(history) << "</p>\n";
    devices_table(out, member(report, "devices"));
    const Tracks tracks = trace ? tracks_of(*trace) : Tracks{};
    if (!tracks.events.empty()) {
      out << "<h2>Timeline</h2>\n<p class=\"note\">From the trace: what each device did (d0 is device 0; "
             "launches not split run on the app's device, from when each could start to its end), the launches, "
             "and the OpenCL calls of each app thread. Hover for names and times; for every slice, open the "
             "trace in https://ui.perfetto.dev.</p>\n";
      timeline_svg(out, tracks);
    } else {
      out << "<h2>Busy time per device</h2>\n<p class=\"note\">No trace given: run with <code>--trace FILE</code> "
             "(COEX_TRACE) and pass it with <code>--trace</code> for a timeline.</p>\n";
      busy_svg(out, member(report, "kernels"));
    }
    std::map<std::string, uint64_t> reasons;
    kernels_table(out, member(report, "kernels"), reasons);
    if (!reasons.empty()) {
      out << "<h2>Why launches were not split</h2>\n<dl>\n";
      for (const auto& [reason, count] : reasons) {
        const std::string meaning = not_split_reason_meaning(reason);
        out << "<dt>" << escape(reason) << " (" << count << ")</dt><dd>"
            << escape(meaning.empty() ? "(a reason this version of coex does not describe)" : meaning) << "</dd>\n";
      }
      out << "</dl>\n";
    }
    out << "</body>\n</html>\n";
  } catch (const std::exception& e) {
    return "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<html xmlns=\"http://www.w3.org/1999/xhtml\"><body><p>coex "
           "report: stopped: " +
           escape(e.what()) + "</p></body></html>\n";
  }
  return out.str();
}

}  // namespace coex::report
