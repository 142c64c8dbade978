#include "sched/range_variation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "sched/split_math.h"

namespace coex::sched {

std::optional<double> von_neumann_ratio(const std::vector<double>& values) {
  if (values.size() < 2) return std::nullopt;
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double spread = 0, successive = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    spread += (values[i] - mean) * (values[i] - mean);
    if (i > 0) successive += (values[i] - values[i - 1]) * (values[i] - values[i - 1]);
  }
  // Values that do not differ (beyond rounding): of the paces' logarithms, whose mean is about 0, a floor
  // relative to the mean alone would let rounding noise make a ratio.
  if (spread <= 1e-12 * std::max(1.0, mean * mean) * static_cast<double>(values.size())) return std::nullopt;
  return successive / spread;
}

namespace {

// A device that ran this many chunks is measured against its own mean: devices of one kind may still
// differ in speed (one shares its cores with more of the others' threads).
constexpr size_t kChunksForOwnPace = 4;

}  // namespace

int device_kind(const std::vector<DeviceProfile>& profiles, int device) {
  auto same_kind = [](const DeviceProfile& a, const DeviceProfile& b) {
    return a.name == b.name && a.is_gpu == b.is_gpu && a.is_cpu == b.is_cpu && a.compute_units == b.compute_units &&
           a.clock_mhz == b.clock_mhz && a.mem_bandwidth_gbs == b.mem_bandwidth_gbs &&
           a.groups_per_cu_for_occupancy == b.groups_per_cu_for_occupancy && a.remote == b.remote;
  };
  const DeviceProfile* mine = find_profile(profiles, device);
  if (!mine) return -1 - device;  // apart from every listed kind and every other unlisted device
  for (const auto& p : profiles)
    if (same_kind(p, *mine)) return p.index;  // the kind's first device names it
  return device;
}

std::vector<int> device_kinds(const std::vector<DeviceProfile>& profiles) {
  std::vector<int> kinds;
  for (const auto& p : profiles) {
    if (p.index < 0) continue;
    while (kinds.size() <= size_t(p.index)) kinds.push_back(-1 - int(kinds.size()));
    kinds[size_t(p.index)] = device_kind(profiles, p.index);
  }
  return kinds;
}

int kind_of(const std::vector<int>& kinds, int device) {
  return device >= 0 && size_t(device) < kinds.size() ? kinds[size_t(device)] : -1 - device;
}

std::vector<double> range_ordered_residuals(const std::vector<ChunkTiming>& chunks,
                                            const std::vector<DeviceProfile>& profiles) {
  struct Pace {
    double seconds = 0, groups = 0;
    size_t chunks = 0;
    void add(const ChunkTiming& c) {
      seconds += c.seconds();
      groups += static_cast<double>(c.chunk.groups());
      ++chunks;
    }
  };
  const std::vector<int> kind = device_kinds(profiles);
  std::map<int, Pace> devices, kinds;
  for (const auto& c : chunks) {
    if (c.chunk.groups() == 0 || c.seconds() <= 0) continue;
    devices[c.chunk.device].add(c);
    kinds[kind_of(kind, c.chunk.device)].add(c);
  }
  std::vector<std::pair<uint64_t, double>> ordered;  // (begin, residual)
  for (const auto& c : chunks) {
    if (c.chunk.groups() == 0 || c.seconds() <= 0) continue;
    const Pace& own = devices[c.chunk.device];
    const Pace& pace = own.chunks >= kChunksForOwnPace ? own : kinds[kind_of(kind, c.chunk.device)];
    if (pace.chunks < 2) continue;
    ordered.emplace_back(c.chunk.begin,
                         c.seconds() / (pace.seconds / pace.groups * static_cast<double>(c.chunk.groups())));
  }
  std::sort(ordered.begin(), ordered.end());
  std::vector<double> residuals;
  residuals.reserve(ordered.size());
  for (const auto& [begin, residual] : ordered) residuals.push_back(residual);
  return residuals;
}

RegularityVerdict range_test(const std::vector<ChunkTiming>& chunks, const std::vector<DeviceProfile>& profiles,
                             double min_spread, bool spread_seen, size_t min_chunks, double max_ratio) {
  const std::vector<double> residuals = range_ordered_residuals(chunks, profiles);
  RegularityVerdict v;
  v.window_spread = spread_seen;
  v.packages = residuals.size();
  v.spread = coefficient_of_variation(residuals);
  // Of their logarithms: a kernel's cost along the range varies by factors (benchmarks/mandelbrot's
  // rows, 0.02 to 5 times the mean), a slowed package by a share, and a few slowed packages (a device
  // sharing its core for a while) took the ratio of the paces themselves from 0.1 to 1.2 in 2 of 7
  // first launches of mandelbrot over 8 devices on the device machine, where their logarithms stay
  // under 0.2.
  std::vector<double> logs;
  logs.reserve(residuals.size());
  for (double r : residuals) logs.push_back(std::log(r));
  v.range_ratio = von_neumann_ratio(logs);
  if (v.packages < min_chunks) {
    v.irregular = spread_seen;  // too few to tell the range from the devices: the window's spread stands
    return v;
  }
  // Of n values that vary at random the ratio has mean 2 and standard deviation 2 sqrt((n - 2) / (n^2 -
  // 1)) (von Neumann, 1941): 0.68 at n = 6, where 7% of such launches would fall under 1. The bound is
  // also its one-sided 5% point, where that is lower.
  const double n = static_cast<double>(v.packages);
  const double random_spread = 2 * std::sqrt((n - 2) / (n * n - 1));
  const double bound = std::min(max_ratio, 2 - 1.645 * random_spread);
  v.irregular = (spread_seen || v.spread > min_spread) && v.range_ratio && *v.range_ratio < bound;
  return v;
}

}  // namespace coex::sched
