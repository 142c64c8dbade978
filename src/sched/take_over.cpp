#include "sched/take_over.h"

#include <algorithm>
#include <limits>

#include "sched/split_math.h"

namespace coex::sched {

bool redo_is_sooner(uint64_t redo_groups, double thief_rate, uint64_t running_groups, double elapsed,
                    double victim_rate, const TakeOverRules& rules) {
  if (!(thief_rate > 0) || redo_groups == 0) return false;
  double redo = double(redo_groups) / thief_rate;
  if (elapsed >= std::max(redo * rules.stall_margin, rules.stall_seconds)) return true;
  return victim_rate > 0 && redo * rules.redo_margin < double(running_groups) / victim_rate - elapsed;
}

TakeOver::TakeOver(int home, const std::vector<int>& devices, std::vector<DeviceProfile> profiles, TakeOverRules rules)
    : home_(home), profiles_(std::move(profiles)), rules_(rules) {
  for (int d : devices) devices_[d];
}

void TakeOver::chunk_preparing(int device, const Chunk& chunk, double now) {
  Device& d = devices_[device];
  auto owed = std::find_if(d.owed.begin(), d.owed.end(),
                           [&](const Chunk& c) { return c.begin == chunk.begin && c.end == chunk.end; });
  if (owed != d.owed.end()) d.owed.erase(owed);
  d.taken.push_back(chunk);
  d.running = chunk;
  d.running_since = now;
  d.state = State::Preparing;
}

bool TakeOver::chunk_started(int device, double now) {
  Device& d = devices_[device];
  if (d.state == State::Cancelled || d.state == State::Abandoned) return false;  // Abandoned: left behind
  d.running_since = now;
  d.state = State::Running;
  return true;
}

bool TakeOver::chunk_finished(int device, double now) {
  Device& d = devices_[device];
  if (d.state == State::Abandoned) return false;
  d.done_groups += d.running.groups();
  d.busy_seconds += now - d.running_since;
  d.state = State::Working;
  return true;
}

void TakeOver::leave(int device) {
  Device& d = devices_[device];
  if (d.state == State::Cancelled) d.state = State::Left;
}

void TakeOver::leave_behind(int device) {
  Device& d = devices_[device];
  if (d.state == State::Cancelled) d.state = State::Abandoned;
}

double TakeOver::specification(int device) const { return spec_weight_of(profiles_, device); }

int TakeOver::pick_victim(int thief, double now) const {
  const Device& me = devices_.at(thief);
  int victim = -1;
  for (const auto& [index, d] : devices_) {
    const bool preparing = d.state == State::Preparing;
    if (index == thief || index == home_ || (d.state != State::Running && !preparing)) continue;
    uint64_t groups = 0;
    for (const auto& c : d.taken) groups += c.groups();
    for (const auto& c : d.owed) groups += c.groups();
    double pace = d.rate();
    const double elapsed = now - d.running_since;
    if (!(pace > 0)) {  // a guess from the specifications: the CPU beside GPUs
      const double mine = specification(thief), its = specification(index);
      if (mine > 0 && its > 0) pace = me.rate() * its / mine;
      // A device the specifications call much slower that has outrun the time they gave its
      // sub-launch is slower still, by how much they cannot say: it is given as long again as it
      // has run. Without this the guess, once outrun, promised it was about to finish until the
      // stall rule: beside an H100 the CPU held cold launches of benchmarks/mandelbrot for 3.3 s
      // (guessed 65x slower, it was 1500x).
      const bool outrun = d.state == State::Running && pace > 0 && elapsed * pace > double(d.running.groups());
      if (outrun && mine > rules_.slow_by_specification * its) pace = double(d.running.groups()) / (2 * elapsed);
    }
    // Preparing, it has computed nothing yet: all its chunk's time is ahead of it. A preparation that
    // lasts as long as a stalled sub-launch would is a stall too.
    if (preparing ? redo_is_sooner(groups, me.rate(), d.running.groups(), 0, pace, rules_) ||
                        redo_is_sooner(groups, me.rate(), 0, elapsed, 0, rules_)
                  : redo_is_sooner(groups, me.rate(), d.running.groups(), elapsed, pace, rules_))
      victim = index;
  }
  return victim;
}

TakeOver::Idle TakeOver::idle(int device, double now) {
  Idle out;
  devices_[device].state = State::Waiting;
  const int victim = pick_victim(device, now);
  if (victim >= 0) {
    Device& v = devices_[victim];
    out.victim = victim;
    out.ranges = v.taken;
    out.ranges.insert(out.ranges.end(), v.owed.begin(), v.owed.end());
    v.owed.clear();
    Device& me = devices_[device];
    for (const Chunk& c : out.ranges) me.owed.push_back({device, c.begin, c.end});
    out.victim_running = v.running;
    out.victim_seconds = now - v.running_since;
    v.state = v.state == State::Preparing ? State::Cancelled : State::Abandoned;
    out.victim_state = v.state;
    me.state = State::Working;
    return out;
  }
  for (const auto& [index, d] : devices_)
    out.others_work |= index != device && index != home_ &&
                       (d.state == State::Working || d.state == State::Preparing || d.state == State::Running);
  return out;
}

bool TakeOver::join(int device) {
  if (all_done() || devices_.count(device)) return false;
  devices_[device];
  return true;
}

void TakeOver::working(int device) { devices_[device].state = State::Working; }

void TakeOver::finished(int device) { devices_[device].state = State::Finished; }

bool TakeOver::abandon_if_running(int device, double now) {
  (void)now;
  Device& d = devices_[device];
  if (device == home_ || (d.state != State::Running && d.state != State::Preparing)) return false;
  d.state = d.state == State::Preparing ? State::Cancelled : State::Abandoned;
  return true;
}

std::set<int> TakeOver::in_states(std::initializer_list<State> states) const {
  std::set<int> out;
  for (const auto& [index, d] : devices_)
    if (std::find(states.begin(), states.end(), d.state) != states.end()) out.insert(index);
  return out;
}

bool TakeOver::all_done() const {
  for (const auto& [index, d] : devices_)
    if (d.state != State::Finished && d.state != State::Abandoned && d.state != State::Left) return false;
  return true;
}

double TakeOver::next_stall_check(int thief) const {
  double next = std::numeric_limits<double>::infinity();
  const double rate = devices_.at(thief).rate();
  if (!(rate > 0)) return next;
  for (const auto& [index, d] : devices_) {
    if (index == thief || index == home_ || (d.state != State::Running && d.state != State::Preparing)) continue;
    uint64_t groups = 0;
    for (const auto& c : d.taken) groups += c.groups();
    for (const auto& c : d.owed) groups += c.groups();
    if (groups == 0) continue;
    const double redo = double(groups) / rate;
    next = std::min(next, d.running_since + std::max(redo * rules_.stall_margin, rules_.stall_seconds));
  }
  return next;
}

}  // namespace coex::sched
