// How long unsplit launches of a kernel and size took on the app's device (docs/design.md, "Size by
// time"): a launch with fewer work-items than min_split_work_items whose items each do much work (a
// correlation over 1,024 items, seconds per launch) pays for a split all the same. The item count is
// the first guess; a kernel and size whose unsplit launches were measured at min_split_seconds or
// more on home is split.
#pragma once

#include <CL/cl_icd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace coex::exec {

class HomeLaunchTimes {
 public:
  // `alive`: false once the executor has stopped (a late driver callback then touches nothing).
  HomeLaunchTimes(const cl_icd_dispatch& cl, std::shared_ptr<const std::atomic<bool>> alive)
      : cl_(cl), alive_(std::move(alive)) {}

  // The shortest measured launch of `key` (kernel and global size), once `at_least` were measured.
  std::optional<double> seconds(const std::string& key, int at_least = 1) const;
  // Whether a launch of `key` is still to be timed: the first kTimedLaunches are.
  bool wants_timing(const std::string& key) const;
  // Changes whenever a launch's time is recorded (what seconds() says of some key may have changed).
  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  // Times the launch behind `event` (coex holds one reference to it, which this takes over) from
  // `enqueued` (taken before the enqueue: a driver may run it inside the call) to its completion: an upper bound, as it
  // includes the wait behind earlier commands of the queue, which the shortest of several launches leaves out.
  // (CL_RUNNING would not: PoCL's basic device reports it when the kernel has already run.) `started`, when given
  // (its reference taken over too), is a marker enqueued just before the launch on its in-order queue, on a driver
  // that notifies each command as it completes (devices::Device::notifies_as_commands_complete): the launch cannot
  // start before the marker completes, so the time is taken from then where that is later. An app that enqueues
  // thousands of launches before it waits keeps the queue deep: from the enqueue, benchmarks/lu's updates on PoCL's
  // CPU measured tens of milliseconds, which made them long enough to split. The references are released at a
  // later call of `release_done`, never inside the driver's callback.
  void time(const std::string& key, cl_event event, std::chrono::steady_clock::time_point enqueued,
            cl_event started = nullptr);
  // A launch of `key` that was to be timed and was not (it counts among the kTimedLaunches).
  void not_timed(const std::string& key);
  // Times the next kTimedLaunches launches of `key` again, once the last were given to time(): the
  // shortest of them replaces what was measured once two are in (one alone only lowers it: a launch on
  // home slowed by chance would make every split look worth it, and splits never time home again).
  // Times of launches given to time() before the call do not count. A time measured once goes stale while
  // the splits it is weighed against are measured again at every probe: over two single-threaded PoCL
  // devices on the device machine, jacobi's launches on home took 3.0 to 3.8 ms apart, home's time
  // measured at its fourth launch said 2.89 ms, and splits of 2.5 to 3.2 ms (2.8 ms apart) lost to it
  // from then on: 24 of 300 launches split.
  void renew(const std::string& key);
  // Records, as of now, the launches of `key` still timed whose events say they are complete while the
  // driver's callback has not come: NVIDIA's came 5 ms after the app's clFinish returned, after the app's
  // next launch of the kernel was planned (benchmarks/nbody beside a second H100 then never split). Now
  // bounds the time from above, as the callback's own time does. From the app's threads.
  void settle(const std::string& key);
  // seconds(), once settle() has had its say where it has none.
  std::optional<double> settled_seconds(const std::string& key, int at_least = 1);
  // Whether a launch of `key` given to time() is still running, once settle() has had its say: its time
  // is still to come. From the app's threads.
  bool time_to_come(const std::string& key);
  // Releases the events of launches already timed (called from the app's threads).
  void release_done();
  // The pace of the kernel's launches on home, whatever their size: seconds per work-item of the last
  // one measured (a timed launch, or a split in which no other device took part: record_alone), nullopt
  // before any. The last, not the slowest: a kernel's first launch there pays the driver's compile.
  std::optional<double> pace(const std::string& kernel_key) const;
  // A split launch of `key` that home ran alone (the devices building never joined), in `seconds`
  // from its start: a time of the launch on home like a timed one's, without the wait behind the
  // queue's earlier commands that a timed launch's includes. An app that enqueues thousands of
  // launches before it waits keeps the queue deep, and from their enqueue launches of 80 us on PoCL's
  // CPU measured most of a second: long enough to wait for builds and to be split.
  void record_alone(const std::string& key, double seconds);

  static constexpr int kTimedLaunches = 3;
  // Launches measured from an idle queue before their shortest stands for home's time of the launch
  // (drained_home_key): as after renew(), one alone does not, since a launch slowed by chance (the
  // thread descheduled, a late callback) would make every split look worth it.
  static constexpr int kDrainedAtLeast = 2;

 private:
  struct Timing;
  struct StartTiming;
  // When the launch's start marker completed (steady_clock ticks), 0 until its callback came.
  using StartBound = std::shared_ptr<std::atomic<std::chrono::steady_clock::rep>>;
  struct Measured {
    int timed = 0;  // launches given to time()
    int count = 0;  // of them, completed and measured
    double shortest = 0;
    uint64_t round = 0;   // renew()s so far; a launch timed in an earlier one is not counted
    int fresh_count = 0;  // since the last renew(), while renewing
    double fresh_shortest = 0;
    bool renewing = false;
  };
  // A launch being timed, with a reference to its event of its own (released by the app's threads):
  // settle() asks the event its status. `recorded`: its time is in (by settle or the callback).
  struct Pending {
    cl_event event;
    std::chrono::steady_clock::time_point enqueued;
    std::shared_ptr<std::atomic<bool>> recorded;
    uint64_t round;
    StartBound start;
  };
  static void CL_CALLBACK on_complete(cl_event event, cl_int status, void* user_data);
  static void CL_CALLBACK on_started(cl_event event, cl_int status, void* user_data);
  // The seconds from the later of `enqueued` and the start marker's completion to `end`.
  static double seconds_since_start(std::chrono::steady_clock::time_point enqueued, const StartBound& start,
                                    std::chrono::steady_clock::time_point end);
  void record(const std::string& key, std::optional<double> seconds, cl_event event, uint64_t round);
  void record_time(const std::string& key, double seconds, uint64_t round);
  using PendingByKey = std::unordered_map<std::string, std::vector<Pending>>;
  // Releases the references of the key's pending launches whose time is in, and the key's entry once it
  // has none; pending_mutex_ held. Returns the entry after it.
  PendingByKey::iterator drop_recorded_pending(PendingByKey::iterator of_key);

  const cl_icd_dispatch& cl_;
  const std::shared_ptr<const std::atomic<bool>> alive_;
  mutable std::mutex mutex_;
  // Hashed, not ordered: a program of many sizes (benchmarks/lu: a key for each) asks them at every
  // launch it plans in full, and the keys share their kernel's long prefix, which an ordered map
  // compared again at each step of its search.
  std::unordered_map<std::string, Measured> measured_;
  std::unordered_map<std::string, double> pace_;  // by kernel key: seconds per work-item
  std::vector<cl_event> done_;
  std::atomic<uint64_t> version_{0};
  // Taken by the app's threads alone, never in the driver's callback: driver calls (status, release)
  // may be made under it.
  std::mutex pending_mutex_;
  // By key: a program enqueues its launches far ahead of the device, and settle() asks about one key's.
  PendingByKey pending_;
};

// The key of a kernel and global size: the History's key of the kernel (history_key) and the size.
std::string home_launch_key(const std::string& kernel_key, uint64_t global_size);
// The key under which launches of that kernel and size are timed from an idle queue (launch_calls.cpp
// waits for the app's queue to drain first): their own time on home, which auto weighs its splits
// against (sched::LaunchShape::home_measured_seconds).
std::string drained_home_key(const std::string& home_key);

}  // namespace coex::exec
