// Decides, when the app enqueues a launch, whether coex splits it (only when that is proven safe:
// docs/design.md, "What is split"), and if so captures it as a LaunchJob.
#pragma once

#include <CL/cl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/first_launch_probe.h"
#include "exec/launch_job.h"

namespace coex::exec {

struct LaunchDecision {
  std::unique_ptr<LaunchJob> job;  // null: run as the app asked, on its device
  std::string not_split_reason;    // why not, as the report counts it
  std::string kernel_name;
  // Buffers the launch may write, as (record, origin, size): stale elsewhere once it runs unsplit.
  std::vector<std::shared_ptr<model::BufferRecord>> written_buffers;
  // Non-empty: a launch too small by its work-items, otherwise splittable, whose time on home is not
  // known yet: the caller times it under this key (exec/home_launch_times.h).
  std::string time_on_home_key;
  // Timed from an idle queue: the caller waits (briefly) for the app's queue to drain before the
  // enqueue, so that the time is the launch's own (drained_home_key); else it is not timed.
  bool time_drained = false;
  // Kept on home by the policy's gate (auto): what it saw, shared with the launches that repeat this
  // one (repeated_launches.h), each of its own number, gate_launch: a copy at every launch cost
  // allocations (docs/performance.md, "Launches left on home").
  std::shared_ptr<const report::GateRecord> gate;
  uint64_t gate_launch = 0;
  int home = -1;  // the index of the launch's queue's device, where the plan looked it up
  // Set: the caller first runs this piece of the launch on home, timed, under probe_key
  // (exec/first_launch_probe.h), or notes it could not, then plans the launch again.
  std::optional<first_launch_probe::Piece> probe;
  std::string probe_key;
};

LaunchDecision plan_launch(Services& services, cl_command_queue queue, cl_kernel kernel, cl_uint work_dim,
                           const size_t* offset, const size_t* global, const size_t* local);

// The decision of an earlier launch that this one repeats, when it still holds (exec/repeated_launches.h),
// into `decision`: a launch left on home at no cost of planning. The caller has checked nothing of the
// launch: the same queue, kernel and geometry were checked when that earlier one was planned. False:
// plan it in full (`decision` as it was).
bool repeated_launch(Services& services, cl_command_queue queue, cl_kernel kernel, cl_uint work_dim,
                     const size_t* offset, const size_t* global, const size_t* local, LaunchDecision& decision);

}  // namespace coex::exec
