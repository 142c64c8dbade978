#include "exec/background_tasks.h"

#include <chrono>

#include "devices/device_set.h"
#include "exec/executor.h"
#include "exec/exit_guard.h"
#include "report/trace.h"

namespace coex::exec {

void post_background_task(Executor& executor, int device, std::function<void()> task, bool uses_device) {
  arm_exit_guard();
  executor.worker(device).post([&executor, device, uses_device, task = std::move(task)] {
    if (!exit_begun() && !(uses_device && executor.left_out(device))) task();
  });
}

void make_context_in_background(Services& services, int device) {
  post_background_task(services.executor(), device, [&services, device] {
    const auto started = std::chrono::steady_clock::now();
    if (services.devices().has_shadow(device)) return;
    services.devices().shadow_queue(device);
    if (auto* t = services.trace()) t->record("context", "build", device, started, std::chrono::steady_clock::now());
  });
}

}  // namespace coex::exec
