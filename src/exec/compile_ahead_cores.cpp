#include "exec/compile_ahead_cores.h"

#include <algorithm>

#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/compile_ahead.h"
#include "exec/executor.h"
#include "exec/pocl_compiles.h"
#include "exec/pocl_kernel_cache.h"
#include "exec/spin_wait.h"

namespace coex::exec::compile_ahead {

unsigned cores_left(unsigned cores, unsigned cores_of_devices) {
  return cores > cores_of_devices ? cores - cores_of_devices : 0;
}

unsigned cores_of_pocl_cpu_devices(Services& services) {
  unsigned cores = 0;
  for (int d : services.devices().selected())
    if (const devices::Device& device = services.devices().at(d);
        device.is_pocl() && (device.type & CL_DEVICE_TYPE_CPU))
      cores += device.compute_units;
  return cores;
}

bool spare_core(Services& services) { return cores_left(usable_cores(), cores_of_pocl_cpu_devices(services)) > 0; }

bool rewrite_served(Services& services, int home) {
  const devices::Device& home_device = services.devices().at(home);
  if (!services.settings().compile_ahead || !starts_at_build(services) ||
      services.executor().policy().waits_for_preparation() || !compiles_in_this_process(home_device) ||
      pocl_kernel_cache::root().empty())
    return false;
  const std::string& setting = services.settings().compile_ahead_rewrite;
  if (setting != "auto") return setting == "true";
  // Of this machine: a remote PoCL device compiles on its server, for which no process compiles.
  for (int d : services.devices().selected())
    if (const devices::Device& device = services.devices().at(d);
        compiles_in_this_process(device) && !device.same_kind(home_device))
      return true;
  return false;
}

bool starts_at_build(Services& services) {
  return services.settings().compile_ahead_start == "build" || starts_at_context(services);
}

bool starts_at_context(Services& services) {
  const std::string& when = services.settings().compile_ahead_start;
  return when == "context" || (when == "auto" && spare_core(services));
}

int processes_per_target(Services& services, size_t targets, size_t running) {
  return variant_processes(usable_cores(), cores_of_pocl_cpu_devices(services), targets, running);
}

bool starts_once_it_pays(Services& services) {
  return services.settings().compile_ahead_start == "auto" && !spare_core(services);
}

size_t default_process_limit(unsigned cores, unsigned cores_of_devices) {
  constexpr size_t kAtMost = 4;
  return std::clamp<size_t>(cores_left(cores, cores_of_devices), 1, kAtMost);
}

int variant_processes(unsigned cores, unsigned cores_of_devices, size_t targets, size_t running) {
  return cores_left(cores, cores_of_devices) >= 2 * targets * (running + 1) ? 2 : 1;
}

}  // namespace coex::exec::compile_ahead
