#include "sched/predict_policy.h"

#include <algorithm>
#include <cmath>

#include "sched/split_math.h"

namespace coex::sched {

PredictSplit predict_split(const std::vector<PredictModel>& models, const std::vector<double>& lambda, uint64_t work,
                           int max_steps, double elimination, double tolerance) {
  const size_t n = models.size();
  PredictSplit out;
  out.groups.assign(n, 0);
  out.eliminated.assign(n, false);
  std::vector<bool> active(n, false);
  std::vector<double> x(n, 0.0);
  auto lam = [&](size_t i) { return i < lambda.size() ? std::max(0.0, lambda[i]) : 0.0; };
  auto slope = [&](size_t i) { return models[i].compute.b + models[i].transfer_per_group; };
  double inv_sum = 0;
  for (size_t i = 0; i < n; ++i)
    if (models[i].valid() && slope(i) > 0) {
      active[i] = true;
      inv_sum += 1.0 / slope(i);
    }
  if (inv_sum <= 0 || work == 0) return out;
  const double total = static_cast<double>(work);
  for (size_t i = 0; i < n; ++i)
    if (active[i]) x[i] = total / slope(i) / inv_sum;  // start: in proportion to throughput

  for (int step = 1; step <= max_steps; ++step) {
    out.steps = step;
    // Newton step towards a common time: x_i += (T - T_i) / T_i'(x_i), with T chosen so sum x stays.
    double num = 0, den = 0;
    for (size_t i = 0; i < n; ++i)
      if (active[i]) {
        num += (lam(i) + models[i].time(x[i])) / slope(i);
        den += 1.0 / slope(i);
      }
    const double common = num / den;
    for (size_t i = 0; i < n; ++i)
      if (active[i]) x[i] = std::max(0.0, x[i] + (common - lam(i) - models[i].time(x[i])) / slope(i));
    double sum = 0, largest = 0;
    for (size_t i = 0; i < n; ++i)
      if (active[i]) sum += x[i], largest = std::max(largest, x[i]);
    // Elimination (Dollinger & Loechner): a share under `elimination` of the largest is not worth it.
    bool dropped = false;
    for (size_t i = 0; i < n; ++i)
      if (active[i] && x[i] < elimination * largest) {
        active[i] = false;
        out.eliminated[i] = true;
        sum -= x[i];
        x[i] = 0;
        dropped = true;
      }
    if (sum <= 0) break;
    for (size_t i = 0; i < n; ++i)
      if (active[i]) x[i] *= total / sum;
    double lo = 0, hi = 0;
    bool first = true;
    for (size_t i = 0; i < n; ++i)
      if (active[i]) {
        const double t = lam(i) + models[i].time(x[i]);
        lo = first ? t : std::min(lo, t);
        hi = first ? t : std::max(hi, t);
        first = false;
      }
    out.predicted_finish = hi;
    if (!dropped && hi > 0 && (hi - lo) / hi < tolerance) break;
  }
  std::vector<FinishModel> finish(n);
  std::vector<double> shares(n, 0.0);
  for (size_t i = 0; i < n; ++i)
    if (active[i]) {
      finish[i] = {slope(i), lam(i), models[i].compute.a};
      shares[i] = x[i];
    }
  out.groups = round_split(finish, shares, work);
  return out;
}

PredictModel predict_model(const std::vector<ChunkSample>& samples, const DeviceProfile& profile,
                           const LaunchShape& shape) {
  PredictModel m;
  double transfer = 0, groups = 0;
  for (const auto& s : samples) {
    transfer += s.transfer_seconds;
    groups += s.groups;
  }
  const bool separated = transfer > 0;
  std::vector<std::pair<double, double>> points;
  for (const auto& s : samples)
    points.emplace_back(s.groups, separated ? std::max(0.0, s.seconds - s.transfer_seconds) : s.seconds);
  m.compute = fit_affine(points);
  if (separated) {
    double modeled = 0;
    bool known = true;
    if (shape.bytes_in_per_group > 0) {
      known = known && profile.h2d_gbs > 0;
      if (profile.h2d_gbs > 0) modeled += shape.bytes_in_per_group / (profile.h2d_gbs * 1e9);
    }
    if (shape.bytes_out_per_group > 0) {
      known = known && profile.d2h_gbs > 0;
      if (profile.d2h_gbs > 0) modeled += shape.bytes_out_per_group / (profile.d2h_gbs * 1e9);
    }
    const bool has_bytes = shape.bytes_in_per_group > 0 || shape.bytes_out_per_group > 0;
    m.transfer_per_group = has_bytes && known ? modeled : (groups > 0 ? transfer / groups : 0);
  }
  return m;
}

PredictPolicy::PredictPolicy(const PolicyParams& params, std::shared_ptr<History> history,
                             const std::vector<DeviceProfile>& profiles)
    : PolicyBase("predict", params, std::move(history), profiles) {}

void PredictPolicy::on_begin(double now) {
  steps_ = 0;
  calibrating_ = false;
  for (const auto& s : states())
    if (history().samples_any_size(shape().kernel_key, s.index).empty()) calibrating_ = true;
  if (!calibrating_) split_rest(now);
}

uint64_t PredictPolicy::choose_size(DeviceState& device, double now) {
  if (!calibrating_) return 0;
  // Split once this device has run its three probes and every device has a finished probe to model;
  // until then it goes on probing with doubling sizes (it cannot wait).
  const auto devices = live();
  const bool all_measured =
      std::all_of(devices.begin(), devices.end(), [](const DeviceState* d) { return d->completed > 0; });
  const int rounds = 3;
  const bool one_done =
      std::any_of(devices.begin(), devices.end(), [&](const DeviceState* d) { return d->completed >= rounds; });
  if (all_measured && one_done) {
    split_rest(now);
    calibrating_ = false;
    return 0;
  }
  // Probes c, 2c, 4c on every device: 7c * N = predict_calibration_fraction of the launch.
  const double c = params().predict_calibration_fraction * static_cast<double>(shape().total_groups) /
                   (7.0 * static_cast<double>(std::max<size_t>(1, states().size())));
  return std::max<uint64_t>(1, ceil_groups(c * std::pow(2.0, device.completed)));
}

void PredictPolicy::split_rest(double now) {
  const auto devices = live();
  std::vector<PredictModel> models;
  std::vector<double> lambda;
  for (const DeviceState* d : devices) {
    auto samples = history().samples(shape().kernel_key, shape().global_size, d->index);
    if (samples.empty()) samples = history().samples_any_size(shape().kernel_key, d->index);
    // During calibration the History already holds this launch's probes (PolicyBase records them).
    const PredictModel m = predict_model(samples, profile(d->index), shape());
    models.push_back(m);
    double l = 0;
    if (d->running && m.valid())
      l = std::max(0.0, m.time(static_cast<double>(d->running->groups())) - (now - d->running_start));
    lambda.push_back(l);
  }
  const auto split = predict_split(models, lambda, remaining(), params().predict_max_steps, params().predict_eliminate,
                                   params().predict_tolerance);
  steps_ = split.steps;
  for (size_t i = 0; i < devices.size(); ++i) {
    if (split.groups[i] > 0)
      reserve(devices[i]->index, split.groups[i]);
    else if (split.eliminated[i])
      eliminate(devices[i]->index);
  }
}

}  // namespace coex::sched
