#include "exec/policy_binding.h"

#include <mutex>

#include "sched/history.h"
#include "sched/policy_params.h"
#include "sched/static_policy.h"

namespace coex::exec {

sched::PolicyParams policy_params_from(const config::Settings& s) {
  sched::PolicyParams p;
  p.static_mode = s.static_mode;
  p.static_weights = s.weights;
  p.boyer_beta = s.boyer_beta;
  p.boyer_delta = s.boyer_delta;
  p.boyer_gamma = int(s.boyer_gamma);
  p.plbhec_threshold = s.plbhec_drift;
  p.wp_omega = s.wp_omega;
  p.ess_launches = int(s.ess_launches);
  p.hguided_k = s.hguided_k;
  p.hguided_min_chunk = uint64_t(s.min_chunk_groups);
  p.adaptive_initial_fraction = s.adaptive_probe_fraction;
  p.adaptive_growth = s.adaptive_growth;
  p.sigmoid_k_regular = s.sigmoid_k;
  p.sigmoid_k_irregular = s.sigmoid_irregular_k;
  p.sigmoid_cv_threshold = s.sigmoid_cv_threshold;
  p.sigmoid_time_fraction = s.sigmoid_floor_p;
  p.predict_max_steps = int(s.predict_max_steps);
  p.predict_elimination = s.predict_eliminate;
  return p;
}

std::unique_ptr<sched::Policy> make_configured_policy(const config::Settings& settings,
                                                      const std::vector<sched::DeviceProfile>& devices) {
  static std::shared_ptr<sched::History> history = std::make_shared<sched::History>();
  return std::make_unique<sched::StaticPolicy>(policy_params_from(settings), history, devices);
}

}  // namespace coex::exec
