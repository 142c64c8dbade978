// clEnqueueNDRangeKernel: split across the device set when the planner proves it safe, otherwise
// run as the app asked on its device, with the reason counted in the report.
#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "api/api_trace.h"
#include "api/handler_util.h"
#include "api/launch_validation.h"
#include "devices/device_set.h"
#include "exec/deferred_app_binary.h"
#include "exec/executor.h"
#include "exec/exit_guard.h"
#include "exec/home_sync.h"
#include "exec/launch_planner.h"
#include "exec/pocl_compiles.h"
#include "exec/repeated_launches.h"
#include "report/report.h"
#include "report/trace.h"

namespace coex::api {
namespace {

// A launch that runs unsplit on home writes there: every other copy of what it may write is stale.
// The decision's reason and gate move into the report's record (this runs at every such launch).
void run_unsplit_bookkeeping(exec::LaunchDecision&& decision, cl_command_queue queue, uint64_t work_items) {
  for (const auto& record : decision.written_buffers) {
    std::lock_guard lock(record->state->mutex());
    record->state->app_wrote(record->origin, record->origin + record->size);
  }
  int home = decision.home;  // planned or repeated: no lookup of the queue
  if (home < 0)
    if (auto queue_record = rt().registries().queues.find(queue)) home = rt().devices().index_of(queue_record->device);
  if (home >= 0) rt().note_home(home);
  static const std::string kUntracked = "(untracked)";
  rt().report().record_unsplit(decision.kernel_name.empty() ? kUntracked : decision.kernel_name,
                               decision.not_split_reason, decision.gate, decision.gate_launch, home, work_items,
                               unsplit_launch_observed());
}

// Every tracked buffer among the kernel's arguments: what a launch coex knows nothing about may write.
std::vector<std::shared_ptr<model::BufferRecord>> buffer_arguments(model::KernelRecord& kernel) {
  std::lock_guard lock(kernel.mutex);
  return exec::written_buffers(rt(), kernel.args, {});
}

// A kernel that runs unsplit on home reads its buffers there: home first gets what other devices
// wrote (lazy home); of those it may write (`written`: run_unsplit_bookkeeping's app_wrote follows),
// every split in flight writes home before it ends (exec::app_will_write). Cheap when no buffer
// lacks anything (one atomic load).
cl_int bring_arguments_home(const char* call, cl_command_queue queue, cl_kernel kernel,
                            const std::vector<std::shared_ptr<model::BufferRecord>>& written) {
  if (!coherence::BufferState::any_needs_care()) return CL_SUCCESS;
  auto record = rt().registries().kernels.find(kernel);
  if (!record) return CL_SUCCESS;
  for (const auto& buffer : buffer_arguments(*record)) {
    const bool writes =
        std::any_of(written.begin(), written.end(), [&](const auto& w) { return w->handle == buffer->handle; });
    if (cl_int err = writes ? exec::app_will_write(rt(), call, queue, buffer->handle, 0, SIZE_MAX)
                            : exec::app_reads(rt(), call, queue, buffer->handle, 0, SIZE_MAX))
      return err;
  }
  return CL_SUCCESS;
}

// Waits, at most kDrainWait, until every command of the queue (an in-order one) has run, through a
// marker polled from here: a launch enqueued then starts at once, and its time from the enqueue is its
// own. Timed from a callback on the marker instead, launches of benchmarks/jacobi on PoCL's basic
// device measured under a microsecond. The wait holds the app's thread (3 launches of a kernel and
// size at most): an app that keeps long work queued is not held longer, its launch goes untimed.
bool drained(cl_command_queue queue) {
  constexpr auto kDrainWait = std::chrono::milliseconds(100);
  cl_command_queue_properties properties = 0;
  if (cl().clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof properties, &properties, nullptr) != CL_SUCCESS ||
      (properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE))
    return false;
  cl_event marker = nullptr;
  if (cl().clEnqueueMarkerWithWaitList(queue, 0, nullptr, &marker) != CL_SUCCESS || !marker) return false;
  cl().clFlush(queue);
  const auto until = std::chrono::steady_clock::now() + kDrainWait;
  cl_int status = CL_QUEUED;
  while (cl().clGetEventInfo(marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) ==
             CL_SUCCESS &&
         status > CL_COMPLETE && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  cl().clReleaseEvent(marker);
  return status == CL_COMPLETE;
}

// A marker enqueued just before a launch timed on `home`, where its queue runs in order and its driver
// notifies each command as it completes: the launch starts only once the marker has completed, and is
// timed from then (HomeLaunchTimes::time). Null otherwise.
cl_event start_marker(cl_command_queue queue, int home) {
  if (home < 0 || !rt().devices().at(home).notifies_as_commands_complete()) return nullptr;
  cl_command_queue_properties properties = 0;
  if (cl().clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof properties, &properties, nullptr) != CL_SUCCESS ||
      (properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE))
    return nullptr;
  cl_event marker = nullptr;
  if (cl().clEnqueueMarkerWithWaitList(queue, 0, nullptr, &marker) != CL_SUCCESS) return nullptr;
  return marker;
}

// On a home device whose driver deadlocks on user events (devices/device_set.h), a split waits for
// its wait list in the app's thread (Executor::run_synchronously): a list with an event not yet
// complete (a user event the app sets after this call) would block the app for good. Such a
// launch goes to the driver whole.
bool waits_on_pending_events(const exec::LaunchJob& job, cl_uint num_wait, const cl_event* wait_list) {
  if (num_wait == 0 || !rt().devices().at(job.home).user_events_deadlock) return false;
  for (cl_uint i = 0; i < num_wait; ++i) {
    cl_int status = CL_COMPLETE;
    if (cl().clGetEventInfo(wait_list[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) !=
            CL_SUCCESS ||
        status > CL_COMPLETE)
      return true;
  }
  return false;
}

// Whether this launch is the first of `kernel` on `home` with its local size (the driver's, where the
// app gave none), a zero or other offset and a small or wide grid (exec/pocl_compiles.h, first_run_of). Asked of
// launches to be timed alone: an earlier launch never timed makes a later one look first, which costs one timing, never
// a time with a first run in it.
bool home_runs_it_first(int home, cl_kernel kernel, cl_uint work_dim, const size_t* offset, const size_t* global,
                        const size_t* local) {
  if (home < 0 || work_dim < 1 || work_dim > 3 || !global) return false;
  exec::LaunchGeometry geometry;
  geometry.work_dim = work_dim;
  for (cl_uint d = 0; d < work_dim; ++d) {
    geometry.offset[d] = offset ? offset[d] : 0;
    geometry.global[d] = global[d];
    geometry.local[d] = local ? local[d] : 0;
  }
  return exec::first_run_of(home, kernel, geometry);
}

// The decision's list of written buffers takes its memory from the app thread's launch before and
// gives it back, emptied, when the handler returns: a launch that repeats an earlier plan then
// allocates nothing for it (docs/performance.md, "Launches left on home").
class WrittenBuffersSpare {
 public:
  explicit WrittenBuffersSpare(exec::LaunchDecision& decision) : decision_(decision) {
    decision_.written_buffers.swap(spare());
  }
  WrittenBuffersSpare(const WrittenBuffersSpare&) = delete;
  WrittenBuffersSpare& operator=(const WrittenBuffersSpare&) = delete;
  ~WrittenBuffersSpare() {
    decision_.written_buffers.clear();
    spare().swap(decision_.written_buffers);
  }

 private:
  static std::vector<std::shared_ptr<model::BufferRecord>>& spare() {
    thread_local std::vector<std::shared_ptr<model::BufferRecord>> vector;
    return vector;
  }
  exec::LaunchDecision& decision_;
};

cl_int CL_API_CALL enqueue_ndrange(cl_command_queue queue, cl_kernel kernel, cl_uint work_dim, const size_t* offset,
                                   const size_t* global, const size_t* local, cl_uint num_wait,
                                   const cl_event* wait_list, cl_event* event) {
  exec::LaunchDecision decision;
  const WrittenBuffersSpare spare(decision);
  exec::arm_exit_guard();  // a split may leave a device's thread running (exec/exit_guard.h)
  try {
    // After coex's shutdown (docs/design.md, "Exit": an atexit handler's launch) nothing is split.
    const char* reason = exec::exit_begun() ? "exiting" : nullptr;
    // A launch that repeats one left on home, without a wait list to check, takes that one's plan.
    const bool repeated = !reason && num_wait == 0 && !wait_list &&
                          exec::repeated_launch(rt(), queue, kernel, work_dim, offset, global, local, decision);
    if (!reason && !repeated)
      reason = launch_left_to_driver(queue, kernel, work_dim, global, local, num_wait, wait_list);
    if (repeated) {
      // decision holds the earlier launch's plan
    } else if (reason) {
      decision.not_split_reason = reason;
      if (auto record = rt().registries().kernels.find(kernel)) {
        decision.kernel_name = record->name;
        decision.written_buffers = buffer_arguments(*record);  // the driver may still run it
      }
    } else {
      const auto planning = std::chrono::steady_clock::now();
      decision = exec::plan_launch(rt(), queue, kernel, work_dim, offset, global, local);
      if (decision.probe) {
        // A piece of the launch first, on home from an idle queue (exec/first_launch_probe.h), after what
        // other devices wrote of its buffers came home; then the plan again, with its time.
        const bool ran =
            num_wait == 0 && !wait_list &&
            bring_arguments_home("clEnqueueNDRangeKernel", queue, kernel, decision.written_buffers) == CL_SUCCESS &&
            drained(queue) &&
            exec::first_launch_probe::run(rt(), queue, kernel, decision.home, decision.probe_key, *decision.probe);
        if (!ran) exec::first_launch_probe::not_run(decision.probe_key);
        decision = exec::plan_launch(rt(), queue, kernel, work_dim, offset, global, local);
      }
      // The planner's time on the app's thread (docs/reporting.md).
      if (auto* trace = rt().trace())
        record_safely("clEnqueueNDRangeKernel", [&] {
          trace->record("plan", "plan", report::kPlanTrack, planning, std::chrono::steady_clock::now());
        });
    }
    if (decision.job && waits_on_pending_events(*decision.job, num_wait, wait_list)) {
      exec::end_buffer_uses(*decision.job);
      decision.job.reset();
      decision.not_split_reason = "pending_wait_list";
    }
    if (decision.job) {
      return rt().executor().submit(std::move(decision.job), num_wait, wait_list, event);
    }
  } catch (const std::exception& e) {
    spdlog::warn("clEnqueueNDRangeKernel: coex could not plan the launch ({}); it runs unsplit", e.what());
    if (decision.job) exec::end_buffer_uses(*decision.job);
    decision.job.reset();
    decision.not_split_reason = "coex_error";
  }
  if (cl_int err = bring_arguments_home("clEnqueueNDRangeKernel", queue, kernel, decision.written_buffers)) return err;
  // Timed from an idle queue (drained_home_key), for auto's gate to weigh a split against: not home's
  // first run of the kernel at this local size and offset, which pays the driver's one-time work (PoCL
  // loads, or compiles, the work-group function: 0.18 ms where the launch took 6 us; docs/design.md,
  // "Size by time"), nor a launch with a wait list (a user event the app sets later would hold the
  // queue), nor one whose queue did not drain in time. The first run is asked first: it needs no wait
  // for the queue. Not timed, the launch counts among those to time: the next is.
  if (decision.time_drained && !decision.time_on_home_key.empty() &&
      (home_runs_it_first(decision.home, kernel, work_dim, offset, global, local) ||
       !(num_wait == 0 && drained(queue)))) {
    record_safely("clEnqueueNDRangeKernel",
                  [&] { rt().executor().home_launch_times().not_timed(decision.time_on_home_key); });
    decision.time_on_home_key.clear();
  }
  // A launch to be timed on home needs an event: the app's (coex then holds a reference of its own),
  // or one coex asks for and keeps.
  const bool timed = !decision.time_on_home_key.empty();
  // No launch of a program begins while its binary is read, and the read waits for those before
  // (exec/deferred_app_binary.h): taken before the launch's time starts.
  exec::LaunchGate gate = exec::launch_gate(rt(), kernel);
  cl_event own = nullptr;
  cl_event* event_out = (timed || gate.program) && !event ? &own : event;
  if (timed) record_safely("clEnqueueNDRangeKernel", [] { rt().executor().home_launch_times().release_done(); });
  // A launch timed from a drained queue starts at its enqueue already.
  cl_event started = timed && !decision.time_drained ? start_marker(queue, decision.home) : nullptr;
  // Only a launch timed on home needs the time of its enqueue.
  const auto enqueued = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  cl_int err =
      cl().clEnqueueNDRangeKernel(queue, kernel, work_dim, offset, global, local, num_wait, wait_list, event_out);
  if (err == CL_SUCCESS && event_out && *event_out)
    record_safely("clEnqueueNDRangeKernel", [&] { gate.note_launch(rt(), queue, *event_out); });
  gate = {};
  if (own && !timed) cl().clReleaseEvent(std::exchange(own, nullptr));  // asked for the gate alone
  if (err == CL_SUCCESS && timed && event_out && *event_out)
    record_safely("clEnqueueNDRangeKernel", [&] {
      if (event) cl().clRetainEvent(*event);
      // Taken over (an exception inside would leak it rather than release it twice).
      rt().executor().home_launch_times().time(decision.time_on_home_key, *event_out, enqueued,
                                               std::exchange(started, nullptr));
    });
  if (started) cl().clReleaseEvent(started);
  if (err == CL_SUCCESS)
    record_safely("clEnqueueNDRangeKernel", [&] {
      uint64_t items = global ? 1 : 0;
      for (cl_uint d = 0; d < work_dim && global; ++d) items *= global[d];
      run_unsplit_bookkeeping(std::move(decision), queue, items);
    });
  return err;
}

cl_int CL_API_CALL enqueue_task(cl_command_queue queue, cl_kernel kernel, cl_uint num_wait, const cl_event* wait_list,
                                cl_event* event) {
  exec::LaunchDecision decision;
  decision.not_split_reason = "task";
  record_safely("clEnqueueTask", [&] {
    if (auto record = rt().registries().kernels.find(kernel)) {
      decision.kernel_name = record->name;
      decision.written_buffers = buffer_arguments(*record);  // a task may write any of them
    }
  });
  if (cl_int err = bring_arguments_home("clEnqueueTask", queue, kernel, decision.written_buffers)) return err;
  exec::LaunchGate gate = exec::launch_gate(rt(), kernel);  // exec/deferred_app_binary.h
  cl_event own = nullptr;
  cl_int err = cl().clEnqueueTask(queue, kernel, num_wait, wait_list, gate.program && !event ? &own : event);
  if (err == CL_SUCCESS && gate.program)
    record_safely("clEnqueueTask", [&] { gate.note_launch(rt(), queue, event ? *event : own); });
  gate = {};
  if (own) cl().clReleaseEvent(own);
  if (err == CL_SUCCESS)
    record_safely("clEnqueueTask", [&] { run_unsplit_bookkeeping(std::move(decision), queue, 1); });
  return err;
}

}  // namespace

void install_launch_calls(cl_icd_dispatch& table) {
  table.clEnqueueNDRangeKernel = enqueue_ndrange;
  table.clEnqueueTask = enqueue_task;
}

}  // namespace coex::api
