// Which byte ranges of one app buffer are current where (docs/design.md, "A launch"). Locations: the
// app's own buffer on its home device (current except where home_lacks says: the other devices'
// writes stay in the host copy until the app needs them there, "lazy home"), the host copy (current
// where host_valid says: the home device's own writes are not read back, so it lags where home
// wrote), and a shadow buffer per other device.
//
// Invariant: home_lacks is within host_valid and the shadows' `sole` ranges: what home lacks is
// written home from the host copy, after the ranges only a device holds were fetched from it into the
// host copy (resident results, exec/resident_results.h). The `sole` ranges of two shadows never
// overlap, lie within their shadow's `valid`, and never within host_valid. The app's commands that read a buffer on
// home (src/api/) bring home what they need first (exec/home_sync.h); while a split launch that uses the buffer is in
// flight they cannot know what it will leave out, so they ask it to write everything home before its
// event completes (want_home).
#pragma once

#include <CL/cl.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "coherence/interval_set.h"

namespace coex::coherence {

struct ShadowCopy {
  cl_mem mem = nullptr;  // on that device's shadow context
  IntervalSet valid;
  // What only this device holds current (a split's results left where they were computed): home and
  // the host copy lack it. Within `valid`.
  IntervalSet sole;
  std::map<std::pair<uint64_t, uint64_t>, cl_mem> sub_buffers;  // (origin, size) -> sub-buffer of mem

  // Newer bytes of `ranges` are elsewhere now: none of them is current here.
  void forget(const IntervalSet& ranges) {
    valid.subtract(ranges);
    sole.subtract(ranges);
  }
  void forget(ByteRange range) {  // without a set to make (BufferState::app_wrote: at every launch on home)
    if (!valid.empty()) valid.subtract(range);  // inline tests: most shadows hold nothing by then
    if (!sole.empty()) sole.subtract(range);
  }
  // What this device wrote in `ranges` may be dropped (a failed or abandoned sub-launch), but what
  // only it holds stays: there it wrote what the kernel computes, and the rerun writes it again.
  void forget_all_but_sole(const IntervalSet& ranges) {
    IntervalSet stale = ranges;
    stale.subtract(sole);
    valid.subtract(stale);
  }
};

class BufferState {
 public:
  explicit BufferState(uint64_t size) : size_(size) {}
  uint64_t size() const { return size_; }

  // Everything below is guarded by mutex(); callers hold it.
  std::mutex& mutex() { return mutex_; }

  // The app enqueued a command that may write [begin, end): every copy of those bytes is stale
  // (home lacks none of them: the caller brought them home before the command), and a split launch
  // still running must not mark anything current when it ends, and must write home what it leaves out.
  void app_wrote(uint64_t begin, uint64_t end);
  void app_wrote_all() { app_wrote(0, size_); }
  uint64_t generation() const { return generation_; }
  // What the app wrote while splits were in flight, after generation `generation` (a split's at its
  // enqueue): the bytes of that split's results that the app's writes queued behind it replace.
  IntervalSet app_written_since(uint64_t generation) const;

  // Splits captured (launch_planner) and not yet ended (home_sync.h, end_buffer_uses). Returns the
  // split's number: splits are numbered in the order the app enqueued them.
  uint64_t split_captured(cl_command_queue app_queue);
  void split_released(uint64_t split);
  int splits_in_flight() const { return static_cast<int>(in_flight_.size()); }
  // The app enqueued a command on `queue` that needs home to hold everything after the splits in
  // flight. When every one of them was enqueued on that same in-order queue, the last one runs right
  // before the command and is the only one that must write home (with what earlier ones left); an
  // app that enqueues a hundred launches and then reads keeps the other 99 lazy. Otherwise (another
  // queue, out of order, or an app write: `queue` null) every split in flight writes home.
  void want_home(cl_command_queue queue, bool in_order);
  // Whether split number `split` must write home before it ends.
  bool home_wanted_by(uint64_t split) const { return split >= wanted_from_; }
  // Bytes only the host copy holds (lazy home): home receives them on demand.
  IntervalSet& home_lacks() { return home_lacks_; }
  // The device and context whose queue writes them home (set by the split that left them).
  cl_device_id lacks_device = nullptr;
  // False for CL_MEM_USE_HOST_PTR buffers: the app's host memory is the buffer, and apps read it
  // after clFinish without a map; every split writes home before it ends.
  bool lazy_allowed = true;
  // Any state with home_lacks or splits in flight: the app's calls skip every check while none is.
  static bool any_needs_care() { return states_needing_care_.load(std::memory_order_acquire) != 0; }
  // Call after changing home_lacks or splits_in_flight (under the lock): keeps the count above.
  void update_care();

  // The host copy's bytes, allocated on first use and never zeroed: only the ranges host_valid says
  // are ever read, and the pages of the rest are never touched (zeroing a vector of a 1 GB buffer's
  // size cost jacobi's first split on an H100 about half a second per buffer).
  struct HostCopy {
    std::unique_ptr<uint8_t[]> bytes;
    uint8_t* data() { return bytes.get(); }
  };
  HostCopy& host_copy();
  IntervalSet& host_valid() { return host_valid_; }
  ShadowCopy& shadow(int device) { return shadows_[device]; }
  ShadowCopy* find_shadow(int device);
  // Whether some shadow holds bytes of `ranges` that nothing else holds.
  bool any_sole(const IntervalSet& ranges) const;
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
  // trusted any more, but for what home lacks: bytes of the launch's results that its merge failed to
  // write home (and the app did not write since), which stay where they are (keep_only_what_home_lacks)
  // so that a later read tries again and fails with the driver's error rather than read stale bytes.
  void split_ended(uint64_t generation_at_start, int home, const std::map<int, IntervalSet>& changed);
  // A split launch ended without its merge (it failed and ran again on home, or coex failed) after
  // the app had written the buffer in a command queued behind it: what the split's preparation copied
  // to the host copy and the shadows holds the bytes before that write, counted current. Only what
  // home lacks stays counted elsewhere (app_wrote took the app's bytes out of it).
  void keep_only_what_home_lacks();

  ~BufferState();

 private:
  uint64_t size_;
  std::mutex mutex_;
  uint64_t generation_ = 0;
  // (generation after the write, range) of each app write while splits are in flight. Only writes
  // after the oldest split in flight's capture are kept: an app that writes and launches without ever
  // draining its queue keeps as many as it has splits in flight, not every write since its last wait.
  std::vector<std::pair<uint64_t, ByteRange>> app_writes_in_splits_;
  // The splits in flight: number -> generation at capture (ascending in both, as both only grow).
  std::map<uint64_t, uint64_t> in_flight_;
  HostCopy host_copy_;
  IntervalSet host_valid_;
  std::map<int, ShadowCopy> shadows_;
  SharedMem home_backup_;
  IntervalSet home_lacks_;
  uint64_t last_split_ = 0;                 // the number of the last split captured
  cl_command_queue split_queue_ = nullptr;  // the app queue of every split in flight; null: several
  uint64_t wanted_from_ = UINT64_MAX;       // splits numbered from this one on write home
  bool counted_ = false;                    // counted in states_needing_care_
  static std::atomic<int> states_needing_care_;
};

}  // namespace coex::coherence
