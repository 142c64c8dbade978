#include "sched/sigmoid_policy.h"

#include <algorithm>
#include <cmath>

#include "sched/split_math.h"

namespace coex::sched {

double sigmoid_package(double total_groups, size_t devices, double speed, double speed_sum, double k,
                       double remaining_groups) {
  if (devices == 0 || speed_sum <= 0 || total_groups <= 0) return 0;
  return total_groups / (2.0 * static_cast<double>(devices)) * (speed / speed_sum) *
         std::tanh(3.0 * k * remaining_groups / total_groups);
}

SigmoidPolicy::SigmoidPolicy(const PolicyParams& params, std::shared_ptr<History> history,
                             const std::vector<DeviceProfile>& profiles)
    : PolicyBase("sigmoid", params, std::move(history), profiles) {}

void SigmoidPolicy::on_begin(double) {
  const auto regular = history().regular(shape().kernel_key);
  irregular_ = regular.has_value() && !*regular;
  judged_ = false;
}

double SigmoidPolicy::window_speed(const DeviceState& device) const {
  const size_t window = static_cast<size_t>(params().sigmoid_window);
  const size_t n = device.done.size();
  double sum = 0;
  size_t count = 0;
  for (size_t i = n > window ? n - window : 0; i < n; ++i) {
    const auto& t = device.done[i];
    sum += static_cast<double>(t.chunk.groups()) / std::max(t.seconds(), 1e-9);
    ++count;
  }
  return count ? sum / static_cast<double>(count) : 0;
}

uint64_t SigmoidPolicy::choose_size(DeviceState& device, double now) {
  const auto devices = live();
  std::vector<double> speeds;
  SpeedSource source = SpeedSource::kMeasured;
  const bool all_measured =
      std::all_of(devices.begin(), devices.end(), [](const DeviceState* d) { return d->completed > 0; });
  if (all_measured) {
    for (const DeviceState* d : devices) speeds.push_back(window_speed(*d));
  } else {
    speeds = current_speeds(devices, 0, &source);
  }
  double sum = 0, mine = 0;
  for (size_t i = 0; i < devices.size(); ++i) {
    sum += speeds[i];
    if (devices[i] == &device) mine = speeds[i];
  }
  const double total = static_cast<double>(shape().total_groups);
  double size = sigmoid_package(total, devices.size(), mine, sum, current_k(), static_cast<double>(remaining()));
  double floor = static_cast<double>(occupancy_floor(profile(device.index), shape().groups_per_slice));
  if (source != SpeedSource::kSpec) floor = std::max(floor, params().sigmoid_floor_p * now * mine);
  size = std::max(size, floor);
  return std::max<uint64_t>(1, ceil_groups(size));
}

void SigmoidPolicy::on_chunk_done(DeviceState& device, const ChunkTiming&) {
  const size_t window = static_cast<size_t>(params().sigmoid_window);
  if (device.done.size() < window) return;
  judged_ = true;
  std::vector<double> speeds;
  for (size_t i = device.done.size() - window; i < device.done.size(); ++i)
    speeds.push_back(static_cast<double>(device.done[i].chunk.groups()) / std::max(device.done[i].seconds(), 1e-9));
  if (coefficient_of_variation(speeds) > params().sigmoid_cv_threshold) irregular_ = true;
}

void SigmoidPolicy::on_end(double) {
  if (judged_ || irregular_) history().set_regular(shape().kernel_key, !irregular_);
}

}  // namespace coex::sched
