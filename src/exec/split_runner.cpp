#include "exec/split_runner.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "api/runtime.h"
#include "config/fault_spec.h"
#include "devices/device_set.h"
#include "exec/data_moves.h"
#include "exec/device_kernels.h"
#include "exec/executor.h"
#include "exec/policy_binding.h"
#include "report/report.h"
#include "report/trace.h"

namespace coex::exec {
namespace {

using Clock = std::chrono::steady_clock;

const cl_icd_dispatch& cl() { return api::Runtime::get().next(); }

struct DeviceRun {
  cl_int error = CL_SUCCESS;
  uint64_t work_items = 0;
  double seconds = 0;
  uint64_t bytes = 0;
  bool ran = false;
  DeviceChanges changes;
};

// Waits until `count` tasks have called done().
class Latch {
 public:
  explicit Latch(size_t count) : count_(count) {}
  void done() {
    std::lock_guard lock(mutex_);
    if (--count_ == 0) cv_.notify_all();
  }
  void wait() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return count_ == 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  size_t count_;
};

// Sets every argument of the app's launch on `kernel`, bound to the device's own buffers.
cl_int set_arguments(LaunchJob& job, cl_kernel kernel, int device) {
  for (cl_uint i = 0; i < job.bindings.size(); ++i) {
    const auto& arg = job.args[i];
    const auto& binding = job.bindings[i];
    cl_int err = CL_SUCCESS;
    switch (binding.kind) {
      case ArgBinding::Kind::Value: err = cl().clSetKernelArg(kernel, i, arg.size, arg.bytes.data()); break;
      case ArgBinding::Kind::Local: err = cl().clSetKernelArg(kernel, i, arg.size, nullptr); break;
      case ArgBinding::Kind::NullBuffer: {
        cl_mem none = nullptr;
        err = cl().clSetKernelArg(kernel, i, sizeof(none), &none);
        break;
      }
      case ArgBinding::Kind::Buffer: {
        cl_mem mem = device_mem(job, binding, device);
        err = mem ? cl().clSetKernelArg(kernel, i, sizeof(mem), &mem) : CL_INVALID_MEM_OBJECT;
        break;
      }
    }
    if (err != CL_SUCCESS) return err;
  }
  return CL_SUCCESS;
}

// The trailing arguments of a rewritten kernel (kernel_analysis.h): the original launch's values.
cl_int set_rewrite_arguments(LaunchJob& job, cl_kernel kernel, uint64_t group_base) {
  const LaunchGeometry& g = job.geometry;
  cl_uint first = cl_uint(job.bindings.size());
  cl_uint split_dim = g.split_dim();
  cl_ulong values[4] = {group_base, g.groups_along_split(), g.global[split_dim], g.offset[split_dim]};
  cl_int err = cl().clSetKernelArg(kernel, first, sizeof(split_dim), &split_dim);
  for (cl_uint i = 0; i < 4 && err == CL_SUCCESS; ++i)
    err = cl().clSetKernelArg(kernel, first + 1 + i, sizeof(cl_ulong), &values[i]);
  return err;
}

bool fault_injected_on(int device) {
  const auto& text = api::Runtime::get().settings().fault;
  if (text.empty()) return false;
  auto spec = config::parse_fault_spec(text, nullptr);
  return spec && spec->kind == config::FaultSpec::Kind::Fail && spec->device == device;
}

void trace(int device, const char* name, const char* category, Clock::time_point begin, Clock::time_point end) {
  if (auto* t = api::Runtime::get().trace())
    t->record(name, category, device, t->to_trace_us(begin), t->to_trace_us(end));
}

// The chunks the policy gives `device`, run one after the other, then the read-back of its writes.
DeviceRun run_on_device(LaunchJob& job, int device, cl_kernel kernel, cl_command_queue queue, sched::Policy& policy,
                        std::mutex& policy_mutex, Clock::time_point t0, DeviceWorker& worker) {
  DeviceRun run;
  auto now = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  for (;;) {
    std::optional<sched::Chunk> chunk;
    {
      std::lock_guard lock(policy_mutex);
      chunk = policy.next_chunk(device, now());
    }
    if (!chunk) break;
    double start = now();
    Clock::time_point wall_start = Clock::now();
    if (!run.ran) {
      run.ran = true;
      run.bytes += upload_missing(job, device, queue, &run.error);
      if (run.error == CL_SUCCESS) run.error = set_arguments(job, kernel, device);
      trace(device, "upload", "transfer", wall_start, Clock::now());
    }
    if (run.error == CL_SUCCESS && fault_injected_on(device)) run.error = CL_OUT_OF_RESOURCES;
    if (run.error == CL_SUCCESS && job.rewrite) run.error = set_rewrite_arguments(job, kernel, chunk->begin);
    LaunchGeometry sub = sub_launch(job.geometry, chunk->begin, chunk->end);
    Clock::time_point kernel_start = Clock::now();
    if (run.error == CL_SUCCESS)
      run.error = cl().clEnqueueNDRangeKernel(queue, kernel, sub.work_dim, sub.offset, sub.global, sub.local, 0,
                                              nullptr, nullptr);
    if (run.error == CL_SUCCESS) run.error = cl().clFinish(queue);
    trace(device, job.kernel_name.c_str(), "kernel", kernel_start, Clock::now());
    double end = now();
    {
      std::lock_guard lock(policy_mutex);
      policy.chunk_done({*chunk, start, end});
    }
    run.seconds += end - start;
    if (run.error != CL_SUCCESS) {
      spdlog::warn("kernel {}: sub-launch on device {} failed (error {})", job.kernel_name, device, run.error);
      return run;
    }
    run.work_items += sub.work_items();
  }
  if (run.ran) {
    Clock::time_point begin = Clock::now();
    run.bytes += read_back_changes(
        job, device, queue, [&](size_t root, size_t bytes) { return worker.staging(root, bytes); }, run.changes,
        &run.error);
    run.seconds += std::chrono::duration<double>(Clock::now() - begin).count();
    trace(device, "read back", "transfer", begin, Clock::now());
  }
  return run;
}

// The launch as the app asked for it, on its device: the fallback when a split failed.
cl_int run_whole_on_home(LaunchJob& job, cl_command_queue home_queue) {
  cl_kernel kernel = device_kernel(job, job.home);
  bool temporary = false;
  if (!kernel) {  // coex's own build failed there: the app's program is built, make a kernel of it
    cl_int err = CL_SUCCESS;
    kernel = cl().clCreateKernel(job.program->handle, job.kernel_name.c_str(), &err);
    if (!kernel) return err;
    temporary = true;
  }
  cl_int err = set_arguments(job, kernel, job.home);
  if (err == CL_SUCCESS && job.rewrite && !temporary) err = set_rewrite_arguments(job, kernel, 0);
  const LaunchGeometry& g = job.geometry;
  if (err == CL_SUCCESS)
    err = cl().clEnqueueNDRangeKernel(home_queue, kernel, g.work_dim, g.offset, g.global, g.local, 0, nullptr, nullptr);
  if (err == CL_SUCCESS) err = cl().clFinish(home_queue);
  if (temporary) cl().clReleaseKernel(kernel);
  for (auto& use : job.roots) {  // home changed: every other copy of what was written is stale
    std::lock_guard lock(use.root->state->mutex());
    for (const auto& r : use.written) use.root->state->app_wrote(r.begin, r.end);
  }
  return err;
}

}  // namespace

cl_int run_split(Executor& executor, LaunchJob& job) {
  api::Runtime& rt = api::Runtime::get();
  devices::DeviceSet& devices = rt.devices();
  Clock::time_point t0 = Clock::now();
  cl_command_queue home_queue = devices.home_queue(job.app_context, job.home_device);
  if (!home_queue) return CL_OUT_OF_RESOURCES;
  report::LaunchRecord record;

  std::map<int, cl_kernel> kernels;
  for (int device : job.devices) {
    cl_kernel kernel = device_kernel(job, device);
    if (!kernel) continue;
    if (device != job.home && !ensure_shadows(job, device)) continue;
    kernels[device] = kernel;
  }
  if (kernels.size() < 2) {
    cl_int err = run_whole_on_home(job, home_queue);
    record.not_split_reason = "devices_unavailable";
    record.per_device.push_back({job.home, job.geometry.work_items(),
                                 std::chrono::duration<double>(Clock::now() - t0).count()});
    rt.report().record_launch(job.kernel_name, record);
    return err;
  }
  record.bytes_moved += refresh_host_copies(job, home_queue);
  trace(job.home, "host copy", "transfer", t0, Clock::now());

  std::vector<int> active;
  for (const auto& [device, kernel] : kernels) active.push_back(device);
  auto policy = make_configured_policy(rt.settings(), devices.profiles(), executor.history());
  std::mutex policy_mutex;
  sched::LaunchShape shape;
  shape.kernel_key = job.kernel_name + "#" + std::to_string(job.program->source_hash);
  shape.total_groups = job.geometry.groups_along_split();
  shape.items_per_group = job.geometry.items_per_group();
  shape.global_size = job.geometry.work_items();
  policy->begin_launch(shape, active, 0);

  std::map<int, DeviceRun> runs;
  for (int device : active) runs[device];
  Latch latch(active.size());
  for (int device : active) {
    cl_command_queue queue = device == job.home ? home_queue : devices.shadow_queue(device);
    DeviceWorker& worker = executor.worker(device);
    DeviceRun* out = &runs[device];
    cl_kernel kernel = kernels[device];
    worker.post([&, device, queue, kernel, out, worker_ptr = &worker] {
      try {
        *out = run_on_device(job, device, kernel, queue, *policy, policy_mutex, t0, *worker_ptr);
      } catch (...) {
        out->error = CL_OUT_OF_HOST_MEMORY;
      }
      latch.done();
    });
  }
  latch.wait();
  policy->end_launch(std::chrono::duration<double>(Clock::now() - t0).count());

  uint64_t items = 0;
  cl_int failure = CL_SUCCESS;
  for (auto& [device, run] : runs) {
    items += run.work_items;
    record.bytes_moved += run.bytes;
    if (run.error != CL_SUCCESS) failure = run.error;
  }
  if (failure == CL_SUCCESS && items != job.geometry.work_items()) {
    spdlog::error("kernel {}: the policy covered {} of {} work-items", job.kernel_name, items,
                  job.geometry.work_items());
    failure = CL_INVALID_OPERATION;
  }
  if (failure != CL_SUCCESS) {
    cl_int err = CL_SUCCESS;
    record.bytes_moved += restore_home(job, home_queue, &err);
    if (err == CL_SUCCESS) err = run_whole_on_home(job, home_queue);
    record.not_split_reason = "sub_launch_failed";
    record.per_device.push_back({job.home, job.geometry.work_items(),
                                 std::chrono::duration<double>(Clock::now() - t0).count()});
    rt.report().record_launch(job.kernel_name, record);
    return err;
  }

  std::map<int, DeviceChanges> changes;
  for (auto& [device, run] : runs) changes[device] = std::move(run.changes);
  Clock::time_point merge_start = Clock::now();
  cl_int err = CL_SUCCESS;
  record.bytes_moved += merge_changes(job, changes, home_queue, &err);
  trace(job.home, "merge", "merge", merge_start, Clock::now());
  record.split = err == CL_SUCCESS;
  if (!record.split) record.not_split_reason = "merge_failed";
  for (auto& [device, run] : runs) record.per_device.push_back({device, run.work_items, run.seconds});
  rt.report().record_launch(job.kernel_name, record);
  return err;
}

}  // namespace coex::exec
