// The launch as a policy sees it (sched::LaunchShape), built in one place for the planner's gate
// and for the split itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "exec/chunk_footprint.h"
#include "exec/launch_geometry.h"
#include "sched/policy.h"

namespace coex::exec {

// The key the History keeps a kernel's measurements under (its name and its source's hash).
std::string history_key(const std::string& kernel_name, uint64_t source_hash);

// `whole_launch`: the footprint of every work-group, when known (the bytes per group are what a
// group's footprint moves at most); null before the split (the gate needs none).
sched::LaunchShape launch_shape(const LaunchGeometry& geometry, const std::string& kernel_key, int home,
                                std::optional<uint64_t> launch_number, const ChunkFootprint* whole_launch);

}  // namespace coex::exec
