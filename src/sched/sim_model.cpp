#include "sched/sim_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace coex::sched {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Escape time of one row of the Mandelbrot set over [-2, 0.6] x [-1.2, 1.2]: rows through the set are
// expensive, rows outside cheap, with sharp transitions: the seeds' irregular kernel.
double mandelbrot_row(double y, int width, int max_iterations) {
  double iterations = 0;
  for (int px = 0; px < width; ++px) {
    const double cx = -2.0 + 2.6 * (px + 0.5) / width;
    double zx = 0, zy = 0;
    int i = 0;
    while (i < max_iterations && zx * zx + zy * zy <= 4.0) {
      const double t = zx * zx - zy * zy + cx;
      zy = 2 * zx * zy + y;
      zx = t;
      ++i;
    }
    iterations += i + 1;
  }
  return iterations;
}

}  // namespace

std::vector<double> raw_costs(const CostProfile& profile, uint64_t groups, uint64_t seed) {
  std::vector<double> c(groups, 1.0);
  const double n = static_cast<double>(groups);
  if (profile.kind == "linear") {
    for (uint64_t g = 0; g < groups; ++g) c[g] = profile.from + (profile.to - profile.from) * (g + 0.5) / n;
  } else if (profile.kind == "random") {
    std::mt19937_64 rng(seed * 7919 + 17);
    std::uniform_real_distribution<double> u(1 - profile.amplitude, 1 + profile.amplitude);
    for (auto& v : c) v = u(rng);
  } else if (profile.kind == "steps") {
    const double pieces = static_cast<double>(profile.values.size());
    for (uint64_t g = 0; g < groups; ++g)
      c[g] = profile.values[std::min(profile.values.size() - 1, static_cast<size_t>((g + 0.5) / n * pieces))];
  } else if (profile.kind == "mandelbrot") {
    // One image row per group, computed on at most 1024 rows (a group maps to its row's cost).
    const uint64_t rows = std::min<uint64_t>(groups, 1024);
    std::vector<double> row_cost(rows);
    for (uint64_t r = 0; r < rows; ++r)
      row_cost[r] = mandelbrot_row(-1.2 + 2.4 * (r + 0.5) / rows, 64, profile.max_iterations);
    for (uint64_t g = 0; g < groups; ++g) c[g] = row_cost[g * rows / groups];
  }
  return c;
}

CostModel::CostModel(const SimKernel& kernel, uint64_t seed) {
  const auto raw = raw_costs(kernel.cost, kernel.groups, seed);
  double sum = 0;
  for (double v : raw) sum += v;
  const double scale = sum > 0 ? static_cast<double>(raw.size()) / sum : 1.0;
  prefix_.assign(raw.size() + 1, 0.0);
  for (size_t i = 0; i < raw.size(); ++i) prefix_[i + 1] = prefix_[i] + raw[i] * scale;
}

void SpeedTimeline::set(double at, double factor) {
  auto it = std::upper_bound(points_.begin(), points_.end(), at,
                             [](double t, const std::pair<double, double>& p) { return t < p.first; });
  points_.insert(it, {at, factor});
}

double SpeedTimeline::factor_at(double t) const {
  double f = 1;
  for (const auto& [at, factor] : points_) {
    if (at > t) break;
    f = factor;
  }
  return f;
}

double SpeedTimeline::work_between(double t0, double t1, double speed) const {
  if (t1 <= t0) return 0;
  double work = 0, t = t0, f = factor_at(t0);
  for (const auto& [at, factor] : points_) {
    if (at <= t0) continue;
    if (at >= t1) break;
    work += (at - t) * f * speed;
    t = at;
    f = factor;
  }
  return work + (t1 - t) * f * speed;
}

double SpeedTimeline::finish_time(double start, double work, double speed) const {
  if (work <= 0) return start;
  double t = start, f = factor_at(start), left = work;
  for (const auto& [at, factor] : points_) {
    if (at <= start) continue;
    const double rate = f * speed;
    if (rate > 0 && t + left / rate <= at) return t + left / rate;
    left -= rate * (at - t);
    t = at;
    f = factor;
  }
  const double rate = f * speed;
  return rate > 0 ? t + left / rate : kInf;
}

std::vector<double> SpeedTimeline::breakpoints_after(double t) const {
  std::vector<double> out;
  for (const auto& p : points_)
    if (p.first > t) out.push_back(p.first);
  return out;
}

double ideal_makespan(const std::vector<SpeedTimeline>& timelines, const std::vector<double>& speeds, double t0,
                      double total_work) {
  std::vector<double> cuts;
  for (const auto& tl : timelines)
    for (double b : tl.breakpoints_after(t0)) cuts.push_back(b);
  std::sort(cuts.begin(), cuts.end());
  double t = t0, left = total_work;
  auto rate_at = [&](double at) {
    double r = 0;
    for (size_t i = 0; i < timelines.size(); ++i) r += timelines[i].factor_at(at) * speeds[i];
    return r;
  };
  for (double cut : cuts) {
    if (cut <= t) continue;
    const double r = rate_at(t);
    if (r > 0 && t + left / r <= cut) return t + left / r - t0;
    left -= r * (cut - t);
    t = cut;
  }
  const double r = rate_at(t);
  return r > 0 ? t + left / r - t0 : kInf;
}

}  // namespace coex::sched
