#include "sched/boyer_policy.h"

#include <algorithm>
#include <cmath>

#include "sched/split_math.h"

namespace coex::sched {

double boyer_lambda(const BoyerDevice& device) {
  return std::max(0.0, device.omega * static_cast<double>(device.running_groups) - device.running_elapsed);
}

std::vector<uint64_t> boyer_final_split(const std::vector<BoyerDevice>& devices, uint64_t remaining,
                                        bool count_running, std::vector<double>* lambdas) {
  std::vector<FinishModel> models;
  for (const auto& d : devices) models.push_back({d.omega, count_running ? boyer_lambda(d) : 0.0, 0.0});
  if (lambdas) {
    lambdas->clear();
    for (const auto& m : models) lambdas->push_back(m.lambda);
  }
  const auto shares = equal_finish_split(models, static_cast<double>(remaining));
  return round_split(models, shares, remaining);
}

BoyerPolicy::BoyerPolicy(const PolicyParams& params, std::shared_ptr<History> history,
                         const std::vector<DeviceProfile>& profiles)
    : PolicyBase("boyer", params, std::move(history), profiles) {}

void BoyerPolicy::on_begin(double) { final_phase_ = false; }

uint64_t BoyerPolicy::choose_size(DeviceState& device, double now) {
  if (final_phase_) return 0;
  const auto devices = live();
  const bool profiled = std::all_of(devices.begin(), devices.end(),
                                    [&](const DeviceState* d) { return d->completed >= params().boyer_gamma; });
  if (profiled) {
    split_rest(now);
    return 0;
  }
  const double total = static_cast<double>(shape().total_groups);
  const double size = device.last_size == 0 ? params().boyer_beta * total
                                            : params().boyer_delta * static_cast<double>(device.last_size);
  return std::max<uint64_t>(1, ceil_groups(size));
}

void BoyerPolicy::split_rest(double now) {
  final_phase_ = true;
  const auto devices = live();
  std::vector<BoyerDevice> inputs;
  for (const DeviceState* d : devices) {
    BoyerDevice b;
    b.omega = d->busy_seconds / static_cast<double>(std::max<uint64_t>(1, d->completed_groups));
    if (b.omega <= 0) b.omega = 1e-12;  // measured at 0 s: the fastest there is, not a division by 0
    if (d->running) {
      b.running_groups = d->running->groups();
      b.running_elapsed = now - d->running_start;
    }
    inputs.push_back(b);
  }
  const auto split = boyer_final_split(inputs, remaining(), params().boyer_count_running);
  for (size_t i = 0; i < devices.size(); ++i) reserve(devices[i]->index, split[i]);
}

std::optional<Chunk> BoyerPolicy::reclaim(DeviceState& asker, double now) {
  if (remaining() > 0) return std::nullopt;
  DeviceState* victim = nullptr;
  for (auto& s : states())
    if (&s != &asker && s.running && s.completed == 0 && !s.finished &&
        (!victim || s.running_start < victim->running_start))
      victim = &s;
  if (!victim) return std::nullopt;
  const auto chunk = abandon_running(*victim);
  return hand_out(asker, *chunk, now);
}

}  // namespace coex::sched
