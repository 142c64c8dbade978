#include "sched/split_math.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

namespace coex::sched {

namespace {

// A (groups, seconds) sample the chunk-time fits take: some groups, a time, both finite.
bool usable(double groups, double seconds) {
  return groups > 0 && seconds >= 0 && std::isfinite(groups) && std::isfinite(seconds);
}

}  // namespace

std::vector<double> equal_finish_split(const std::vector<FinishModel>& devices, double work, double* finish) {
  std::vector<double> shares(devices.size(), 0.0);
  std::vector<size_t> order;
  for (size_t i = 0; i < devices.size(); ++i)
    if (devices[i].omega > 0 && std::isfinite(devices[i].omega)) order.push_back(i);
  auto threshold = [&](size_t i) { return std::max(0.0, devices[i].lambda) + std::max(0.0, devices[i].overhead); };
  std::stable_sort(order.begin(), order.end(), [&](size_t l, size_t r) { return threshold(l) < threshold(r); });

  // The devices that get work are those whose threshold lies below the common finish T: a prefix of
  // `order`. T over the first k devices solves sum_j (T - thr_j) / omega_j = work.
  size_t active = 0;
  double inv_sum = 0, weighted = 0, t = order.empty() ? 0 : threshold(order[0]);
  for (size_t k = 0; k < order.size(); ++k) {
    const FinishModel& d = devices[order[k]];
    const double inv = inv_sum + 1.0 / d.omega;
    const double w = weighted + threshold(order[k]) / d.omega;
    const double tk = (work + w) / inv;
    if (!(tk > threshold(order[k]))) break;
    inv_sum = inv;
    weighted = w;
    t = tk;
    active = k + 1;
  }
  for (size_t k = 0; k < active; ++k) {
    const size_t i = order[k];
    shares[i] = std::max(0.0, (t - threshold(i)) / devices[i].omega);
  }
  if (finish) *finish = t;
  return shares;
}

std::vector<uint64_t> round_split(const std::vector<FinishModel>& devices, const std::vector<double>& shares,
                                  uint64_t total) {
  std::vector<uint64_t> out(shares.size(), 0);
  uint64_t assigned = 0;
  for (size_t i = 0; i < shares.size(); ++i) {
    out[i] = shares[i] > 0 ? static_cast<uint64_t>(std::floor(shares[i])) : 0;
    assigned += out[i];
  }
  auto finish_with = [&](size_t i, uint64_t groups) {
    const FinishModel& d = devices[i];
    return std::max(0.0, d.lambda) + std::max(0.0, d.overhead) + d.omega * static_cast<double>(groups);
  };
  // Floating point may leave the floors one group over the total: take back from the latest finisher.
  while (assigned > total) {
    size_t worst = shares.size();
    for (size_t i = 0; i < shares.size(); ++i)
      if (out[i] > 0 && (worst == shares.size() || finish_with(i, out[i]) > finish_with(worst, out[worst])))
        worst = i;
    --out[worst];
    --assigned;
  }
  bool any_positive = false;
  for (double s : shares) any_positive = any_positive || s > 0;
  while (assigned < total) {
    size_t best = shares.size();
    for (size_t i = 0; i < shares.size(); ++i) {
      const bool eligible = any_positive ? shares[i] > 0 : (devices[i].omega > 0 && std::isfinite(devices[i].omega));
      if (eligible && (best == shares.size() || finish_with(i, out[i] + 1) < finish_with(best, out[best] + 1)))
        best = i;
    }
    if (best == shares.size()) best = 0;  // no usable model at all: keep the sum right regardless
    if (shares.empty()) break;
    ++out[best];
    ++assigned;
  }
  return out;
}

std::vector<uint64_t> proportional_split(const std::vector<double>& weights, uint64_t total) {
  std::vector<uint64_t> out(weights.size(), 0);
  double sum = 0;
  for (double w : weights) sum += std::max(0.0, w);
  if (sum <= 0 || total == 0) return out;
  std::vector<double> remainder(weights.size(), 0.0);
  uint64_t assigned = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    const double exact = std::max(0.0, weights[i]) / sum * static_cast<double>(total);
    out[i] = std::min<uint64_t>(total, static_cast<uint64_t>(std::floor(exact)));
    remainder[i] = exact - static_cast<double>(out[i]);
    assigned += out[i];
  }
  while (assigned > total) {  // only from rounding noise
    auto it = std::max_element(out.begin(), out.end());
    --*it;
    --assigned;
  }
  std::vector<size_t> order(weights.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t l, size_t r) { return remainder[l] > remainder[r]; });
  for (size_t k = 0; assigned < total; k = (k + 1) % order.size()) {
    if (weights[order[k]] <= 0) continue;
    ++out[order[k]];
    ++assigned;
  }
  return out;
}

double lower_median(std::vector<double> values) {
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

AffineModel fit_affine(const std::vector<std::pair<double, double>>& samples) {
  AffineModel m;
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  double min_x = 0, max_x = 0;
  for (const auto& [x, y] : samples) {
    if (!usable(x, y)) continue;
    if (n == 0) min_x = max_x = x;
    min_x = std::min(min_x, x);
    max_x = std::max(max_x, x);
    n += 1;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  if (n == 0 || sx <= 0) return m;
  const double ratio = sy / sx;  // through-origin fallback: the mean time per group
  if (n >= 2 && max_x > min_x * (1 + 1e-9)) {
    const double denom = n * sxx - sx * sx;
    const double b = (n * sxy - sx * sy) / denom;
    const double a = (sy - b * sx) / n;
    if (b > 0 && a >= 0) {
      m.a = a;
      m.b = b;
    } else if (b > 0) {
      m.a = 0;
      m.b = sxy / sxx;  // least squares through the origin
    } else {
      m.a = 0;
      m.b = ratio;
    }
  } else {
    m.a = 0;
    m.b = ratio;
  }
  m.valid = m.b > 0;
  return m;
}

double overhead_beyond_noise(const std::vector<std::pair<double, double>>& samples) {
  std::vector<std::pair<double, double>> kept;
  for (const auto& [x, y] : samples)
    if (usable(x, y)) kept.emplace_back(x, y);
  const double n = static_cast<double>(kept.size());
  double sx = 0, sy = 0;
  for (const auto& [x, y] : kept) {
    sx += x;
    sy += y;
  }
  double sxx = 0, sxy = 0;  // about the means
  for (const auto& [x, y] : kept) {
    sxx += (x - sx / n) * (x - sx / n);
    sxy += (x - sx / n) * (y - sy / n);
  }
  // Sizes all alike (or nearly: the standard error then dwarfs any intercept) say nothing of a
  // per-chunk overhead.
  if (kept.size() < 3 || !(sxx > 0)) return 0;
  const double b = sxy / sxx;
  if (!(b > 0)) return 0;
  const double a = sy / n - b * sx / n;
  double residuals = 0;
  for (const auto& [x, y] : kept) residuals += (y - a - b * x) * (y - a - b * x);
  const double variance = residuals / (n - 2);
  const double standard_error = std::sqrt(variance * (1 / n + (sx / n) * (sx / n) / sxx));
  return std::max(0.0, a - 2 * standard_error);
}

AffineModel fit_affine_beyond_noise(const std::vector<std::pair<double, double>>& samples) {
  AffineModel m = fit_affine(samples);
  const double a = overhead_beyond_noise(samples);
  if (!m.valid || a >= m.a) return m;
  double sxx = 0, sxy = 0;
  for (const auto& [x, y] : samples)
    if (usable(x, y)) {
      sxx += x * x;
      sxy += x * (y - a);
    }
  if (!(sxy > 0)) return m;
  m.a = a;
  m.b = sxy / sxx;
  return m;
}

uint64_t occupancy_floor(const DeviceProfile& profile, uint64_t groups_per_slice) {
  const uint64_t cus = std::max(1u, profile.compute_units);
  const uint64_t groups = profile.is_gpu ? cus * std::max(1u, profile.groups_per_cu_for_occupancy) : cus;
  const uint64_t per_slice = std::max<uint64_t>(1, groups_per_slice);
  return std::max<uint64_t>(1, (groups + per_slice - 1) / per_slice);
}

uint64_t whole_rounds(uint64_t slices, const DeviceProfile& profile, uint64_t groups_per_slice) {
  if (profile.is_gpu || profile.compute_units <= 1 || slices == 0) return slices;
  const uint64_t units = profile.compute_units;
  const uint64_t per_round = units / std::gcd(units, std::max<uint64_t>(1, groups_per_slice));  // slices
  if (per_round <= 1 || slices < per_round) return slices;                                      // one round anyway
  uint64_t rounds = slices / per_round;
  if (slices % per_round >= (per_round + 1) / 2 && rounds < UINT64_MAX / per_round) ++rounds;
  return rounds * per_round;
}

uint64_t min_split_items_on(const DeviceProfile& home, uint64_t min_split_work_items) {
  if (!home.is_gpu) return min_split_work_items;
  const double lanes = std::max(1u, home.compute_units) * kGpuLanesPerCpuCore;
  const double items = static_cast<double>(min_split_work_items) * lanes;
  return items >= 9.0e18 ? uint64_t{9000000000000000000u} : static_cast<uint64_t>(items);
}

double others_transfer_seconds(const std::vector<DeviceProfile>& profiles, int home, const std::vector<int>& devices,
                               uint64_t bytes, double fresh_memory_gbs) {
  double all = 0;
  for (int device : devices) all += spec_weight_of(profiles, device);
  if (!(all > 0)) return 0;
  double seconds = 0;
  double others = 0;  // the others' part of `all`
  for (int device : devices) {
    if (device == home) continue;
    const DeviceProfile* profile = find_profile(profiles, device);
    double gbs = profile && profile->h2d_gbs > 0 ? profile->h2d_gbs : kNominalTransferGBs;
    if (profile && profile->is_cpu && !profile->remote && fresh_memory_gbs > 0) gbs = std::min(gbs, fresh_memory_gbs);
    const double weight = spec_weight_of(profiles, device);
    others += weight;
    seconds = std::max(seconds, static_cast<double>(bytes) * weight / all / (gbs * 1e9));
  }
  // Into new memory, the devices' uploads wait for the host copy's first fill: all the others' bytes,
  // written by one thread into pages it never touched (docs/design.md, "Size by time").
  if (fresh_memory_gbs > 0) seconds += static_cast<double>(bytes) * others / all / (fresh_memory_gbs * 1e9);
  return seconds;
}

double spec_weight(const DeviceProfile& profile, bool memory_bound) {
  const double share = profile.remote ? kRemoteSpecShare : 1.0;
  if (memory_bound && profile.mem_bandwidth_gbs > 0) return profile.mem_bandwidth_gbs * share;
  const double clock = profile.clock_mhz > 0 ? profile.clock_mhz : 1000.0;
  return std::max(1u, profile.compute_units) * clock * (profile.is_gpu ? kGpuLanesPerCpuCore : 1.0) * share;
}

double spec_weight_of(const std::vector<DeviceProfile>& profiles, int device) {
  const DeviceProfile* profile = find_profile(profiles, device);
  return profile ? spec_weight(*profile, false) : 0.0;
}

const DeviceProfile* find_profile(const std::vector<DeviceProfile>& profiles, int device) {
  for (const auto& p : profiles)
    if (p.index == device) return &p;
  return nullptr;
}

uint64_t ceil_groups(double groups) {
  if (!(groups > 0)) return 0;
  if (groups >= 9.0e18) return uint64_t{9000000000000000000u};  // beyond any launch; keeps the cast defined
  return static_cast<uint64_t>(std::ceil(groups * (1 - 1e-12) - 1e-9));
}

double coefficient_of_variation(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  if (mean == 0) return 0;
  double var = 0;
  for (double v : values) var += (v - mean) * (v - mean);
  var /= static_cast<double>(values.size());
  return std::sqrt(var) / std::fabs(mean);
}

}  // namespace coex::sched
