// Whether chunk times that vary say something of the kernel or only of the devices (docs/schedulers.md,
// "sigmoid"). A kernel whose work-groups cost more in some part of the range (mandelbrot's rows inside
// the set) makes chunks that lie side by side in the range alike and distant ones different, whatever
// device ran them; a device that changes pace between chunks (single-threaded PoCL devices on shared
// cores) makes chunks vary in no order of the range. The test: each chunk's time per group over its
// device's mean (its chunks' time over their groups), taken in range order; von Neumann's ratio of
// those residuals, the mean square of successive differences over the variance (about 2 for values
// that vary at random, near 0 for values that follow their order). No per-chunk cost is fitted: on an
// irregular kernel sigmoid's package sizes follow the measured speeds, so that a line time = a + b x
// groups through a device's chunks takes in the cost's variation along the range (in the simulated
// mandelbrot, a device whose small packages lay where rows are costly). The price: where packages
// shrink along the range, a per-chunk cost slows the last ones per group on any kernel, a trend in
// range order; sigmoid's floor keeps a package at 5% of the time elapsed or more, so it stays small.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "sched/policy.h"

namespace coex::sched {

// Von Neumann's ratio of `values` in their order: sum (v[i+1] - v[i])^2 / sum (v[i] - mean)^2.
// nullopt for fewer than two values or none that differ.
std::optional<double> von_neumann_ratio(const std::vector<double>& values);

// Each chunk's time per group over its device's mean time per group, in range order (ascending
// begin). A device with a single chunk adds nothing (its residual is 1 by construction).
std::vector<double> range_ordered_residuals(const std::vector<ChunkTiming>& chunks);

// Whether the chunks vary, and with the range: at least `min_chunks` chunks that count, their
// residuals' sigma/mean above `min_spread` unless `spread_seen` (the caller saw it otherwise), and von
// Neumann's ratio of the residuals under `max_ratio`.
bool variation_follows_range(const std::vector<ChunkTiming>& chunks, double min_spread, bool spread_seen = false,
                             size_t min_chunks = 6, double max_ratio = 1.0);

}  // namespace coex::sched
