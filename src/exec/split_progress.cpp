#include "exec/split_progress.h"

#include <chrono>

namespace coex::exec {

SplitProgress::SplitProgress(int home, const std::vector<int>& devices, Listener listener,
                             std::vector<sched::DeviceProfile> profiles)
    : listener_(std::move(listener)), rules_(home, devices, std::move(profiles)) {}

void SplitProgress::chunk_preparing(int device, const sched::Chunk& chunk, double now) {
  std::lock_guard lock(mutex_);
  rules_.chunk_preparing(device, chunk, now);
}

bool SplitProgress::cancelled(int device) const {
  std::lock_guard lock(mutex_);
  return rules_.state(device) == State::Cancelled;
}

bool SplitProgress::taken_over(int device) const {
  std::lock_guard lock(mutex_);
  return rules_.state(device) == State::Abandoned;
}

bool SplitProgress::chunk_started(int device, double now) {
  std::lock_guard lock(mutex_);
  return rules_.chunk_started(device, now);
}

void SplitProgress::leave(int device) {
  std::lock_guard lock(mutex_);
  rules_.leave(device);
  cv_.notify_all();
}

bool SplitProgress::chunk_finished(int device, double now) {
  std::lock_guard lock(mutex_);
  if (!rules_.chunk_finished(device, now)) {
    if (listener_.on_abandoned_return)
      listener_.on_abandoned_return(device, rules_.running(device), now - rules_.running_since(device));
    return false;
  }
  cv_.notify_all();
  return true;
}

void SplitProgress::report_taken_over(int device, State state, const sched::Chunk& chunk, double seconds) {
  const auto& callback = state == State::Cancelled ? listener_.on_cancel : listener_.on_abandon;
  if (callback) callback(device, chunk, seconds);
  cv_.notify_all();
}

std::optional<std::vector<sched::Chunk>> SplitProgress::wait_or_take_over(int device,
                                                                          const std::function<double()>& now) {
  std::unique_lock lock(mutex_);
  for (;;) {
    sched::TakeOver::Idle idle = rules_.idle(device, now());
    if (idle.victim >= 0) {
      report_taken_over(idle.victim, idle.victim_state, idle.victim_running, idle.victim_seconds);
      return std::move(idle.ranges);
    }
    if (!idle.others_work) {
      rules_.working(device);
      return std::nullopt;
    }
    cv_.wait_for(lock, std::chrono::duration<double>(kRecheckSeconds));
  }
}

bool SplitProgress::join(int device) {
  std::lock_guard lock(mutex_);
  return rules_.join(device);
}

void SplitProgress::finished(int device) {
  std::lock_guard lock(mutex_);
  rules_.finished(device);
  cv_.notify_all();
}

void SplitProgress::abandon_if_running(int device, double now) {
  std::lock_guard lock(mutex_);
  if (rules_.abandon_if_running(device, now))
    report_taken_over(device, rules_.state(device), rules_.running(device), now - rules_.running_since(device));
}

void SplitProgress::wait_all() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [this] { return rules_.all_done(); });
}

std::set<int> SplitProgress::abandoned() const {
  std::lock_guard lock(mutex_);
  return rules_.in_states({State::Abandoned});
}

std::set<int> SplitProgress::cancelled_devices() const {
  std::lock_guard lock(mutex_);
  return rules_.in_states({State::Cancelled, State::Left});
}

}  // namespace coex::exec
