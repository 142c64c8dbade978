#include "exec/deferred_app_binary.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/compile_ahead.h"
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
std::atomic<bool> command_buffers_used{false};  // note_command_buffers_used

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

// Set on a thread while it reads a program's binary with app_binary_read held: a launch that a flush
// of the read runs into (an event callback of PoCL's `basic`, which runs a flushed queue's commands on
// the flushing thread) neither waits for the gate nor reads again.
thread_local bool reading_app_binary = false;

// Whether the app's launches noted in the program's gated_launches have all ended, within `seconds`:
// their queues still in the registry flushed (a `basic` device runs nothing before), their events
// polled, so that a launch held by a user event the app sets later holds nothing but this wait. The
// events are released. Under program.app_binary_read.
bool gated_launches_ended(Services& services, model::ProgramRecord& program, double seconds) {
  const cl_icd_dispatch& cl = services.next();
  {
    std::shared_lock lock(queue_release_lock());
    for (const auto& [queue, events] : program.gated_launches)
      if (services.registries().queues.find(queue)) cl.clFlush(queue);
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  bool ended = true;
  for (auto& [queue, events] : program.gated_launches)
    for (cl_event event : events) {
      cl_int status = CL_QUEUED;
      while (ended &&
             cl.clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) ==
                 CL_SUCCESS &&
             status > CL_COMPLETE && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      ended = ended && status <= CL_COMPLETE;
      cl.clReleaseEvent(event);
    }
  program.gated_launches.clear();
  return ended;
}

// Whether the event's command has ended (or cannot be asked).
bool ended(const cl_icd_dispatch& cl, cl_event event) {
  cl_int status = CL_QUEUED;
  return cl.clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) != CL_SUCCESS ||
         status <= CL_COMPLETE;
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
    if (command_buffers_used.load(std::memory_order_acquire)) return false;
    const std::vector<int> selected = devices.selected();
    if (!std::all_of(selected.begin(), selected.end(),
                     [&](int d) { return devices.at(d).same_kind(devices.at(home)); }))
      return false;
  }
  {
    std::lock_guard read_lock(program.app_binary_read);
    std::lock_guard lock(program.mutex);
    end_app_binary_deferral(program);  // of an earlier clBuildProgram of it that no launch followed
    program.app_binary_needs_quiet = needs_quiet;
    if (needs_quiet) quiet_reads_pending.fetch_add(1, std::memory_order_acq_rel);
    program.app_binary_deferred.store(true, std::memory_order_release);
  }
  return true;
}

bool waits_for_app_binary(Services& services, const model::ProgramRecord& program, int home, int device) {
  if (!program.app_binary_deferred.load(std::memory_order_acquire) || device == home) return false;
  const devices::DeviceSet& devices = services.devices();
  if (!devices.at(device).same_kind(devices.at(home))) return false;
  return !(analysis_ready(program) && !program.rewritten_source.empty());
}

void read_deferred_app_binary(Services& services, const std::shared_ptr<model::ProgramRecord>& program,
                              cl_context app_context, int home, const std::vector<int>& devices,
                              const compile_ahead::Launch* ahead) {
  if (!program->app_binary_deferred.load(std::memory_order_acquire) || reading_app_binary) return;
  // A program rewritten or with nothing to split reads nothing: nothing to compile ahead either, but
  // the rewrite in its own process (compile_ahead::serve_rewrite).
  if (!program->app_binary_needs_quiet && ahead && !compile_ahead::serves_none(*program) &&
      compile_ahead::under_way(services, *program, home, *ahead))
    return;
  compile_ahead::not_needed(*program);  // one started at the build and still waiting: read here instead
  bool read = false;  // the app's binary read: the devices of home's kind build from it
  {
    // One read per program: PoCL fills a program's binaries without a lock of its own
    // (exec/device_kernels.cpp); and while it waits for quiet, no launch of the program is enqueued.
    std::lock_guard read_lock(program->app_binary_read);
    if (!program->app_binary_deferred.load(std::memory_order_acquire)) return;
    reading_app_binary = true;
    // The deferral ends however the read went (an exception of the driver's included).
    struct Ending {
      model::ProgramRecord& program;
      ~Ending() {
        reading_app_binary = false;
        std::lock_guard lock(program.mutex);
        end_app_binary_deferral(program);
      }
    } ending{*program};
    const bool nothing_read = splits_run_none_of_app_program(*program);
    bool quiet = true;
    if (program->app_binary_needs_quiet && !nothing_read) {
      const auto started = std::chrono::steady_clock::now();
      quiet =
          gated_launches_ended(services, *program, kQuietWait) && !command_buffers_used.load(std::memory_order_acquire);
      if (auto* t = services.trace())
        t->record("wait for quiet", "build", home, started, std::chrono::steady_clock::now(), {{"quiet", quiet}});
    }
    // Every selected device for the kinds: `devices` may lack one left out of a split for now.
    read = quiet && !nothing_read;
    if (read) read_app_program_binary(services, *program, home, services.devices().selected());
  }
  prepare_program(services, program, app_context, home, devices);
  // Without a read the devices of home's kind build from home's build of the rewrite or from source,
  // neither about a millisecond: a wait for them here holds the launch auto_wait_seconds for nothing
  // (benchmarks/binomial's first launch over two basic devices, whose rewrite PoCL built from source
  // for 0.9 s: 50 ms; docs/design.md, "One-time costs").
  if (!read) return;
  const devices::DeviceSet& set = services.devices();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(services.settings().auto_wait_seconds);
  for (int device : devices) {
    if (device == home || !set.at(device).same_kind(set.at(home))) continue;
    {
      std::lock_guard lock(program->mutex);  // a late device not let in has no build posted
      if (!program->builds_posted.count({device, false})) continue;
    }
    const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0 || !wait_for_build(*program, device, false, left)) break;
  }
}

LaunchGate launch_gate(Services& services, cl_kernel kernel) {
  if (quiet_reads_pending.load(std::memory_order_acquire) == 0 || reading_app_binary) return {};
  auto record = services.registries().kernels.find(kernel);
  if (!record || !record->program || !record->program->app_binary_deferred.load(std::memory_order_acquire)) return {};
  LaunchGate gate;
  gate.lock = std::unique_lock(record->program->app_binary_read);
  // Read meanwhile: nothing to hold off any more.
  if (!record->program->app_binary_deferred.load(std::memory_order_acquire) || !record->program->app_binary_needs_quiet)
    return {};
  gate.program = record->program;
  return gate;
}

void LaunchGate::note_launch(Services& services, cl_command_queue queue, cl_event event) {
  if (!program || !event) return;
  const cl_icd_dispatch& cl = services.next();
  if (cl.clRetainEvent(event) != CL_SUCCESS) return;
  std::vector<cl_event>& events = program->gated_launches[queue];
  // On an in-order queue the last launch ends after the others; elsewhere those ended are dropped.
  auto record = services.registries().queues.find(queue);
  const bool in_order = record && !record->out_of_order();
  auto done = std::remove_if(events.begin(), events.end(), [&](cl_event e) {
    if (!in_order && !ended(cl, e)) return false;
    cl.clReleaseEvent(e);
    return true;
  });
  events.erase(done, events.end());
  events.push_back(event);
}

void note_command_buffers_used() { command_buffers_used.store(true, std::memory_order_release); }

std::shared_mutex& queue_release_lock() {
  static std::shared_mutex lock;
  return lock;
}

}  // namespace coex::exec
