// Whether chunk times that vary say something of the kernel or only of the devices (docs/schedulers.md,
// "sigmoid"). A kernel whose work-groups cost more in some part of the range (mandelbrot's rows inside
// the set) makes chunks that lie side by side in the range alike and distant ones different, whatever
// device ran them; a device that changes pace between chunks (single-threaded PoCL devices on shared
// cores) makes chunks vary in no order of the range. The test: each chunk's time per group over the
// mean of the devices of its kind (devices whose profiles agree but for their index: the testbed's
// single-threaded devices are one kind), taken in range order; von Neumann's ratio of those
// residuals' logarithms, the mean square of successive differences over the variance (about 2 for
// values that vary at random, near 0 for values that follow their order).
// - By kind where the device ran few chunks: a device runs 2 or 3 packages of a launch over 8 devices
//   (benchmarks/mandelbrot on the device machine), and its own mean would take in most of what its
//   packages say of the range (there 4 of 5 first launches were kept regular). One that ran 4 or more
//   is measured against its own mean: devices of a kind may differ in speed all the same.
// - No per-chunk cost is fitted: on an irregular kernel sigmoid's package sizes follow the measured
//   speeds, so that a line time = a + b x groups takes in the cost's variation along the range (in
//   the simulated mandelbrot, a device whose small packages lay where rows are costly). The price:
//   where packages shrink along the range, a per-chunk cost slows the last ones per group on any
//   kernel, a trend in range order; sigmoid's floor keeps a package at 5% of the time elapsed or
//   more, so it stays small.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "sched/policy.h"

namespace coex::sched {

// Von Neumann's ratio of `values` in their order: sum (v[i+1] - v[i])^2 / sum (v[i] - mean)^2.
// nullopt for fewer than two values or none that differ.
std::optional<double> von_neumann_ratio(const std::vector<double>& values);

// Devices of one kind share a number: those whose profiles agree in all but index (and the transfer
// bandwidths, measured per device): eight single-threaded PoCL devices of one CPU share a name, where
// the same CPU under another driver has another. A device not among `profiles` is a kind of its own.
int device_kind(const std::vector<DeviceProfile>& profiles, int device);
// device_kind of each device of `profiles`, by device index (-1 - index where no profile has it).
std::vector<int> device_kinds(const std::vector<DeviceProfile>& profiles);
// A device's kind in `kinds` (device_kinds); one past its end is a kind of its own, as device_kind says.
int kind_of(const std::vector<int>& kinds, int device);

// Each chunk's time per group over the mean time per group of its device's chunks (4 or more) or else
// of its kind's, in range order (ascending begin). A chunk alone in its kind adds nothing (its
// residual would be 1 by construction).
std::vector<double> range_ordered_residuals(const std::vector<ChunkTiming>& chunks,
                                            const std::vector<DeviceProfile>& profiles);

// The range test over `chunks` (first runs left out by the caller): the residuals counted, their
// sigma/mean and von Neumann's ratio of their logarithms. Irregular, of `min_chunks` residuals or
// more: their sigma/mean above `min_spread` or `spread_seen` (a device's window of packages varied),
// and the ratio under `max_ratio` and under its one-sided 5% point for values that vary at random
// (0.89 at 6 residuals, 0.99 at 8, 1 from 9 on). Of fewer: `spread_seen` alone, as sigmoid judged before the
// test (too few packages to tell a kernel's range from its devices, and taking an irregular kernel for
// a regular one costs more than the reverse: benchmarks/mandelbrot over 8 devices took twice as long
// under auto's wp+tail as under sigmoid).
inline constexpr size_t kRangeTestPackages = 6;
RegularityVerdict range_test(const std::vector<ChunkTiming>& chunks, const std::vector<DeviceProfile>& profiles,
                             double min_spread, bool spread_seen = false, size_t min_chunks = kRangeTestPackages,
                             double max_ratio = 1.0);

}  // namespace coex::sched
