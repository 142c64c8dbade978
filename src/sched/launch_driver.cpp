#include "sched/launch_driver.h"

namespace coex::sched {

LaunchDriver::LaunchDriver(Policy* policy, int home, const std::vector<int>& devices,
                           std::vector<DeviceProfile> profiles, TakeOverRules rules, bool take_over)
    : policy_(policy), take_over_(home, devices, std::move(profiles), rules), take_over_enabled_(take_over) {
  for (int d : devices) devices_[d];
}

void LaunchDriver::note_taken_back(double now) {
  if (!policy_) return;
  for (const Chunk& back : policy_->take_abandoned()) {
    taken_back_.insert(back.device);
    const double since = take_over_.running_since(back.device);
    if (!take_over_.abandon_if_running(back.device, now)) continue;
    taken_out_.push_back(
        {back.device, take_over_.state(back.device), take_over_.running(back.device), now - since, true, -1});
  }
}

LaunchDriver::Step LaunchDriver::next(int device, double now) {
  Device& d = devices_[device];
  Step step;
  if (taken_back_.count(device)) {  // its results are dropped: whatever it ran now would be lost
    take_over_.working(device);
    return step;  // Done
  }
  if (!d.owed.empty()) {  // a range taken over: not the policy's
    step.kind = Step::Kind::Run;
    step.chunk = d.owed.front().first;
    step.taken_from = d.owed.front().second;
    d.owed.pop_front();
    return step;
  }
  if (d.asks_policy && policy_) {
    std::optional<Chunk> chunk = policy_->next_chunk(device, now);
    note_taken_back(now);
    if (chunk) {
      take_over_.working(device);
      step.kind = Step::Kind::Run;
      step.chunk = *chunk;
      step.from_policy = true;
      return step;
    }
  }
  d.asks_policy = false;
  if (!take_over_enabled_) return step;  // Done
  TakeOver::Idle idle = take_over_.idle(device, now);
  if (idle.victim >= 0) {
    taken_out_.push_back({idle.victim, idle.victim_state, idle.victim_running, idle.victim_seconds, false, device});
    for (const Chunk& range : idle.ranges) d.owed.push_back({{device, range.begin, range.end}, idle.victim});
    devices_[idle.victim].owed.clear();  // passed on with the rest (TakeOver::Device::owed)
    // What the policy had set aside for the victim goes to whoever asks next: every device asks again.
    if (policy_) {
      policy_->device_taken_over(idle.victim, now);
      for (auto& [index, other] : devices_) other.asks_policy = index != idle.victim;
    }
    return next(device, now);
  }
  if (!idle.others_work) {
    take_over_.working(device);  // until its part is over (finished())
    return step;                 // Done
  }
  step.kind = Step::Kind::Wait;
  step.look_again = take_over_.next_stall_check(device);
  return step;
}

std::vector<LaunchDriver::TakenOut> LaunchDriver::take_taken_out() {
  std::vector<TakenOut> out;
  out.swap(taken_out_);
  return out;
}

void LaunchDriver::chunk_preparing(int device, const Chunk& chunk, double now) {
  take_over_.chunk_preparing(device, chunk, now);
}

bool LaunchDriver::chunk_started(int device, double now) { return take_over_.chunk_started(device, now); }

bool LaunchDriver::chunk_finished(int device, const ChunkTiming& timing, bool from_policy) {
  if (!take_over_.chunk_finished(device, timing.end)) return false;
  if (from_policy && policy_) policy_->chunk_done(timing);
  return true;
}

void LaunchDriver::leave(int device) { take_over_.leave(device); }

void LaunchDriver::finished(int device) { take_over_.finished(device); }

bool LaunchDriver::join(int device) {
  if (!take_over_.join(device)) return false;
  devices_[device];
  return true;
}

std::set<int> LaunchDriver::dropped() const {
  std::set<int> out = taken_back_;
  for (int d : take_over_.in_states({TakeOver::State::Abandoned, TakeOver::State::Cancelled, TakeOver::State::Left}))
    out.insert(d);
  return out;
}

}  // namespace coex::sched
