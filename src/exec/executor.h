// Runs split launches (docs/design.md, "A launch"): clEnqueueNDRangeKernel returns at
// once; the job starts when a start marker on the app's queue completes (the
// app's wait list and earlier commands are done), runs its chunks on every
// device from one thread per device, merges, and then completes the user event
// that the app's event (an end marker) waits for.
#pragma once

#include <CL/cl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "exec/device_worker.h"
#include "exec/home_launch_times.h"
#include "exec/late_devices.h"
#include "exec/launch_job.h"
#include "exec/repeated_launches.h"
#include "exec/services.h"
#include "sched/history.h"
#include "sched/launch_policies.h"
#include "sched/policy.h"

namespace coex::exec {

class Executor {
 public:
  explicit Executor(Services& services);
  ~Executor();

  // Enqueues the markers on the app's queue and hands the job over. The app's
  // error code when the driver rejects the wait list or the queue; the job is
  // then dropped, nothing ran.
  cl_int submit(std::unique_ptr<LaunchJob> job, cl_uint num_wait, const cl_event* wait_list, cl_event* app_event);
  // Finishes the job running, if any, and stops the threads: each ends its tasks (a build under way),
  // and those of devices still in a sub-launch they were taken over in are waited for up to
  // kStalledWorkerWaitSeconds together, then left behind. Then saves the History. Called once, from
  // coex's one shutdown path (api::Runtime::shutdown, docs/design.md "Exit"), before the drivers'
  // teardown: a process that exited while PoCL's CPU device still ran an abandoned sub-launch crashed
  // before coex wrote its report.
  void stop();

  DeviceWorker& worker(int device);
  // A device abandoned in a split (exec/split_progress.h) is busy until its
  // sub-launch returns: launches leave it out meanwhile, and for good if it
  // never returns. `if_left_behind` runs when coex stops and leaves that
  // sub-launch still running (it records the time so far in the History).
  void set_busy(int device, bool busy, std::function<void()> if_left_behind = nullptr);
  bool busy(int device) const;
  // A device whose sub-launch failed is dropped for the rest of the run: its work was
  // redone on home, and it would fail again.
  void drop(int device, cl_int error);
  // Why launches leave `device` out now ("devices_busy", "device_failed"), or null.
  const char* left_out(int device) const;
  // Changes whenever a device is left out or comes back (exec/repeated_launches.h).
  uint64_t left_out_version() const { return left_out_version_.load(std::memory_order_acquire); }
  // False once the executor has stopped: a device thread returning later must not call it.
  std::shared_ptr<const std::atomic<bool>> alive() const { return alive_; }
  // COEX_FAULT=stall:<device>: the user event its sub-launches wait for,
  // created once in `context` and completed when coex stops (so that the
  // stalled threads end).
  cl_event stall_event(int device, cl_context context);
  // Per (kernel, size, device) performance, across launches and (through the
  // cache file) runs.
  std::shared_ptr<sched::History> history() const { return history_; }
  // The configured policy, asked what it decides before a launch is split (sched/policy.h): never
  // given a launch to plan (each split launch takes its own from launch_policies()).
  const sched::Policy& policy() const { return *policy_; }
  // The configured policy's objects for split launches (exec/split_runner.cpp).
  sched::LaunchPolicies& launch_policies() { return launch_policies_; }
  // How long unsplit launches took on home (a launch with few work-items may still pay for a split).
  HomeLaunchTimes& home_launch_times() { return home_launch_times_; }
  // Launches that repeat one left on home take its plan over.
  RepeatedLaunches& repeated_launches() { return repeated_launches_; }
  // The devices whose context and builds wait until the program has run a while (auto_late_devices).
  LateDevices& late_devices() { return late_devices_; }
  // How long a thread waiting for a split launch's next step polls before it blocks (spin_wait.h).
  std::chrono::nanoseconds spin() const { return spin_; }

 private:
  static void CL_CALLBACK on_start_marker(cl_event event, cl_int status, void* user_data);
  void dispatcher_loop();
  // Runs the job to its end, one job at a time (jobs may share buffers).
  cl_int run_serialised(LaunchJob& job);
  // The split on the calling thread, for a home device whose driver cannot wait
  // on user events.
  cl_int run_synchronously(std::unique_ptr<LaunchJob> job, cl_uint num_wait, const cl_event* wait_list,
                           cl_event* app_event);
  void complete(LaunchJob& job, cl_int status);
  // Lets go of what the job holds beyond its launch: the app buffers it retained, its count among the
  // History's splits in flight.
  void release_holds(LaunchJob& job);

  // At exit, how long a device still in a sub-launch it was abandoned in is waited for: a process
  // that exits while PoCL still runs a kernel can crash in PoCL's teardown ("pure virtual method
  // called", seen with the CPU beside two GPUs), so a slow device is waited for; a stalled one not
  // for ever.
  static constexpr double kStalledWorkerWaitSeconds = 30.0;

  Services& services_;
  std::mutex run_mutex_;  // held by the split that runs (run_serialised)
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  // A split runs (run_serialised; under mutex_, cv_ told when it ends): stop() waits for it before the
  // workers go, since a split run on an app's thread (run_synchronously) has home's part on that
  // thread, with home's worker's staging.
  bool split_running_ = false;
  std::map<LaunchJob*, std::shared_ptr<LaunchJob>> waiting_;  // for their start marker
  std::deque<std::pair<std::shared_ptr<LaunchJob>, cl_int>> ready_;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point stop_deadline_;  // launches not started by then are dropped at stop
  std::map<int, std::unique_ptr<DeviceWorker>> workers_;
  std::map<int, std::function<void()>> busy_;  // busy device -> its if_left_behind (set_busy)
  std::condition_variable busy_changed_;
  std::set<int> dropped_;
  std::atomic<uint64_t> left_out_version_{0};
  std::shared_ptr<std::atomic<bool>> alive_ = std::make_shared<std::atomic<bool>>(true);
  std::map<int, cl_event> stall_events_;
  std::shared_ptr<sched::History> history_;
  std::unique_ptr<sched::Policy> policy_;
  sched::LaunchPolicies launch_policies_;
  LateDevices late_devices_;  // after policy_, which says whether any device is late
  HomeLaunchTimes home_launch_times_;
  RepeatedLaunches repeated_launches_;
  const std::chrono::nanoseconds spin_;
  std::thread dispatcher_;
};

}  // namespace coex::exec
