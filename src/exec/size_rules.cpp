#include "exec/size_rules.h"

#include <algorithm>

#include "config/settings.h"
#include "devices/device_set.h"
#include "devices/host_memory.h"
#include "exec/executor.h"
#include "sched/split_math.h"

namespace coex::exec {

uint64_t min_split_items(Services& services, int home) {
  const uint64_t configured = uint64_t(services.settings().min_split_work_items);
  const sched::DeviceProfile* profile = sched::find_profile(services.devices().profiles(), home);
  return profile ? sched::min_split_items_on(*profile, configured) : configured;
}

std::optional<double> first_split_moves(
    Services& services, int home, std::vector<int> sharing, uint64_t bytes,
    const std::function<std::optional<double>(const std::vector<int>&)>& split_seconds, bool into_fresh_memory) {
  if (services.executor().policy().waits_for_preparation()) return std::nullopt;
  if (std::find(sharing.begin(), sharing.end(), home) == sharing.end()) sharing.push_back(home);
  const auto& profiles = services.devices().profiles();
  const double nominal = sched::others_transfer_seconds(profiles, home, sharing, bytes);
  const double fresh = !into_fresh_memory
                           ? 0
                           : devices::fresh_memory_gbs_where_it_matters(services.settings().auto_fresh_memory_gbs,
                                                                        nominal, services.settings().min_split_seconds);
  const double moves = fresh > 0 ? sched::others_transfer_seconds(profiles, home, sharing, bytes, fresh) : nominal;
  if (moves < services.settings().min_split_seconds || split_seconds(sharing)) return std::nullopt;
  return moves;
}

}  // namespace coex::exec
