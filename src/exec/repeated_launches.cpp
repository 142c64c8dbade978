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

// FNV-1a over the arguments' values, less those of the arguments `plain_values` marks: which launches
// were seen once (RepeatedLaunches::remember).
uint64_t args_hash(const std::vector<model::KernelArgValue>& args, const std::vector<bool>& plain_values) {
  uint64_t h = 14695981039346656037ull;
  auto mix = [&h](uint64_t byte) { h = (h ^ byte) * 1099511628211ull; };
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& arg = args[i];
    mix(uint64_t(arg.set) | uint64_t(arg.local) << 1 | uint64_t(arg.svm) << 2);
    mix(arg.size);
    if (i < plain_values.size() && plain_values[i]) continue;
    for (uint8_t byte : arg.bytes) mix(byte);
  }
  return h;
}

// Whether `arg` holds a buffer the registry tracks (a handle's bytes); such an argument is no plain
// value, whatever the reason read.
bool tracked_buffer(Services& services, const model::KernelArgValue& arg) {
  return arg.bytes.size() == sizeof(cl_mem) &&
         services.registries().buffers.find(*reinterpret_cast<const cl_mem*>(arg.bytes.data())) != nullptr;
}

// Per argument: whether it is a plain value (set, not __local, not SVM, not a tracked buffer).
std::vector<bool> plain_values_of(Services& services, const std::vector<model::KernelArgValue>& args) {
  std::vector<bool> out(args.size());
  for (size_t i = 0; i < args.size(); ++i)
    out[i] = args[i].set && !args[i].local && !args[i].svm && !tracked_buffer(services, args[i]);
  return out;
}

// The request's sizes along its dimensions (zeros beyond them); `given` says whether the app passed any.
std::array<size_t, 3> sizes_of(const size_t* sizes, cl_uint work_dim, bool* given) {
  std::array<size_t, 3> out{};
  *given = sizes != nullptr;
  for (cl_uint d = 0; sizes && d < work_dim && d < 3; ++d) out[d] = sizes[d];
  return out;
}

}  // namespace

PlanVersions PlanVersions::now(Services& services) {
  PlanVersions v;
  if (auto history = services.executor().history()) v.evidence = history->evidence_version();
  v.left_out = services.executor().left_out_version();
  v.home_times = services.executor().home_launch_times().version();
  v.queues = services.registries().queues.version();
  return v;
}

std::vector<std::shared_ptr<model::BufferRecord>> written_buffers(Services& services,
                                                                  const std::vector<model::KernelArgValue>& args,
                                                                  const std::vector<bool>& written) {
  std::vector<std::shared_ptr<model::BufferRecord>> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if ((i < written.size() && !written[i]) || args[i].bytes.size() != sizeof(cl_mem)) continue;
    if (auto record = services.registries().buffers.find(*reinterpret_cast<const cl_mem*>(args[i].bytes.data())))
      out.push_back(record);
  }
  return out;
}

RepeatedLaunches::Geometry RepeatedLaunches::Geometry::of(const LaunchRequest& request) {
  Geometry g;
  g.queue = request.queue;
  g.work_dim = request.work_dim;
  bool global_given = false;
  g.global = sizes_of(request.global, request.work_dim, &global_given);
  g.offset = sizes_of(request.offset, request.work_dim, &g.has_offset);
  g.local = sizes_of(request.local, request.work_dim, &g.has_local);
  return g;
}

bool RepeatedLaunches::Geometry::matches(const LaunchRequest& request) const {
  bool given = false;
  if (request.queue != queue || request.work_dim != work_dim) return false;
  if (sizes_of(request.global, request.work_dim, &given) != global || !given) return false;
  if (sizes_of(request.offset, request.work_dim, &given) != offset || given != has_offset) return false;
  return sizes_of(request.local, request.work_dim, &given) == local && given == has_local;
}

bool RepeatedLaunches::Geometry::operator==(const Geometry& o) const {
  return queue == o.queue && work_dim == o.work_dim && has_offset == o.has_offset && has_local == o.has_local &&
         offset == o.offset && global == o.global && local == o.local;
}

void RepeatedLaunches::written_buffers_of(Services& services, Entry& e,
                                          std::vector<std::shared_ptr<model::BufferRecord>>& out) {
  const uint64_t version = services.registries().buffers.version();
  out.clear();
  if (e.buffers_version == version) {
    bool all = true;
    for (const auto& weak : e.written_records) {
      auto record = weak.lock();
      all = all && record;
      if (record) out.push_back(std::move(record));
    }
    if (all) return;  // else a record went between the version and the locks: look them up
  }
  out = written_buffers(services, e.args, e.written);
  e.written_records.assign(out.begin(), out.end());
  e.buffers_version = version;  // read before the lookups: a change during them makes the next look again
}

bool RepeatedLaunches::args_match(Services& services, const Entry& e, const std::vector<model::KernelArgValue>& args) {
  if (e.args.size() != args.size()) return false;
  for (size_t i = 0; i < args.size(); ++i) {
    const model::KernelArgValue &was = e.args[i], &now = args[i];
    if (was.set != now.set || was.local != now.local || was.svm != now.svm || was.size != now.size) return false;
    if (was.bytes == now.bytes) continue;
    // Another value: only of a plain value, where the reason reads none, and not one that is now a
    // tracked buffer (whose writes the launch's bookkeeping must see).
    if (i >= e.plain_values.size() || !e.plain_values[i] || tracked_buffer(services, now)) return false;
  }
  return true;
}

bool RepeatedLaunches::find(Services& services, const std::shared_ptr<model::KernelRecord>& kernel,
                            const LaunchRequest& request, LaunchDecision& decision) {
  if (!kernel || !request.global) return false;
  const PlanVersions now = PlanVersions::now(services);
  // Lock order: the kernel's arguments, then the entries (remember takes only the latter).
  std::lock_guard args_lock(kernel->mutex);
  std::lock_guard lock(mutex_);
  auto it = kernels_.find(kernel.get());
  if (it == kernels_.end()) return false;
  // Expired: a released record's entries, at the address of the record now made there. Alive, the
  // entries' record is `kernel` (two live records cannot share an address), at no reference counting.
  if (it->second.kernel.expired()) {
    kernels_.erase(it);
    return false;
  }
  // At most one entry matches (remember keeps one per geometry and arguments): the search starts at
  // the one after the last match, which a program that alternates launches (ping-pong buffers) hits.
  PerKernel& per = it->second;
  const size_t count = per.entries.size();
  for (size_t k = 0; k < count; ++k) {
    const size_t index = (per.next_guess + k) % count;
    Entry& e = per.entries[index];
    if (!e.geometry.matches(request) || e.exec_info_set != kernel->exec_info_set ||
        !args_match(services, e, kernel->args))
      continue;
    per.next_guess = index + 1;
    if (e.versions.evidence != now.evidence || e.versions.left_out != now.left_out || e.versions.queues != now.queues ||
        (e.by_home_times && e.versions.home_times != now.home_times))
      return false;
    if (e.counts_launch) {
      if (std::chrono::steady_clock::now() >= e.valid_until) return false;
      if (auto history = services.executor().history())
        history->note_launch(e.counts_launch->first, e.counts_launch->second);
      if (e.counts_before_process) {
        e.counts_before_process->fetch_add(1, std::memory_order_relaxed);
        services.report().record_held_until_paid();
      }
    }
    uint64_t gate_launch = 0;
    if (e.policy_shape) {
      sched::GateVerdict verdict;
      if (!services.executor().policy().unsplit_again(*e.policy_shape, e.reason, &verdict)) return false;
      gate_launch = verdict.launch;
    }
    decision.gate = e.gate;
    if (e.gate) decision.gate_launch = e.policy_shape ? gate_launch : e.gate->launch;
    decision.not_split_reason = e.reason;
    decision.kernel_name = e.kernel_name;
    decision.home = e.home;
    written_buffers_of(services, e, decision.written_buffers);
    return true;
  }
  return false;
}

void RepeatedLaunches::remember(Services& services, const std::shared_ptr<model::KernelRecord>& kernel,
                                const LaunchRequest& request, const std::vector<model::KernelArgValue>& args,
                                const LaunchDecision& decision, const RepeatableDecision& repeatable) {
  if (!kernel || !request.global || decision.job || !repeatable.keep || !decision.time_on_home_key.empty()) return;
  const Geometry geometry = Geometry::of(request);
  std::vector<bool> plain_values;
  if (repeatable.any_values) plain_values = plain_values_of(services, args);
  const std::pair<Geometry, uint64_t> launch{geometry, args_hash(args, plain_values)};
  std::lock_guard lock(mutex_);
  if (kernels_.size() >= kKernels && !kernels_.count(kernel.get())) kernels_.clear();
  PerKernel& per = kernels_[kernel.get()];
  if (per.kernel.lock() != kernel) per = PerKernel{kernel, {}, 0, {}};
  auto& entries = per.entries;
  // An entry of this launch whose versions went stale (find gave nothing) is replaced at once.
  // So is one that differs from it in plain values alone, where both reasons read none.
  auto stale = std::remove_if(entries.begin(), entries.end(), [&](const Entry& old) {
    return old.geometry == geometry &&
           (same_args(old.args, args) || (repeatable.any_values && args_match(services, old, args)));
  });
  const bool kept_before = stale != entries.end();
  entries.erase(stale, entries.end());
  auto seen = std::find(per.seen.begin(), per.seen.end(), launch);
  if (seen == per.seen.end() && !kept_before) {
    per.seen.insert(per.seen.begin(), launch);
    if (per.seen.size() > kPerKernel) per.seen.resize(kPerKernel);
    return;
  }
  if (seen != per.seen.end()) per.seen.erase(seen);
  Entry e;
  e.geometry = geometry;
  e.args = args;
  e.plain_values = std::move(plain_values);
  e.exec_info_set = repeatable.exec_info_set;
  e.versions = repeatable.versions;
  e.by_home_times = repeatable.by_home_times;
  e.counts_launch = repeatable.counts_launch;
  e.counts_before_process = repeatable.counts_before_process;
  if (e.counts_launch) e.valid_until = std::chrono::steady_clock::now() + preparing_hold_;
  e.reason = decision.not_split_reason;
  e.kernel_name = decision.kernel_name;
  e.policy_shape = repeatable.policy_shape;
  e.gate = decision.gate;
  e.written = repeatable.written;
  e.home = decision.home;
  entries.insert(entries.begin(), std::move(e));
  if (entries.size() > kPerKernel) entries.resize(kPerKernel);
}

}  // namespace coex::exec
