// One split launch's decisions, for each device in turn (docs/design.md, "A launch"): the policy's
// chunks, the ranges a device took over and owes, take-over of a slow or stalled device, and when an
// idle device waits or is done. The executor (exec/split_progress.h) drives it with the real clock
// under a lock, doing the moves and sub-launches; the simulator (sched/simulator.h) drives the same
// object from its event queue with simulated time, so that what it predicts is what coex does.
//
// Pure and single-threaded, with the time (seconds since the launch began) passed in. The policy's
// begin_launch and end_launch stay with the caller; every call in between goes through here.
#pragma once

#include <deque>
#include <limits>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "sched/policy.h"
#include "sched/take_over.h"

namespace coex::sched {

class LaunchDriver {
 public:
  // `policy` has begun the launch over `devices` (it may be null: every range then comes from
  // take-over, as in the take-over tests). `take_over` false: a device the policy has nothing more
  // for is done (the scenarios that reproduce a paper, whose systems had no take-over).
  LaunchDriver(Policy* policy, int home, const std::vector<int>& devices, std::vector<DeviceProfile> profiles = {},
               TakeOverRules rules = {}, bool take_over = true);

  // What an idle device does next.
  struct Step {
    enum class Kind { Run, Wait, Done };
    Kind kind = Kind::Done;
    Chunk chunk;               // Run: prepare and run it
    bool from_policy = false;  // Run: the policy's chunk (its time goes to the policy), or a range taken over
    int taken_from = -1;       // Run, not from_policy: the device it was taken over from
    // Wait: ask again at the next chunk's end, or at this time (the stall rule's next check), whichever
    // comes first.
    double look_again = std::numeric_limits<double>::infinity();
  };
  Step next(int device, double now);

  // A device a decision took out of the launch: the policy took its chunk back (Boyer's rule), or an
  // idle device took it over. Its results in this launch are dropped.
  struct TakenOut {
    int device = -1;
    TakeOver::State state = TakeOver::State::Abandoned;  // Abandoned (in a sub-launch) or Cancelled
    Chunk running;                                       // the chunk it was preparing or running
    double seconds = 0;                                  // how long it had prepared or run it
    bool by_policy = false;
    int by = -1;  // the device that took it over (by_policy: -1)
  };
  // Those taken out since the last call, in order.
  std::vector<TakenOut> take_taken_out();

  // The device's side, as in TakeOver: it starts preparing `chunk`; it is about to wait for the
  // sub-launch (false: cancelled meanwhile, the sub-launch must not start).
  void chunk_preparing(int device, const Chunk& chunk, double now);
  bool chunk_started(int device, double now);
  // Its sub-launch returned. False: the device was taken out meanwhile and nothing of it counts;
  // otherwise a policy chunk's timing goes to the policy.
  bool chunk_finished(int device, const ChunkTiming& timing, bool from_policy);
  // A cancelled device is out; a device done with its part (read-back included) is finished.
  void leave(int device);
  void finished(int device);
  // A cancelled device that has not left is left behind (TakeOver::leave_behind).
  void leave_behind(int device) { take_over_.leave_behind(device); }
  // A device that was still building when the launch began asks to take part (TakeOver::join); the
  // policy has taken it already (Policy::add_device). False: the launch is over.
  bool join(int device);

  // Devices whose results in this launch are dropped: taken out by the policy or by take-over.
  std::set<int> dropped() const;
  const TakeOver& take_over() const { return take_over_; }
  bool all_done() const { return take_over_.all_done(); }

 private:
  struct Device {
    std::deque<std::pair<Chunk, int>> owed;  // ranges taken over (and from whom), still to run
    bool asks_policy = true;                 // until the policy has nothing more for it (again after a take-over)
  };
  void note_taken_back(double now);

  Policy* policy_;
  TakeOver take_over_;
  bool take_over_enabled_;
  std::map<int, Device> devices_;
  std::vector<TakenOut> taken_out_;
  std::set<int> taken_back_;  // by the policy, whether or not it was still running
};

}  // namespace coex::sched
