// Which byte ranges of one app buffer are current where (DESIGN.md decision 5). Locations: the
// app's own buffer on its home device (always current once a split launch has ended: merges are
// written home eagerly), the host copy (current where host_valid says: the home device's own writes
// are not read back, so it lags where home wrote), and a shadow buffer per other device.
#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <type_traits>
#include <utility>
#include <mutex>
#include <vector>

#include "coherence/interval_set.h"

namespace coex::coherence {

struct ShadowCopy {
  cl_mem mem = nullptr;  // on that device's shadow context
  IntervalSet valid;
  std::map<std::pair<uint64_t, uint64_t>, cl_mem> sub_buffers;  // (origin, size) -> sub-buffer of mem
};

class BufferState {
 public:
  explicit BufferState(uint64_t size) : size_(size) {}
  uint64_t size() const { return size_; }

  // Everything below is guarded by mutex(); callers hold it.
  std::mutex& mutex() { return mutex_; }

  // The app enqueued a command that may write [begin, end): every copy of those bytes is stale,
  // and a split launch still running must not mark anything current when it ends.
  void app_wrote(uint64_t begin, uint64_t end);
  void app_wrote_all() { app_wrote(0, size_); }
  uint64_t generation() const { return generation_; }

  std::vector<uint8_t>& host_copy();  // sized on first use
  IntervalSet& host_valid() { return host_valid_; }
  ShadowCopy& shadow(int device) { return shadows_[device]; }
  ShadowCopy* find_shadow(int device);
  std::map<int, ShadowCopy>& shadows() { return shadows_; }

  // A buffer beside the app's own, on the home device and in its context, that keeps the bytes a
  // split launch overwrites in place there, for a rerun after a failure (exec/home_backup.h). Made
  // on first need with a deleter that releases it; released with this state.
  using SharedMem = std::shared_ptr<std::remove_pointer_t<cl_mem>>;
  SharedMem& home_backup() { return home_backup_; }

  // A split launch that began at `generation_at_start` ended. `changed` holds, per device, the
  // bytes that device's sub-launches changed; the host copy has them all. When no app write came
  // in between, each shadow stays current except where other devices wrote (the home device wrote
  // into the app's buffer, not into a shadow of its own); otherwise nothing outside home can be
  // trusted any more.
  void split_ended(uint64_t generation_at_start, int home, const std::map<int, IntervalSet>& changed);

 private:
  uint64_t size_;
  std::mutex mutex_;
  uint64_t generation_ = 0;
  std::vector<uint8_t> host_copy_;
  IntervalSet host_valid_;
  std::map<int, ShadowCopy> shadows_;
  SharedMem home_backup_;
};

}  // namespace coex::coherence
