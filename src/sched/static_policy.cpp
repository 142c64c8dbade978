#include "sched/static_policy.h"

#include "sched/split_math.h"

namespace coex::sched {

std::vector<double> static_weights(const PolicyParams& params, const std::vector<DeviceProfile>& devices) {
  std::vector<double> weights;
  for (const auto& d : devices) {
    if (params.static_mode == "ratio") {
      const size_t i = static_cast<size_t>(d.index);
      weights.push_back(d.index >= 0 && i < params.weights.size() ? params.weights[i] : 0.0);
    } else if (params.static_mode == "spec") {
      weights.push_back(spec_weight(d, params.memory_bound));
    } else {
      weights.push_back(1.0);
    }
  }
  // A ratio list that gives nobody anything (empty, all zeros) would leave the launch undone.
  double sum = 0;
  for (double w : weights) sum += w;
  if (sum <= 0) weights.assign(weights.size(), 1.0);
  return weights;
}

StaticPolicy::StaticPolicy(const PolicyParams& params, std::shared_ptr<History> history,
                           const std::vector<DeviceProfile>& profiles)
    : PolicyBase("static", params, std::move(history), profiles) {}

void StaticPolicy::on_begin(double) {
  std::vector<DeviceProfile> devices;
  for (const auto& s : states()) devices.push_back(profile(s.index));
  const auto split = proportional_split(static_weights(params(), devices), shape().total_groups);
  for (size_t i = 0; i < split.size(); ++i) {
    if (split[i] == 0)
      eliminate(states()[i].index);
    else
      reserve(states()[i].index, split[i]);
  }
}

uint64_t StaticPolicy::choose_size(DeviceState&, double) { return 0; }

}  // namespace coex::sched
