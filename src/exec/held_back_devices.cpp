#include "exec/held_back_devices.h"

#include <algorithm>

#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/executor.h"
#include "sched/split_math.h"
#include "sched/take_over.h"

namespace coex::exec {

std::vector<int> devices_held_back(Services& services, int home, const std::vector<int>& devices,
                                   std::optional<double> home_seconds,
                                   const std::function<std::optional<double>(const std::vector<int>&)>& split_seconds) {
  std::vector<int> held;
  if (services.executor().policy().waits_for_preparation()) return held;
  const std::vector<sched::DeviceProfile>& profiles = services.devices().profiles();
  const double home_weight = sched::spec_weight_of(profiles, home);
  const double factor = sched::TakeOverRules{}.slow_by_specification;
  double all = 0;
  for (int device : devices) all += sched::spec_weight_of(profiles, device);
  auto slow = [&](int device) {
    return device != home && sched::spec_weight_of(profiles, device) * factor < home_weight;
  };
  if (!home_seconds && split_seconds && home_weight > 0) {
    std::vector<int> others;  // the devices a split goes to while the slow ones sit out
    double weight = 0;
    for (int device : devices)
      if (!slow(device)) {
        others.push_back(device);
        weight += sched::spec_weight_of(profiles, device);
      }
    if (others.size() > 1)
      if (auto seconds = split_seconds(others)) home_seconds = *seconds * weight / home_weight;
  }
  for (int device : devices) {
    if (!slow(device)) continue;
    const double weight = sched::spec_weight_of(profiles, device);
    if (home_seconds && all > 0 && *home_seconds * weight / all >= services.settings().min_split_seconds) continue;
    held.push_back(device);
  }
  return held;
}

std::vector<int> devices_without(std::vector<int> devices, const std::vector<int>& held_back) {
  devices.erase(
      std::remove_if(devices.begin(), devices.end(),
                     [&](int d) { return std::find(held_back.begin(), held_back.end(), d) != held_back.end(); }),
      devices.end());
  return devices;
}

}  // namespace coex::exec
