// Waits that spin a while before they block (docs/design.md, "Spin waits"). A thread blocked on a
// condition variable is woken through the kernel (a futex wake, and an interrupt to the core it
// sleeps on), which on the device machine's virtual machine took tens of microseconds, several
// times over in one split launch: the devices' threads woken for their parts, the waiting devices
// told the launch is done, the launch's thread told they are. Where every thread that runs kernels
// has a core of its own and one is left over, the threads that wait for a launch's next step poll
// for it a while first.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "sched/policy.h"

namespace coex::exec {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Polls `ready` until it holds (true) or `budget` has passed (false).
template <typename Ready>
bool spin_until(Ready&& ready, std::chrono::nanoseconds budget) {
  if (ready()) return true;
  if (budget.count() <= 0) return false;
  const auto until = std::chrono::steady_clock::now() + budget;
  for (unsigned i = 1;; ++i) {
    cpu_relax();
    if (ready()) return true;
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) return false;
  }
}

// With `lock` held on entry and on return: lets it go while it polls `counter` for a value other than
// `seen` (read under the lock by the caller, so that no change made under it is missed), for `budget`
// at most. Whether the counter changed.
inline bool poll_unlocked(std::unique_lock<std::mutex>& lock, const std::atomic<uint64_t>& counter, uint64_t seen,
                          std::chrono::nanoseconds budget) {
  if (budget.count() > 0) {
    lock.unlock();
    spin_until([&] { return counter.load(std::memory_order_acquire) != seen; }, budget);
    lock.lock();
  }
  return counter.load(std::memory_order_relaxed) != seen;
}

// Counts tasks handed to other threads; one thread waits for all of them to be done.
class TaskLatch {
 public:
  void add() { left_.fetch_add(1, std::memory_order_relaxed); }
  void done() {
    std::lock_guard lock(mutex_);
    if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) done_.notify_all();
  }
  // Polls for `spin` at most, then blocks. Takes the lock before it returns even when the poll saw
  // the count reach zero: the last done() has let go of this object then, and it may be destroyed.
  void wait(std::chrono::nanoseconds spin) {
    spin_until([this] { return left_.load(std::memory_order_acquire) == 0; }, spin);
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return left_.load(std::memory_order_acquire) == 0; });
  }

 private:
  std::atomic<int> left_{0};
  std::mutex mutex_;
  std::condition_variable done_;
};

// How long a waiting thread spins (setting spin_microseconds): that long where the host threads that
// run kernels fit in `cores` with one to spare, none otherwise. Those threads: one of coex's for each
// device of `devices` (it drives the device, and on a single-threaded CPU device runs its kernels),
// and a threaded CPU device's own (one per compute unit).
std::chrono::nanoseconds spin_budget(long microseconds, const std::vector<sched::DeviceProfile>& devices,
                                     unsigned cores);
// The cores this process may run on (its affinity mask), or the machine's.
unsigned usable_cores();

}  // namespace coex::exec
