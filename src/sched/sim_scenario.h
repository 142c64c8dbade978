// A simulator scenario: modelled devices, a modelled kernel, how many launches, which policies.
// The JSON format is documented in docs/schedulers.md ("Scenario format"); parse_scenario() rejects
// unknown keys and bad values with a message that names the key.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "sched/policy.h"
#include "sched/policy_params.h"

namespace coex::sched {

// From the start of launch `launch` + `at` seconds on, the device runs at factor x its base speed
// (0: stalled, a chunk then never finishes).
struct SpeedChange {
  int launch = 0;
  double at = 0;
  double factor = 1;
};

struct SimDevice {
  DeviceProfile profile;         // what the policies see (index, name, type, compute units, ...)
  double speed = 1;              // work-groups of mean cost per second
  double latency = 0;            // seconds added to every chunk (launch, synchronisation)
  double bandwidth_in_gbs = 0;   // host->device for the chunk's input; 0 = no transfer (host memory)
  double bandwidth_out_gbs = 0;  // device->host for its output
  double noise = 0;              // each chunk's compute time x (1 + noise * |z|), z ~ N(0,1), seeded
  // Seconds added to the device's first chunk of each run, reported as its first run of the kernel
  // (ChunkTiming::first_run: the driver's compile or load of the kernel, exec/pocl_compiles.h).
  double first_run_seconds = 0;
  std::vector<SpeedChange> changes;
};

// Cost per work-group across the range, normalised so that the mean cost is 1.
struct CostProfile {
  std::string kind = "uniform";  // uniform | linear | mandelbrot | random | steps
  double from = 1, to = 1;       // linear: cost from -> to across the range
  double amplitude = 0.5;        // random: uniform in [1 - a, 1 + a]
  int max_iterations = 256;      // mandelbrot: escape-time limit
  std::vector<double> values;    // steps: equal-width pieces of the range with these costs
};

struct SimKernel {
  std::string key = "kernel";
  uint64_t groups = 0;
  uint64_t items_per_group = 256;
  CostProfile cost;
  double bytes_in_per_group = 0;
  double bytes_out_per_group = 0;
};

struct Scenario {
  std::string name;
  uint64_t seed = 1;
  std::vector<SimDevice> devices;
  SimKernel kernel;
  int launches = 1;
  int runs = 1;                       // program runs; the History carries from one to the next
  std::vector<std::string> policies;  // each is simulated on its own, with a fresh History
  PolicyParams params;
  bool trace = false;    // add every chunk to the launch lines
  bool summary = false;  // add one summary line per policy after its launch lines
  // A device the policy has nothing more for takes over a slower or stalled one, as the executor does
  // (sched/take_over.h). false: the policy's own behaviour alone (a paper's experiment).
  bool take_over = true;
  // The app's device, by index into `devices` (-1: none). Only there can a launch run unsplit: auto's
  // gate (Policy::unsplit_reason) is asked before each launch, and home is never taken over.
  int home = -1;
};

// Fills *scenario from a parsed JSON document; false with *error naming the key on a bad one.
bool parse_scenario(const nlohmann::json& doc, Scenario* scenario, std::string* error);
bool load_scenario(const std::string& path, Scenario* scenario, std::string* error);

}  // namespace coex::sched
