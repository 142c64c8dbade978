#include "exec/exit_guard.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace coex::exec {
namespace {

struct ExitWaits {
  std::mutex mutex;
  std::vector<ExitWait> waits;
  std::atomic<bool> begun{false};
};

ExitWaits& exit_waits() {
  static auto* waits = new ExitWaits;  // never destroyed: used while the process exits
  return *waits;
}

struct MainThreadGuard {
  ~MainThreadGuard() {
    if (syscall(SYS_gettid) == getpid()) run_exit_waits();
  }
};

}  // namespace

void register_exit_wait(ExitWait wait) {
  {
    ExitWaits& w = exit_waits();
    std::lock_guard lock(w.mutex);
    if (std::find(w.waits.begin(), w.waits.end(), wait) == w.waits.end()) w.waits.push_back(wait);
  }
  std::atexit(run_exit_waits);
}

void arm_exit_guard() {
  thread_local MainThreadGuard guard;
  (void)guard;
}

bool exit_begun() { return exit_waits().begun.load(); }

namespace {
std::atomic<bool> g_busy_devices_checked{false};
}  // namespace

bool busy_devices_checked() { return g_busy_devices_checked.load(); }

void note_busy_devices_checked() { g_busy_devices_checked.store(true); }

void begin_exit() { exit_waits().begun.store(true); }

void run_exit_waits() {
  ExitWaits& w = exit_waits();
  if (w.begun.exchange(true)) return;
  std::vector<ExitWait> waits;
  {
    std::lock_guard lock(w.mutex);
    waits = w.waits;
  }
  for (ExitWait wait : waits) wait();
}

}  // namespace coex::exec
