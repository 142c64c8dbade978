// Histories and launch shapes for the tests of auto's split-cost rule and its probes
// (sched_auto_split_test.cpp, sched_auto_probe_test.cpp): kernel "k" of kGroups work-groups, an
// H100-like home device and a device 3x slower beside it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sched/history.h"
#include "sched/policy.h"

namespace coex::sched::split_fixtures {

inline constexpr uint64_t kGroups = 1000;
inline constexpr uint64_t kSize = kGroups * 64;

inline LaunchShape shape(int home, std::optional<uint64_t> launch_number = std::nullopt) {
  LaunchShape s;
  s.kernel_key = "k";
  s.total_groups = kGroups;
  s.global_size = kSize;
  s.home = home;
  s.launch_number = launch_number;
  return s;
}

struct Line {
  double a = 0;  // seconds per chunk
  double b = 0;  // seconds per group
  double time(double groups) const { return a + b * groups; }
};

// Chunks of three sizes on `device`, each taking line.time(groups): its fitted model is the line.
inline void record_line(History& h, int device, Line line) {
  for (uint64_t g : {100, 400, 1600}) {
    ChunkTiming t;
    t.chunk = {device, 0, g};
    t.end = line.time(static_cast<double>(g));
    h.record_chunk("k", kSize, t);
  }
}

// An H100-like home device and a device 3x slower beside it, both with a 20 us overhead per chunk.
// Their models split 1000 groups 750 : 250 and predict about 0.77 ms, against 1.02 ms on home alone:
// by the models, the split pays.
inline const Line kHome{20e-6, 1e-6};
inline const Line kSlower{20e-6, 3e-6};
inline const double kHomeAlone = kHome.time(kGroups);

inline void record_models_predicting_a_gain(History& h) {
  record_line(h, 0, kHome);
  record_line(h, 1, kSlower);
}

// A split over `devices` measured as a program meets it: a switch, then two splits that follow it
// (steady), each taking `seconds`. Two steady measurements are a verdict at once (auto_gate).
inline void record_steady_splits(History& h, const std::vector<int>& devices, double seconds) {
  for (int i = 0; i < 3; ++i) h.record_split_launch("k", kSize, devices, seconds, std::nullopt, i > 0);
}

}  // namespace coex::sched::split_fixtures
