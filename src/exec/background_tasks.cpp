#include "exec/background_tasks.h"

#include <chrono>
#include <thread>

#include "config/fault_spec.h"
#include "config/settings.h"
#include "devices/device_set.h"
#include "exec/executor.h"
#include "exec/exit_guard.h"
#include "report/trace.h"

namespace coex::exec {

void post_background_task(Executor& executor, int device, std::function<void()> task, bool uses_device) {
  arm_exit_guard();
  DeviceWorker& worker = executor.worker(device);
  worker.post([&executor, &worker, device, uses_device, task = std::move(task)] {
    if (exit_begun() || (uses_device && executor.left_out(device))) return;
    worker.set_preparing(uses_device);
    task();
    worker.set_preparing(false);
  });
}

void make_context_in_background(Services& services, int device) {
  post_background_task(services.executor(), device, [&services, device] {
    const auto started = std::chrono::steady_clock::now();
    if (services.devices().has_shadow(device)) return;
    // COEX_FAULT=slow_context:<index> (a testing aid): 5 s late, exit or not: a context still under way
    // when the app exits (Executor::stop, exit_leaves_preparation).
    if (config::fault_injected(services.settings().fault, config::FaultSpec::Kind::SlowContext, device))
      std::this_thread::sleep_for(std::chrono::seconds(5));
    services.devices().shadow_queue(device);
    if (auto* t = services.trace()) t->record("context", "build", device, started, std::chrono::steady_clock::now());
  });
}

}  // namespace coex::exec
