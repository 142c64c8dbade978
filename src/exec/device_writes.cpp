#include "exec/device_writes.h"

namespace coex::exec {

void forget_device_writes(LaunchJob& job, int device) {
  for (auto& use : job.roots) {
    std::lock_guard lock(use.root->state->mutex());
    auto* shadow = use.root->state->find_shadow(device);
    if (!shadow) continue;
    // Bytes only it holds stay readable there (resident_results.h): where its late sub-launch writes
    // them, it writes what the kernel computes; the redo's results replace them at the merge.
    coherence::IntervalSet stale = use.written;
    stale.subtract(shadow->sole);
    shadow->valid.subtract(stale);
  }
}

}  // namespace coex::exec
