// Where each device of one split launch stands, shared by the device threads
// and the thread that runs the split. It lets a device that has run out of work
// take over the ranges of a device that is still running when it can redo them
// sooner than that device will finish: a slow device (the CPU beside GPUs,
// whose first chunk outlasts the GPUs' whole launch) or a stalled one (a
// sub-launch that never completes; Boyer et al. redo a blocked GPU's chunk
// elsewhere) then costs at most the redo, not its own time. The device taken
// over is abandoned: the launch ends without waiting for it, its results are
// dropped, and its thread, when its sub-launch returns (if ever), touches
// nothing of the launch. A device still preparing its chunk (uploading what it
// lacks) is taken over too: it is cancelled, stops at its next look
// (cancelled(), between pieces of its transfers) without starting the
// sub-launch, and the launch waits for that, not for a sub-launch. Only devices
// other than home are taken over: home's chunks write the app's own buffers,
// which a late sub-launch would overwrite after the merge.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "sched/policy.h"

namespace coex::exec {

class SplitProgress {
 public:
  // A redo is worth it when its predicted time, times this, is below the
  // predicted time left.
  static constexpr double kRedoMargin = 1.5;
  // Whatever its pace was thought to be, a device is taken to be stalled once
  // its sub-launch has run this many times the redo's time and at least
  // kStallSeconds: two equal devices sharing cores (PoCL's) lag each other by
  // up to a whole chunk and its first compilation, which is no stall.
  static constexpr double kStallMargin = 3.0;
  static constexpr double kStallSeconds = 5.0;
  // A device whose specification promises this many times less than the
  // thief's: once it outruns the time that promise gave its sub-launch, it is
  // given as long again as it has run (pick_victim). Not between devices of
  // one kind: two PoCL devices sharing cores outrun each other's guesses by a
  // first compilation.
  static constexpr double kSlowBySpecification = 4.0;
  // How often a waiting device looks again (a finishing chunk wakes it sooner).
  static constexpr double kRecheckSeconds = 0.002;

  // on_abandon(device, chunk, seconds) runs when a device is abandoned in the sub-launch of `chunk`
  // it has run for `seconds` (a lower bound of its time), on_cancel(device, chunk, seconds) when one
  // is cancelled after preparing `chunk` for `seconds` (it is not busy: its thread leaves at once),
  // on_abandoned_return(device, chunk, seconds) when its thread comes back from
  // the sub-launch it was abandoned in (chunk: that sub-launch, seconds: how
  // long it ran); both under this object's lock. prior_rate(device): its pace
  // on this kernel from earlier launches, groups/s (0: unknown);
  // relative_speed(device): what its specification promises, in any unit (0:
  // unknown), to guess a device's pace from another's when nothing was
  // measured.
  SplitProgress(int home, const std::vector<int>& devices,
                std::function<void(int, const sched::Chunk&, double)> on_abandon,
                std::function<void(int, const sched::Chunk&, double)> on_abandoned_return,
                std::function<double(int)> prior_rate = nullptr, std::function<double(int)> relative_speed = nullptr,
                std::function<void(int, const sched::Chunk&, double)> on_cancel = nullptr);

  // The device's thread starts preparing `chunk` (from then on it may be
  // cancelled).
  void chunk_preparing(int device, const sched::Chunk& chunk, double now);
  // Whether the chunk being prepared was taken over: the thread stops
  // preparing, and calls leave().
  bool cancelled(int device) const;
  // Whether the device's running sub-launch was taken over (abandoned).
  bool taken_over(int device) const;
  // The device's thread is about to wait for the sub-launch of the chunk it
  // prepared (from then on it may be abandoned). False: it was cancelled (the
  // sub-launch must not start; the thread calls leave()).
  bool chunk_started(int device, double now);
  // A cancelled device's thread is done with the launch: the last thing it
  // touches of it. Nothing for other states.
  void leave(int device);
  // Its sub-launch returned after `seconds`. False: the device was abandoned
  // meanwhile, and its thread must return at once, touching nothing of the
  // launch.
  bool chunk_finished(int device, double now);
  // The device got no more work from the policy. Waits while another device
  // (not home) still works, and returns the ranges of one it can redo sooner
  // than that one would finish (now abandoned), or nothing once no other device
  // works.
  std::optional<std::vector<sched::Chunk>> wait_or_take_over(int device, const std::function<double()>& now);
  // The device's thread has finished its part (read-back included).
  void finished(int device);
  // The policy took the device's chunks back (Boyer's rule): if it is waiting
  // for a sub-launch, the launch no longer waits for it.
  void abandon_if_running(int device, double now);

  // Until every device has finished, been abandoned, or left after a cancel.
  void wait_all();
  std::set<int> abandoned() const;          // in a sub-launch still
  std::set<int> cancelled_devices() const;  // while preparing: not busy

 private:
  // Cancelled: taken over while Preparing, its thread not out yet; Left: out.
  enum class State { Working, Preparing, Running, Waiting, Finished, Abandoned, Cancelled, Left };
  struct Device {
    State state = State::Working;
    std::vector<sched::Chunk> taken;  // every range it ran or runs in this launch
    uint64_t done_groups = 0;
    double busy_seconds = 0;
    sched::Chunk running;      // while Preparing or Running
    double running_since = 0;  // since the preparation, then since the sub-launch
    double rate() const { return busy_seconds > 0 ? double(done_groups) / busy_seconds : 0; }
  };
  // The device `thief` would take over now, or -1. Caller holds the lock.
  int pick_victim(int thief, double now) const;
  void abandon(int device, double now);  // caller holds the lock
  std::set<int> in_states(std::initializer_list<State> states) const;

  const int home_;
  std::function<void(int, const sched::Chunk&, double)> on_abandon_;
  std::function<void(int, const sched::Chunk&, double)> on_abandoned_return_;
  std::function<double(int)> prior_rate_;
  std::function<double(int)> relative_speed_;
  std::function<void(int, const sched::Chunk&, double)> on_cancel_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::map<int, Device> devices_;
};

// Whether a device that redoes `redo_groups` at `thief_rate` groups/s beats one
// that has run a chunk of `running_groups` for `elapsed` seconds at
// `victim_rate` (measured or guessed; 0: unknown), or the running one looks
// stalled (kStallMargin, kStallSeconds). Pure, for the unit tests.
bool redo_is_sooner(uint64_t redo_groups, double thief_rate, uint64_t running_groups, double elapsed,
                    double victim_rate);

}  // namespace coex::exec
