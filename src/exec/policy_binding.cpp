#include "exec/policy_binding.h"

#include <mutex>
#include <stdexcept>

#include "sched/history.h"
#include "sched/policy_params.h"
#include "sched/policy_factory.h"
#include <spdlog/spdlog.h>

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
  p.auto_min_share = s.auto_min_share;
  p.auto_min_gain = s.auto_min_gain;
  p.auto_probe_cost = s.auto_probe_cost;
  return p;
}

std::unique_ptr<sched::Policy> make_configured_policy(const config::Settings& settings,
                                                      const std::vector<sched::DeviceProfile>& devices,
                                                      std::shared_ptr<sched::History> history) {
  // The settings were validated against policy_names(): an unknown name cannot reach here.
  auto policy = sched::make_policy(settings.policy, policy_params_from(settings), std::move(history), devices);
  if (!policy) throw std::runtime_error("unknown policy \"" + settings.policy + "\"");
  return policy;
}

std::string history_path(const config::Settings& settings) {
  return settings.cache.empty() ? sched::default_history_path() : settings.cache;
}

std::shared_ptr<sched::History> load_history(const config::Settings& settings,
                                             const std::vector<sched::DeviceProfile>& devices) {
  auto history = std::make_shared<sched::History>(sched::device_set_signature(devices));
  std::string error, note;
  if (!history->load(history_path(settings), &error, &note) && !error.empty())
    spdlog::info("history cache {} (COEX_CACHE) not used: {}", history_path(settings), error);
  if (!note.empty()) spdlog::info("history cache: {}", note);
  return history;
}

void save_history(const config::Settings& settings, const sched::History& history) {
  std::string error;
  if (!history.save(history_path(settings), &error))
    spdlog::warn("cannot save the history cache {} (COEX_CACHE): {}", history_path(settings), error);
}

}  // namespace coex::exec
