#include "sched/launch_policies.h"

#include <utility>

namespace coex::sched {

LaunchPolicies::LaunchPolicies(Make make) : make_(std::move(make)), idle_(std::make_shared<Idle>()) {}

std::shared_ptr<Policy> LaunchPolicies::acquire() {
  std::unique_ptr<Policy> policy;
  {
    std::lock_guard lock(idle_->mutex);
    if (!idle_->policies.empty()) {
      policy = std::move(idle_->policies.back());
      idle_->policies.pop_back();
    }
  }
  if (!policy) policy = make_();
  if (!policy) return nullptr;
  return std::shared_ptr<Policy>(policy.release(), [idle = std::weak_ptr<Idle>(idle_)](Policy* released) {
    std::unique_ptr<Policy> owned(released);
    if (auto pool = idle.lock()) {
      std::lock_guard lock(pool->mutex);
      if (pool->policies.size() < kMostIdle) pool->policies.push_back(std::move(owned));
    }
  });
}

}  // namespace coex::sched
