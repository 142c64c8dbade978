#include "exec/pocl_compiles.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <tuple>

#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/pocl_kernel_cache.h"

namespace coex::exec {
namespace {

using FirstRunKey = std::tuple<int, cl_kernel, size_t, size_t, size_t, bool, bool>;

struct Compiles {
  std::mutex mutex;  // guards the two maps
  std::map<cl_platform_id, std::unique_ptr<std::mutex>> platform_locks;
  std::set<FirstRunKey> ran;
};

Compiles& compiles() {
  static Compiles* c = new Compiles();  // never freed: device threads may outlive exit's destructors
  return *c;
}

// The platform's lock when the device is PoCL's, else null.
std::mutex* pocl_lock(Services& services, int device) {
  auto& devices = services.devices();
  if (device < 0 || size_t(device) >= devices.all().size() || !devices.at(device).is_pocl()) return nullptr;
  Compiles& c = compiles();
  std::lock_guard lock(c.mutex);
  auto& slot = c.platform_locks[devices.at(device).platform];
  if (!slot) slot = std::make_unique<std::mutex>();
  return slot.get();
}

// Polls with try_lock rather than a timed lock: ThreadSanitizer (GCC 12) does not follow
// pthread_mutex_clocklock and then reports the unlock as one of an unlocked mutex.
std::unique_lock<std::mutex> bounded(std::mutex* m) {
  if (!m) return {};
  std::unique_lock<std::mutex> lock(*m, std::try_to_lock);
  const auto deadline = std::chrono::steady_clock::now() + kCompileLockWait;
  while (!lock.owns_lock() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    (void)lock.try_lock();  // past the bound: on without it, rather than hang
  }
  return lock;
}

FirstRunKey first_run_key(int device, cl_kernel kernel, const LaunchGeometry& sub) {
  return FirstRunKey{device,
                     kernel,
                     sub.local[0],
                     sub.local[1],
                     sub.local[2],
                     sub.at_offset_zero(),
                     pocl_kernel_cache::small_grid(sub.work_dim, sub.global)};
}

}  // namespace

bool compiles_in_this_process(const devices::Device& device) {
  return device.is_pocl() && !device.remote && (device.type & CL_DEVICE_TYPE_CPU);
}

bool others_build_beside_home(const devices::DeviceSet& set, int home, const std::vector<int>& others) {
  return compiles_in_this_process(set.at(home)) && std::all_of(others.begin(), others.end(), [&](int d) {
           return compiles_in_this_process(set.at(d)) && !set.at(d).same_kind(set.at(home));
         });
}

bool first_run_of(int device, cl_kernel kernel, const LaunchGeometry& sub) {
  Compiles& c = compiles();
  std::lock_guard lock(c.mutex);
  return c.ran.insert(first_run_key(device, kernel, sub)).second;
}

bool first_run_pending(int device, cl_kernel kernel, const LaunchGeometry& sub) {
  Compiles& c = compiles();
  std::lock_guard lock(c.mutex);
  return c.ran.count(first_run_key(device, kernel, sub)) == 0;
}

void forget_first_runs(cl_kernel kernel) {
  Compiles& c = compiles();
  std::lock_guard lock(c.mutex);
  for (auto it = c.ran.begin(); it != c.ran.end();) it = std::get<1>(*it) == kernel ? c.ran.erase(it) : std::next(it);
}

std::unique_lock<std::mutex> lock_first_run(Services& services, int device, bool first_run) {
  if (!first_run || !services.settings().serial_compiles) return {};
  std::mutex* m = pocl_lock(services, device);
  return m ? bounded(m) : std::unique_lock<std::mutex>();
}

std::unique_lock<std::mutex> lock_build(Services& services, int device) { return bounded(pocl_lock(services, device)); }

}  // namespace coex::exec
