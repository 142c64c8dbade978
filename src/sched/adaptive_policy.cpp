#include "sched/adaptive_policy.h"

#include <algorithm>
#include <cmath>

#include "sched/split_math.h"

namespace coex::sched {

AdaptivePolicy::AdaptivePolicy(const PolicyParams& params, std::shared_ptr<History> history,
                               const std::vector<DeviceProfile>& profiles)
    : PolicyBase("adaptive", params, std::move(history), profiles) {}

void AdaptivePolicy::on_begin(double) { split_done_ = false; }

uint64_t AdaptivePolicy::choose_size(DeviceState& device, double now) {
  if (split_done_) return 0;
  // The split needs a speed for every device: until each has finished a probe, a device that has run
  // its probes keeps probing (growing), as it cannot wait.
  const auto devices = live();
  const bool all_measured =
      std::all_of(devices.begin(), devices.end(), [](const DeviceState* d) { return d->completed > 0; });
  const int rounds = params().adaptive_probes;
  const bool one_done =
      std::any_of(devices.begin(), devices.end(), [&](const DeviceState* d) { return d->completed >= rounds; });
  if (!(all_measured && one_done)) {
    const double size = params().adaptive_probe_fraction * static_cast<double>(shape().total_groups) *
                        std::pow(params().adaptive_growth, device.completed);
    return std::max<uint64_t>(1, ceil_groups(size));
  }
  split_done_ = true;
  std::vector<FinishModel> models;
  for (const DeviceState* d : devices) {
    FinishModel m;
    if (d->completed > 0) {
      const double speed = measured_throughput(*d, 1);
      m.omega = 1.0 / std::max(speed, 1e-300);
      if (d->running)
        m.lambda = std::max(0.0, m.omega * static_cast<double>(d->running->groups()) - (now - d->running_start));
    }
    models.push_back(m);
  }
  const auto split = round_split(models, equal_finish_split(models, static_cast<double>(remaining())), remaining());
  for (size_t i = 0; i < devices.size(); ++i) reserve(devices[i]->index, split[i]);
  return 0;
}

}  // namespace coex::sched
