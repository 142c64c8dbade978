#include "sched/strack_policy.h"

#include <algorithm>
#include <cmath>

#include "sched/hguided_policy.h"
#include "sched/split_math.h"

namespace coex::sched {
namespace {

constexpr double kMinSeconds = 1e-9;

std::string mode_name(StrackMode mode) {
  switch (mode) {
    case StrackMode::kJitp: return "jitp";
    case StrackMode::kWp: return "wp";
    case StrackMode::kEss: return "ess";
  }
  return "wp";
}

}  // namespace

DeviceShares strack_update(const DeviceShares& used, const DeviceMap<StrackMeasure>& measured, double omega) {
  double measured_mass = 0, rate_sum = 0;
  for (const auto& [device, share] : used) {
    auto m = measured.find(device);
    if (m == measured.end() || m->second.groups <= 0) continue;
    if (m->second.seconds < kMinSeconds) return used;  // no information in a zero time
    rate_sum += m->second.groups / m->second.seconds;
    measured_mass += share;
  }
  if (rate_sum <= 0) return used;
  DeviceShares next = used;
  for (auto& [device, share] : next) {
    auto m = measured.find(device);
    if (m == measured.end() || m->second.groups <= 0) continue;
    const double ratio = measured_mass * (m->second.groups / m->second.seconds) / rate_sum;
    share = omega * share + (1 - omega) * ratio;
  }
  return next;
}

LayoutMove compare_layouts(const DeviceShares& used, const DeviceShares& next, uint64_t groups, double least_gain) {
  // Between devices of one kind a change of shares moves the rows at each changed edge, and a chunk of
  // a new size is a footprint not evaluated before: over eight single-threaded PoCL devices
  // benchmarks/jacobi's shares followed each launch's noise (4 to 12 of 64 groups a device), and its
  // splits took 0.3 ms more than static's even shares. The shares move where the groups they give
  // would finish the launch sooner by `least_gain`, by the new shares' estimate of the devices' paces.
  // `next` is wp's running update, stored whatever this says (History::shares): a small lasting
  // difference builds up in it until moving pays.
  if (used.size() != next.size()) return LayoutMove::kMoves;
  std::vector<double> old_weights, new_weights;
  for (const auto& [device, share] : used) {
    auto it = next.find(device);
    if (it == next.end()) return LayoutMove::kMoves;
    old_weights.push_back(share);
    new_weights.push_back(it->second);
  }
  const std::vector<uint64_t> before = proportional_split(old_weights, groups);
  const std::vector<uint64_t> after = proportional_split(new_weights, groups);
  if (before == after) return LayoutMove::kSame;  // the same chunks: nothing moves
  double finish_before = 0, finish_after = 0;
  for (size_t i = 0; i < new_weights.size(); ++i) {
    if (new_weights[i] <= 0) {
      if (before[i] == 0 && after[i] == 0) continue;  // out of both (no group at this size)
      return LayoutMove::kMoves;                      // measured to pay nothing: its groups go
    }
    finish_before = std::max(finish_before, static_cast<double>(before[i]) / new_weights[i]);
    finish_after = std::max(finish_after, static_cast<double>(after[i]) / new_weights[i]);
  }
  return finish_after < (1 - least_gain) * finish_before ? LayoutMove::kMoves : LayoutMove::kNotWorth;
}

namespace {

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n == 0 ? 0 : n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

bool layout_may_move(History::LayoutTrack& track, double seconds) {
  using Stage = History::LayoutTrack::Stage;
  switch (track.stage) {
    case Stage::kSteady:
      track.recent.push_back(seconds);
      if (track.recent.size() > kLayoutJudged) track.recent.erase(track.recent.begin());
      return true;
    case Stage::kMoved:  // this launch ran the new layout first: it paid the move
      track.moving = seconds;
      track.after.clear();
      track.stage = Stage::kJudging;
      return false;
    case Stage::kJudging:
      track.after.push_back(seconds);
      if (track.after.size() < kLayoutJudged) return false;
      break;
  }
  const double after = median_of(track.after);
  const double gain = (track.before - after) * kLayoutHorizon, cost = track.moving - after;
  const double least = least_layout_gain(track);
  if (gain > cost) track.least_gain = std::max(kLeastLayoutGain, least / 2);
  if (gain < cost) track.least_gain = std::min(kMostLayoutGain, least * 2);
  track.recent = track.after;
  track.stage = Stage::kSteady;
  return true;
}

void layout_moves(History::LayoutTrack& track) {
  track.before = median_of(track.recent);
  track.stage = History::LayoutTrack::Stage::kMoved;
}

double least_layout_gain(const History::LayoutTrack& track) {
  return track.least_gain > 0 ? track.least_gain : kLeastLayoutGain;
}

bool worth_moving(const DeviceShares& used, const DeviceShares& next, uint64_t groups) {
  return compare_layouts(used, next, groups) != LayoutMove::kNotWorth;
}

namespace {

// Of a chunk's time, what its moves of data leave to compute at least: between devices of one kind a
// chunk's moves say where the shares moved (a device whose share grew fetches the rows it did not
// hold), not how fast it runs.
constexpr double kLeastComputeShare = 0.1;

// A device's median pace from fewer chunks is as noisy as one launch's update: the layout follows the
// update alone until each device has this many at the size.
constexpr size_t kLeastPacedChunks = 8;
// The median reads a device's last chunks at the size, at most this many: a lasting change moves it
// within about half of them (8 launches of one chunk a device), where all of the History's 32 took 16.
constexpr size_t kPacedChunks = 16;

double compute_seconds(double seconds, double moving) {
  return std::max(kLeastComputeShare * seconds, seconds - std::max(0.0, moving));
}

}  // namespace

DeviceShares median_paced_shares(const History& history, const std::string& kernel_key, uint64_t global_size,
                                 const std::vector<int>& devices) {
  constexpr double kLeastSecondsPerGroup = 1e-12;
  DeviceShares shares;
  for (int device : devices) {
    // (seconds per group, groups) of the last kPacedChunks chunks
    std::vector<std::pair<double, double>> paces;
    for (const ChunkSample& sample : history.samples(kernel_key, global_size, device, kPacedChunks))
      if (sample.groups > 0)
        paces.emplace_back(
            std::max(kLeastSecondsPerGroup, compute_seconds(sample.seconds, sample.transfer_seconds) / sample.groups),
            sample.groups);
    if (paces.size() < kLeastPacedChunks) return {};
    // Weighted by groups: the small chunks of a tail handed out on demand carry their fixed cost over
    // few groups, and the faster device takes more of them.
    std::sort(paces.begin(), paces.end());
    double groups = 0;
    for (const auto& pace : paces) groups += pace.second;
    double below = 0;
    auto median = paces.begin();
    while (below + median->second < groups / 2) below += (median++)->second;
    shares[device] = 1.0 / median->first;
  }
  double sum = 0;
  for (const auto& [device, rate] : shares) sum += rate;
  if (!std::isfinite(sum) || sum <= 0) return {};
  for (auto& [device, rate] : shares) rate /= sum;
  return shares;
}

StrackPolicy::StrackPolicy(StrackMode mode, const PolicyParams& params, std::shared_ptr<History> history,
                           const std::vector<DeviceProfile>& profiles)
    : PolicyBase(mode_name(mode), params, std::move(history), profiles), mode_(mode) {}

void StrackPolicy::on_begin(double) {
  const auto& key = shape().kernel_key;
  const uint64_t size = shape().global_size;
  const auto stored = history().shares(key, size);
  const uint64_t launches = history().launches(key, size);
  used_.clear();
  // Devices of one kind (LaunchShape::device_kinds, as auto sets them) start from equal shares, not
  // from the throughputs of other policies' launches: those of a kernel's first splits count the
  // moves of each device's data to where its chunks lay, and the waits behind home's running chunk
  // (benchmarks/jacobi over eight single-threaded PoCL devices: from one sigmoid launch's
  // throughputs wp gave home all 64 groups, and the others nothing until the next probe).
  one_kind_ = devices_of_one_kind();
  bool all_stored = !stored.empty(), all_known = !one_kind_;  // the throughputs are not asked then
  for (const auto& s : states()) {
    all_stored = all_stored && stored.count(s.index);
    all_known = all_known && history().throughput(key, size, s.index).has_value();
  }
  for (const auto& s : states()) {
    if (all_stored) used_[s.index] = stored.at(s.index);
    else if (all_known)
      used_[s.index] = *history().throughput(key, size, s.index);
    else used_[s.index] = 1.0;  // Strack starts from equal shares
  }
  // The running update goes on from its own shares; devices of one kind split by the layout that
  // moves only for a gain (on_end).
  running_ = used_;
  if (one_kind_) {
    const auto layout = history().layout_shares(key, size);
    bool covered = !layout.empty();
    for (const auto& s : states()) covered = covered && layout.count(s.index);
    if (covered)
      for (auto& [device, share] : used_) share = layout.at(device);
  }
  normalize(running_);
  layout_ = used_;  // before the probe below: a probe's share is for this launch only
  normalize(layout_);
  // Probe: a device left at 0 is given a small share again now and then.
  const bool probe_now = launches > 0 && launches % static_cast<uint64_t>(params().probe_interval) == 0;
  const bool frozen = mode_ == StrackMode::kEss && launches >= static_cast<uint64_t>(params().ess_launches);
  for (auto& [device, share] : used_)
    if (share <= 0 && probe_now && !frozen) share = params().probe_share;
  double sum = 0;
  for (const auto& [device, share] : used_) sum += share;
  if (sum <= 0) {
    for (auto& entry : used_) entry.second = 1.0;
    sum = static_cast<double>(used_.size());
  }
  std::vector<double> weights;
  for (auto& [device, share] : used_) weights.push_back(share /= sum);
  const uint64_t total = shape().total_groups;
  const auto split = proportional_split(weights, total);
  // wp_tail: the shares of the launch less its tail are set aside now; the tail goes on demand
  // (choose_size), each device's first from the rest of its own share's range (regions): a tail handed
  // out front to back from the launch's end moved rows between the devices at every launch, and left
  // them where the next launch's shares did not want them (benchmarks/jacobi over two single-threaded
  // PoCL devices: the first launch by plain wp after one with a tail spent 3.7 ms fetching the rows
  // the other device had computed, beside 0.8 ms of kernel).
  const uint64_t tail = tail_groups();
  const auto set_aside = tail > 0 ? proportional_split(weights, total - tail) : split;
  if (tail > 0) set_regions(split);  // used_ holds every device of states(), in the same order
  size_t i = 0;
  for (auto& [device, share] : used_) {
    if (split[i] == 0) {
      share = 0;  // no group at this size: out until the next probe
      eliminate(device);
    } else {
      reserve(device, set_aside[i]);
    }
    ++i;
  }
}

DeviceShares StrackPolicy::next_layout(const DeviceShares& next, double least_gain, bool* moved) {
  const uint64_t groups = shape().total_groups - tail_groups();
  *moved = false;
  switch (compare_layouts(used_, next, groups, least_gain)) {
    case LayoutMove::kSame:
      return next;  // nothing moves: the layout follows the update
    case LayoutMove::kNotWorth:
      return layout_;
    case LayoutMove::kMoves:
      break;
  }
  // Over the devices the layout gave groups: one left out has no recent chunk, and stays out.
  std::vector<int> devices;
  for (const auto& [device, share] : used_)
    if (share > 0) devices.push_back(device);
  auto paced = median_paced_shares(history(), shape().kernel_key, shape().global_size, devices);
  if (paced.empty()) {
    *moved = true;
    return next;
  }
  for (const auto& [device, share] : used_) paced.emplace(device, 0.0);
  if (compare_layouts(used_, paced, groups, least_gain) != LayoutMove::kMoves) return layout_;
  *moved = true;
  return paced;
}

void StrackPolicy::normalize(DeviceShares& shares) {
  double sum = 0;
  for (const auto& [device, share] : shares) sum += share;
  if (sum > 0)
    for (auto& [device, share] : shares) share /= sum;
}

uint64_t StrackPolicy::tail_groups() const {
  const double tail_fraction = std::clamp(params().wp_tail, 0.0, 0.9);  // the setting's bounds
  return static_cast<uint64_t>(std::floor(static_cast<double>(shape().total_groups) * tail_fraction));
}

// Only the tail (wp_tail) is handed out on demand: HGuided's chunk with the shares as speeds.
uint64_t StrackPolicy::choose_size(DeviceState& device, double) {
  if (params().wp_tail <= 0) return 0;
  // The shares of the devices still taking part (live()) and this device's: states() and used_ both in
  // device-index order, walked together (a lookup per device, at every chunk of a tail over 15
  // devices, was a fifth of auto's instructions under the launch's lock).
  double sum = 0, mine = 0;
  auto share = used_.begin();
  for (const DeviceState& s : states()) {
    while (share != used_.end() && share->first < s.index) ++share;
    if (share == used_.end()) break;
    if (share->first != s.index) continue;
    if (s.index == device.index) mine = share->second;
    if (!s.finished && !s.eliminated) sum += share->second;
  }
  if (mine <= 0) return 0;
  const uint64_t min_chunk = params().min_chunk_groups > 0
                                 ? params().min_chunk_groups
                                 : occupancy_floor(profile(device.index), shape().groups_per_slice);
  return hguided_chunk(remaining(), mine, sum, params().hguided_k, min_chunk);
}

void StrackPolicy::on_end(double now) {
  const auto& key = shape().kernel_key;
  const uint64_t size = shape().global_size;
  const uint64_t launches = history().launches(key, size);  // this launch included (base counted it)
  DeviceMap<StrackMeasure> measured;
  // Between devices of one kind, a chunk's moves of data say where the shares moved, not how fast it
  // runs: counted, they shrink the share that grew, and the shares swing (benchmarks/jacobi over two
  // single-threaded PoCL devices: from 608 and 416 of 1,024 rows to all of them on home, and back at
  // the next probe).
  for (const auto& s : states()) {
    if (s.completed <= 0) continue;
    double seconds = s.busy_seconds;
    if (one_kind_) {
      double moving = 0;
      for (const ChunkTiming& done : s.done) moving += std::max(0.0, done.transfer_seconds);
      seconds = compute_seconds(seconds, moving);
    }
    measured[s.index] = {static_cast<double>(s.completed_groups), seconds};
  }
  DeviceShares next;
  switch (mode_) {
    case StrackMode::kJitp: next = strack_update(used_, measured, 0.0); break;
    case StrackMode::kWp:
      // Devices of one kind: the running update from its own shares (the launch's measured ratios do
      // not depend on the shares it ran with). The layout moves where that update and the devices'
      // median paces (median_paced_shares, once each has 8 chunks at the size) both say it gains, and
      // then to the latter: the update (omega 0.5) follows each launch's noise (docs/schedulers.md,
      // "`jitp`, `wp`, `ess`": benchmarks/jacobi over eight single-threaded PoCL devices).
      next = strack_update(one_kind_ ? running_ : used_, measured, params().wp_omega);
      if (one_kind_) {
        History::LayoutTrack track = history().layout_track(key, size);
        bool moved = false;
        // `now`: the launch's time to its devices' end. Not of a launch where a device ran the kernel
        // first (its compile counts): such a launch neither judges a move nor starts one.
        bool cold = false;
        for (const auto& s : states())
          for (const ChunkTiming& done : s.done) cold = cold || done.first_run;
        const bool may_move = !cold && layout_may_move(track, now);
        history().set_layout_shares(key, size,
                                    may_move ? next_layout(next, least_layout_gain(track), &moved) : layout_);
        if (moved) layout_moves(track);
        history().set_layout_track(key, size, track);
      }
      break;
    case StrackMode::kEss: {
      const uint64_t n = static_cast<uint64_t>(params().ess_launches);
      if (launches > n) return;  // frozen
      // Running mean over the first n launches: the k-th launch weighs 1/k.
      const double k = static_cast<double>(std::max<uint64_t>(1, launches));
      next = strack_update(used_, measured, (k - 1) / k);
      break;
    }
  }
  history().set_shares(key, size, next);
}

}  // namespace coex::sched
