#include "exec/compile_ahead_kinds.h"

#include <cstring>
#include <set>

#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/kept_binaries.h"
#include "exec/kept_binary_choice.h"
#include "exec/pocl_compiles.h"
#include "exec/program_analysis.h"
#include "exec/shared_binaries.h"

namespace coex::exec::compile_ahead {

std::vector<int> other_kinds_to_compile(Services& services, const std::string& source, const std::string& options,
                                        int home, const std::vector<int>& to_build) {
  std::vector<int> firsts;
  if (source.empty() || !services.settings().share_device_binaries) return firsts;
  const devices::DeviceSet& set = services.devices();
  const devices::Device& home_device = set.at(home);
  for (int device : to_build) {
    const devices::Device& d = set.at(device);
    if (device == home || d.same_kind(home_device) || !compiles_in_this_process(d)) continue;
    if (first_of_kind(services, device, to_build) >= 0) continue;  // it builds from that one's binary
    const KeptBinary kept = kept_binary_for(services, d, device, -1, source, options);
    if (!kept.folder.empty() && !read_kept_binary(kept.folder, kept.key).empty()) continue;
    firsts.push_back(device);
  }
  return firsts;
}

std::vector<int> other_kinds_of_rewrite(Services& services, model::ProgramRecord& program, int home) {
  std::vector<int> to_build;
  std::string options;
  {
    std::lock_guard lock(program.mutex);
    to_build = program.devices_to_build;
    options = program.build_options;
  }
  if (to_build.empty()) return {};
  return other_kinds_to_compile(services, program.rewritten_source, options, home, to_build);
}

std::vector<int> kinds_of(model::ProgramRecord& program) {
  std::lock_guard lock(program.mutex);
  return program.compile_ahead_kinds;
}

bool under_way_beside_kinds(Services& services, model::ProgramRecord& program, int home, const Launch* ahead) {
  if (serves_none(program)) {
    end_process_serving_none(program);
    return false;
  }
  if (ahead) return under_way(services, program, home, *ahead);
  not_needed(program);  // split at once: the devices of other kinds still wait for its builds
  return false;
}

std::string pocl_devices_entry(const char* list, size_t platform_devices) {
  // PoCL's CPU drivers, each entry one device (PoCL 3.1's names and PoCL 5's).
  static const std::set<std::string> kOneDeviceEach = {"basic", "pthread", "tbb", "cpu", "cpu-minimal", "cpu-tbb"};
  if (!list) return "";
  // Entries apart by spaces, as PoCL reads them (strtok on " ": a tab is part of an entry).
  std::string drivers;
  std::set<std::string> seen;
  size_t entries = 0;
  for (const char* at = list; *at;) {
    if (*at == ' ') {
      ++at;
      continue;
    }
    const char* end = std::strchr(at, ' ');
    const std::string entry(at, end ? size_t(end - at) : std::strlen(at));
    if (!kOneDeviceEach.count(entry)) return "";
    if (seen.insert(entry).second) drivers += (drivers.empty() ? "" : " ") + entry;
    ++entries;
    at += entry.size();
  }
  return entries == platform_devices ? drivers : "";
}

}  // namespace coex::exec::compile_ahead
