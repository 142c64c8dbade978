// Device profiles for the take-over tests: devices 0, 1, ... whose specifications (compute units x
// clock, sched::spec_weight) promise `weights`.
#pragma once

#include <vector>

#include "sched/policy.h"

inline std::vector<coex::sched::DeviceProfile> specified(const std::vector<unsigned>& weights) {
  std::vector<coex::sched::DeviceProfile> profiles;
  for (size_t i = 0; i < weights.size(); ++i) {
    coex::sched::DeviceProfile p;
    p.index = int(i);
    p.is_cpu = true;
    p.compute_units = weights[i];
    p.clock_mhz = 1000;
    profiles.push_back(p);
  }
  return profiles;
}
