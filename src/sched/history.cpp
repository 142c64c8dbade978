#include "sched/history.h"

#include <algorithm>
#include <cmath>

#include "sched/split_math.h"

namespace coex::sched {

std::vector<int> History::device_set(std::vector<int> devices) {
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  return devices;
}

void History::keep_recent(std::vector<double>& window, double value) {
  window.push_back(value);
  if (window.size() > kRecentSplits) window.erase(window.begin(), window.end() - kRecentSplits);
}

double History::SplitRecord::estimate() const { return lower_median(!recent_steady.empty() ? recent_steady : recent); }

History::History(std::string device_signature) : signature_(std::move(device_signature)) {}

History::Entry& History::touch(const std::string& kernel_key, uint64_t global_size) {
  auto it = entries_.find(KeyRef{kernel_key, global_size});
  if (it == entries_.end()) it = entries_.emplace(Key{kernel_key, global_size}, Entry{}).first;
  Entry& e = it->second;
  e.last_use = ++clock_;
  return e;
}

bool History::holds_evidence(const Entry& e) {
  return !e.devices.empty() || !e.shares.empty() || !e.splits.empty() || e.auto_track.wp_launches ||
         e.auto_track.remeasure || !e.auto_track.shares_choice.empty() || e.plbhec_track.reprofile ||
         !e.plbhec_track.models.empty() || e.cold_transfers.has_value();
}

// The least recently used entry goes, one with launch counts only before any with evidence: a program
// of thousands of sizes (benchmarks/lu: 4,094 launches, each of a size of its own) would otherwise
// drop the split times measured at its first, largest sizes, that keep the smaller ones on home
// (split_above), and change the evidence version at every launch. Never the entry just used (the
// caller's): among entries that all hold evidence, a new one would go at once, its launches never
// counted.
void History::evict_over_capacity() {
  while (entries_.size() > kMaxEntries) {
    auto oldest = entries_.end();
    auto oldest_counts_only = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second.last_use == clock_) continue;
      if (oldest == entries_.end() || it->second.last_use < oldest->second.last_use) oldest = it;
      if (!holds_evidence(it->second) &&
          (oldest_counts_only == entries_.end() || it->second.last_use < oldest_counts_only->second.last_use))
        oldest_counts_only = it;
    }
    auto victim = oldest_counts_only != entries_.end() ? oldest_counts_only : oldest;
    if (holds_evidence(victim->second)) ++evidence_;
    entries_.erase(victim);
  }
}

void History::record_chunk(const std::string& kernel_key, uint64_t global_size, const ChunkTiming& timing) {
  const double groups = static_cast<double>(timing.chunk.groups());
  const double seconds = timing.seconds();
  if (!(groups > 0) || !(seconds >= 0) || !std::isfinite(seconds)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  Entry& e = touch(kernel_key, global_size);
  settle_decay(e);
  DeviceRecord& d = e.devices[timing.chunk.device];
  d.groups += groups;
  d.seconds += seconds;
  ++d.chunks;
  d.recent.push_back({groups, seconds, std::max(0.0, timing.transfer_seconds)});
  if (d.recent.size() > kMaxSamples) d.recent.erase(d.recent.begin());
  ++evidence_;
  evict_over_capacity();
}

void History::note_launch(const std::string& kernel_key, uint64_t global_size) {
  std::lock_guard<std::mutex> lock(mutex_);
  count_launch(touch(kernel_key, global_size));
  evict_over_capacity();
}

std::optional<uint64_t> History::count_unsplit_launch(const std::string& kernel_key, uint64_t global_size,
                                                      const std::function<bool(uint64_t)>& declines) {
  std::lock_guard<std::mutex> lock(mutex_);
  Entry& e = touch(kernel_key, global_size);
  const uint64_t number = std::max(e.planned, e.launches);
  if (declines(number - std::min(number, e.probe_origin))) return std::nullopt;
  e.planned = number + 1;
  count_launch(e);
  evict_over_capacity();
  return number;
}

void History::count_launch(Entry& e) { ++e.launches; }

namespace {

// Weights under this are not decayed further: a device or split set long absent keeps a finite mean.
constexpr double kNegligibleWeight = 1e-100;

// `k` launches' decay of a decayed sum and its weight: both multiplied by kLaunchDecay at each launch
// while the weight stays at or above kNegligibleWeight.
void decay_pair(double& sum, double& weight, uint64_t k) {
  if (k == 0 || !(weight >= kNegligibleWeight)) return;
  // The launches until the weight falls under kNegligibleWeight: the first j with weight x decay^j under it.
  const double to_negligible = std::floor(std::log(weight / kNegligibleWeight) / -std::log(History::kLaunchDecay)) + 1;
  const double factor = std::pow(History::kLaunchDecay, std::min(static_cast<double>(k), to_negligible));
  sum *= factor;
  weight *= factor;
}

}  // namespace

void History::settle_decay(Entry& e) {
  const uint64_t k = e.launches - std::min(e.launches, e.decayed_launches);
  e.decayed_launches = e.launches;
  if (k == 0) return;
  for (auto& [device, d] : e.devices) decay_pair(d.seconds, d.groups, k);
  for (auto& [devices, split] : e.splits) {
    decay_pair(split.seconds, split.weight, k);
    decay_pair(split.steady, split.steady_weight, k);
    decay_pair(split.alone, split.alone_weight, k);
  }
}

uint64_t History::plan_launch(const std::string& kernel_key, uint64_t global_size) {
  std::lock_guard<std::mutex> lock(mutex_);
  Entry& e = touch(kernel_key, global_size);
  const uint64_t number = std::max(e.planned, e.launches);
  e.planned = number + 1;
  evict_over_capacity();
  return number;
}

bool History::plan_split(const std::string& kernel_key, uint64_t global_size, uint64_t number, std::vector<int> devices,
                         bool probe, uint64_t buffer_writes) {
  std::vector<int> set = device_set(std::move(devices));
  std::lock_guard<std::mutex> lock(mutex_);
  Entry& e = touch(kernel_key, global_size);
  const bool follows =
      number > 0 && e.last_split == number - 1 && e.last_split_devices == set && e.last_split_writes == buffer_writes;
  if (!e.last_split || *e.last_split < number) {
    e.last_split = number;
    e.last_split_devices = std::move(set);
    e.last_split_probe = probe;
    e.last_split_writes = buffer_writes;
  }
  return follows;
}

void History::restart_probes(const std::string& kernel_key, uint64_t global_size, uint64_t number) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto e = entries_.find(KeyRef{kernel_key, global_size});
  if (e == entries_.end() || number == 0 || e->second.last_split != number - 1 || e->second.last_split_probe) return;
  e->second.probe_origin = number;
}

uint64_t History::probe_origin(const std::string& kernel_key, uint64_t global_size) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto e = entries_.find(KeyRef{kernel_key, global_size});
  return e == entries_.end() ? 0 : e->second.probe_origin;
}

void History::note_cold_split(const std::string& kernel_key, uint64_t global_size, uint64_t number,
                              ColdTransfers transfers) {
  std::sort(transfers.devices.begin(), transfers.devices.end());
  const bool timed = transfers.seconds >= 0 && std::isfinite(transfers.seconds);
  std::lock_guard<std::mutex> lock(mutex_);
  Entry& e = touch(kernel_key, global_size);
  e.last_cold_split = number;
  if (!timed) return;
  e.cold_transfers = std::move(transfers);
  ++evidence_;  // the gate reads it: a memoized verdict is fitted again
}

bool History::cold_split(const std::string& kernel_key, uint64_t global_size, uint64_t number) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto e = entries_.find(KeyRef{kernel_key, global_size});
  return e != entries_.end() && e->second.last_cold_split == number;
}

std::optional<History::ColdTransfers> History::cold_transfers(const std::string& kernel_key,
                                                              uint64_t global_size) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto e = entries_.find(KeyRef{kernel_key, global_size});
  if (e == entries_.end()) return std::nullopt;
  return e->second.cold_transfers;
}

void History::record_split_launch(const std::string& kernel_key, uint64_t global_size, std::vector<int> devices,
                                  double seconds, std::optional<double> home_alone, bool follows_split) {
  if (!(seconds >= 0) || !std::isfinite(seconds) || devices.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  Entry& e = touch(kernel_key, global_size);
  settle_decay(e);
  SplitRecord& r = e.splits[device_set(std::move(devices))];
  r.seconds += seconds;
  r.weight += 1;
  ++r.count;
  keep_recent(r.recent, seconds);
  if (follows_split) {
    r.steady += seconds;
    r.steady_weight += 1;
    keep_recent(r.recent_steady, seconds);
  }
  if (home_alone && *home_alone >= 0 && std::isfinite(*home_alone)) {
    r.alone += *home_alone;
    r.alone_weight += 1;
  }
  ++evidence_;
  evict_over_capacity();
}

std::optional<History::SplitAbove> History::split_above(const std::string& kernel_key, uint64_t global_size,
                                                        std::vector<int> devices) const {
  const std::vector<int> set = device_set(std::move(devices));
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto e = entries_.upper_bound(KeyRef{kernel_key, global_size});
       e != entries_.end() && e->first.first == kernel_key; ++e) {
    // That set, else the smallest superset measured at that size.
    const SplitRecord* best = nullptr;
    const std::vector<int>* best_set = nullptr;
    for (const auto& [measured, r] : e->second.splits) {
      if (!(r.weight > 0) || !(r.alone_weight > 0)) continue;
      if (!std::includes(measured.begin(), measured.end(), set.begin(), set.end())) continue;
      if (!best || measured.size() < best_set->size()) {
        best = &r;
        best_set = &measured;
      }
    }
    if (best) return SplitAbove{e->first.second, *best_set, best->estimate(), best->alone / best->alone_weight};
  }
  return std::nullopt;
}

std::vector<History::MeasuredSplit> History::splits_within(const std::string& kernel_key, uint64_t global_size,
                                                           std::vector<int> devices) const {
  const std::vector<int> set = device_set(std::move(devices));
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<MeasuredSplit> out;
  auto e = entries_.find(KeyRef{kernel_key, global_size});
  if (e == entries_.end()) return out;
  for (const auto& [measured, r] : e->second.splits)
    if (measured.size() >= 2 && measured != set && r.weight > 0 &&
        std::includes(set.begin(), set.end(), measured.begin(), measured.end()))
      out.push_back({measured, r.estimate(), r.recent_steady.size(), r.count});
  return out;
}

const History::SplitRecord* History::split_record(const std::string& kernel_key, uint64_t global_size,
                                                  std::vector<int> devices) const {
  auto e = entries_.find(KeyRef{kernel_key, global_size});
  if (e == entries_.end()) return nullptr;
  auto r = e->second.splits.find(device_set(std::move(devices)));
  return r == e->second.splits.end() ? nullptr : &r->second;
}

std::optional<double> History::split_launch_seconds(const std::string& kernel_key, uint64_t global_size,
                                                    std::vector<int> devices) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const SplitRecord* r = split_record(kernel_key, global_size, std::move(devices));
  if (!r || !(r->weight > 0)) return std::nullopt;
  return r->estimate();
}

size_t History::steady_splits_measured(const std::string& kernel_key, uint64_t global_size,
                                       std::vector<int> devices) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const SplitRecord* r = split_record(kernel_key, global_size, std::move(devices));
  return r ? r->recent_steady.size() : 0;
}

uint64_t History::splits_measured(const std::string& kernel_key, uint64_t global_size, std::vector<int> devices) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const SplitRecord* r = split_record(kernel_key, global_size, std::move(devices));
  return r ? r->count : 0;
}

void History::split_started(const std::string& kernel_key, uint64_t global_size) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++in_flight_[{kernel_key, global_size}];
}

void History::split_ended(const std::string& kernel_key, uint64_t global_size) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = in_flight_.find(KeyRef{kernel_key, global_size});
  if (it == in_flight_.end()) return;
  if (--it->second == 0) in_flight_.erase(it);
}

uint64_t History::splits_in_flight(const std::string& kernel_key, uint64_t global_size) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = in_flight_.find(KeyRef{kernel_key, global_size});
  return it == in_flight_.end() ? 0 : it->second;
}

bool History::kernel_split_in_flight(const std::string& kernel_key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = in_flight_.lower_bound(KeyRef{kernel_key, 0});
  return it != in_flight_.end() && it->first.first == kernel_key;
}

std::optional<double> History::throughput(const std::string& kernel_key, uint64_t global_size, int device) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto e = entries_.find(KeyRef{kernel_key, global_size});
  if (e == entries_.end()) return std::nullopt;
  auto d = e->second.devices.find(device);
  if (d == e->second.devices.end() || d->second.groups <= 0) return std::nullopt;
  // Chunks measured at 0 s (timer resolution) say only "very fast": 1 ns, not a division by zero.
  return d->second.seconds > 0 ? d->second.groups / d->second.seconds : d->second.groups / 1e-9;
}

std::vector<ChunkSample> History::samples(const std::string& kernel_key, uint64_t global_size, int device,
                                          size_t last) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto e = entries_.find(KeyRef{kernel_key, global_size});
  if (e == entries_.end()) return {};
  auto d = e->second.devices.find(device);
  if (d == e->second.devices.end()) return {};
  const auto& recent = d->second.recent;
  const size_t from = last > 0 && recent.size() > last ? recent.size() - last : 0;
  return {recent.begin() + static_cast<std::ptrdiff_t>(from), recent.end()};
}

std::vector<ChunkSample> History::samples_any_size(const std::string& kernel_key, int device) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<ChunkSample> out;
  // The kernel's entries only, which lie together in key order: every launch's gate reads them per
  // device, and a program of thousands of sizes (benchmarks/lu) keeps thousands of entries.
  for (auto e = entries_.lower_bound(KeyRef{kernel_key, 0}); e != entries_.end() && e->first.first == kernel_key; ++e) {
    auto d = e->second.devices.find(device);
    if (d != e->second.devices.end()) out.insert(out.end(), d->second.recent.begin(), d->second.recent.end());
  }
  return out;
}

uint64_t History::launches(const std::string& kernel_key, uint64_t global_size) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto e = entries_.find(KeyRef{kernel_key, global_size});
  return e == entries_.end() ? 0 : e->second.launches;
}

template <typename Field>
Field History::entry_field(const std::string& kernel_key, uint64_t global_size, Field Entry::*field) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto e = entries_.find(KeyRef{kernel_key, global_size});
  return e == entries_.end() ? Field{} : e->second.*field;
}

template <typename Field>
void History::set_entry_field(const std::string& kernel_key, uint64_t global_size, Field Entry::*field,
                              const Field& value) {
  std::lock_guard<std::mutex> lock(mutex_);
  touch(kernel_key, global_size).*field = value;
  evict_over_capacity();
}

DeviceShares History::shares(const std::string& kernel_key, uint64_t global_size) const {
  return entry_field(kernel_key, global_size, &Entry::shares);
}

void History::set_shares(const std::string& kernel_key, uint64_t global_size, const DeviceShares& shares) {
  set_entry_field(kernel_key, global_size, &Entry::shares, shares);
}

DeviceShares History::layout_shares(const std::string& kernel_key, uint64_t global_size) const {
  return entry_field(kernel_key, global_size, &Entry::layout_shares);
}

void History::set_layout_shares(const std::string& kernel_key, uint64_t global_size, const DeviceShares& shares) {
  set_entry_field(kernel_key, global_size, &Entry::layout_shares, shares);
}

History::AutoTrack History::auto_track(const std::string& kernel_key, uint64_t global_size) const {
  return entry_field(kernel_key, global_size, &Entry::auto_track);
}

void History::set_auto_track(const std::string& kernel_key, uint64_t global_size, const AutoTrack& track) {
  set_entry_field(kernel_key, global_size, &Entry::auto_track, track);
}

History::LayoutTrack History::layout_track(const std::string& kernel_key, uint64_t global_size) const {
  return entry_field(kernel_key, global_size, &Entry::layout_track);
}

void History::set_layout_track(const std::string& kernel_key, uint64_t global_size, const LayoutTrack& track) {
  set_entry_field(kernel_key, global_size, &Entry::layout_track, track);
}

History::PlbhecTrack History::plbhec_track(const std::string& kernel_key, uint64_t global_size) const {
  return entry_field(kernel_key, global_size, &Entry::plbhec_track);
}

void History::set_plbhec_track(const std::string& kernel_key, uint64_t global_size, const PlbhecTrack& track) {
  set_entry_field(kernel_key, global_size, &Entry::plbhec_track, track);
}

std::optional<bool> History::regular(const std::string& kernel_key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = regular_.find(kernel_key);
  if (it == regular_.end()) return std::nullopt;
  return it->second;
}

void History::set_regular(const std::string& kernel_key, bool regular) {
  std::lock_guard<std::mutex> lock(mutex_);
  keep_regular(kernel_key, regular);
}

void History::judge_regular(const std::string& kernel_key, bool regular) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto known = regular_.find(kernel_key);
  if (regular && known != regular_.end() && !known->second && regular_once_.insert(kernel_key).second) return;
  keep_regular(kernel_key, regular);
}

void History::keep_regular(const std::string& kernel_key, bool regular) {
  regular_[kernel_key] = regular;
  regular_once_.erase(kernel_key);
  ++evidence_;
}

void History::note_late_let_in(uint64_t program_hash) {
  std::lock_guard<std::mutex> lock(mutex_);
  late_let_in_.erase(std::remove(late_let_in_.begin(), late_let_in_.end(), program_hash), late_let_in_.end());
  late_let_in_.push_back(program_hash);
  if (late_let_in_.size() > kLateLetInKept)
    late_let_in_.erase(late_let_in_.begin(), late_let_in_.end() - kLateLetInKept);
}

void History::forget_late_let_in(uint64_t program_hash) {
  std::lock_guard<std::mutex> lock(mutex_);
  late_let_in_.erase(std::remove(late_let_in_.begin(), late_let_in_.end(), program_hash), late_let_in_.end());
}

bool History::late_let_in(uint64_t program_hash) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::find(late_let_in_.begin(), late_let_in_.end(), program_hash) != late_let_in_.end();
}

uint64_t History::evidence_version() const { return evidence_.load(std::memory_order_acquire); }

void History::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
  regular_.clear();
  regular_once_.clear();
  late_let_in_.clear();
  ++evidence_;
}

size_t History::entry_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

}  // namespace coex::sched
