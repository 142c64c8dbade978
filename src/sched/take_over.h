// Take-over within one split launch (docs/design.md, "A launch", step 6): a device the policy has
// nothing more for takes over the ranges of a device that is still working when it can redo them
// sooner than that device will finish: a slow device (the CPU beside GPUs, whose first chunk outlasts
// the GPUs' whole launch) or a stalled one (a sub-launch that never completes; Boyer et al. redo a
// blocked GPU's chunk elsewhere) then costs at most the redo, not its own time. The device taken over
// is abandoned (Running) or cancelled (still Preparing: uploading what its chunk lacks). Only devices
// other than home are taken over: home's chunks write the app's own buffers, which a late sub-launch
// would overwrite after the merge.
//
// Pure and single-threaded, with the time passed in: the executor (exec/split_progress.h) wraps it in
// a lock and drives it with the real clock, the simulator (sched/simulator.h) with simulated time.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "sched/policy.h"

namespace coex::sched {

struct TakeOverRules {
  // A redo is worth it when its predicted time, times this, is below the predicted time left.
  double redo_margin = 1.5;
  // Whatever its pace was thought to be, a device is taken to be stalled once its sub-launch has run
  // this many times the redo's time and at least stall_seconds: two equal devices sharing cores
  // (PoCL's) lag each other by up to a whole chunk and its first compilation, which is no stall.
  double stall_margin = 3.0;
  double stall_seconds = 5.0;
  // A device whose specification promises more than this many times less than the thief's (as a
  // device is held back, exec/device_kernels.h: a 4-thread CPU beside a single-threaded one is not
  // such a pair, and runs about 4 times its pace in fact): once it outruns
  // the time that promise gave its sub-launch, it is given as long again as it has run. Not between
  // devices of one kind: two PoCL devices sharing cores outrun each other's guesses by a first
  // compilation.
  double slow_by_specification = 4.0;
};

class TakeOver {
 public:
  // Cancelled: taken over while Preparing, its thread not out yet; Left: out.
  enum class State { Working, Preparing, Running, Waiting, Finished, Abandoned, Cancelled, Left };

  // `profiles`: when given, a device nothing was measured of in this launch has its pace guessed
  // from its specification against the thief's measured pace (spec_weight); empty: never guessed
  // (a policy whose shares the user fixed: only a stall is taken over).
  TakeOver(int home, const std::vector<int>& devices, std::vector<DeviceProfile> profiles = {},
           TakeOverRules rules = {});

  // The device starts preparing `chunk` (from then on it may be cancelled).
  void chunk_preparing(int device, const Chunk& chunk, double now);
  // It is about to wait for the sub-launch of the chunk it prepared (from then on it may be
  // abandoned). False: it was cancelled, and the sub-launch must not start.
  bool chunk_started(int device, double now);
  // Its sub-launch returned. False: it was abandoned meanwhile (its results are not used).
  bool chunk_finished(int device, double now);
  // A cancelled device is done with the launch.
  void leave(int device);
  // A cancelled device that has not left (its transfer under way never returns: a remote device whose
  // server went away) is left behind: abandoned, the launch no longer waits for it.
  void leave_behind(int device);
  // A device not among the constructor's (its build was still running) asks to take part: it then
  // works like the others. False once the launch is over (all_done()): it must touch nothing of it.
  bool join(int device);

  // The device got no more work from the policy. `victim` >= 0: it takes over that device, now
  // abandoned or cancelled (`victim_state`), and redoes `ranges` (every range the victim took in
  // this launch, or took over and had not started: its results are dropped), which it owes until it
  // starts each (chunk_preparing with that range). Otherwise `others_work` says whether to wait and ask
  // again (another device, not home, still works) or stop.
  struct Idle {
    int victim = -1;
    State victim_state = State::Working;
    Chunk victim_running;       // the victim's chunk in preparation or sub-launch
    double victim_seconds = 0;  // how long it has prepared or run it
    std::vector<Chunk> ranges;
    bool others_work = false;
  };
  Idle idle(int device, double now);
  // A wait ended without a take-over: the device works again (or finishes).
  void working(int device);
  void finished(int device);
  // The policy took the device's chunks back (Boyer's rule): if it is preparing or running, it is
  // cancelled or abandoned, and true is returned. Never home.
  bool abandon_if_running(int device, double now);

  State state(int device) const { return devices_.at(device).state; }
  const Chunk& running(int device) const { return devices_.at(device).running; }
  double running_since(int device) const { return devices_.at(device).running_since; }
  std::set<int> in_states(std::initializer_list<State> states) const;
  // Every device has finished, been abandoned, or left after a cancel.
  bool all_done() const;
  // The earliest time after which the stall rule may let a waiting `thief` take over a device that
  // is still preparing or running (+inf: none). A simulated wait asks again then.
  double next_stall_check(int thief) const;

 private:
  struct Device {
    State state = State::Working;
    std::vector<Chunk> taken;  // every range it ran or runs in this launch
    // Ranges it took over and has not started yet: whoever takes it over redoes them too (else they
    // would be lost with it).
    std::vector<Chunk> owed;
    uint64_t done_groups = 0;
    double busy_seconds = 0;
    Chunk running;             // while Preparing or Running
    double running_since = 0;  // since the preparation, then since the sub-launch
    double rate() const { return busy_seconds > 0 ? double(done_groups) / busy_seconds : 0; }
  };
  int pick_victim(int thief, double now) const;
  double specification(int device) const;  // 0: unknown or not guessed

  const int home_;
  std::vector<DeviceProfile> profiles_;
  TakeOverRules rules_;
  std::map<int, Device> devices_;
};

// Whether a device that redoes `redo_groups` at `thief_rate` groups/s beats one that has run a chunk
// of `running_groups` for `elapsed` seconds at `victim_rate` (measured or guessed; 0: unknown), or
// the running one looks stalled (stall_margin, stall_seconds).
bool redo_is_sooner(uint64_t redo_groups, double thief_rate, uint64_t running_groups, double elapsed,
                    double victim_rate, const TakeOverRules& rules = {});

}  // namespace coex::sched
