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
                             std::function<double(int)> prior_rate, std::function<double(int)> relative_speed,
                             std::function<void(int, const sched::Chunk&, double)> on_cancel)
    : home_(home),
      on_abandon_(std::move(on_abandon)),
      on_abandoned_return_(std::move(on_abandoned_return)),
      prior_rate_(std::move(prior_rate)),
      relative_speed_(std::move(relative_speed)),
      on_cancel_(std::move(on_cancel)) {
  for (int d : devices) devices_[d];
}

void SplitProgress::chunk_preparing(int device, const sched::Chunk& chunk, double now) {
  std::lock_guard lock(mutex_);
  Device& d = devices_[device];
  d.taken.push_back(chunk);
  d.running = chunk;
  d.running_since = now;
  d.state = State::Preparing;
}

bool SplitProgress::cancelled(int device) const {
  std::lock_guard lock(mutex_);
  return devices_.at(device).state == State::Cancelled;
}

bool SplitProgress::taken_over(int device) const {
  std::lock_guard lock(mutex_);
  return devices_.at(device).state == State::Abandoned;
}

bool SplitProgress::chunk_started(int device, double now) {
  std::lock_guard lock(mutex_);
  Device& d = devices_[device];
  if (d.state == State::Cancelled) return false;
  d.running_since = now;
  d.state = State::Running;
  return true;
}

void SplitProgress::leave(int device) {
  std::lock_guard lock(mutex_);
  Device& d = devices_[device];
  if (d.state != State::Cancelled) return;
  d.state = State::Left;
  cv_.notify_all();
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
    const bool preparing = d.state == State::Preparing;
    if (index == thief || index == home_ || (d.state != State::Running && !preparing)) continue;
    uint64_t groups = 0;
    for (const auto& c : d.taken) groups += c.groups();
    double pace = d.rate() > 0 ? d.rate() : (prior_rate_ ? prior_rate_(index) : 0);
    const double elapsed = now - d.running_since;
    if (!(pace > 0) && relative_speed_) {  // a guess from the specifications:
                                           // the CPU beside GPUs
      double mine = relative_speed_(thief), its = relative_speed_(index);
      if (mine > 0 && its > 0) pace = me.rate() * its / mine;
      // A device the specifications call much slower that has outrun the time they gave its
      // sub-launch is slower still, by how much they cannot say: it is given as long again as it
      // has run. Without this the guess, once outrun, promised it was about to finish until the
      // stall rule: beside an H100 the CPU held cold launches of benchmarks/mandelbrot for 3.3 s
      // (guessed 65x slower, it was 1500x).
      const bool outrun = d.state == State::Running && pace > 0 && elapsed * pace > double(d.running.groups());
      if (outrun && mine >= kSlowBySpecification * its) pace = double(d.running.groups()) / (2 * elapsed);
    }
    // Preparing, it has computed nothing yet: all its chunk's time is ahead of it. A preparation that
    // lasts as long as a stalled sub-launch would is a stall too.
    if (preparing ? redo_is_sooner(groups, me.rate(), d.running.groups(), 0, pace) ||
                        redo_is_sooner(groups, me.rate(), 0, elapsed, 0)
                  : redo_is_sooner(groups, me.rate(), d.running.groups(), elapsed, pace))
      victim = index;
  }
  return victim;
}

void SplitProgress::abandon(int device, double now) {
  Device& d = devices_[device];
  d.state = d.state == State::Preparing ? State::Cancelled : State::Abandoned;
  const auto& callback = d.state == State::Cancelled ? on_cancel_ : on_abandon_;
  if (callback) callback(device, d.running, now - d.running_since);
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
      others_work |= index != device && index != home_ &&
                     (d.state == State::Working || d.state == State::Preparing || d.state == State::Running);
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
  const State state = devices_[device].state;
  if (device != home_ && (state == State::Running || state == State::Preparing)) abandon(device, now);
}

void SplitProgress::wait_all() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [this] {
    for (const auto& [index, d] : devices_)
      if (d.state != State::Finished && d.state != State::Abandoned && d.state != State::Left) return false;
    return true;
  });
}

std::set<int> SplitProgress::in_states(std::initializer_list<State> states) const {
  std::lock_guard lock(mutex_);
  std::set<int> out;
  for (const auto& [index, d] : devices_)
    if (std::find(states.begin(), states.end(), d.state) != states.end()) out.insert(index);
  return out;
}

std::set<int> SplitProgress::abandoned() const { return in_states({State::Abandoned}); }

std::set<int> SplitProgress::cancelled_devices() const { return in_states({State::Cancelled, State::Left}); }

}  // namespace coex::exec
