#include "sched/sigmoid_policy.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "sched/range_variation.h"
#include "sched/split_math.h"

namespace coex::sched {

double sigmoid_package(double total_groups, size_t devices, double speed, double speed_sum, double k,
                       double remaining_groups) {
  if (devices == 0 || speed_sum <= 0 || total_groups <= 0) return 0;
  return total_groups / (2.0 * static_cast<double>(devices)) * (speed / speed_sum) *
         std::tanh(3.0 * k * remaining_groups / total_groups);
}

SigmoidPolicy::SigmoidPolicy(const PolicyParams& params, std::shared_ptr<History> history,
                             const std::vector<DeviceProfile>& profiles)
    : PolicyBase("sigmoid", params, std::move(history), profiles) {}

void SigmoidPolicy::on_begin(double) {
  const auto regular = history().regular(shape().kernel_key);
  irregular_ = regular.has_value() && !*regular;
  judged_ = false;
  spread_seen_ = false;
  verdict_.reset();  // the object may have served an earlier launch (sched/launch_policies.h)
  // Devices of one kind (as auto sets them, LaunchShape::device_kinds) on a kernel not known to be
  // irregular: wp's equal shares follow (auto's rule 2), so each device's packages come from its own
  // equal region, where wp's first layout will want its part. Handed out front to back, they left
  // every device's rows scattered over the range: wp's first launch after sigmoid's over two
  // single-threaded PoCL devices moved half of each device's part (benchmarks/jacobi: 2.8 and 4.4 ms
  // for its second and third launches, 0.7 ms each once in place). A device done with its region takes
  // from the back of the largest left: the balance within the launch is sigmoid's as before.
  if (!irregular_ && states().size() > 1 && devices_of_one_kind())
    set_regions(proportional_split(std::vector<double>(states().size(), 1.0), shape().total_groups));
}

namespace {

double package_speed(const ChunkTiming& t) {
  return static_cast<double>(t.chunk.groups()) / std::max(t.seconds(), 1e-9);
}

// The device's last `window` packages, leaving out a package that was its first run of the kernel
// (ChunkTiming::first_run): that time holds the driver's one-time work (on PoCL the work-group
// function's compile or load as it first runs: 295 ms for a first package of benchmarks/nbody whose
// next ones took 14 ms), which says neither how fast the device is nor whether the kernel is regular.
// Calls `use` on each, newest first; returns how many there were.
template <typename Use>
size_t for_each_warm(const std::vector<ChunkTiming>& done, size_t window, Use&& use) {
  size_t count = 0;
  for (auto it = done.rbegin(); it != done.rend() && count < window; ++it)
    if (!it->first_run) use(*it), ++count;
  return count;
}

// Their speeds, in groups per second.
std::vector<double> warm_speeds(const std::vector<ChunkTiming>& done, size_t window) {
  std::vector<double> speeds;
  speeds.reserve(window);
  for_each_warm(done, window, [&](const ChunkTiming& t) { speeds.push_back(package_speed(t)); });
  return speeds;
}

}  // namespace

double SigmoidPolicy::kind_speed(const DeviceState& device) {
  double groups = 0, seconds = 0;
  const int kind = device_kind(profiles(), device.index);
  for (const auto& other : states()) {
    if (device_kind(profiles(), other.index) != kind) continue;
    for (const auto& t : other.done)
      if (!t.first_run) {
        groups += static_cast<double>(t.chunk.groups());
        seconds += t.seconds();
      }
  }
  return groups > 0 ? groups / std::max(seconds, 1e-9) : window_speed(device);
}

// The mean of warm_speeds, without the vector: asked for every device at every package (choose_size),
// under the launch's lock in coex.
double SigmoidPolicy::window_speed(const DeviceState& device) const {
  double sum = 0;
  size_t count = for_each_warm(device.done, static_cast<size_t>(params().sigmoid_window),
                               [&](const ChunkTiming& t) { sum += package_speed(t); });
  // Only first runs so far: their speed, low as it is, is all that was measured.
  if (count == 0)
    for (const auto& t : device.done) sum += package_speed(t), ++count;
  return count == 0 ? 0 : sum / static_cast<double>(count);
}

uint64_t SigmoidPolicy::choose_size(DeviceState& device, double now) {
  const auto devices = live();
  std::vector<double> speeds;
  SpeedSource source = SpeedSource::kMeasured;
  const bool all_measured =
      std::all_of(devices.begin(), devices.end(), [](const DeviceState* d) { return d->completed > 0; });
  if (all_measured) {
    // On an irregular kernel a device's last packages say where in the range they lay more than how
    // fast it is: one whose first packages fell on cheap work-groups (mandelbrot's outer rows) would
    // take a share many times its due, in costly ones, and finish last (in the simulated mandelbrot
    // over two equal devices, a package of 16 of the 64 rows ran 0.26 s past the other device's
    // end). Its kind's mean pace over the launch's packages says how fast it is (devices of a kind
    // run at one speed: range_variation.h, device_kind).
    for (const DeviceState* d : devices) speeds.push_back(irregular_ ? kind_speed(*d) : window_speed(*d));
  } else {
    speeds = current_speeds(devices, 0, &source);
  }
  double sum = 0, mine = 0;
  for (size_t i = 0; i < devices.size(); ++i) {
    sum += speeds[i];
    if (devices[i] == &device) mine = speeds[i];
  }
  const double total = static_cast<double>(shape().total_groups);
  double size = sigmoid_package(total, devices.size(), mine, sum, current_k(), static_cast<double>(remaining()));
  double floor = static_cast<double>(occupancy_floor(profile(device.index), shape().groups_per_slice));
  if (source != SpeedSource::kSpec) floor = std::max(floor, params().sigmoid_floor_p * now * mine);
  size = std::max(size, floor);
  return std::max<uint64_t>(1, ceil_groups(size));
}

void SigmoidPolicy::on_chunk_done(DeviceState& device, const ChunkTiming&) {
  const size_t window = static_cast<size_t>(params().sigmoid_window);
  // Counted first: most packages of a launch come before a device's window is full.
  if (for_each_warm(device.done, window, [](const ChunkTiming&) {}) < window) return;
  const std::vector<double> speeds = warm_speeds(device.done, window);
  judged_ = true;
  if (coefficient_of_variation(speeds) > params().sigmoid_cv_threshold) spread_seen_ = irregular_ = true;
}

void SigmoidPolicy::on_end(double) {
  verdict_.reset();
  // The verdict kept for the kernel's later launches (auto's rule 1 runs sigmoid on every launch of a
  // kernel known to be irregular) asks more than the switch within this launch: that the packages'
  // times varied with where they lay in the range, not only from one package to the next of a device
  // (sched/range_variation.h). It is this launch's: a kernel once found irregular is judged again at
  // each launch sigmoid runs, where packages of k = 0.5 may lie too close in the range for a device's
  // window to vary: the spread of the whole launch's packages counts too.
  std::vector<ChunkTiming> warm;
  for (const auto& device : states())
    for (const auto& t : device.done)
      if (!t.first_run) warm.push_back(t);
  // Judged once a device ran a window of packages, or the launch ran enough for the range test (over
  // many devices each may run 2 or 3, its first left out).
  if (!judged_ && warm.size() < kRangeTestPackages) return;  // what the History knows stands
  verdict_ = range_test(warm, profiles(), params().sigmoid_cv_threshold, spread_seen_);
  // Too few packages for the range test, and no window that varied: no evidence either way, and a
  // kernel the History knows to be irregular stays so (the reverse mistake costs more).
  if (verdict_->packages < kRangeTestPackages && !spread_seen_) {
    const auto known = history().regular(shape().kernel_key);
    verdict_->irregular = known.has_value() && !*known;
    if (known.has_value()) return;
  }
  history().judge_regular(shape().kernel_key, !verdict_->irregular);
}

}  // namespace coex::sched
