// One host thread per device (measured: a single thread driving both GPUs
// got 0.91x, one per device 1.6-2.0x, since blocking transfers serialise the
// devices). It owns that device's reusable host staging, so that no launch
// allocates it anew. A split's home part runs on the split's own thread with
// home's worker's staging (split_runner.cpp); home's worker runs its builds.
#pragma once

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "exec/pinned_staging.h"
#include "exec/spin_wait.h"

namespace coex::exec {

class DeviceWorker {
 public:
  // The thread is named "coex-dev<device>" (top -H, gdb, /proc/PID/task/*/comm show it; the
  // external-load benchmark pins it to a core by that name). Idle, it polls for a task for `spin`
  // before it blocks (spin_wait.h).
  DeviceWorker(int device, const cl_icd_dispatch& cl, std::chrono::nanoseconds spin = {})
      : spin_(spin), staging_(cl), upload_staging_(cl), thread_([this, device] {
          pthread_setname_np(pthread_self(), ("coex-dev" + std::to_string(device)).substr(0, 15).c_str());
          loop();
        }) {}
  ~DeviceWorker() { stop(); }
  DeviceWorker(const DeviceWorker&) = delete;
  DeviceWorker& operator=(const DeviceWorker&) = delete;

  void post(std::function<void()> task) {
    bool sleeping = false;
    {
      std::lock_guard lock(mutex_);
      tasks_.push_back(std::move(task));
      posted_.fetch_add(1, std::memory_order_release);
      sleeping = sleeping_;
    }
    if (sleeping) cv_.notify_one();  // a thread still polling sees posted_ change
  }
  // Posts `task` (true, moved from) only where the thread has nothing queued, runs nothing and polls
  // for a task (spin_wait.h): a short task that the caller would otherwise run, which must neither
  // wait behind a build nor pay a sleeping thread's wake (tens of microseconds on the device machine,
  // more than the task). False: the caller runs it.
  bool post_if_polling(std::function<void()>& task) {
    std::lock_guard lock(mutex_);
    if (stopping_ || sleeping_ || !tasks_.empty() || running_.load(std::memory_order_relaxed)) return false;
    tasks_.push_back(std::move(task));
    posted_.fetch_add(1, std::memory_order_release);
    return true;
  }
  void stop() { stop_within(-1); }
  // Stops the thread once its queued tasks are done. With a limit (seconds >=
  // 0), a task still running after it (a sub-launch that never returns: a
  // stalled device) is left behind: the thread is detached and false returned;
  // the caller must then never destroy this object.
  bool stop_within(double seconds) {
    std::unique_lock lock(mutex_);
    if (stopping_) return true;
    stopping_ = true;
    posted_.fetch_add(1, std::memory_order_release);  // a polling thread looks now
    cv_.notify_one();
    if (seconds >= 0 && !cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return ended_; })) {
      thread_.detach();
      return false;
    }
    lock.unlock();
    if (thread_.joinable()) thread_.join();
    return true;
  }
  // Staging buffer `slot`, at least `bytes` long; used only by this worker's
  // tasks. Pinned in the context of `shadow_queue` where given (pinned_staging.h).
  uint8_t* staging(size_t slot, size_t bytes, cl_command_queue shadow_queue) {
    return staging_.get(slot, bytes, shadow_queue);
  }
  // Staging for the uploads of one chunk (slot: data_moves.h, prepare_chunk): pinned, so that a
  // GPU's driver copies from it directly instead of through a bounce buffer of its own.
  uint8_t* upload_staging(size_t slot, size_t bytes, cl_command_queue shadow_queue) {
    return upload_staging_.get(slot, bytes, shadow_queue);
  }
  // Sub-launches this device's thread has made so far (COEX_FAULT=fail:<device>@<n> counts them).
  uint64_t sub_launches = 0;

 private:
  void loop() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex_);
        if (tasks_.empty() && !stopping_) poll_unlocked(lock, posted_, posted_.load(std::memory_order_relaxed), spin_);
        sleeping_ = true;
        cv_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
        sleeping_ = false;
        if (tasks_.empty()) {
          ended_ = true;
          cv_.notify_all();
          return;
        }
        task = std::move(tasks_.front());
        tasks_.pop_front();
        running_.store(true, std::memory_order_relaxed);
      }
      task();
      running_.store(false, std::memory_order_relaxed);  // post_if_polling may miss it a moment: it then declines
    }
  }

  const std::chrono::nanoseconds spin_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  std::atomic<uint64_t> posted_{0};  // tasks posted so far: what a polling thread watches
  bool sleeping_ = false;            // blocked on cv_ (under mutex_): post() wakes it
  std::atomic<bool> running_{false};  // in a task (set under mutex_)
  bool stopping_ = false;
  bool ended_ = false;
  PinnedStaging staging_;
  PinnedStaging upload_staging_;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace coex::exec
