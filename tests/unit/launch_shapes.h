// Launch shapes for the scheduler tests.
#pragma once

#include <cstdint>

#include "sched/policy.h"

// A launch of kernel "k" of `groups` work-groups, one work-item each.
inline coex::sched::LaunchShape launch_of_k(uint64_t groups) {
  coex::sched::LaunchShape shape;
  shape.kernel_key = "k";
  shape.total_groups = groups;
  shape.global_size = groups;
  return shape;
}
