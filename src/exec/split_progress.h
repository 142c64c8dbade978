// Where each device of one split launch stands, shared by the device threads and the thread that
// runs the split: the launch driver (sched/launch_driver.h, pure: the policy's chunks and the
// take-over rules) behind a lock, with waits. A device taken over is abandoned: the launch ends
// without waiting for it, its results are dropped, and its thread, when its sub-launch returns (if
// ever), touches nothing of the launch. A device still preparing its chunk (uploading what it lacks)
// is taken over too: it is cancelled, stops at its next look (cancelled(), between pieces of its
// transfers) without starting the sub-launch, and the launch waits for that, not for a sub-launch.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "sched/launch_driver.h"

namespace coex::exec {

class SplitProgress {
 public:
  // How often a waiting device looks again (a device that finishes or leaves, or a take-over, wakes it
  // sooner).
  static constexpr double kRecheckSeconds = 0.002;

  // What the executor does when a device is taken out of the launch (by take-over, or by the policy
  // taking its chunk back); each runs under this object's lock.
  struct Listener {
    // A device is abandoned in the sub-launch of `chunk`, which it has run for `seconds` (a lower
    // bound of its time).
    std::function<void(int device, const sched::Chunk& chunk, double seconds)> on_abandon;
    // Its thread came back from the sub-launch it was abandoned in, after `seconds`.
    std::function<void(int device, const sched::Chunk& chunk, double seconds)> on_abandoned_return;
    // A device is cancelled after preparing `chunk` for `seconds` (it is not busy: its thread leaves
    // at once).
    std::function<void(int device, const sched::Chunk& chunk, double seconds)> on_cancel;
    // A cancelled device did not leave in time and is left behind (true), or its thread came back
    // (false): busy meanwhile. Its time went to on_cancel already.
    std::function<void(int device, bool left)> on_left_behind;
  };

  // `policy` has begun the launch over `devices`; it is called under this object's lock from now on.
  // `profiles`: given, a device nothing was measured of may be judged slow by its specification
  // (sched::TakeOver).
  // `spin`: how long a waiting thread polls for a change before it blocks (spin_wait.h).
  SplitProgress(std::shared_ptr<sched::Policy> policy, int home, const std::vector<int>& devices,
                Listener listener = {}, std::vector<sched::DeviceProfile> profiles = {},
                std::chrono::nanoseconds spin = {});

  using Step = sched::LaunchDriver::Step;
  // What the idle device does next (sched::LaunchDriver::next): Run or Done; with `wait`, a Wait is
  // waited out here (another device, not home, still works: it looks again as devices finish or
  // leave, at a take-over, and every kRecheckSeconds), without, it is returned. With `finish_when_done`, Done finishes
  // the device's part too (finished(), in the same hold of the lock): its results must be where the launch's thread
  // reads them, and its read-back done.
  Step next(int device, const std::function<double()>& now, bool wait = true, bool finish_when_done = false);

  // The device's thread starts preparing `chunk` (from then on it may be cancelled).
  void chunk_preparing(int device, const sched::Chunk& chunk, double now);
  // Whether the chunk being prepared was taken over: the thread stops preparing, and calls leave().
  bool cancelled(int device) const;
  // Whether the device's running sub-launch was taken over (abandoned).
  bool taken_over(int device) const;
  // The device's thread is about to wait for the sub-launch of the chunk it prepared (from then on
  // it may be abandoned). False: it was cancelled (the sub-launch must not start; the thread calls
  // leave()).
  bool chunk_started(int device, double now);
  // A cancelled device's thread is done with the launch: the last thing it touches of it. A device
  // left behind (below) comes back: on_left_behind(false). Nothing for other states.
  void leave(int device);
  // Whether the device is out of the launch (cancelled, left, left behind or abandoned): its thread
  // must touch nothing of it but this object.
  bool out_of_launch(int device) const;
  // Its sub-launch returned (`timing`, to the policy when `from_policy`). False: the device was
  // abandoned meanwhile, and its thread must return at once, touching nothing of the launch.
  bool chunk_finished(int device, const sched::ChunkTiming& timing, bool from_policy);
  // A device that was still building when the launch began asks to take part (sched::TakeOver::join).
  // False: the launch is over, and its thread must touch nothing of it.
  bool join(int device);
  // The device's thread has finished its part (read-back included).
  void finished(int device);
  // The device's thread failed (an exception) at `now`, wherever it stood. Still in the launch, its
  // failed run is published (`publish`, under this object's lock: the launch cannot end meanwhile)
  // and its part finished. Out of it, nothing of the launch is touched: an abandoned device's return
  // is told (on_abandoned_return), a cancelled one leaves. False then.
  bool fail(int device, double now, const std::function<void()>& publish);

  // A cancelled device whose thread has not left within this (its transfer under way never returns:
  // a remote device whose server went away) is left behind like an abandoned one (on_left_behind):
  // the launch ends without it, and later launches leave it out until it comes back.
  static constexpr double kLeaveBehindSeconds = 5.0;
  // Until every device has finished, been abandoned, or left after a cancel.
  void wait_all();
  // Waits `seconds` at most for the launch to end (every device finished, abandoned or left): whether
  // it still runs then.
  bool runs_after(double seconds);
  // The work-groups whose chunks have finished so far, and when the last of them ended (seconds since
  // the launch began): the launch's pace, from which a late device's worth is judged (split_runner.cpp).
  std::pair<uint64_t, double> finished_work() const;
  std::set<int> abandoned() const;          // in a sub-launch still
  std::set<int> cancelled_devices() const;  // while preparing: not busy
  std::set<int> left_behind() const;        // cancelled, and not left in time: busy (among abandoned())
  // Every device whose results are dropped: taken over, cancelled, or its chunk taken back by the policy.
  std::set<int> dropped() const;

 private:
  using State = sched::TakeOver::State;
  // The listener's calls for the devices the driver took out (caller holds the lock).
  void report_taken_out();
  // leave() and what chunk_finished() tells of an abandoned device's return at `now` (caller holds the
  // lock).
  void leave_locked(int device);
  void tell_abandoned_return(int device, double now);
  // Something a waiting thread may be waiting for changed (caller holds the lock): it is told.
  void changed();
  // Waits for a change (changed()) with `lock` held, for `seconds` at most; with `poll`, polls for it
  // for spin_ first. Whether a change came (false: the time ran out).
  bool wait_for_change(std::unique_lock<std::mutex>& lock, std::chrono::duration<double> seconds, bool poll);

  Listener listener_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  const std::chrono::nanoseconds spin_;
  std::atomic<uint64_t> changes_{0};       // changed() calls so far: what a polling thread watches
  std::shared_ptr<sched::Policy> policy_;  // held: an abandoned device's thread may outlive the launch
  sched::LaunchDriver driver_;
  std::map<int, std::chrono::steady_clock::time_point> cancelled_at_;
  std::set<int> left_behind_;  // cancelled, not left in time: their return is an abandoned one's
  uint64_t finished_groups_ = 0;  // finished_work()
  double last_finish_ = 0;
};

}  // namespace coex::exec
