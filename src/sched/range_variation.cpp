#include "sched/range_variation.h"

#include <algorithm>
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
  if (spread <= 1e-12 * mean * mean * static_cast<double>(values.size())) return std::nullopt;
  return successive / spread;
}

std::vector<double> range_ordered_residuals(const std::vector<ChunkTiming>& chunks) {
  std::map<int, std::vector<const ChunkTiming*>> by_device;
  for (const auto& c : chunks)
    if (c.chunk.groups() > 0 && c.seconds() > 0) by_device[c.chunk.device].push_back(&c);
  std::vector<std::pair<uint64_t, double>> ordered;  // (begin, residual)
  for (const auto& [device, mine] : by_device) {
    if (mine.size() < 2) continue;
    double seconds = 0, groups = 0;
    for (const ChunkTiming* c : mine) {
      seconds += c->seconds();
      groups += static_cast<double>(c->chunk.groups());
    }
    const double per_group = seconds / groups;
    for (const ChunkTiming* c : mine)
      ordered.emplace_back(c->chunk.begin, c->seconds() / (per_group * static_cast<double>(c->chunk.groups())));
  }
  std::sort(ordered.begin(), ordered.end());
  std::vector<double> residuals;
  residuals.reserve(ordered.size());
  for (const auto& [begin, residual] : ordered) residuals.push_back(residual);
  return residuals;
}

bool variation_follows_range(const std::vector<ChunkTiming>& chunks, double min_spread, bool spread_seen,
                             size_t min_chunks, double max_ratio) {
  const std::vector<double> residuals = range_ordered_residuals(chunks);
  if (residuals.size() < min_chunks) return false;
  if (!spread_seen && coefficient_of_variation(residuals) <= min_spread) return false;
  const auto ratio = von_neumann_ratio(residuals);
  return ratio && *ratio < max_ratio;
}

}  // namespace coex::sched
