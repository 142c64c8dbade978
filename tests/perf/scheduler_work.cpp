// What the scheduler costs per launch (docs/performance.md, "The scheduler's work"): the simulator
// runs a program of many short launches over N equal single-threaded CPU devices (the device machine's
// testbed: benchmarks/jacobi over cpu-minimal devices), and every call into the policies, the
// planner's and the split launches', is timed here, in three parts: the plan and the launch's begin
// and end (on the app's thread in coex, before and after the devices run), and the chunks' calls (on
// the devices' threads, one at a time); and so is making the policy objects. The simulator's own
// model (its clock, its events) is left out: what is left is what coex's executor pays for the same
// calls. scripts/bench-scheduler-work runs it, and under callgrind for counts of instructions, which
// vary less than times on a shared machine.
//
//   coex_scheduler_work [--policies auto,static,hguided] [--devices 2,8,15] [--launches 300] [--reps 5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "sched/policy_factory.h"
#include "sched/simulator.h"

namespace coex::sched {
namespace {

using Clock = std::chrono::steady_clock;

struct Spent {
  double plan = 0;     // unsplit_reason, unsplit_again: the planner's calls, at every launch
  double launch = 0;   // a split launch's begin_launch, end_launch, launch_measured: on the app's thread
  double chunks = 0;   // next_chunk, chunk_done and the like: on the devices' threads, one at a time
  double objects = 0;  // making policy objects
};

// Each runs `call`, adding its seconds to `into`. One name per part and never inlined: callgrind
// counts inside the functions of one name alone (scripts/bench-scheduler-work).
template <typename F>
auto add_seconds(double& into, F&& call) {
  struct Add {
    double& into;
    Clock::time_point start;
    ~Add() { into += std::chrono::duration<double>(Clock::now() - start).count(); }
  } add{into, Clock::now()};
  return call();
}
template <typename F>
__attribute__((noinline)) auto in_plan(Spent& spent, F&& call) {
  return add_seconds(spent.plan, std::forward<F>(call));
}
template <typename F>
__attribute__((noinline)) auto in_launch(Spent& spent, F&& call) {
  return add_seconds(spent.launch, std::forward<F>(call));
}
template <typename F>
__attribute__((noinline)) auto in_chunks(Spent& spent, F&& call) {
  return add_seconds(spent.chunks, std::forward<F>(call));
}

// Times every call into `inner`.
class TimedPolicy : public Policy {
 public:
  TimedPolicy(std::unique_ptr<Policy> inner, Spent& spent) : inner_(std::move(inner)), spent_(spent) {}

  std::string name() const override { return inner_->name(); }
  void begin_launch(const LaunchShape& shape, const std::vector<int>& devices, double now) override {
    in_launch(spent_, [&] { inner_->begin_launch(shape, devices, now); });
  }
  std::optional<Chunk> next_chunk(int device, double now) override {
    return in_chunks(spent_, [&] { return inner_->next_chunk(device, now); });
  }
  void chunk_done(const ChunkTiming& timing) override {
    in_chunks(spent_, [&] { inner_->chunk_done(timing); });
  }
  void end_launch(double now) override {
    in_launch(spent_, [&] { inner_->end_launch(now); });
  }
  std::vector<Chunk> take_abandoned() override {
    return in_chunks(spent_, [&] { return inner_->take_abandoned(); });
  }
  std::string planned_by() const override { return inner_->planned_by(); }
  std::vector<int> eliminated() const override { return inner_->eliminated(); }
  std::optional<RegularityVerdict> regularity() const override { return inner_->regularity(); }
  void launch_measured(double seconds) override {
    in_launch(spent_, [&] { inner_->launch_measured(seconds); });
  }
  bool waits_for_preparation() const override { return inner_->waits_for_preparation(); }
  const char* unsplit_reason(LaunchShape& shape, const std::vector<int>& devices, GateVerdict* verdict) const override {
    return in_plan(spent_, [&] { return inner_->unsplit_reason(shape, devices, verdict); });
  }
  bool unsplit_again(const LaunchShape& shape, const std::string& reason, GateVerdict* verdict) const override {
    return in_plan(spent_, [&] { return inner_->unsplit_again(shape, reason, verdict); });
  }
  bool guesses_pace_by_specification() const override { return inner_->guesses_pace_by_specification(); }
  bool add_device(int device, double now) override {
    return in_launch(spent_, [&] { return inner_->add_device(device, now); });
  }
  void device_taken_over(int device, double now) override {
    in_chunks(spent_, [&] { inner_->device_taken_over(device, now); });
  }
  void expect_late_devices(const std::vector<int>& devices) override { inner_->expect_late_devices(devices); }
  bool takes_late_devices() const override { return inner_->takes_late_devices(); }

 private:
  std::unique_ptr<Policy> inner_;
  Spent& spent_;
};

// N equal single-threaded CPU devices, device 0 the app's: launches of 64 work-groups that take about
// 0.7 ms over 15 devices, as benchmarks/jacobi's at its testbed size on the device machine.
Scenario testbed_scenario(int devices, int launches) {
  Scenario s;
  s.name = "scheduler_work";
  s.launches = launches;
  s.home = 0;
  s.kernel.key = "jacobi";
  s.kernel.groups = 64;
  s.kernel.items_per_group = 16384;
  for (int i = 0; i < devices; ++i) {
    SimDevice d;
    d.profile.index = i;
    d.profile.name = "cpu-minimal";
    d.profile.is_cpu = true;
    d.profile.compute_units = 1;
    d.speed = 6000;  // groups a second
    d.latency = 50e-6;
    d.noise = 0.2;
    s.devices.push_back(d);
  }
  return s;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

int usage(const char* program) {
  std::fprintf(stderr, "usage: %s [--policies auto,static,hguided] [--devices 2,8,15] [--launches 300] [--reps 5]\n",
               program);
  return 2;
}

int run(int argc, char** argv) {
  std::vector<std::string> policies = {"auto", "static", "hguided"};
  std::vector<int> device_counts = {2, 8, 15};
  int launches = 300, reps = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return usage(argv[0]);
    const std::string value = argv[++i];
    if (arg == "--policies") {
      policies = split_list(value);
    } else if (arg == "--devices") {
      device_counts.clear();
      for (const auto& n : split_list(value)) device_counts.push_back(std::atoi(n.c_str()));
    } else if (arg == "--launches") {
      launches = std::atoi(value.c_str());
    } else if (arg == "--reps") {
      reps = std::atoi(value.c_str());
    } else {
      return usage(argv[0]);
    }
  }
  for (const auto& policy : policies)
    if (std::find(policy_names().begin(), policy_names().end(), policy) == policy_names().end()) {
      std::fprintf(stderr, "%s: unknown policy \"%s\"\n", argv[0], policy.c_str());
      return 2;
    }
  if (launches < 1 || reps < 1 || device_counts.empty() ||
      std::any_of(device_counts.begin(), device_counts.end(), [](int n) { return n < 2; }))
    return usage(argv[0]);
  std::printf("%-8s %7s %6s %10s %10s %10s %10s %10s\n", "policy", "devices", "split", "plan", "launch", "chunks",
              "objects", "total");
  for (const auto& policy : policies) {
    for (int n : device_counts) {
      const Scenario scenario = testbed_scenario(n, launches);
      // Each figure is the median over the repetitions of its microseconds per launch.
      std::vector<double> plan, launch, chunks, objects, total;
      size_t split = 0;
      for (int rep = 0; rep < reps; ++rep) {
        Spent spent;
        const auto results =
            simulate_with(scenario, [&](const std::vector<DeviceProfile>& profiles, std::shared_ptr<History> history) {
              const auto start = Clock::now();
              auto made = std::make_unique<TimedPolicy>(make_policy(policy, scenario.params, history, profiles), spent);
              spent.objects += std::chrono::duration<double>(Clock::now() - start).count();
              return made;
            });
        for (const auto& r : results)
          if (!r.error.empty()) {
            std::fprintf(stderr, "%s: %s over %d devices, launch %d: %s\n", argv[0], policy.c_str(), n, r.launch,
                         r.error.c_str());
            return 1;
          }
        split = static_cast<size_t>(
            std::count_if(results.begin(), results.end(), [](const LaunchResult& r) { return r.not_split.empty(); }));
        const double per = 1e6 / static_cast<double>(results.size());
        plan.push_back(spent.plan * per);
        launch.push_back(spent.launch * per);
        chunks.push_back(spent.chunks * per);
        objects.push_back(spent.objects * per);
        total.push_back((spent.plan + spent.launch + spent.chunks + spent.objects) * per);
      }
      auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
      };
      std::printf("%-8s %7d %6zu %10.2f %10.2f %10.2f %10.2f %10.2f\n", policy.c_str(), n, split, median(plan),
                  median(launch), median(chunks), median(objects), median(total));
    }
  }
  return 0;
}

}  // namespace
}  // namespace coex::sched

int main(int argc, char** argv) { return coex::sched::run(argc, argv); }
