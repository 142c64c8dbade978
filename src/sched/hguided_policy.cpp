#include "sched/hguided_policy.h"

#include <algorithm>
#include <cmath>

#include "sched/split_math.h"

namespace coex::sched {

uint64_t hguided_chunk(uint64_t remaining, double power, double power_sum, double k, uint64_t min_chunk) {
  double guided = 0;
  if (power_sum > 0 && k > 0)
    guided =
        std::min(static_cast<double>(remaining), std::floor(static_cast<double>(remaining) * power / (k * power_sum)));
  return std::min<uint64_t>(remaining,
                            std::max<uint64_t>(std::max<uint64_t>(1, min_chunk), static_cast<uint64_t>(guided)));
}

HguidedPolicy::HguidedPolicy(const PolicyParams& params, std::shared_ptr<History> history,
                             const std::vector<DeviceProfile>& profiles)
    : PolicyBase("hguided", params, std::move(history), profiles) {}

uint64_t HguidedPolicy::choose_size(DeviceState& device, double) {
  const auto devices = live();
  const auto speeds = current_speeds(devices, 0);
  double sum = 0, mine = 0;
  for (size_t i = 0; i < devices.size(); ++i) {
    sum += speeds[i];
    if (devices[i] == &device) mine = speeds[i];
  }
  const uint64_t min_chunk = params().min_chunk_groups > 0
                                 ? params().min_chunk_groups
                                 : occupancy_floor(profile(device.index), shape().groups_per_slice);
  return hguided_chunk(remaining(), mine, sum, params().hguided_k, min_chunk);
}

}  // namespace coex::sched
