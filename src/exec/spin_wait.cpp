#include "exec/spin_wait.h"

#include <sched.h>

#include <thread>

namespace coex::exec {

std::chrono::nanoseconds spin_budget(long microseconds, const std::vector<sched::DeviceProfile>& devices,
                                     unsigned cores) {
  if (microseconds <= 0 || devices.size() < 2) return std::chrono::nanoseconds(0);
  unsigned threads = 0;
  for (const auto& d : devices) threads += 1 + (d.is_cpu && d.compute_units > 1 ? d.compute_units : 0);
  if (threads >= cores) return std::chrono::nanoseconds(0);
  return std::chrono::microseconds(microseconds);
}

unsigned usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<unsigned>(CPU_COUNT(&set));
  return std::thread::hardware_concurrency();
}

}  // namespace coex::exec
