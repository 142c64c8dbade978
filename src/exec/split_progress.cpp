#include "exec/split_progress.h"

#include <algorithm>
#include <chrono>

#include "exec/spin_wait.h"

namespace coex::exec {

SplitProgress::SplitProgress(std::shared_ptr<sched::Policy> policy, int home, const std::vector<int>& devices,
                             Listener listener, std::vector<sched::DeviceProfile> profiles,
                             std::chrono::nanoseconds spin)
    : listener_(std::move(listener)),
      spin_(spin),
      policy_(std::move(policy)),
      driver_(policy_.get(), home, devices, std::move(profiles)) {}

void SplitProgress::changed() {
  changes_.fetch_add(1, std::memory_order_release);
  cv_.notify_all();
}

bool SplitProgress::wait_for_change(std::unique_lock<std::mutex>& lock, std::chrono::duration<double> seconds,
                                    bool poll) {
  const uint64_t seen = changes_.load(std::memory_order_relaxed);  // under the lock: no change missed
  if (poll && poll_unlocked(lock, changes_, seen, spin_)) return true;
  cv_.wait_for(lock, seconds);
  return changes_.load(std::memory_order_relaxed) != seen;
}

void SplitProgress::report_taken_out() {
  const std::vector<sched::LaunchDriver::TakenOut> taken_out = driver_.take_taken_out();
  if (taken_out.empty()) return;  // a waiting device's look again wakes nobody
  for (const sched::LaunchDriver::TakenOut& out : taken_out) {
    const auto& callback = out.state == State::Cancelled ? listener_.on_cancel : listener_.on_abandon;
    if (callback) callback(out.device, out.running, out.seconds);
    if (out.state == State::Cancelled) cancelled_at_[out.device] = std::chrono::steady_clock::now();
  }
  changed();
}

SplitProgress::Step SplitProgress::next(int device, const std::function<double()>& now, bool wait,
                                        bool finish_when_done) {
  std::unique_lock lock(mutex_);
  // Not after a wait that only timed out: in a long launch a waiting device polls after its changes, not
  // at every look again.
  bool poll = true;
  for (;;) {
    Step step = driver_.next(device, now());
    report_taken_out();
    if (step.kind == Step::Kind::Done && finish_when_done) {
      driver_.finished(device);
      changed();
    }
    if (step.kind != Step::Kind::Wait || !wait) return step;
    poll = wait_for_change(lock, std::chrono::duration<double>(kRecheckSeconds), poll);
  }
}

void SplitProgress::chunk_preparing(int device, const sched::Chunk& chunk, double now) {
  std::lock_guard lock(mutex_);
  driver_.chunk_preparing(device, chunk, now);
}

bool SplitProgress::cancelled(int device) const {
  std::lock_guard lock(mutex_);
  return driver_.take_over().state(device) == State::Cancelled;
}

bool SplitProgress::taken_over(int device) const {
  std::lock_guard lock(mutex_);
  return driver_.take_over().state(device) == State::Abandoned;
}

bool SplitProgress::chunk_started(int device, double now) {
  std::lock_guard lock(mutex_);
  return driver_.chunk_started(device, now);
}

void SplitProgress::leave(int device) {
  std::lock_guard lock(mutex_);
  leave_locked(device);
}

void SplitProgress::leave_locked(int device) {
  if (left_behind_.erase(device)) {
    if (listener_.on_left_behind) listener_.on_left_behind(device, false);
    return;
  }
  driver_.leave(device);
  changed();
}

void SplitProgress::tell_abandoned_return(int device, double now) {
  const auto& rules = driver_.take_over();
  if (listener_.on_abandoned_return)
    listener_.on_abandoned_return(device, rules.running(device), now - rules.running_since(device));
}

bool SplitProgress::out_of_launch(int device) const {
  std::lock_guard lock(mutex_);
  const State state = driver_.take_over().state(device);
  return state == State::Cancelled || state == State::Left || state == State::Abandoned;
}

bool SplitProgress::chunk_finished(int device, const sched::ChunkTiming& timing, bool from_policy) {
  std::lock_guard lock(mutex_);
  if (!driver_.chunk_finished(device, timing, from_policy)) {
    tell_abandoned_return(device, timing.end);
    return false;
  }
  finished_groups_ += timing.chunk.groups();
  last_finish_ = std::max(last_finish_, timing.end);
  // No waiting device is woken: a chunk's end changes no answer of the driver's to one (split_progress.h,
  // next), and every chunk end of a launch over 15 devices woke all those waiting, each to take the
  // lock and look again.
  return true;
}

bool SplitProgress::join(int device) {
  std::lock_guard lock(mutex_);
  return driver_.join(device);
}

void SplitProgress::finished(int device) {
  std::lock_guard lock(mutex_);
  driver_.finished(device);
  changed();
}

bool SplitProgress::fail(int device, double now, const std::function<void()>& publish) {
  std::lock_guard lock(mutex_);
  switch (driver_.take_over().state(device)) {
    case State::Abandoned:  // in a sub-launch: its return, as chunk_finished() tells it
      if (!left_behind_.count(device)) {
        tell_abandoned_return(device, now);
        return false;
      }
      [[fallthrough]];  // left behind while preparing: it leaves, as a cancelled device does
    case State::Cancelled:
    case State::Left:
      leave_locked(device);
      return false;
    default:
      publish();
      driver_.finished(device);
      changed();
      return true;
  }
}

void SplitProgress::wait_all() {
  std::unique_lock lock(mutex_);
  bool poll = true;
  while (!driver_.all_done()) {
    const auto now = std::chrono::steady_clock::now();
    for (const auto& [device, at] : cancelled_at_) {
      if (driver_.take_over().state(device) != State::Cancelled ||
          now - at < std::chrono::duration<double>(kLeaveBehindSeconds))
        continue;
      driver_.leave_behind(device);
      left_behind_.insert(device);
      if (listener_.on_left_behind) listener_.on_left_behind(device, true);
      changed();  // the launch may be over now: a late device waiting on it (runs_after) is told
    }
    if (driver_.all_done()) break;
    poll = wait_for_change(lock, std::chrono::milliseconds(100), poll);
  }
}

bool SplitProgress::runs_after(double seconds) {
  // In seconds, not a time point: a setting of 1e10 s (never) would overflow the clock's nanoseconds.
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  while (!driver_.all_done()) {
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited >= seconds) return true;
    wait_for_change(lock, std::chrono::duration<double>(std::min(seconds - waited, 3600.0)), false);
  }
  return false;
}

std::pair<uint64_t, double> SplitProgress::finished_work() const {
  std::lock_guard lock(mutex_);
  return {finished_groups_, last_finish_};
}

std::set<int> SplitProgress::abandoned() const {
  std::lock_guard lock(mutex_);
  return driver_.take_over().in_states({State::Abandoned});
}

std::set<int> SplitProgress::cancelled_devices() const {
  std::lock_guard lock(mutex_);
  return driver_.take_over().in_states({State::Cancelled, State::Left});
}

std::set<int> SplitProgress::left_behind() const {
  std::lock_guard lock(mutex_);
  return left_behind_;
}

std::set<int> SplitProgress::dropped() const {
  std::lock_guard lock(mutex_);
  return driver_.dropped();
}

}  // namespace coex::exec
