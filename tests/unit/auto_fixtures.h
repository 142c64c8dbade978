// Histories and launch shapes for the tests of auto (sched_auto_test.cpp, sched_auto_shares_test.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sched/history.h"
#include "sched/policy.h"

namespace coex::sched::auto_fixtures {

// A launch of kernel `key` of `groups` work-groups of 64 work-items.
inline LaunchShape shape(const std::string& key, uint64_t groups) {
  LaunchShape s;
  s.kernel_key = key;
  s.total_groups = groups;
  s.global_size = groups * 64;
  return s;
}

// Chunks of 100, 400 and 1,600 groups on `device`, each taking a + b x groups.
inline void record_line(History& h, const std::string& key, uint64_t size, int device, double a, double b) {
  for (uint64_t g : {100, 400, 1600}) {
    ChunkTiming t;
    t.chunk = {device, 0, g};
    t.end = a + b * static_cast<double>(g);
    h.record_chunk(key, size, t);
  }
}

// A History in which devices 0 and 1 ran chunks of `s` on the line a + b x, after one launch; and
// their profiles.
inline std::shared_ptr<History> two_devices_on_a_line(const LaunchShape& s, double a, double b) {
  auto h = std::make_shared<History>();
  h->note_launch(s.kernel_key, s.global_size);
  record_line(*h, s.kernel_key, s.global_size, 0, a, b);
  record_line(*h, s.kernel_key, s.global_size, 1, a, b);
  return h;
}

inline std::vector<DeviceProfile> two_profiles() {
  std::vector<DeviceProfile> profiles(2);
  profiles[1].index = 1;
  return profiles;
}

}  // namespace coex::sched::auto_fixtures
