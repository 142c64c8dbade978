#include "exec/executor.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/compile_ahead.h"
#include "exec/data_moves.h"
#include "exec/exit_guard.h"
#include "exec/home_sync.h"
#include "exec/policy_binding.h"
#include "exec/spin_wait.h"
#include "exec/split_runner.h"
#include "model/registries.h"

namespace coex::exec {
namespace {

std::vector<sched::DeviceProfile> selected_profiles(devices::DeviceSet& devices) {
  std::vector<sched::DeviceProfile> out;
  for (const auto& profile : devices.profiles())
    if (devices.at(profile.index).selected) out.push_back(profile);
  return out;
}

}  // namespace

Executor::Executor(Services& services)
    : services_(services),
      history_(load_history(services.settings(), selected_profiles(services.devices()))),
      policy_(make_configured_policy(services.settings(), services.devices().profiles(), history_)),
      launch_policies_([&services, history = history_] {
        return make_configured_policy(services.settings(), services.devices().profiles(), history);
      }),
      late_devices_(named_late_devices(services, policy_->waits_for_preparation()),
                    services.settings().auto_late_after),
      home_launch_times_(services.next(), alive_),
      spin_(spin_budget(services.settings().spin_microseconds, selected_profiles(services.devices()), usable_cores())),
      dispatcher_([this] { dispatcher_loop(); }) {}

Executor::~Executor() { stop(); }

DeviceWorker& Executor::worker(int device) {
  std::lock_guard lock(mutex_);
  auto& slot = workers_[device];
  if (!slot) slot = std::make_unique<DeviceWorker>(device, services_.next(), spin_);
  return *slot;
}

void Executor::set_busy(int device, bool busy, std::function<void()> if_left_behind) {
  {
    std::lock_guard lock(mutex_);
    if (busy)
      busy_[device] = std::move(if_left_behind);
    else
      busy_.erase(device);
    left_out_version_.fetch_add(1, std::memory_order_acq_rel);
  }
  busy_changed_.notify_all();
}

bool Executor::busy(int device) const {
  std::lock_guard lock(mutex_);
  return busy_.count(device) != 0;
}

void Executor::drop(int device, cl_int error) {
  std::lock_guard lock(mutex_);
  left_out_version_.fetch_add(1, std::memory_order_acq_rel);
  if (dropped_.insert(device).second)
    spdlog::warn("device {}: a sub-launch failed (error {}); coex leaves it out for the rest of the run", device,
                 error);
}

const char* Executor::left_out(int device) const {
  std::lock_guard lock(mutex_);
  if (dropped_.count(device)) return "device_failed";
  if (busy_.count(device)) return "devices_busy";
  return nullptr;
}

cl_event Executor::stall_event(int device, cl_context context) {
  std::lock_guard lock(mutex_);
  cl_event& event = stall_events_[device];
  if (!event) event = services_.next().clCreateUserEvent(context, nullptr);
  return event;
}

cl_int Executor::submit(std::unique_ptr<LaunchJob> job, cl_uint num_wait, const cl_event* wait_list,
                        cl_event* app_event) {
  if (services_.devices().at(job->home).user_events_deadlock)
    return run_synchronously(std::move(job), num_wait, wait_list, app_event);
  const cl_icd_dispatch& cl = services_.next();
  cl_int err = CL_SUCCESS;
  cl_event user_event = cl.clCreateUserEvent(job->app_context, &err);
  if (!user_event) {
    end_buffer_uses(*job);
    return err;
  }
  cl_event start = nullptr, end = nullptr;
  err = cl.clEnqueueMarkerWithWaitList(job->app_queue, num_wait, wait_list, &start);
  if (err == CL_SUCCESS) err = cl.clEnqueueMarkerWithWaitList(job->app_queue, 1, &user_event, &end);
  if (err != CL_SUCCESS) {
    // The start marker may already be queued: complete the user event so
    // nothing waits forever.
    end_buffer_uses(*job);
    cl.clSetUserEventStatus(user_event, CL_COMPLETE);
    cl.clReleaseEvent(user_event);
    if (start) cl.clReleaseEvent(start);
    release_holds(*job);
    return err;
  }
  cl.clFlush(job->app_queue);  // the start marker must reach the device, or the
                               // job never starts
  job->user_event = user_event;
  job->start_marker = start;
  if (app_event) {
    *app_event = end;
    cl.clRetainEvent(start);
    job->event_record = std::make_shared<model::SplitEventRecord>();
    job->event_record->start_marker = start;
    services_.registries().split_events.insert(end, job->event_record);
  } else {
    cl.clReleaseEvent(end);
  }
  LaunchJob* raw = job.get();
  {
    std::lock_guard lock(mutex_);
    waiting_[raw] = std::move(job);
  }
  err = cl.clSetEventCallback(start, CL_COMPLETE, on_start_marker, raw);
  if (err != CL_SUCCESS) {
    // Cannot be told when to start: wait here instead (the split still runs,
    // just not async).
    cl_int status = cl.clWaitForEvents(1, &start) == CL_SUCCESS ? CL_COMPLETE : CL_INVALID_EVENT_WAIT_LIST;
    on_start_marker(start, status, raw);
  }
  return CL_SUCCESS;
}

// Called by the driver, on its own thread: only hands the job to the
// dispatcher.
void CL_CALLBACK Executor::on_start_marker(cl_event, cl_int status, void* user_data) {
  auto* raw = static_cast<LaunchJob*>(user_data);
  Executor& self = raw->services->executor();
  {
    std::lock_guard lock(self.mutex_);
    auto it = self.waiting_.find(raw);
    if (it == self.waiting_.end()) return;
    self.ready_.emplace_back(std::move(it->second), status);
    self.waiting_.erase(it);
  }
  self.cv_.notify_one();
}

// One job at a time: jobs may share buffers, and their coherence steps must not
// interleave. Devices still run in parallel inside a job, each from its own
// worker thread.
void Executor::dispatcher_loop() {
  for (;;) {
    std::pair<std::shared_ptr<LaunchJob>, cl_int> next;
    {
      // At stop, launches still waiting for their start marker run too, within the stop's limit: an
      // app that returns from main with work in its queue may finish it in an atexit handler or a
      // static destructor, after coex's shutdown (docs/design.md, "Exit").
      std::unique_lock lock(mutex_);
      while (ready_.empty()) {
        if (stopping_ && (waiting_.empty() || std::chrono::steady_clock::now() >= stop_deadline_)) return;
        if (stopping_)
          cv_.wait_until(lock, stop_deadline_);
        else
          cv_.wait(lock);
      }
      next = std::move(ready_.front());
      ready_.pop_front();
    }
    LaunchJob& job = *next.first;
    cl_int status = next.second;
    if (status >= 0) status = run_serialised(job);
    complete(job, status);
  }
}

cl_int Executor::run_serialised(LaunchJob& job) {
  std::lock_guard lock(run_mutex_);
  {
    std::lock_guard state(mutex_);
    split_running_ = true;
  }
  struct Ended {
    Executor& executor;
    ~Ended() {
      {
        std::lock_guard state(executor.mutex_);
        executor.split_running_ = false;
      }
      executor.cv_.notify_all();
    }
  } ended{*this};
  try {
    return run_split(*this, job);
  } catch (const std::exception& e) {
    spdlog::error("kernel {}: split launch failed inside coex: {}", job.kernel_name, e.what());
  } catch (...) {
    spdlog::error("kernel {}: split launch failed inside coex", job.kernel_name);
  }
  // No merge ended it: an app write queued behind it makes what its preparation copied stale.
  try {
    forget_copies_before_app_writes(job, roots_written_since_enqueue(job));
  } catch (...) {  // a lock or an allocation failed: nothing more to be done here
  }
  return CL_OUT_OF_HOST_MEMORY;
}

cl_int Executor::run_synchronously(std::unique_ptr<LaunchJob> owned, cl_uint num_wait, const cl_event* wait_list,
                                   cl_event* app_event) {
  const std::shared_ptr<LaunchJob> job = std::move(owned);  // shared with its device threads (launch_job.h)
  const cl_icd_dispatch& cl = services_.next();
  // What the start marker gives otherwise: the wait list done, and every
  // earlier command of the queue.
  cl_int status = num_wait ? cl.clWaitForEvents(num_wait, wait_list) : CL_SUCCESS;
  if (status == CL_SUCCESS) status = cl.clFinish(job->app_queue);
  if (status == CL_SUCCESS) status = run_serialised(*job);
  end_buffer_uses(*job);
  release_holds(*job);
  if (!app_event) return CL_SUCCESS;
  cl_int err = cl.clEnqueueMarkerWithWaitList(job->app_queue, 0, nullptr, app_event);
  if (err != CL_SUCCESS) return err;
  auto record = std::make_shared<model::SplitEventRecord>();
  cl.clRetainEvent(*app_event);
  record->start_marker = *app_event;
  record->status = status >= 0 ? CL_COMPLETE : status;
  services_.registries().split_events.insert(*app_event, record);
  return CL_SUCCESS;
}

void Executor::complete(LaunchJob& job, cl_int status) {
  const cl_icd_dispatch& cl = services_.next();
  if (job.event_record) job.event_record->status = status >= 0 ? CL_COMPLETE : status;
  end_buffer_uses(job);  // before the event: the app's next command may read home
  cl.clSetUserEventStatus(job.user_event,
                          CL_COMPLETE);  // never an error: see SplitEventRecord
  cl.clReleaseEvent(job.user_event);
  cl.clReleaseEvent(job.start_marker);
  release_holds(job);
}

void Executor::release_holds(LaunchJob& job) {
  for (cl_mem mem : job.retained) services_.next().clReleaseMemObject(mem);  // coex's own retains
  job.retained.clear();
  // Not counted in flight once over, though a device thread left behind still holds the job
  // (launch_job.h).
  job.in_flight.reset();
}

void Executor::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    stop_deadline_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                            std::chrono::duration<double>(kStalledWorkerWaitSeconds));
  }
  cv_.notify_all();
  // A compile ahead still running is of no use now (exec/compile_ahead.h): ended, not waited for.
  compile_ahead::stop_all();
  if (dispatcher_.joinable()) dispatcher_.join();
  // A split an app's thread runs itself (run_synchronously: another thread exits meanwhile) ends
  // first: its home part runs on that thread with home's worker's staging (split_runner.cpp). One
  // that outlasts the limit leaves every worker behind rather than freed under it.
  bool splits_over = false;
  {
    std::unique_lock lock(mutex_);
    splits_over = cv_.wait_until(lock, stop_deadline_, [this] { return !split_running_; });
  }
  if (!splits_over)
    spdlog::warn(
        "a split launch run by another of the app's threads has not ended in {} s; coex leaves its "
        "device threads behind at exit",
        kStalledWorkerWaitSeconds);
  // Without the lock from here: a returning device thread takes it (set_busy).
  std::map<int, cl_event> stall_events;
  std::map<int, std::unique_ptr<DeviceWorker>> workers;
  {
    std::lock_guard lock(mutex_);
    stall_events.swap(stall_events_);
    workers.swap(workers_);
  }
  // Injected stalls end now: the sub-launches waiting for them run, and their
  // threads return.
  for (auto& [device, event] : stall_events) {
    services_.next().clSetUserEventStatus(event, CL_COMPLETE);
    if (cl_command_queue queue = services_.devices().shadow_queue(device)) services_.next().clFlush(queue);
  }
  // Devices still in a sub-launch they were taken over in get one limit together; the others end
  // their tasks (a build under way; those not begun are skipped once the exit has begun).
  bool abandoned = false;
  for (auto& [device, worker] : workers) abandoned |= busy(device) && !stall_events.count(device);
  note_busy_devices_checked();
  if (abandoned)
    spdlog::info("waiting up to {} s at exit for devices still running a sub-launch they were taken over in",
                 kStalledWorkerWaitSeconds);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kStalledWorkerWaitSeconds);
  for (auto& [device, worker] : workers) {
    // A device abandoned in a real stall may never return: its thread is left
    // behind, and so is its worker (the thread still uses it), rather than the
    // app hang at exit.
    const double left =
        std::max(0.0, std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count());
    if (!splits_over || !worker->stop_within(busy(device) ? left : -1)) {
      if (splits_over) spdlog::warn("device {}: a sub-launch has not returned; coex leaves it behind at exit", device);
      (void)worker.release();
      std::function<void()> note;
      {
        std::lock_guard lock(mutex_);
        auto it = busy_.find(device);
        if (it != busy_.end()) note = std::move(it->second);
      }
      if (note) note();  // before the History is saved below
    }
  }
  for (auto& [device, event] : stall_events) services_.next().clReleaseEvent(event);
  // A launch that ran on home whole, as none but late devices could have taken it, and took as long as
  // their wait and preparation together: a GPU let in at auto_late_after would have had work left. The
  // next run of its program lets them in at clBuildProgram (exec/late_devices.h, let_in_if_remembered).
  const double long_launch = services_.settings().auto_late_after + services_.settings().auto_late_cost;
  if (history_)
    for (const auto& [program_hash, home_key] : late_devices_.untimed())
      if (const auto seconds = home_launch_times_.settled_seconds(home_key); seconds && *seconds >= long_launch)
        history_->note_late_let_in(program_hash);
  *alive_ = false;
  if (history_) save_history(services_.settings(), *history_);
}

}  // namespace coex::exec
