#include "exec/split_progress.h"

#include <algorithm>
#include <chrono>

namespace coex::exec {

bool redo_is_sooner(uint64_t redo_groups, double thief_rate, uint64_t running_groups, double elapsed,
                    double victim_rate) {
  if (!(thief_rate > 0) || redo_groups == 0) return false;
  double redo = double(redo_groups) / thief_rate;
  if (elapsed >= std::max(redo * SplitProgress::kStallMargin, SplitProgress::kStallSeconds)) return true;
  return victim_rate > 0 && redo * SplitProgress::kRedoMargin < double(running_groups) / victim_rate - elapsed;
}

SplitProgress::SplitProgress(int home, const std::vector<int>& devices,
                             std::function<void(int, const sched::Chunk&, double)> on_abandon,
                             std::function<void(int, const sched::Chunk&, double)> on_abandoned_return,
                             std::function<double(int)> prior_rate, std::function<double(int)> relative_speed)
    : home_(home),
      on_abandon_(std::move(on_abandon)),
      on_abandoned_return_(std::move(on_abandoned_return)),
      prior_rate_(std::move(prior_rate)),
      relative_speed_(std::move(relative_speed)) {
  for (int d : devices) devices_[d];
}

void SplitProgress::chunk_started(int device, const sched::Chunk& chunk, double now) {
  std::lock_guard lock(mutex_);
  Device& d = devices_[device];
  d.taken.push_back(chunk);
  d.running = chunk;
  d.running_since = now;
  d.state = State::Running;
}

bool SplitProgress::chunk_finished(int device, double now) {
  std::lock_guard lock(mutex_);
  Device& d = devices_[device];
  double seconds = now - d.running_since;
  if (d.state == State::Abandoned) {
    if (on_abandoned_return_) on_abandoned_return_(device, d.running, seconds);
    return false;
  }
  d.done_groups += d.running.groups();
  d.busy_seconds += seconds;
  d.state = State::Working;
  cv_.notify_all();
  return true;
}

int SplitProgress::pick_victim(int thief, double now) const {
  const Device& me = devices_.at(thief);
  int victim = -1;
  for (const auto& [index, d] : devices_) {
    if (index == thief || index == home_ || d.state != State::Running) continue;
    uint64_t groups = 0;
    for (const auto& c : d.taken) groups += c.groups();
    double pace = d.rate() > 0 ? d.rate() : (prior_rate_ ? prior_rate_(index) : 0);
    if (!(pace > 0) && relative_speed_) {  // a guess from the specifications:
                                           // the CPU beside GPUs
      double mine = relative_speed_(thief), its = relative_speed_(index);
      if (mine > 0 && its > 0) pace = me.rate() * its / mine;
    }
    if (redo_is_sooner(groups, me.rate(), d.running.groups(), now - d.running_since, pace)) victim = index;
  }
  return victim;
}

void SplitProgress::abandon(int device, double now) {
  devices_[device].state = State::Abandoned;
  const Device& d = devices_[device];
  if (on_abandon_) on_abandon_(device, d.running, now - d.running_since);
  cv_.notify_all();
}

std::optional<std::vector<sched::Chunk>> SplitProgress::wait_or_take_over(int device,
                                                                          const std::function<double()>& now) {
  std::unique_lock lock(mutex_);
  devices_[device].state = State::Waiting;
  for (;;) {
    double time = now();
    int victim = pick_victim(device, time);
    if (victim >= 0) {
      std::vector<sched::Chunk> ranges = devices_[victim].taken;
      abandon(victim, time);
      devices_[device].state = State::Working;
      return ranges;
    }
    bool others_work = false;
    for (const auto& [index, d] : devices_)
      others_work |= index != device && index != home_ && (d.state == State::Working || d.state == State::Running);
    if (!others_work) {
      devices_[device].state = State::Working;
      return std::nullopt;
    }
    cv_.wait_for(lock, std::chrono::duration<double>(kRecheckSeconds));
  }
}

void SplitProgress::finished(int device) {
  std::lock_guard lock(mutex_);
  devices_[device].state = State::Finished;
  cv_.notify_all();
}

void SplitProgress::abandon_if_running(int device, double now) {
  std::lock_guard lock(mutex_);
  if (device != home_ && devices_[device].state == State::Running) abandon(device, now);
}

void SplitProgress::wait_all() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [this] {
    for (const auto& [index, d] : devices_)
      if (d.state != State::Finished && d.state != State::Abandoned) return false;
    return true;
  });
}

std::set<int> SplitProgress::abandoned() const {
  std::lock_guard lock(mutex_);
  std::set<int> out;
  for (const auto& [index, d] : devices_)
    if (d.state == State::Abandoned) out.insert(index);
  return out;
}

}  // namespace coex::exec
