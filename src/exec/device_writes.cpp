#include "exec/device_writes.h"

namespace coex::exec {

void forget_device_writes(LaunchJob& job, int device) {
  for (auto& use : job.roots) {
    std::lock_guard lock(use.root->state->mutex());
    if (auto* shadow = use.root->state->find_shadow(device)) shadow->valid.subtract(use.written);
  }
}

}  // namespace coex::exec
