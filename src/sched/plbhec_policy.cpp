#include "sched/plbhec_policy.h"

#include <algorithm>
#include <cmath>

namespace coex::sched {

std::vector<uint64_t> plbhec_split(const std::vector<AffineModel>& models, const std::vector<double>& lambda,
                                   uint64_t work) {
  std::vector<FinishModel> finish;
  for (size_t i = 0; i < models.size(); ++i)
    finish.push_back({models[i].valid ? models[i].b : 0.0, i < lambda.size() ? lambda[i] : 0.0,
                      models[i].valid ? models[i].a : 0.0});
  return round_split(finish, equal_finish_split(finish, static_cast<double>(work)), work);
}

PlbhecPolicy::PlbhecPolicy(const PolicyParams& params, std::shared_ptr<History> history,
                           const std::vector<DeviceProfile>& profiles)
    : PolicyBase("plbhec", params, std::move(history), profiles) {}

AffineModel PlbhecPolicy::model_of(const DeviceState& device) {
  std::vector<std::pair<double, double>> points;
  if (profiling_) {
    for (const auto& t : device.done) points.emplace_back(static_cast<double>(t.chunk.groups()), t.seconds());
    return fit_affine(points);
  }
  const auto stored = models_.find(device.index);
  if (stored != models_.end()) return stored->second;
  for (const auto& s : history().samples(shape().kernel_key, shape().global_size, device.index))
    points.emplace_back(s.groups, s.seconds);
  return fit_affine(points);
}

void PlbhecPolicy::on_begin(double now) {
  History::PlbhecTrack track = history().plbhec_track(shape().kernel_key, shape().global_size);
  profiling_ = track.reprofile;
  if (profiling_) {
    track = {};
    history().set_plbhec_track(shape().kernel_key, shape().global_size, track);
  }
  models_ = track.models;
  for (const auto& s : states()) {
    if (models_.count(s.index)) continue;
    const auto samples = history().samples(shape().kernel_key, shape().global_size, s.index);
    double lo = 0, hi = 0;
    for (size_t i = 0; i < samples.size(); ++i) {
      lo = i ? std::min(lo, samples[i].groups) : samples[i].groups;
      hi = i ? std::max(hi, samples[i].groups) : samples[i].groups;
    }
    if (samples.size() < 2 || hi <= lo) profiling_ = true;  // no curve to reuse for this device
  }
  if (!profiling_) split_rest(now);
}

uint64_t PlbhecPolicy::choose_size(DeviceState& device, double now) {
  if (!profiling_) return 0;
  // The model split needs a curve for every device: until each has a finished block, a device that has
  // run its rounds goes on to the next round (it cannot wait).
  const auto devices = live();
  const bool all_measured =
      std::all_of(devices.begin(), devices.end(), [](const DeviceState* d) { return d->completed > 0; });
  const int rounds = params().plbhec_profile_rounds;
  const bool one_done =
      std::any_of(devices.begin(), devices.end(), [&](const DeviceState* d) { return d->completed >= rounds; });
  if (all_measured && one_done) {
    split_rest(now);
    return 0;
  }
  // Speeds measured in this launch once every device has one (else history, else device info).
  const auto speeds = current_speeds(devices, 0);
  double fastest = 0, mine = 0;
  for (size_t i = 0; i < devices.size(); ++i) {
    fastest = std::max(fastest, speeds[i]);
    if (devices[i] == &device) mine = speeds[i];
  }
  const double relative = fastest > 0 ? mine / fastest : 1.0;
  const double b0 = params().plbhec_initial_fraction * static_cast<double>(shape().total_groups);
  const double block = std::min(b0 * std::pow(2.0, device.completed) * relative, 9.0e18);
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(block)));
}

void PlbhecPolicy::split_rest(double now) {
  const auto devices = live();
  std::vector<AffineModel> models;
  std::vector<double> lambda;
  for (const DeviceState* d : devices) {
    AffineModel m = model_of(*d);
    models.push_back(m);
    double l = 0;
    if (d->running && m.valid)
      l = std::max(0.0, m.time(static_cast<double>(d->running->groups())) - (now - d->running_start));
    lambda.push_back(l);
  }
  const auto split = plbhec_split(models, lambda, remaining());
  for (size_t i = 0; i < devices.size(); ++i) reserve(devices[i]->index, split[i]);
  if (profiling_) {
    models_.clear();
    for (size_t i = 0; i < devices.size(); ++i)
      if (models[i].valid) models_[devices[i]->index] = models[i];
    History::PlbhecTrack track = history().plbhec_track(shape().kernel_key, shape().global_size);
    track.models = models_;
    history().set_plbhec_track(shape().kernel_key, shape().global_size, track);
  }
  profiling_ = false;
}

void PlbhecPolicy::on_end(double) {
  double first = 0, last = 0;
  bool any = false;
  for (const auto& s : states()) {
    if (s.done.empty()) continue;
    double end = 0;
    for (const auto& t : s.done) end = std::max(end, t.end);
    first = any ? std::min(first, end) : end;
    last = any ? std::max(last, end) : end;
    any = true;
  }
  if (any && last > 0 && (last - first) / last > params().plbhec_drift) {
    History::PlbhecTrack track = history().plbhec_track(shape().kernel_key, shape().global_size);
    track.reprofile = true;
    history().set_plbhec_track(shape().kernel_key, shape().global_size, track);
  }
}

}  // namespace coex::sched
