#include "exec/policy_binding.h"

#include <spdlog/spdlog.h>

#include <mutex>
#include <stdexcept>

#include "sched/history.h"
#include "sched/policy_factory.h"

namespace coex::exec {

std::unique_ptr<sched::Policy> make_configured_policy(const config::Settings& settings,
                                                      const std::vector<sched::DeviceProfile>& devices,
                                                      std::shared_ptr<sched::History> history) {
  // The settings were validated against policy_names(): an unknown name cannot reach here. The
  // policy's parameters are the settings' own base (config/policy_params.h).
  auto policy = sched::make_policy(settings.policy, settings, std::move(history), devices);
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
