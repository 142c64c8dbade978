#include "exec/compile_ahead_at_launch.h"

#include "exec/compile_ahead.h"
#include "exec/compile_ahead_kinds.h"
#include "exec/deferred_app_binary.h"
#include "exec/device_kernels.h"
#include "exec/first_launch_probe.h"
#include "exec/launch_geometry.h"
#include "exec/size_rules.h"

namespace coex::exec::compile_ahead {

LaunchStep at_launch(Services& services, const PlannedLaunch& launch, LaunchDecision& decision,
                     RepeatableDecision& repeat) {
  const auto& [program, kernel, info, args, request, queue, home, devices, home_key, kernel_key, split_floor,
               read_deferred, seconds_on_home] = launch;
  const cl_uint work_dim = request.work_dim;
  const size_t *offset = request.offset, *global = request.global, *local = request.local;
  // Without the app's local size the chunks run with the one coex picks (make_geometry): the variants
  // compiled ahead are of that one (none compiled ahead: 0.5 s each first chunk over two basic devices).
  LaunchGeometry picked;
  if (!local) split_geometry(services, kernel, queue.device, devices, work_dim, offset, global, nullptr, picked);
  const Launch shape{kernel.name, work_dim, local ? local : picked.local};
  // One of a kernel that does not loop runs on home, timed, and starts no process until home's times
  // can tell it from one below the floor (timed_to_compile_ahead); one that waits gets its variants.
  if (!info.loops && split_floor > 0 && !timed_to_compile_ahead(services, home_key, kernel_key, split_floor) &&
      would_start_process(services, *program, home, kernel.name) && !waits_for_variants(services, *program)) {
    repeat.by_home_times = true;  // planned again once a time lands, or after kPreparingHold
    return LaunchStep::preparing;
  }
  std::optional<double> launch_seconds = seconds_on_home();
  // A rewrite's process is waited for by home's build of it: no split comes before it ends.
  bool ahead = !info.loops || launch_seconds || program->compile_ahead_rewrite.load(std::memory_order_acquire);
  if (!ahead) {  // untimed, of a kernel that loops: probed first where it may be (exec/first_launch_probe.h)
    const first_launch_probe::Found probed = first_launch_probe::found(home_key);
    if (!probed.asked &&
        (decision.probe = first_launch_probe::piece_for(services, *program, kernel.name, info, args, home, work_dim,
                                                        offset, global, local, devices))) {
      decision.probe_key = home_key;
      return LaunchStep::probing;
    }
    launch_seconds = probed.seconds;
    ahead = !first_launch_probe::splits_at_once(services, *program, probed, home, devices);
  }
  // A process on the devices' cores starts once the kernel's launches show it pays.
  if (ahead && launch_seconds &&
      (repeat.counts_before_process = first_launch_probe::held_until_process_pays(services, *program, kernel.name,
                                                                                  *launch_seconds, home, devices)))
    return LaunchStep::preparing;
  if (read_deferred)
    read_deferred_app_binary(services, program, queue.context, home, devices, ahead ? &shape : nullptr);
  else if (under_way_beside_kinds(services, *program, home, ahead ? &shape : nullptr))
    return LaunchStep::preparing;
  if (program->app_binary_deferred.load(std::memory_order_acquire))
    return program->app_binary_needs_quiet ? LaunchStep::too_small : LaunchStep::preparing;
  return LaunchStep::plan_on;
}

}  // namespace coex::exec::compile_ahead
