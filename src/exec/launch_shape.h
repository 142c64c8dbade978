// The launch as a policy sees it (sched::LaunchShape), built in one place for the planner's gate
// and for the split itself; and the geometry of its split.
#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "exec/chunk_footprint.h"
#include "exec/launch_geometry.h"
#include "exec/services.h"
#include "model/records.h"
#include "sched/policy.h"

namespace coex::exec {

// A split's geometry over `devices`: the app's local size, else the kernel's compiled one, else coex's
// pick (make_geometry), within the devices' and the kernel's limit. False: the driver would reject it.
bool split_geometry(Services& services, model::KernelRecord& kernel, cl_device_id home, const std::vector<int>& devices,
                    cl_uint work_dim, const size_t* offset, const size_t* global, const size_t* local,
                    LaunchGeometry& out);

// The key the History keeps a kernel's measurements under (its name and its source's hash).
std::string history_key(const std::string& kernel_name, uint64_t source_hash);

// `whole_launch`: the footprint of every work-group, when known (the bytes per group are what a
// group's footprint moves at most); null before the split (the gate needs none).
sched::LaunchShape launch_shape(const LaunchGeometry& geometry, const std::string& kernel_key, int home,
                                std::optional<uint64_t> launch_number, const ChunkFootprint* whole_launch);

}  // namespace coex::exec
