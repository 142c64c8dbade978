#include "exec/deferred_app_binary.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/device_kernels.h"
#include "exec/executor.h"
#include "exec/program_analysis.h"
#include "exec/shared_binaries.h"
#include "model/registries.h"
#include "report/trace.h"

namespace coex::exec {
namespace {

// Programs whose deferred read waits for their launches to end: while none does, a launch takes no
// gate (launch_gate).
std::atomic<int> quiet_reads_pending{0};

// Whether some kernel of the app's built `program` has a work-group size fixed at compile time on
// `device` (reqd_work_group_size), by the driver's own word: kernel objects made and released at
// once, before the app can have made any. True where the driver does not say.
bool some_kernel_has_compiled_group_size(const cl_icd_dispatch& cl, cl_program program, cl_device_id device) {
  cl_uint count = 0;
  if (cl.clCreateKernelsInProgram(program, 0, nullptr, &count) != CL_SUCCESS) return true;
  std::vector<cl_kernel> kernels(count);
  if (count && cl.clCreateKernelsInProgram(program, count, kernels.data(), nullptr) != CL_SUCCESS) return true;
  bool any = false;
  for (cl_kernel kernel : kernels) {
    size_t compiled[3] = {0, 0, 0};
    if (!any && (cl.clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof compiled,
                                             compiled, nullptr) != CL_SUCCESS ||
                 compiled[0] != 0))
      any = true;
    cl.clReleaseKernel(kernel);
  }
  return any;
}

// Whether every command enqueued so far on the app's queues of `device` in `context` has ended, within
// `seconds`: a marker on each (in an out-of-order queue it waits for every command before it), flushed
// and polled, so that a command held by a user event the app sets later holds nothing but this wait.
bool app_queues_quiet(Services& services, cl_context context, cl_device_id device, double seconds) {
  const cl_icd_dispatch& cl = services.next();
  std::vector<cl_event> markers;
  bool enqueued = true;
  for (const auto& queue : services.registries().queues.snapshot()) {
    if (queue->context != context || queue->device != device) continue;
    cl_event marker = nullptr;
    if (cl.clEnqueueMarkerWithWaitList(queue->handle, 0, nullptr, &marker) != CL_SUCCESS || !marker) {
      enqueued = false;
      break;
    }
    cl.clFlush(queue->handle);
    markers.push_back(marker);
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  bool quiet = enqueued;
  for (cl_event marker : markers) {
    cl_int status = CL_QUEUED;
    while (quiet &&
           cl.clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) ==
               CL_SUCCESS &&
           status > CL_COMPLETE && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    quiet = quiet && status <= CL_COMPLETE;
    cl.clReleaseEvent(marker);
  }
  return quiet;
}

}  // namespace

void end_app_binary_deferral(model::ProgramRecord& program) {
  if (!program.app_binary_deferred.exchange(false, std::memory_order_acq_rel)) return;
  if (program.app_binary_needs_quiet) quiet_reads_pending.fetch_sub(1, std::memory_order_acq_rel);
}

bool defer_app_program_binary(Services& services, model::ProgramRecord& program, int home,
                              const std::vector<int>& to_build) {
  if (!program.handle || services.executor().policy().waits_for_preparation() ||
      !another_of_kind(services, home, to_build))
    return false;
  const devices::DeviceSet& devices = services.devices();
  const bool needs_quiet = some_kernel_has_compiled_group_size(services.next(), program.handle, devices.at(home).id);
  if (needs_quiet) {
    const std::vector<int> selected = devices.selected();
    if (!std::all_of(selected.begin(), selected.end(),
                     [&](int d) { return devices.at(d).same_kind(devices.at(home)); }))
      return false;
  }
  std::lock_guard lock(program.mutex);
  program.app_binary_needs_quiet = needs_quiet;
  if (needs_quiet) quiet_reads_pending.fetch_add(1, std::memory_order_acq_rel);
  program.app_binary_deferred.store(true, std::memory_order_release);
  return true;
}

bool waits_for_app_binary(Services& services, const model::ProgramRecord& program, int home, int device) {
  if (!program.app_binary_deferred.load(std::memory_order_acquire) || device == home) return false;
  const devices::DeviceSet& devices = services.devices();
  if (!devices.at(device).same_kind(devices.at(home))) return false;
  return !(analysis_ready(program) && !program.rewritten_source.empty());
}

void read_deferred_app_binary(Services& services, const std::shared_ptr<model::ProgramRecord>& program,
                              cl_context app_context, int home, const std::vector<int>& devices) {
  if (!program->app_binary_deferred.load(std::memory_order_acquire)) return;
  {
    // One read per program: PoCL fills a program's binaries without a lock of its own
    // (exec/device_kernels.cpp); and while it waits for quiet, no launch of the program is enqueued.
    std::lock_guard read_lock(program->app_binary_read);
    if (!program->app_binary_deferred.load(std::memory_order_acquire)) return;
    bool quiet = true;
    if (program->app_binary_needs_quiet) {
      const auto started = std::chrono::steady_clock::now();
      quiet = app_queues_quiet(services, program->context, services.devices().at(home).id, kQuietWait);
      if (auto* t = services.trace())
        t->record("wait for quiet", "build", home, started, std::chrono::steady_clock::now(), {{"quiet", quiet}});
    }
    if (quiet) read_app_program_binary(services, *program, home, devices);
    std::lock_guard lock(program->mutex);
    end_app_binary_deferral(*program);
  }
  prepare_program(services, program, app_context, home, devices);
  const devices::DeviceSet& set = services.devices();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(services.settings().auto_wait_seconds);
  for (int device : devices) {
    if (device == home || !set.at(device).same_kind(set.at(home))) continue;
    const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0 || !wait_for_build(*program, device, false, left)) break;
  }
}

LaunchGate launch_gate(Services& services, cl_kernel kernel) {
  if (quiet_reads_pending.load(std::memory_order_acquire) == 0) return {};
  auto record = services.registries().kernels.find(kernel);
  if (!record || !record->program) return {};
  LaunchGate gate;
  gate.program = record->program;
  model::ProgramRecord& program = *gate.program;
  if (!program.app_binary_deferred.load(std::memory_order_acquire) || !program.app_binary_needs_quiet) return {};
  gate.lock = std::unique_lock(program.app_binary_read);
  // Read meanwhile: nothing to hold off any more.
  if (!program.app_binary_deferred.load(std::memory_order_acquire)) return {};
  return gate;
}

}  // namespace coex::exec
