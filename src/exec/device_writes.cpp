#include "exec/device_writes.h"

namespace coex::exec {

void forget_device_writes(LaunchJob& job, int device) {
  for (auto& use : job.roots) {
    std::lock_guard lock(use.root->state->mutex());
    // Bytes only it holds stay readable there (resident_results.h): the redo's results replace them
    // at the merge.
    if (auto* shadow = use.root->state->find_shadow(device)) shadow->forget_all_but_sole(use.written);
  }
}

}  // namespace coex::exec
