#include "sched/simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <queue>
#include <random>

#include "sched/launch_driver.h"
#include "sched/launch_policies.h"
#include "sched/policy_factory.h"
#include "sched/sim_model.h"

namespace coex::sched {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr size_t kTimer = std::numeric_limits<size_t>::max();  // an event that is no chunk's end

// One program run: the devices' clocks and speed timelines. As in the executor, one policy object
// lives for the run and answers whether a launch is split (unsplit_reason), and each split launch
// takes a policy object no other launch holds from the run's LaunchPolicies (exec/split_runner.cpp):
// what a policy keeps from one launch to the next must be in the History, here as there.
class RunState {
 public:
  RunState(const Scenario& s, const CostModel& cost, Policy& policy, LaunchPolicies& launch_policies, int run)
      : s_(s),
        cost_(cost),
        policy_(policy),
        launch_policies_(launch_policies),
        run_(run),
        timelines_(s.devices.size()),
        busy_until_(s.devices.size(), 0.0),
        ran_(s.devices.size(), false) {
    for (size_t i = 0; i < s.devices.size(); ++i)
      rngs_.emplace_back(s.seed * 1000003ull + static_cast<uint64_t>(run) * 7919ull + i);
  }

  LaunchResult launch(int index);

 private:
  struct Event {
    double time;
    uint64_t seq;
    size_t chunk;  // index into trace; kTimer: a waiting device looks again
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };

  // The device is idle at `now`: the launch driver says what it does next (sched/launch_driver.h).
  void step(size_t device, double now, LaunchResult& r);
  // A device the driver took out of the launch: the policy took its chunk back, or another took it over.
  void taken_out(const LaunchDriver::TakenOut& out, LaunchResult& r);
  // The device's next chunk starts at `now`: from the policy, or a range it took over.
  void run_chunk(size_t device, const Chunk& chunk, bool redo, double now, LaunchResult& r);
  // The device's results in this launch are dropped: it was taken over.
  void drop_results(size_t device, LaunchResult& r);
  size_t slot_of(int index) const;
  bool overlaps(uint64_t begin, uint64_t end) const;

  const Scenario& s_;
  const CostModel& cost_;
  Policy& policy_;
  LaunchPolicies& launch_policies_;
  std::shared_ptr<Policy> launch_policy_;  // the split launch's
  int run_;
  std::vector<SpeedTimeline> timelines_;
  std::vector<double> busy_until_;  // a device still running an abandoned chunk
  std::vector<std::mt19937_64> rngs_;
  std::vector<bool> ran_;  // the device ran a chunk in this run: its first run of the kernel is behind it
  double clock_ = 0;

  // Per launch.
  double t0_ = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  uint64_t seq_ = 0;
  std::map<uint64_t, uint64_t> live_;  // begin -> end of chunks handed out and not abandoned
  std::vector<int> running_;           // per device: trace index of its running chunk, -1 if none
  size_t handed_out_ = 0;
  std::optional<LaunchDriver> driver_;
  std::vector<bool> waiting_;      // per device: idle, looks again at the next event
  std::vector<double> next_look_;  // per device: the time of its pending timer, if any
};

size_t RunState::slot_of(int index) const {
  size_t slot = 0;
  while (s_.devices[slot].profile.index != index) ++slot;
  return slot;
}

bool RunState::overlaps(uint64_t begin, uint64_t end) const {
  auto it = live_.upper_bound(begin);
  if (it != live_.end() && it->first < end) return true;
  if (it != live_.begin() && std::prev(it)->second > begin) return true;
  return false;
}

void RunState::taken_out(const LaunchDriver::TakenOut& out, LaunchResult& r) {
  const size_t d = slot_of(out.device);
  if (!out.by_policy) {
    drop_results(d, r);
    return;
  }
  const int t = running_[d];
  if (t < 0) return;
  r.trace[t].abandoned = true;
  live_.erase(r.trace[t].chunk.begin);
  busy_until_[d] = t0_ + r.trace[t].finish;  // its queue stays busy until the kernel ends (or forever)
  running_[d] = -1;
  ++r.abandoned;
}

void RunState::step(size_t device, double now, LaunchResult& r) {
  if (!r.error.empty()) return;
  const int index = s_.devices[device].profile.index;
  const LaunchDriver::Step next = driver_->next(index, now - t0_);
  for (const LaunchDriver::TakenOut& out : driver_->take_taken_out()) taken_out(out, r);
  waiting_[device] = next.kind == LaunchDriver::Step::Kind::Wait;
  if (next.kind == LaunchDriver::Step::Kind::Done) {
    driver_->finished(index);
    return;
  }
  if (next.kind == LaunchDriver::Step::Kind::Wait) {
    // It looks again at the next chunk's end, or when the stall rule may let it take over.
    if (!std::isfinite(next.look_again)) return;
    const double when = std::max(t0_ + next.look_again, now) + 1e-9;
    if (next_look_[device] == when) return;
    next_look_[device] = when;
    events_.push({when, seq_++, kTimer});
    return;
  }
  // Every chunk handed out is at least one group (or reissues an abandoned one): bounded, so a
  // policy that loops is caught instead of hanging the simulator.
  if (++handed_out_ > 4 * (s_.kernel.groups + s_.devices.size()) + 64) {
    r.error = "policy keeps handing out chunks: more than 4x the work-groups";
    return;
  }
  const Chunk& c = next.chunk;
  if (next.from_policy) {
    const uint64_t groups = s_.kernel.groups;
    if (c.device != index || c.begin >= c.end || c.end > groups) {
      r.error = "policy handed device " + std::to_string(index) + " an invalid chunk [" + std::to_string(c.begin) +
                ", " + std::to_string(c.end) + ") for device " + std::to_string(c.device);
      return;
    }
    if (overlaps(c.begin, c.end)) {
      r.error = "policy handed out [" + std::to_string(c.begin) + ", " + std::to_string(c.end) +
                ") twice (overlaps a live chunk)";
      return;
    }
    live_[c.begin] = c.end;
  }
  run_chunk(device, c, !next.from_policy, now, r);
}

void RunState::run_chunk(size_t device, const Chunk& chunk, bool redo, double now, LaunchResult& r) {
  driver_->chunk_preparing(chunk.device, chunk, now - t0_);
  driver_->chunk_started(chunk.device, now - t0_);
  const SimDevice& dev = s_.devices[device];
  const double g = static_cast<double>(chunk.groups());
  const double in = dev.bandwidth_in_gbs > 0 ? g * s_.kernel.bytes_in_per_group / (dev.bandwidth_in_gbs * 1e9) : 0;
  const double out = dev.bandwidth_out_gbs > 0 ? g * s_.kernel.bytes_out_per_group / (dev.bandwidth_out_gbs * 1e9) : 0;
  double noise = 1;
  if (dev.noise > 0) noise += dev.noise * std::fabs(std::normal_distribution<double>(0, 1)(rngs_[device]));
  const bool first_run = !ran_[device] && dev.first_run_seconds > 0;  // a scenario without them: none
  ran_[device] = true;
  const double compute_start = now + dev.latency + in + (first_run ? dev.first_run_seconds : 0);
  const double compute_end =
      timelines_[device].finish_time(compute_start, cost_.cost(chunk.begin, chunk.end) * noise, dev.speed);
  SimChunk sc;
  sc.chunk = chunk;
  sc.start = now - t0_;
  sc.finish = compute_end + out - t0_;
  sc.transfer_seconds = in + out;
  sc.redo = redo;
  sc.first_run = first_run;
  r.trace.push_back(sc);
  ++r.chunks;
  running_[device] = static_cast<int>(r.trace.size() - 1);
  if (std::isfinite(sc.finish)) events_.push({compute_end + out, seq_++, r.trace.size() - 1});
}

void RunState::drop_results(size_t device, LaunchResult& r) {
  const int index = s_.devices[device].profile.index;
  for (size_t t = 0; t < r.trace.size(); ++t) {
    SimChunk& sc = r.trace[t];
    if (sc.chunk.device != index || sc.abandoned) continue;
    sc.abandoned = true;
    if (running_[device] == static_cast<int>(t)) {
      busy_until_[device] = t0_ + sc.finish;  // its queue stays busy until the kernel ends (or forever)
      running_[device] = -1;
      ++r.abandoned;
    } else {
      r.groups_per_device[device] -= sc.chunk.groups();
    }
  }
  r.finish_per_device[device] = 0;
  waiting_[device] = false;
}

LaunchResult RunState::launch(int index) {
  LaunchResult r;
  r.run = run_;
  r.launch = index;
  t0_ = clock_;
  const size_t n = s_.devices.size();
  for (size_t d = 0; d < n; ++d)
    for (const auto& c : s_.devices[d].changes)
      if (c.launch == index) timelines_[d].set(t0_ + c.at, c.factor);
  live_.clear();
  running_.assign(n, -1);
  waiting_.assign(n, false);
  next_look_.assign(n, -1);
  handed_out_ = 0;
  events_ = {};
  r.groups_per_device.assign(n, 0);
  r.finish_per_device.assign(n, 0.0);

  LaunchShape shape;
  shape.kernel_key = s_.kernel.key;
  shape.total_groups = s_.kernel.groups;
  shape.items_per_group = s_.kernel.items_per_group;
  shape.global_size = s_.kernel.groups * s_.kernel.items_per_group;
  shape.bytes_in_per_group = s_.kernel.bytes_in_per_group;
  shape.bytes_out_per_group = s_.kernel.bytes_out_per_group;
  std::vector<int> offered;
  std::vector<size_t> offered_slots;
  for (size_t d = 0; d < n; ++d) {
    if (busy_until_[d] > t0_) {
      r.excluded.push_back(s_.devices[d].profile.index);
      continue;
    }
    offered.push_back(s_.devices[d].profile.index);
    offered_slots.push_back(d);
  }
  const int home = s_.home >= 0 ? s_.devices[size_t(s_.home)].profile.index : -1;
  shape.home = home;
  const bool home_offered = std::find(offered.begin(), offered.end(), home) != offered.end();
  if (home_offered) {
    // The gate's devices, where it weighed a measured split, go to the launch's policy as the
    // executor hands them (exec/split_runner.cpp, LaunchShape::gate_devices).
    GateVerdict verdict;
    if (const char* reason = policy_.unsplit_reason(shape, offered, &verdict))
      r.not_split = reason;
    else if (verdict.split_seconds)
      shape.gate_devices = verdict.devices;
  }
  // The launch driver as the executor runs it, among the devices that run the launch (home is never
  // taken over; without a home any device may be); guesses from the specifications unless the user
  // fixed the shares.
  std::vector<DeviceProfile> specified;
  if (policy_.guesses_pace_by_specification())
    for (const auto& d : s_.devices) specified.push_back(d.profile);
  if (!r.not_split.empty()) {  // a plain launch on home: no policy, no chunks of its
    driver_.emplace(nullptr, home, std::vector<int>{home}, specified, TakeOverRules{}, s_.take_over);
    live_[0] = s_.kernel.groups;
    run_chunk(size_t(s_.home), {home, 0, s_.kernel.groups}, true, t0_, r);
    r.planned_by = "unsplit";
  } else {
    launch_policy_.reset();  // the last split's goes back to the run's objects first
    launch_policy_ = launch_policies_.acquire();
    launch_policy_->begin_launch(shape, offered, 0.0);
    driver_.emplace(launch_policy_.get(), home, offered, specified, TakeOverRules{}, s_.take_over);
    r.planned_by = launch_policy_->planned_by();
    for (size_t d : offered_slots) step(d, t0_, r);
  }

  double now = t0_;
  while (!events_.empty() && r.error.empty()) {
    const Event e = events_.top();
    events_.pop();
    if (e.chunk != kTimer) {
      const SimChunk sc = r.trace[e.chunk];  // a copy: step() below appends to the trace
      if (sc.abandoned) continue;            // its device is out of this launch; the policy expects nothing
      now = e.time;
      const size_t device = slot_of(sc.chunk.device);
      running_[device] = -1;
      r.groups_per_device[device] += sc.chunk.groups();
      r.finish_per_device[device] = std::max(r.finish_per_device[device], sc.finish);
      ChunkTiming timing;
      timing.chunk = sc.chunk;
      timing.start = sc.start;
      timing.end = sc.finish;
      timing.transfer_seconds = sc.transfer_seconds;
      timing.first_run = sc.first_run;
      driver_->chunk_finished(sc.chunk.device, timing, !sc.redo);  // a redo is not the policy's chunk
      step(device, now, r);
    } else {
      // A device's look again when the stall rule may let it take over: stale once it no longer
      // waits (the device it waited for finished), and then time does not move for it.
      if (std::find(waiting_.begin(), waiting_.end(), true) == waiting_.end()) continue;
      now = std::max(now, e.time);
    }
    for (size_t d = 0; d < n && r.error.empty(); ++d)
      if (waiting_[d]) step(d, now, r);
  }

  uint64_t covered = 0;
  for (const auto& [b, e] : live_) covered += e - b;
  uint64_t never = 0;
  for (size_t d = 0; d < n; ++d) {
    const int t = running_[d];
    if (t >= 0 && !std::isfinite(r.trace[t].finish)) {
      never += r.trace[t].chunk.groups();
      busy_until_[d] = kInf;
    }
  }
  // No device left to offer work to (all still hold a kernel that never ends): stalled, not a bug.
  const bool nobody = offered.empty();
  if (r.error.empty() && covered < s_.kernel.groups && never == 0 && !nobody)
    r.error = "policy left " + std::to_string(s_.kernel.groups - covered) + " work-groups unassigned";
  r.stalled = never > 0 || (nobody && covered < s_.kernel.groups);
  r.unfinished_groups = r.stalled ? never + (s_.kernel.groups - covered) : 0;
  const bool split = r.not_split.empty();
  if (r.error.empty() && split) launch_policy_->end_launch(now - t0_);
  if (split) r.eliminated = launch_policy_->eliminated();

  std::vector<double> speeds;
  for (const auto& d : s_.devices) speeds.push_back(d.speed);
  r.ideal_makespan = ideal_makespan(timelines_, speeds, t0_, cost_.total());
  double first = kInf, last = 0;
  for (size_t d = 0; d < n; ++d)
    if (r.groups_per_device[d] > 0) {
      first = std::min(first, r.finish_per_device[d]);
      last = std::max(last, r.finish_per_device[d]);
    }
  if (r.stalled || !r.error.empty()) {
    r.makespan = std::numeric_limits<double>::quiet_NaN();
    r.efficiency = 0;
    r.load_balance = 0;
  } else {
    r.makespan = last;
    r.efficiency = last > 0 ? r.ideal_makespan / last : 1;
    r.load_balance = last > 0 ? first / last : 1;
  }
  // The whole split launch's time, as the executor reports it (auto weighs later splits against home
  // alone with it).
  if (split && r.error.empty() && !r.stalled) launch_policy_->launch_measured(r.makespan);
  clock_ = std::max(now, t0_ + (std::isfinite(r.makespan) ? r.makespan : 0));
  return r;
}

double round6(double v) {
  if (!std::isfinite(v) || v == 0) return v;
  const double scale = std::pow(10.0, 5 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
  return std::round(v * scale) / scale;
}

nlohmann::ordered_json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(round6(v)) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json launch_line(const Scenario& s, const std::string& policy, const LaunchResult& r) {
  nlohmann::ordered_json j;
  j["scenario"] = s.name;
  j["policy"] = policy;
  if (s.runs > 1) j["run"] = r.run;
  j["launch"] = r.launch;
  if (r.planned_by != policy) j["planned_by"] = r.planned_by;
  if (!r.not_split.empty()) j["not_split"] = r.not_split;
  j["makespan"] = number_or_null(r.makespan);
  j["ideal_makespan"] = number_or_null(r.ideal_makespan);
  j["efficiency"] = round6(r.efficiency);
  j["load_balance"] = round6(r.load_balance);
  j["chunks"] = r.chunks;
  nlohmann::ordered_json share = nlohmann::ordered_json::object();
  for (size_t d = 0; d < s.devices.size(); ++d)
    share[s.devices[d].profile.name] =
        round6(static_cast<double>(r.groups_per_device[d]) / static_cast<double>(s.kernel.groups));
  j["share"] = share;
  auto names = [&](const std::vector<int>& indices) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (int i : indices)
      for (const auto& d : s.devices)
        if (d.profile.index == i) list.push_back(d.profile.name);
    return list;
  };
  if (!r.eliminated.empty()) j["eliminated"] = names(r.eliminated);
  if (!r.excluded.empty()) j["excluded"] = names(r.excluded);
  if (r.abandoned) j["abandoned_chunks"] = r.abandoned;
  if (r.stalled) {
    j["stalled"] = true;
    j["unfinished_groups"] = r.unfinished_groups;
  }
  if (!r.error.empty()) j["error"] = r.error;
  if (s.trace) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& c : r.trace) {
      nlohmann::ordered_json item;
      item["device"] = s.devices[static_cast<size_t>(c.chunk.device)].profile.name;
      item["begin"] = c.chunk.begin;
      item["end"] = c.chunk.end;
      item["start"] = round6(c.start);
      item["finish"] = number_or_null(c.finish);
      if (c.abandoned) item["abandoned"] = true;
      list.push_back(item);
    }
    j["chunk_list"] = list;
  }
  return j;
}

nlohmann::ordered_json summary_line(const Scenario& s, const std::string& policy, const std::vector<LaunchResult>& rs) {
  double eff = 0, balance = 0, chunks = 0, total = 0;
  size_t done = 0, stalled = 0;
  for (const auto& r : rs) {
    chunks += static_cast<double>(r.chunks);
    if (r.stalled || !r.error.empty()) {
      ++stalled;
      continue;
    }
    eff += r.efficiency;
    balance += r.load_balance;
    total += r.makespan;
    ++done;
  }
  nlohmann::ordered_json j;
  j["scenario"] = s.name;
  j["policy"] = policy;
  j["summary"] = true;
  j["launches"] = rs.size();
  j["mean_efficiency"] = done ? round6(eff / done) : 0.0;
  j["mean_load_balance"] = done ? round6(balance / done) : 0.0;
  j["mean_chunks"] = rs.empty() ? 0.0 : round6(chunks / static_cast<double>(rs.size()));
  j["total_makespan"] = round6(total);
  if (stalled) j["incomplete_launches"] = stalled;
  return j;
}

}  // namespace

std::vector<LaunchResult> simulate_with(const Scenario& scenario, const PolicyMaker& make,
                                        std::shared_ptr<History> history) {
  std::vector<DeviceProfile> profiles;
  for (const auto& d : scenario.devices) profiles.push_back(d.profile);
  if (!history) history = std::make_shared<History>(device_set_signature(profiles));
  const CostModel cost(scenario.kernel, scenario.seed);
  std::vector<LaunchResult> results;
  for (int run = 0; run < scenario.runs; ++run) {
    auto p = make(profiles, history);
    if (!p) {
      LaunchResult r;
      r.error = "no policy";
      results.push_back(r);
      return results;
    }
    LaunchPolicies launch_policies([&] { return make(profiles, history); });
    RunState state(scenario, cost, *p, launch_policies, run);
    for (int l = 0; l < scenario.launches; ++l) {
      results.push_back(state.launch(l));
      if (!results.back().error.empty()) return results;
    }
  }
  return results;
}

std::vector<LaunchResult> simulate_policy(const Scenario& scenario, const std::string& policy,
                                          std::shared_ptr<History> history) {
  return simulate_with(
      scenario,
      [&](const std::vector<DeviceProfile>& profiles, std::shared_ptr<History> h) {
        return make_policy(policy, scenario.params, std::move(h), profiles);
      },
      std::move(history));
}

int run_simulation(const std::string& scenario_json_path, std::ostream& out, std::ostream& err) {
  Scenario s;
  std::string error;
  if (!load_scenario(scenario_json_path, &s, &error)) {
    err << "coex simulate: " << error << '\n';
    return 2;
  }
  return run_simulation(s, out, err);
}

int run_simulation(const Scenario& s, std::ostream& out, std::ostream& err) {
  try {
    int rc = 0;
    for (const auto& policy : s.policies) {
      const auto results = simulate_policy(s, policy);
      for (const auto& r : results) {
        out << launch_line(s, policy, r).dump() << '\n';
        if (!r.error.empty()) {
          err << "coex simulate: " << s.name << ", policy " << policy << ", launch " << r.launch << ": " << r.error
              << '\n';
          rc = 1;
        }
      }
      if (s.summary) out << summary_line(s, policy, results).dump() << '\n';
    }
    out.flush();
    return rc;
  } catch (const std::exception& ex) {
    err << "coex simulate: " << ex.what() << '\n';
    return 2;
  }
}

}  // namespace coex::sched
