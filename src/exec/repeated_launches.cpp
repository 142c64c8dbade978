#include "exec/repeated_launches.h"

#include <algorithm>

#include "exec/executor.h"
#include "exec/services.h"
#include "model/registries.h"

namespace coex::exec {
namespace {

bool same_args(const std::vector<model::KernelArgValue>& a, const std::vector<model::KernelArgValue>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].set != b[i].set || a[i].local != b[i].local || a[i].svm != b[i].svm || a[i].size != b[i].size ||
        a[i].bytes != b[i].bytes)
      return false;
  return true;
}

// The request's sizes along its dimensions (zeros beyond them); `given` says whether the app passed any.
std::array<size_t, 3> sizes_of(const size_t* sizes, cl_uint work_dim, bool* given) {
  std::array<size_t, 3> out{};
  *given = sizes != nullptr;
  for (cl_uint d = 0; sizes && d < work_dim && d < 3; ++d) out[d] = sizes[d];
  return out;
}

uint64_t evidence_version(Services& services) {
  auto history = services.executor().history();
  return history ? history->evidence_version() : 0;
}

}  // namespace

bool RepeatedLaunches::Entry::matches(const LaunchRequest& request) const {
  bool given = false;
  if (request.queue != queue || request.work_dim != work_dim) return false;
  if (sizes_of(request.global, request.work_dim, &given) != global || !given) return false;
  if (sizes_of(request.offset, request.work_dim, &given) != offset || given != has_offset) return false;
  return sizes_of(request.local, request.work_dim, &given) == local && given == has_local;
}

std::optional<LaunchDecision> RepeatedLaunches::find(Services& services,
                                                     const std::shared_ptr<model::KernelRecord>& kernel,
                                                     const LaunchRequest& request) {
  if (!kernel || !request.global) return std::nullopt;
  const uint64_t evidence = evidence_version(services);
  const uint64_t left_out = services.executor().left_out_version();
  const uint64_t home_times = services.executor().home_launch_times().version();
  // Lock order: the kernel's arguments, then the entries (remember takes only the latter).
  std::lock_guard args_lock(kernel->mutex);
  std::lock_guard lock(mutex_);
  auto it = kernels_.find(kernel.get());
  if (it == kernels_.end()) return std::nullopt;
  if (it->second.kernel.lock() != kernel) {
    kernels_.erase(it);
    return std::nullopt;
  }
  for (const Entry& e : it->second.entries) {
    if (!e.matches(request) || e.exec_info_set != kernel->exec_info_set || !same_args(e.args, kernel->args)) continue;
    if (e.evidence != evidence || e.left_out != left_out || (e.home_times && *e.home_times != home_times))
      return std::nullopt;
    LaunchDecision decision;
    decision.gate = e.gate;
    if (e.policy_shape) {
      sched::LaunchShape shape = *e.policy_shape;
      sched::GateVerdict verdict;
      if (!services.executor().policy().unsplit_again(shape, e.reason, &verdict)) return std::nullopt;
      if (decision.gate) decision.gate->launch = verdict.launch;
    }
    decision.not_split_reason = e.reason;
    decision.kernel_name = e.kernel_name;
    for (size_t i = 0; i < e.args.size() && i < e.written.size(); ++i) {
      if (!e.written[i] || e.args[i].bytes.size() != sizeof(cl_mem)) continue;
      cl_mem mem = *reinterpret_cast<const cl_mem*>(e.args[i].bytes.data());
      if (auto record = services.registries().buffers.find(mem)) decision.written_buffers.push_back(record);
    }
    return decision;
  }
  return std::nullopt;
}

void RepeatedLaunches::remember(const std::shared_ptr<model::KernelRecord>& kernel, const LaunchRequest& request,
                                const std::vector<model::KernelArgValue>& args, const LaunchDecision& decision,
                                const RepeatableDecision& repeatable) {
  if (!kernel || !request.global || decision.job || !repeatable.keep || !decision.time_on_home_key.empty()) return;
  Entry e;
  e.queue = request.queue;
  e.work_dim = request.work_dim;
  bool global_given = false;
  e.global = sizes_of(request.global, request.work_dim, &global_given);
  e.offset = sizes_of(request.offset, request.work_dim, &e.has_offset);
  e.local = sizes_of(request.local, request.work_dim, &e.has_local);
  e.args = args;
  e.exec_info_set = repeatable.exec_info_set;
  e.evidence = repeatable.evidence;
  e.left_out = repeatable.left_out;
  if (repeatable.by_home_times) e.home_times = repeatable.home_times;
  e.reason = decision.not_split_reason;
  e.kernel_name = decision.kernel_name;
  e.policy_shape = repeatable.policy_shape;
  e.gate = decision.gate;
  e.written = repeatable.written;

  std::lock_guard lock(mutex_);
  if (kernels_.size() >= kKernels && !kernels_.count(kernel.get())) kernels_.clear();
  PerKernel& per = kernels_[kernel.get()];
  if (per.kernel.lock() != kernel) per = PerKernel{kernel, {}};
  auto& entries = per.entries;
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [&](const Entry& old) { return old.matches(request) && same_args(old.args, args); }),
                entries.end());
  entries.insert(entries.begin(), std::move(e));
  if (entries.size() > kPerKernel) entries.resize(kPerKernel);
}

}  // namespace coex::exec
