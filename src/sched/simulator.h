// The simulator: `coex simulate SCENARIO.json` drives the same Policy objects as the executor, through
// the same contract (policy.h), against modelled devices and a modelled kernel, in simulated time.
// Output: one JSON line per launch (docs/schedulers.md, "Simulator output").
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "sched/history.h"
#include "sched/policy.h"
#include "sched/sim_scenario.h"

namespace coex::sched {

struct SimChunk {
  Chunk chunk;
  double start = 0;   // seconds since the launch began
  double finish = 0;  // +inf: never (stalled device)
  double transfer_seconds = 0;
  bool abandoned = false;  // taken back by the policy and handed out again, or taken over
  bool redo = false;       // a range this device took over from another (sched/take_over.h)
  bool first_run = false;  // the device's first chunk of the run: SimDevice::first_run_seconds added
};

struct LaunchResult {
  int run = 0;
  int launch = 0;
  std::string planned_by;
  std::string not_split;  // why the launch ran on home alone, unsplit (auto's gate); empty: split
  double makespan = 0;    // NaN when the launch could not complete
  double ideal_makespan = 0;
  double efficiency = 0;    // ideal / makespan
  double load_balance = 0;  // first finish / last finish, over devices that ran a chunk
  size_t chunks = 0;        // chunks handed out, abandoned ones included
  size_t abandoned = 0;
  std::vector<uint64_t> groups_per_device;  // by scenario device, abandoned chunks not counted
  std::vector<double> finish_per_device;    // end of the device's last chunk; 0 if it ran none
  std::vector<int> eliminated;              // device indices the policy reported
  std::vector<int> excluded;                // still busy with an abandoned chunk: not offered to the policy
  bool stalled = false;                     // no progress possible: a chunk on a stalled device never finishes
  uint64_t unfinished_groups = 0;
  std::string error;  // a broken contract (overlap, gap, bad chunk); empty when none
  std::vector<SimChunk> trace;
};

// Simulates every launch of every run of `scenario` under `policy`; `history` carries across runs
// (null: a fresh one). Stops at the first launch with an error.
std::vector<LaunchResult> simulate_policy(const Scenario& scenario, const std::string& policy,
                                          std::shared_ptr<History> history = nullptr);

// The same with the policies made by `make` (one per run, and those the run's split launches take, as
// the executor makes them: sched/launch_policies.h): for policies not in the factory, and for the tests that hand the
// simulator a policy that breaks the contract.
using PolicyMaker = std::function<std::unique_ptr<Policy>(const std::vector<DeviceProfile>&, std::shared_ptr<History>)>;
std::vector<LaunchResult> simulate_with(const Scenario& scenario, const PolicyMaker& make,
                                        std::shared_ptr<History> history = nullptr);

// Loads the scenario, simulates each of its policies with a fresh History, writes the JSON lines to
// `out`. Returns 0; 1 when a policy broke the contract (the line carries "error", `err` says it too);
// 2 when the scenario cannot be read (the reason goes to `err`).
int run_simulation(const std::string& scenario_json_path, std::ostream& out, std::ostream& err);
// The same for a scenario already loaded (and perhaps changed: docs tables, sched/sim_doc_tables.h).
int run_simulation(const Scenario& scenario, std::ostream& out, std::ostream& err);

}  // namespace coex::sched
