// The tunables of every policy, with their defaults (docs/schedulers.md, "Parameters"). The config
// layer maps its settings onto these fields by name (policy_param_info() lists them,
// set_policy_param() parses one), the simulator reads them from a scenario's "params" object the
// same way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace coex::sched {

struct PolicyParams {
  // static: "equal" shares, "ratio" (static_weights) or "spec" (weights from device info).
  std::string static_mode = "equal";
  // ratio mode: one weight per device, in device-index order; a device past the list gets 0.
  std::vector<double> static_weights;
  // spec mode: weigh by memory bandwidth instead of compute units x clock (memory-bound kernel).
  bool memory_bound = false;

  // boyer (Boyer et al. CF'13).
  double boyer_beta = 0.07;   // first chunk on each device, fraction of the launch
  double boyer_delta = 1.5;   // growth of each later chunk on a device
  int boyer_gamma = 2;        // chunks every device completes before the final split
  bool boyer_count_running = true;  // count lambda (time left on running chunks) in the final split

  // plbhec (Sant'Ana et al., PLB-HeC).
  double plbhec_initial_fraction = 0.01;  // first profiling block of the fastest device
  int plbhec_profile_rounds = 3;          // profiling blocks per device before the model split
  double plbhec_threshold = 0.5;          // relative spread of finish times that forces re-profiling

  // jitp / wp / ess (Strack 2020), across launches of one kernel and size.
  double wp_omega = 0.5;   // weight of the old share in wp's update
  int ess_launches = 10;   // ess estimates over this many launches, then freezes
  int probe_interval = 10; // every this many launches a device left without work is probed again
  double probe_share = 0.02;  // share a probed device gets

  // hguided (Pérez et al.): chunk = max(min_chunk, floor(R * P_i / (k * sum P))).
  double hguided_k = 2;
  uint64_t hguided_min_chunk = 0;  // 0: the device's occupancy floor

  // adaptive: geometric probes, then a static split of the rest.
  double adaptive_initial_fraction = 0.01;
  double adaptive_growth = 2;
  int adaptive_probes = 3;

  // sigmoid (Pérez et al. JPDC'21).
  double sigmoid_k_regular = 2;
  double sigmoid_k_irregular = 0.5;
  double sigmoid_cv_threshold = 0.25;  // sigma/mean of a device's last package speeds that marks irregular
  int sigmoid_window = 3;              // packages in that window, and in the speed estimate
  double sigmoid_time_fraction = 0.05; // p of the floor p * t_elapsed * S_i

  // predict (Dollinger & Loechner, IMPACT'15).
  int predict_max_steps = 15;
  double predict_elimination = 0.10;         // share under this fraction of the largest: eliminated
  double predict_calibration_fraction = 0.10; // work spent on calibration probes when no model exists
  double predict_tolerance = 0.01;           // relative spread of predicted times that ends the refinement

  // auto: launches of one kernel and size already in the history from which on it picks wp.
  int auto_repeat_launches = 1;
  // auto: per-chunk overhead, relative to the predicted launch time, above which a first launch at a
  // new size goes to boyer (few chunks) instead of sigmoid.
  double auto_overhead_fraction = 0.01;
  // auto: a wp launch balanced worse than this (first finish / last finish) right after one balanced
  // better means the machine changed: the next launch re-measures with sigmoid, then wp starts again
  // from the new throughputs.
  double auto_rebalance_below = 0.8;
  // auto: a device whose equal-finish share would be under this fraction of the launch gets nothing
  // (a split costs more than it could gain: the CPU beside a GPU 300x faster).
  double auto_min_share = 0.05;
  // auto: a split whose measured launches (whole: host copies, hand-offs, merge) were not at least this
  // fraction faster than the home device alone is not made; the launch runs unsplit on home.
  double auto_min_gain = 0.05;
  double auto_probe_cost = 0.05;  // auto: most a probe may cost, as a fraction of home's time since the last
};

struct PolicyParamInfo {
  std::string name;           // the field name, also the scenario key and the config key under "params"
  std::string default_value;  // as set_policy_param() accepts it
  std::string doc;
};

// Every field above, in declaration order, with its default as text (generated from PolicyParams{}).
const std::vector<PolicyParamInfo>& policy_param_info();

// Sets one field from text ("0.5", "true", "1,2,0.5" for a list). On a bad name or value, returns
// false and says why in *error (naming the field and what it accepts); the params are then unchanged.
bool set_policy_param(PolicyParams& params, const std::string& name, const std::string& value,
                      std::string* error);

// The field's current value as text, or "" for an unknown name.
std::string get_policy_param(const PolicyParams& params, const std::string& name);

}  // namespace coex::sched
