// `coex report FILE`: the JSON report as plain-text tables (report_json.h: every key optional).
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "report/report.h"
#include "report/report_json.h"

namespace coex::report {

namespace {

using namespace detail;

// Columns padded to their widest cell; the first `left_columns` are left-aligned (text), the rest
// right-aligned (numbers).
class Table {
 public:
  explicit Table(size_t left_columns) : left_columns_(left_columns) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void add_note(std::string note) { notes_[rows_.size() - 1].push_back(std::move(note)); }

  void print(std::ostream& out) const {
    std::vector<size_t> widths;
    for (const auto& row : rows_) {
      widths.resize(std::max(widths.size(), row.size()), 0);
      for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
    }
    for (size_t r = 0; r < rows_.size(); ++r) {
      std::string line = " ";
      for (size_t c = 0; c < rows_[r].size(); ++c) {
        const std::string& cell = rows_[r][c];
        const std::string pad(widths[c] - cell.size(), ' ');
        line += (c == 0 ? " " : "  ") + (c < left_columns_ ? cell + pad : pad + cell);
      }
      line.erase(line.find_last_not_of(' ') + 1);
      out << line << "\n";
      auto notes = notes_.find(r);
      if (notes != notes_.end()) {
        for (const std::string& note : notes->second) out << "      " << note << "\n";
      }
    }
  }

 private:
  size_t left_columns_;
  std::vector<std::vector<std::string>> rows_;
  std::map<size_t, std::vector<std::string>> notes_;  // printed under the row of that index
};

std::vector<std::string> device_cells(const std::map<int, DeviceColumn>& work, const std::set<int>& indices) {
  uint64_t all_items = 0;
  for (const auto& [index, column] : work) all_items += column.work_items;
  std::vector<std::string> shares, busy;
  for (int index : indices) {
    auto it = work.find(index);
    if (it == work.end() || !it->second.present) {
      shares.push_back("-");
      busy.push_back("-");
      continue;
    }
    shares.push_back(all_items ? format("%.1f%%", 100.0 * static_cast<double>(it->second.work_items) /
                                                      static_cast<double>(all_items))
                               : "-");
    busy.push_back(format("%.3f", it->second.seconds));
  }
  shares.insert(shares.end(), busy.begin(), busy.end());
  return shares;
}

void print_devices(std::ostream& out, const json& devices, std::set<int>& indices) {
  out << "Devices\n";
  if (!devices.is_array() || devices.empty()) {
    out << "  (none listed)\n";
    return;
  }
  Table table(5);
  table.add({"index", "type", "home", "name", "platform"});
  for (const json& device : devices) {
    double index = 0;
    const bool has_index = number_of(member(device, "index"), index);
    if (has_index) indices.insert(static_cast<int>(index));
    const json& home = member(device, "home");
    const json& remote = member(device, "remote");
    const bool is_remote = remote.is_boolean() && remote.get<bool>();
    table.add({has_index ? std::to_string(static_cast<int>(index)) : "?",
               text_of(member(device, "type")) + (is_remote ? " remote" : ""),
               home.is_boolean() && home.get<bool>() ? "home" : "", text_of(member(device, "name")),
               text_of(member(device, "platform"))});
  }
  table.print(out);
}

// `text` in lines of at most `width` characters (words are never cut), each after the first indented by
// `indent` spaces.
std::string wrapped(const std::string& text, size_t width, size_t indent) {
  std::string out, line;
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line;
}

// One entry per reason that appears: what it means (report/reasons.cpp).
void print_reason_legend(std::ostream& out, const std::map<std::string, uint64_t>& reasons) {
  if (reasons.empty()) return;
  out << "\nWhy launches were not split\n";
  size_t width = 0;
  for (const auto& [reason, count] : reasons) width = std::max(width, reason.size());
  for (const auto& [reason, count] : reasons) {
    const std::string meaning = not_split_reason_meaning(reason);
    out << "  " << reason << std::string(width - reason.size(), ' ') << "  "
        << wrapped(meaning.empty() ? "(a reason this version of coex does not describe)" : meaning,
                   std::max<size_t>(40, 100 - width - 4), width + 4)
        << "\n";
  }
}

// "coex's builds (one-time): d0 1 in 0.052 s, d1 1 in 0.713 s (1 failed), d2 1 in 0.0011 s (1 from a
// binary)": what coex's builds of the app's programs cost on each device. Empty for a report without
// them.
std::string builds_line(const json& builds) {
  std::string out;
  if (!builds.is_array()) return out;
  for (const json& b : builds) {
    const json& seconds = member(b, "seconds");
    out += (out.empty() ? "coex's builds (one-time): " : ", ") + std::string("d") +
           std::to_string(count_of(member(b, "device"))) + " " + std::to_string(count_of(member(b, "builds"))) +
           " in " + format("%.3g s", seconds.is_number() ? seconds.get<double>() : 0.0);
    if (const uint64_t failed = count_of(member(b, "failed"))) out += " (" + std::to_string(failed) + " failed)";
    if (const uint64_t from_binary = count_of(member(b, "from_binary")))
      out += " (" + std::to_string(from_binary) + " from a binary)";
  }
  return out;
}

// "late devices (auto_late_devices): d0 let in after 0.56 s, d2 never (nothing made for it)": when
// the devices given no context nor build at first got them. Empty for a report without them.
std::string late_devices_line(const json& late) {
  std::string out;
  if (!late.is_array()) return out;
  for (const json& d : late) {
    const json& after = member(d, "let_in_after");
    out += (out.empty() ? "late devices (auto_late_devices): " : ", ") + std::string("d") +
           std::to_string(count_of(member(d, "device"))) +
           (after.is_number() ? format(" let in after %.3g s", after.get<double>()) : " never (nothing made for it)");
  }
  return out;
}

// "compiled ahead (one-time, in processes of coex's own): 2 in 0.61 s (1 made, 1 ended at exit, 2
// started at the build); 1
// program compiled in the app's process (compile_ahead_processes); 2 first launches probed on home in
// 0.014 s, 1 then split at once": what compiling ahead cost, off the app's process, and what the
// probes that chose it cost in it. Empty for a report without it.
std::string compile_ahead_line(const json& ahead) {
  if (!ahead.is_object()) return "";
  const uint64_t processes = count_of(member(ahead, "processes")), beyond = count_of(member(ahead, "beyond_limit"));
  auto seconds_of = [&](const char* key) {
    const json& seconds = member(ahead, key);
    return format("%.3g s", seconds.is_number() ? seconds.get<double>() : 0.0);
  };
  std::string out = "compiled ahead (one-time, in processes of coex's own): " + std::to_string(processes) + " in " +
                    seconds_of("seconds") + " (" + std::to_string(count_of(member(ahead, "made"))) + " made";
  if (const uint64_t at_exit = count_of(member(ahead, "ended_at_exit")))
    out += ", " + std::to_string(at_exit) + " ended at exit";
  if (const uint64_t none = count_of(member(ahead, "served_none")))
    out += ", " + std::to_string(none) + " ended as their program needed none of it";
  if (const uint64_t at_build = count_of(member(ahead, "at_build")))
    out += ", " + std::to_string(at_build) + " started at the build";
  if (const uint64_t kinds = count_of(member(ahead, "other_kinds")))
    out += ", " + std::to_string(kinds) + (kinds == 1 ? " device" : " devices") + " of another kind built for too";
  out += ")";
  if (beyond)
    out += "; " + std::to_string(beyond) + (beyond == 1 ? " program" : " programs") +
           " compiled in the app's process (compile_ahead_processes)";
  if (const uint64_t probes = count_of(member(ahead, "probes")))
    out += "; " + std::to_string(probes) + (probes == 1 ? " first launch" : " first launches") + " probed on home in " +
           seconds_of("probe_seconds") + ", " + std::to_string(count_of(member(ahead, "split_after_probe"))) +
           " then split at once";
  if (const uint64_t held = count_of(member(ahead, "held_until_paid")))
    out += "; " + std::to_string(held) + (held == 1 ? " launch" : " launches") +
           " on the app's device until a process on the devices' cores would pay (compile_ahead_start)";
  return out;
}

// "planned by auto:sigmoid x1, auto:wp x4; 1 probe; last verdict (launch 9): one_device_pays over d0;
// measured split over d0,d1 0.51 s, home alone 0.32 s; kept regular (20 packages, spread 0.14, range
// ratio 1.89)": which policies planned the split launches, why auto's gate decided the last launch as
// it did, and sigmoid's last judgement of the kernel's regularity. Empty for a report without them.
std::string planned_and_verdict(const json& kernel) {
  std::string out;
  const json& planned = member(kernel, "planned_by");
  if (planned.is_object() && !planned.empty()) {
    out = "planned by ";
    bool first = true;
    for (const auto& [policy, count] : planned.items()) {
      out += (first ? "" : ", ") + policy + " x" + std::to_string(count_of(count));
      first = false;
    }
  }
  const uint64_t probes = count_of(member(kernel, "probes"));
  if (probes) out += (out.empty() ? "" : "; ") + std::to_string(probes) + (probes == 1 ? " probe" : " probes");
  const json& verdict = member(kernel, "last_verdict");
  if (verdict.is_object()) {
    auto devices = [](const json& list) {
      std::string text;
      if (list.is_array())
        for (const json& d : list) text += (text.empty() ? "d" : ",d") + std::to_string(count_of(d));
      return text;
    };
    auto seconds = [](const json& v) { return v.is_number() ? format("%.3g s", v.get<double>()) : "not measured"; };
    auto flag = [&](const char* key) { return member(verdict, key).is_boolean() && member(verdict, key).get<bool>(); };
    // A verdict from a cold split's wait for its data (the gate's cold_transfers) names it so.
    const std::string measured = flag("cold_transfers")
                                     ? "a cold split over " + devices(member(verdict, "measured_devices")) +
                                           " waited " + seconds(member(verdict, "split_seconds")) + " for its data"
                                     : "measured split over " + devices(member(verdict, "measured_devices")) + " " +
                                           seconds(member(verdict, "split_seconds"));
    out += (out.empty() ? "" : "; ") + std::string("last verdict (launch ") +
           std::to_string(count_of(member(verdict, "launch"))) + "): " + text_of(member(verdict, "decision")) +
           " over " + devices(member(verdict, "devices")) + (flag("probe") ? " (probe)" : "") + "; " + measured +
           ", home alone " + seconds(member(verdict, "home_seconds"));
    const json& size = member(verdict, "measured_size");
    if (size.is_number()) out += " (at a larger size, " + std::to_string(count_of(size)) + " work-items)";
  }
  const json& regularity = member(kernel, "regularity");
  if (regularity.is_object()) {
    const json& ratio = member(regularity, "range_ratio");
    out +=
        (out.empty() ? "" : "; ") +
        std::string(member(regularity, "irregular").is_boolean() && member(regularity, "irregular").get<bool>()
                        ? "kept irregular"
                        : "kept regular") +
        " (" + std::to_string(count_of(member(regularity, "packages"))) + " packages, spread " +
        (member(regularity, "spread").is_number() ? format("%.2f", member(regularity, "spread").get<double>()) : "?") +
        ", range ratio " + (ratio.is_number() ? format("%.2f", ratio.get<double>()) : "none") + ")";
  }
  return out;
}

void print_kernels(std::ostream& out, const json& kernels, std::set<int> indices) {
  out << "\nKernels\n";
  if (!kernels.is_array() || kernels.empty()) {
    out << "  (no kernel launches recorded)\n";
    return;
  }
  // Only where footprints were used (a report may have none): a column for them.
  bool with_minimal = false;
  for (const json& kernel : kernels) {
    for (const auto& [index, column] : per_device_of(kernel)) indices.insert(index);
    with_minimal = with_minimal || count_of(member(kernel, "bytes_minimal")) > 0 || !arg_tiers_of(kernel).empty();
  }
  std::vector<std::string> header = {"kernel", "launches", "split", "bytes moved"};
  if (with_minimal) header.push_back("bytes minimal");
  for (int index : indices) header.push_back("share d" + std::to_string(index));
  for (int index : indices) header.push_back("busy d" + std::to_string(index));
  Table table(1);
  table.add(header);

  uint64_t launches = 0, split = 0, bytes = 0, minimal = 0;
  std::map<int, DeviceColumn> all_work;
  std::map<std::string, uint64_t> all_reasons;
  for (const json& kernel : kernels) {
    const uint64_t k_launches = count_of(member(kernel, "launches"));
    const uint64_t k_split = count_of(member(kernel, "split_launches"));
    const uint64_t k_bytes = count_of(member(kernel, "bytes_moved"));
    const auto work = per_device_of(kernel);
    const uint64_t k_minimal = count_of(member(kernel, "bytes_minimal"));
    std::vector<std::string> row = {text_of(member(kernel, "name")), std::to_string(k_launches),
                                    std::to_string(k_split), format_bytes(k_bytes)};
    if (with_minimal) row.push_back(format_bytes(k_minimal));
    for (std::string& cell : device_cells(work, indices)) row.push_back(std::move(cell));
    table.add(row);
    const std::string tiers = arg_tiers_of(kernel);
    if (!tiers.empty()) table.add_note("footprints: " + tiers);
    std::string reasons;
    const json& not_split = member(kernel, "not_split");
    if (not_split.is_object()) {
      for (const auto& [reason, count] : not_split.items()) {
        reasons += (reasons.empty() ? "" : ", ") + reason + " x" + std::to_string(count_of(count));
        all_reasons[reason] += count_of(count);
      }
    }
    if (!reasons.empty()) table.add_note("not split: " + reasons);
    const std::string why = planned_and_verdict(kernel);
    if (!why.empty()) table.add_note(why);
    launches += k_launches;
    split += k_split;
    bytes += k_bytes;
    minimal += k_minimal;
    for (const auto& [index, column] : work) {
      all_work[index].present = true;
      all_work[index].work_items += column.work_items;
      all_work[index].seconds += column.seconds;
    }
  }
  std::vector<std::string> total_row = {"(all kernels)", std::to_string(launches), std::to_string(split),
                                        format_bytes(bytes)};
  if (with_minimal) total_row.push_back(format_bytes(minimal));
  for (std::string& cell : device_cells(all_work, indices)) total_row.push_back(std::move(cell));
  table.add(total_row);
  std::string reasons;
  for (const auto& [reason, count] : all_reasons) {
    reasons += (reasons.empty() ? "" : ", ") + reason + " x" + std::to_string(count);
  }
  if (!reasons.empty()) table.add_note("not split: " + reasons);
  table.print(out);
  out << "\n  share dN: device N's part of the kernel's work-items, launches not split included (they run on\n"
         "  the app's device). busy dN: seconds device N spent on the kernel: in split launches its transfers,\n"
         "  runs and merges; in launches not split, from when each could start on the app's device to its end.\n";
  if (with_minimal)
    out << "  bytes minimal: the footprint bytes the devices lacked; footprints: how each buffer argument\n"
           "  moved (exact: only the bytes its footprint needs; whole: all of it; diff: writes merged by diff).\n";
  print_reason_legend(out, all_reasons);
}

}  // namespace

std::string format_report_table(const json& report) {
  std::ostringstream out;
  try {
    if (!report.is_object()) return "coex report: not a coex report (the top level is not a JSON object)\n";
    const std::string mode = text_of(member(report, "mode"));
    const std::string policy = text_of(member(report, "policy"));
    out << "coex report: mode " << (mode.empty() ? "?" : mode) << ", policy " << (policy.empty() ? "?" : policy);
    double pid = 0;
    if (number_of(member(report, "pid"), pid)) out << ", process " << static_cast<long long>(pid);
    out << "\n";
    const json& history = member(report, "history");
    if (history.is_object()) {
      const std::string file = text_of(member(history, "file"));
      const std::string state = text_of(member(history, "state"));
      out << "history: " << (file.empty() ? "(none: no cache path)" : file);
      if (state == "loaded")
        out << " (" << count_of(member(history, "entries")) << " entries for this device set)";
      else if (state == "new_device_set")
        out << " (nothing yet for this device set; " << count_of(member(history, "other_device_sets"))
            << " other set(s) kept)";
      else if (state == "no_file")
        out << " (new)";
      else if (!state.empty())
        out << " (" << state << ")";
      out << "\n";
    }
    const std::string trace = text_of(member(report, "trace"));
    if (!trace.empty()) out << "trace: " << trace << "\n";
    out << "\n";
    std::set<int> indices;
    print_devices(out, member(report, "devices"), indices);
    print_kernels(out, member(report, "kernels"), indices);
    const std::string builds = builds_line(member(report, "builds"));
    if (!builds.empty()) out << "\n" << builds << "\n";
    const std::string late = late_devices_line(member(report, "late_devices"));
    if (!late.empty()) out << (builds.empty() ? "\n" : "") << late << "\n";
    const std::string ahead = compile_ahead_line(member(report, "compile_ahead"));
    if (!ahead.empty()) out << (builds.empty() && late.empty() ? "\n" : "") << ahead << "\n";
    const json& totals = member(report, "totals");
    if (totals.is_object()) {
      out << "\nTotals: " << count_of(member(totals, "launches")) << " launches, "
          << count_of(member(totals, "split_launches")) << " split, "
          << format_bytes(count_of(member(totals, "bytes_moved"))) << " moved\n";
    }
  } catch (const std::exception& e) {
    out << "\ncoex report: stopped: " << e.what() << "\n";
  }
  return out.str();
}

}  // namespace coex::report
