// The arithmetic several policies share: equal-finish splits, their rounding to whole work-groups,
// proportional splits, the affine time model and its least-squares fit, and the occupancy floor.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sched/policy.h"

namespace coex::sched {

// What an equal-finish split knows of one device: a chunk of x groups started now ends at
// lambda + overhead + omega * x (seconds from now). lambda is the time the device is still busy with
// work it already holds (Boyer et al. CF'13: lambda_i = Omega_i * U_i - T_i); overhead is the fixed
// cost of one more chunk (the intercept of PLB-HeC's and predict's models; 0 in Boyer's).
struct FinishModel {
  double omega = 0;  // seconds per group, > 0
  double lambda = 0;
  double overhead = 0;
};

// Splits `work` groups so that every device that gets work finishes at the same time T:
// x_i = (T - lambda_i - overhead_i) / omega_i. Devices with x_i <= 0 are dropped and T is solved again
// over the rest (water-filling; Boyer et al. CF'13 give the two-device closed form, this is its
// N-device form). Returns real-valued shares; *finish (if given) receives T.
std::vector<double> equal_finish_split(const std::vector<FinishModel>& devices, double work,
                                       double* finish = nullptr);

// Rounds real shares to whole groups that sum to `total`: each share goes down, then every group
// left goes to the device (among those with a share > 0) whose predicted finish stays the earliest,
// i.e. each share is rounded down or up, whichever gives the earlier predicted finish.
std::vector<uint64_t> round_split(const std::vector<FinishModel>& devices, const std::vector<double>& shares,
                                  uint64_t total);

// Splits `total` in proportion to `weights` (largest remainder, ties to the lower index), so the same
// inputs always give the same split. All-zero weights give all zeros.
std::vector<uint64_t> proportional_split(const std::vector<double>& weights, uint64_t total);

// The lower median of `values` (not empty): of an even count, the smaller of the middle two.
double lower_median(std::vector<double> values);

// A chunk of x groups takes a + b * x seconds.
struct AffineModel {
  double a = 0;
  double b = 0;
  bool valid = false;
  double time(double x) const { return a + b * x; }
};

// Least-squares fit of seconds = a + b * groups over (groups, seconds) samples, constrained to be
// increasing and non-negative (a >= 0, b > 0): a fit with a < 0 is redone through the origin, one with
// b <= 0 (or with a single distinct size) falls back to b = sum(seconds) / sum(groups), a = 0.
AffineModel fit_affine(const std::vector<std::pair<double, double>>& samples);

// The per-chunk overhead that (groups, seconds) samples show beyond their noise: the least-squares
// intercept less two of its standard errors, at least 0. Of fewer than 3 samples, or of one size, 0:
// a line through 2 measures no noise, and its intercept is as likely chance as overhead.
double overhead_beyond_noise(const std::vector<std::pair<double, double>>& samples);

// fit_affine with its intercept cut to overhead_beyond_noise and the slope fitted again through it
// (least squares): a device's line as far as its chunks show it.
AffineModel fit_affine_beyond_noise(const std::vector<std::pair<double, double>>& samples);

// The smallest chunk, in groups of the split dimension, that keeps a device busy: one work-group per
// compute unit on CPUs, the work-groups per compute unit needed for full occupancy times the compute
// units on GPUs, each split group counting for its `groups_per_slice` work-groups (a 2-D launch's
// split group is a row of work-groups: a GPU's floor of 528 work-groups was 528 rows of 1024, the
// whole launch, and the CPU beside it got half of a first launch it had no business in).
uint64_t occupancy_floor(const DeviceProfile& profile, uint64_t groups_per_slice = 1);

// `slices` rounded to whole rounds of a CPU device's compute units: a CPU runs a chunk's work-groups
// on its compute units in rounds, and a chunk that is no whole number of rounds leaves units idle in
// its last one (PoCL's cpu driver with 4 threads given 5 of binomial's long work-groups runs the
// fifth alone). To the nearest whole number of rounds; a chunk of less than one round is one round
// anyway and stays as asked (a slow device's small chunk is not made larger). GPUs (many groups a
// unit, in waves no chunk size controls) and single-unit devices keep `slices`.
uint64_t whole_rounds(uint64_t slices, const DeviceProfile& profile, uint64_t groups_per_slice = 1);

// How many CPU compute units one GPU compute unit counts for in spec_weight: a GPU multiprocessor
// issues 64 to 128 fp32 lanes a cycle (NVIDIA 4 x 32), a CPU core 16 to 32 (AVX-512, one or two FMA
// units), and PoCL counts a core's hyper-threads as two units. Without it an H100 (132 units) and the
// 16-thread CPU beside it (about 600x slower on benchmarks/) looked 8:1 before anything was measured:
// the CPU's first chunk of a cold launch was large enough that the GPU, done with the rest, waited
// 86 ms for its upload (benchmarks/blur).
inline constexpr double kGpuLanesPerCpuCore = 8.0;

// Fewer work-items than this on `home` and a launch is first timed there before it is split
// (docs/design.md, "Size by time"): `min_split_work_items` is a CPU device's, and a GPU home needs it
// for every CPU core it counts for (compute units x kGpuLanesPerCpuCore), since it runs that many
// work-items at once. benchmarks/lu's update kernel on an H100 (4.2 million work-items, about 20 us)
// was split at each new size while another H100 sat beside it, 15 to 37 ms a split.
uint64_t min_split_items_on(const DeviceProfile& home, uint64_t min_split_work_items);

// Bytes a second, host to device, that a first split's transfers are guessed at before any is
// measured (DeviceProfile::h2d_gbs where known): the app's own pageable writes reached 7 GB/s on the
// H100 machine, coex's upload of benchmarks/matmul's B to a second H100 3.8 GB/s.
inline constexpr double kNominalTransferGBs = 8.0;

// Seconds the devices of `devices` other than `home` would take to receive their share (by
// spec_weight) of `bytes`, at their h2d_gbs or kNominalTransferGBs: what a first split must move
// before it can gain anything. Where `fresh_memory_gbs` is given (devices/host_memory.h), the moves
// go into new memory: a local CPU device receives into new buffers in host memory, at that speed
// where it is the slower, and before any device receives, home's thread fills coex's host copy of
// the others' bytes, one copy of them all, at that speed (the sum of their shares, where the
// devices' own receipt is the largest one). 0 without other devices.
double others_transfer_seconds(const std::vector<DeviceProfile>& profiles, int home, const std::vector<int>& devices,
                               uint64_t bytes, double fresh_memory_gbs = 0);

// The share of its specification a remote device (DeviceProfile::remote) counts for in spec_weight.
// Its compute units are its server's, but each of its chunks also pays a network round trip per
// command and moves its bytes at the network's speed: over loopback, 0.11 ms per command and
// 1.1 GB/s against 0.2 us and 12 GB/s for a local PoCL device (docs/remote.md). Its first chunk
// is kept smaller until its measured pace replaces the guess.
inline constexpr double kRemoteSpecShare = 0.5;

// Relative speed from device info: compute units x clock (x kGpuLanesPerCpuCore on GPUs), or memory
// bandwidth for memory-bound kernels, x kRemoteSpecShare for a remote device. Only ratios between
// devices mean anything.
double spec_weight(const DeviceProfile& profile, bool memory_bound);
// spec_weight (compute-bound) of the device numbered `device` among `profiles`; 0 for one not listed.
double spec_weight_of(const std::vector<DeviceProfile>& profiles, int device);
// The profile of the device numbered `device` among `profiles`; null for one not listed.
const DeviceProfile* find_profile(const std::vector<DeviceProfile>& profiles, int device);

// ceil() of a group count computed in floating point, forgiving the rounding noise of products such
// as 0.07 * 10000 = 700.0000000000001 (which must give 700, not 701).
uint64_t ceil_groups(double groups);

// Standard deviation over mean; 0 for fewer than two values or a zero mean.
double coefficient_of_variation(const std::vector<double>& values);

}  // namespace coex::sched
