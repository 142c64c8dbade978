#include "exec/shared_first_runs.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <vector>

#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/exit_guard.h"
#include "exec/pocl_compiles.h"
#include "exec/pocl_kernel_cache.h"
#include "exec/services.h"
#include "report/trace.h"

namespace coex::exec {
namespace {

using Clock = std::chrono::steady_clock;

// By family, kernel, local size and offset: whether a device of the family is compiling that function
// now (into `holder`'s folder), or it is in `holder`'s folder.
struct Compile {
  bool compiling = false;
  std::string holder;
};
struct Registry {
  std::mutex mutex;
  std::condition_variable done;
  std::map<std::string, Compile> compiles;
};
Registry& registry() {
  static Registry* r = new Registry();  // reachable to the end: device threads may outlive statics
  return *r;
}

bool compiled_in(const FirstRunSharePlan& plan, const std::string& hash) {
  return pocl_kernel_cache::has_variant(plan.root, hash, plan.kernel, plan.local, plan.offset_zero, plan.small_grid);
}

}  // namespace

void SharedFirstRun::end() {
  if (plan_.empty()) return;
  Registry& r = registry();
  const bool there = compiled_in(plan_, plan_.own);  // not if the sub-launch failed, or PoCL kept no file
  {
    std::lock_guard lock(r.mutex);
    if (there)
      r.compiles[plan_.key] = Compile{false, plan_.own};
    else
      r.compiles.erase(plan_.key);  // the next device to need it compiles it
  }
  r.done.notify_all();
  plan_.key.clear();
}

FirstRunSharePlan plan_first_run_share(const LaunchJob& job, int device, const LaunchGeometry& sub) {
  Services& services = *job.services;
  if (!services.settings().share_first_runs || !services.devices().at(device).is_pocl()) return {};
  // A kernel whose folder PoCL names otherwise is not shared: a device waiting for another's compile
  // would see no library appear, and compile its own only after that device's whole first run.
  if (!pocl_kernel_cache::folder_named_as_kernel(job.kernel_name)) return {};
  FirstRunSharePlan plan;
  std::string family;
  {
    std::lock_guard lock(job.program->mutex);
    auto it = job.program->pocl_hashes.find({device, device == job.home});
    if (it == job.program->pocl_hashes.end()) return {};
    plan.own = it->second.own;
    family = it->second.family;
    for (const auto& [key, hashes] : job.program->pocl_hashes)
      if (hashes.family == family && hashes.own != plan.own) plan.family.push_back(hashes.own);
  }
  plan.root = pocl_kernel_cache::root();
  if (plan.root.empty() || plan.own.empty()) return {};
  plan.kernel = job.kernel_name;
  for (unsigned d = 0; d < 3; ++d) plan.local[d] = d < sub.work_dim ? sub.local[d] : 1;
  plan.offset_zero = sub.at_offset_zero();
  plan.small_grid = pocl_kernel_cache::small_grid(sub.work_dim, sub.global);
  plan.key = family + "|" + plan.kernel + "|" + std::to_string(plan.local[0]) + "-" + std::to_string(plan.local[1]) +
             "-" + std::to_string(plan.local[2]) + (plan.offset_zero ? "|0" : "|x") + (plan.small_grid ? "|s" : "|w");
  return plan;
}

SharedFirstRun share_first_run(Services& services, int device, const FirstRunSharePlan& plan) {
  if (plan.empty()) return {};
  const auto started = Clock::now();
  const auto deadline = started + kCompileLockWait;
  Registry& r = registry();
  std::string holder;
  bool waited = false;
  {
    std::unique_lock lock(r.mutex);
    for (;;) {
      auto it = r.compiles.find(plan.key);
      if (it == r.compiles.end()) {
        // Compiled already, in its own folder (PoCL's cache is warm) or in another of the family's (a
        // run with fewer devices filled theirs): nothing to wait for.
        if (compiled_in(plan, plan.own)) holder = plan.own;
        for (size_t i = 0; holder.empty() && i < plan.family.size(); ++i)
          if (compiled_in(plan, plan.family[i])) holder = plan.family[i];
        if (holder.empty()) {
          r.compiles[plan.key] = Compile{true, plan.own};
          return SharedFirstRun(plan);  // this device compiles it for the family
        }
        r.compiles[plan.key] = Compile{false, holder};
        break;
      }
      // Done, or compiled while that device's chunk still runs (its library is in its folder).
      if (!it->second.compiling || compiled_in(plan, it->second.holder)) {
        holder = it->second.holder;
        break;
      }
      if (exit_begun() || Clock::now() >= deadline) break;  // the other one is stuck: compile here
      waited = true;
      r.done.wait_until(lock, std::min(deadline, Clock::now() + std::chrono::milliseconds(50)));
    }
  }
  const int copied = holder.empty() ? 0 : pocl_kernel_cache::copy_missing(plan.root, holder, plan.own, plan.kernel);
  if (auto* t = services.trace(); t && (waited || copied))
    t->record("share first run", "build", device, started, Clock::now(), {{"copied", copied}, {"waited", waited}});
  return {};
}

}  // namespace coex::exec
