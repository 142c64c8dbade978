// `coex report FILE`: the JSON report as plain-text tables. Reports come from other versions of
// coex or from people's editors, so every key is optional and every value may be of the wrong type.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "report/report.h"

namespace coex::report {

namespace {

using nlohmann::json;

const json& member(const json& object, const char* key) {
  static const json* const missing = new json();  // never destroyed: see DESIGN.md on process exit
  if (!object.is_object()) return *missing;
  auto it = object.find(key);
  return it == object.end() ? *missing : *it;
}

// One line of text: a control character in a kernel name would break the table.
std::string text_of(const json& value) {
  if (value.is_string()) {
    std::string text = value.get<std::string>();
    for (char& c : text) {
      if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    }
    return text;
  }
  if (value.is_null()) return "";
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool number_of(const json& value, double& out) {
  if (!value.is_number()) return false;
  out = value.get<double>();
  return true;
}

uint64_t count_of(const json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer()) return static_cast<uint64_t>(std::max<int64_t>(0, value.get<int64_t>()));
  if (value.is_number_float() && value.get<double>() > 0) return static_cast<uint64_t>(value.get<double>());
  return 0;
}

std::string format(const char* pattern, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

std::string format_bytes(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < sizeof units / sizeof *units) {
    value /= 1024;
    ++unit;
  }
  return format("%.1f ", value) + units[unit];
}

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

struct DeviceColumn {
  uint64_t work_items = 0;
  double seconds = 0;
  bool present = false;
};

// Per kernel: device index -> summed work.
std::map<int, DeviceColumn> per_device_of(const json& kernel) {
  std::map<int, DeviceColumn> columns;
  const json& entries = member(kernel, "per_device");
  if (!entries.is_array()) return columns;
  for (const json& entry : entries) {
    double index = 0;
    if (!number_of(member(entry, "index"), index)) continue;
    DeviceColumn& column = columns[static_cast<int>(index)];
    column.present = true;
    column.work_items += count_of(member(entry, "work_items"));
    double seconds = 0;
    if (number_of(member(entry, "seconds"), seconds)) column.seconds += seconds;
  }
  return columns;
}

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

// "0 exact, 1 whole": the tier of each buffer argument, from the kernel's "args".
std::string arg_tiers_of(const json& kernel) {
  std::string text;
  const json& args = member(kernel, "args");
  if (!args.is_array()) return text;
  for (const json& arg : args) {
    double index = 0;
    if (!number_of(member(arg, "index"), index)) continue;
    text += (text.empty() ? "" : ", ") + std::to_string(static_cast<int>(index)) + " " + text_of(member(arg, "tier"));
  }
  return text;
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
    table.add({has_index ? std::to_string(static_cast<int>(index)) : "?", text_of(member(device, "type")),
               home.is_boolean() && home.get<bool>() ? "home" : "", text_of(member(device, "name")),
               text_of(member(device, "platform"))});
  }
  table.print(out);
}

void print_kernels(std::ostream& out, const json& kernels, std::set<int> indices) {
  out << "\nKernels\n";
  if (!kernels.is_array() || kernels.empty()) {
    out << "  (no kernel launches recorded)\n";
    return;
  }
  // Only where footprints were used (reports from before issue 5 have none): a column for them.
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
  out << "\n  share dN: device N's part of the kernel's work-items; busy dN: seconds device N spent on it,\n"
         "  transfers and merges included.\n";
  if (with_minimal)
    out << "  bytes minimal: the footprint bytes the devices lacked; footprints: the tier of each buffer\n"
           "  argument (exact: its footprint moved; whole: replicated; diff: writes merged by diff).\n";
}

}  // namespace

std::string format_report_table(const json& report) {
  std::ostringstream out;
  try {
    if (!report.is_object()) return "coex report: not a coex report (the top level is not a JSON object)\n";
    const std::string mode = text_of(member(report, "mode"));
    const std::string policy = text_of(member(report, "policy"));
    out << "coex report: mode " << (mode.empty() ? "?" : mode) << ", policy " << (policy.empty() ? "?" : policy)
        << "\n\n";
    std::set<int> indices;
    print_devices(out, member(report, "devices"), indices);
    print_kernels(out, member(report, "kernels"), indices);
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
