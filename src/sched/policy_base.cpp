#include "sched/policy_base.h"

#include <algorithm>
#include <utility>

#include "sched/range_variation.h"
#include "sched/split_math.h"

namespace coex::sched {

PolicyBase::PolicyBase(std::string name, const PolicyParams& params, std::shared_ptr<History> history,
                       const std::vector<DeviceProfile>& profiles)
    : name_(std::move(name)),
      params_(params),
      history_(history ? std::move(history) : std::make_shared<History>()),
      profiles_(profiles) {}

const DeviceProfile& PolicyBase::profile(int device) const {
  if (const DeviceProfile* p = find_profile(profiles_, device)) return *p;
  static const DeviceProfile unknown;  // only before begin_launch, which adds a profile per device
  return profiles_.empty() ? unknown : profiles_.front();
}

void PolicyBase::begin_launch(const LaunchShape& shape, const std::vector<int>& devices, double now) {
  shape_ = shape;
  cursor_ = 0;
  regions_.clear();
  abandoned_.clear();
  abandoned_all_.clear();
  orphaned_.clear();
  std::vector<int> sorted = devices;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  for (DeviceState& s : states_) {
    s.done.clear();
    s.reserved.clear();
    spare_vectors_.push_back({std::move(s.done), std::move(s.reserved)});
  }
  states_.clear();
  states_.reserve(sorted.size());
  for (int index : sorted) add_state(index);
  on_begin(now);
}

void PolicyBase::add_state(int index) {
  DeviceState s;
  s.index = index;
  if (!spare_vectors_.empty()) {
    s.done = std::move(spare_vectors_.back().done);
    s.reserved = std::move(spare_vectors_.back().reserved);
    spare_vectors_.pop_back();
  }
  auto at = std::find_if(states_.begin(), states_.end(), [&](const DeviceState& d) { return d.index > index; });
  states_.insert(at, std::move(s));
  const bool known =
      std::any_of(profiles_.begin(), profiles_.end(), [&](const DeviceProfile& p) { return p.index == index; });
  if (!known) {
    DeviceProfile p;
    p.index = index;
    p.name = "device " + std::to_string(index);
    profiles_.push_back(p);
  }
}

bool PolicyBase::add_device(int device, double now) {
  (void)now;
  if (!hands_out_on_demand()) return false;
  if (!state(device)) add_state(device);
  return true;
}

PolicyBase::DeviceState* PolicyBase::state(int device) {
  for (auto& s : states_)
    if (s.index == device) return &s;
  return nullptr;
}

std::vector<PolicyBase::DeviceState*> PolicyBase::live() {
  std::vector<DeviceState*> out;
  out.reserve(states_.size());  // asked at every chunk handed out on demand: one allocation
  for (auto& s : states_)
    if (!s.finished && !s.eliminated) out.push_back(&s);
  return out;
}

uint64_t PolicyBase::remaining() const {
  if (regions_.empty()) return shape_.total_groups - cursor_;
  uint64_t sum = 0;
  for (const Region& r : regions_) sum += r.end - r.begin;
  return sum;
}

void PolicyBase::set_regions(const std::vector<uint64_t>& sizes) {
  regions_.clear();
  uint64_t at = cursor_;
  const uint64_t total = shape_.total_groups;
  const size_t n = std::min(sizes.size(), states_.size());
  for (size_t i = 0; i < n && at < total; ++i) {
    const uint64_t end = i + 1 == n ? total : std::min(total, at + sizes[i]);
    if (end > at) regions_.push_back({states_[i].index, at, end});
    at = end;
  }
  cursor_ = total;  // every group left is in a region now
}

bool PolicyBase::devices_of_one_kind() const {
  const std::vector<int>& kinds = shape_.device_kinds;
  if (kinds.empty() || states_.empty()) return false;
  const int first = kind_of(kinds, states_.front().index);
  return std::all_of(states_.begin(), states_.end(),
                     [&](const DeviceState& s) { return kind_of(kinds, s.index) == first; });
}

PolicyBase::Region* PolicyBase::region_for(int device) {
  Region* largest = nullptr;
  for (Region& r : regions_) {
    if (r.begin == r.end) continue;
    if (r.device == device) return &r;
    if (!largest || r.end - r.begin > largest->end - largest->begin) largest = &r;
  }
  return largest;
}

uint64_t PolicyBase::available(int device) {
  if (regions_.empty()) return remaining();
  const Region* r = region_for(device);
  return r ? r->end - r->begin : 0;
}

Chunk PolicyBase::take(int device, uint64_t size) {
  if (regions_.empty()) {
    const Chunk c{device, cursor_, cursor_ + size};
    cursor_ += size;
    return c;
  }
  Region& r = *region_for(device);  // available(device) >= size > 0: there is one
  if (r.device == device) {
    const Chunk c{device, r.begin, r.begin + size};
    r.begin += size;
    return c;
  }
  // Another's region, from its back: its owner goes on from the front, and its chunks stay together.
  const Chunk c{device, r.end - size, r.end};
  r.end -= size;
  return c;
}

void PolicyBase::reserve(int device, uint64_t groups) {
  DeviceState* s = state(device);
  groups = std::min(groups, available(device));
  if (!s || groups == 0) return;
  s->reserved.push_back(take(device, groups));
}

void PolicyBase::eliminate(int device) {
  if (DeviceState* s = state(device)) s->eliminated = true;
}

Chunk PolicyBase::hand_out(DeviceState& asker, const Chunk& chunk, double now) {
  Chunk c = chunk;
  c.device = asker.index;
  asker.running = c;
  asker.running_start = now;
  asker.last_size = c.groups();
  return c;
}

std::optional<Chunk> PolicyBase::next_chunk(int device, double now) {
  DeviceState* s = state(device);
  if (!s || s->taken_over) return std::nullopt;
  // What a device taken over had set aside: any device that asks runs it, finished or eliminated,
  // since nobody else may.
  if (!orphaned_.empty()) {
    const Chunk c = orphaned_.front();
    orphaned_.erase(orphaned_.begin());
    s->running.reset();
    return hand_out(*s, c, now);
  }
  if (s->finished) return std::nullopt;
  if (s->eliminated) {
    s->finished = true;
    return std::nullopt;
  }
  s->running.reset();  // a caller that asks again is done with what it had
  if (!s->reserved.empty()) {
    const Chunk c = s->reserved.front();
    s->reserved.erase(s->reserved.begin());
    return hand_out(*s, c, now);
  }
  if (remaining() > 0) {
    const uint64_t wanted = choose_size(*s, now);  // may reserve, so read what is left after it
    // The rest, asked for whole (a tail's last package), is not rounded into a sliver for another.
    const uint64_t left = available(device);
    const uint64_t size =
        wanted >= left ? left : std::min(whole_rounds(wanted, profile(device), shape_.groups_per_slice), left);
    // choose_size may have reserved ranges (a final split) instead of sizing a front chunk.
    if (!s->reserved.empty()) {
      const Chunk c = s->reserved.front();
      s->reserved.erase(s->reserved.begin());
      return hand_out(*s, c, now);
    }
    if (size > 0) return hand_out(*s, take(device, size), now);
  }
  if (auto c = reclaim(*s, now)) return c;
  s->finished = true;
  return std::nullopt;
}

void PolicyBase::chunk_done(const ChunkTiming& timing) {
  for (const auto& a : abandoned_all_)
    if (a.device == timing.chunk.device && a.begin == timing.chunk.begin && a.end == timing.chunk.end) return;
  DeviceState* s = state(timing.chunk.device);
  if (!s) return;
  if (s->running && s->running->begin == timing.chunk.begin) s->running.reset();
  ++s->completed;
  s->completed_groups += timing.chunk.groups();
  s->busy_seconds += std::max(0.0, timing.seconds());
  s->done.push_back(timing);
  if (!timing.first_run) history_->record_chunk(shape_.kernel_key, shape_.global_size, timing);
  on_chunk_done(*s, timing);
}

void PolicyBase::end_launch(double now) {
  history_->note_launch(shape_.kernel_key, shape_.global_size);
  on_end(now);
}

void PolicyBase::device_taken_over(int device, double now) {
  (void)now;
  DeviceState* s = state(device);
  if (!s) return;
  if (s->running) abandoned_all_.push_back(*s->running);  // its time never comes: another device redoes it
  s->running.reset();
  s->finished = true;
  s->taken_over = true;
  orphaned_.insert(orphaned_.end(), s->reserved.begin(), s->reserved.end());
  s->reserved.clear();
}

std::optional<Chunk> PolicyBase::abandon_running(DeviceState& victim) {
  if (!victim.running) return std::nullopt;
  const Chunk c = *victim.running;
  victim.running.reset();
  victim.finished = true;
  abandoned_.push_back(c);
  abandoned_all_.push_back(c);
  return c;
}

std::vector<Chunk> PolicyBase::take_abandoned() {
  std::vector<Chunk> out;
  out.swap(abandoned_);
  return out;
}

std::vector<int> PolicyBase::eliminated() const {
  std::vector<int> out;
  for (const auto& s : states_)
    if (s.eliminated) out.push_back(s.index);
  return out;
}

double PolicyBase::measured_throughput(const DeviceState& device, size_t window) {
  const size_t n = device.done.size();
  const size_t first = window == 0 || window >= n ? 0 : n - window;
  double groups = 0, seconds = 0;
  for (size_t i = first; i < n; ++i) {
    groups += static_cast<double>(device.done[i].chunk.groups());
    seconds += std::max(0.0, device.done[i].seconds());
  }
  if (groups <= 0) return 0;
  return groups / std::max(seconds, 1e-9);  // t ~ 0: a very fast device, not an infinite one
}

std::vector<double> PolicyBase::current_speeds(const std::vector<DeviceState*>& devices, size_t window,
                                               SpeedSource* source) {
  std::vector<double> speeds;
  speeds.reserve(devices.size());
  bool all_measured = true;
  for (const DeviceState* d : devices) all_measured = all_measured && d->completed > 0;
  if (all_measured) {
    for (const DeviceState* d : devices) speeds.push_back(measured_throughput(*d, window));
    if (source) *source = SpeedSource::kMeasured;
    return speeds;
  }
  bool all_known = true;
  for (const DeviceState* d : devices) {
    const auto t = history_->throughput(shape_.kernel_key, shape_.global_size, d->index);
    all_known = all_known && t.has_value();
    speeds.push_back(t.value_or(0));
  }
  if (all_known) {
    if (source) *source = SpeedSource::kHistory;
    return speeds;
  }
  speeds.clear();
  for (const DeviceState* d : devices) speeds.push_back(spec_weight(profile(d->index), params_.memory_bound));
  if (source) *source = SpeedSource::kSpec;
  return speeds;
}

}  // namespace coex::sched
