#include "coherence/buffer_state.h"

#include <algorithm>

namespace coex::coherence {

std::atomic<int> BufferState::states_needing_care_{0};

BufferState::~BufferState() {
  if (counted_) states_needing_care_.fetch_sub(1, std::memory_order_acq_rel);
}

void BufferState::update_care() {
  bool needs = !in_flight_.empty() || !home_lacks_.empty();
  if (needs == counted_) return;
  counted_ = needs;
  states_needing_care_.fetch_add(needs ? 1 : -1, std::memory_order_acq_rel);
}

uint64_t BufferState::split_captured(cl_command_queue app_queue) {
  if (in_flight_.empty())
    split_queue_ = app_queue;
  else if (split_queue_ != app_queue)
    split_queue_ = nullptr;
  in_flight_.emplace(++last_split_, generation_);
  update_care();
  return last_split_;
}

void BufferState::split_released(uint64_t split) {
  in_flight_.erase(split);
  if (in_flight_.empty()) {
    wanted_from_ = UINT64_MAX;
    split_queue_ = nullptr;
    app_writes_in_splits_.clear();
  } else {
    // app_written_since is asked with a split's generation at capture: writes at or before the
    // oldest one still in flight are never asked for again.
    const uint64_t oldest = in_flight_.begin()->second;
    app_writes_in_splits_.erase(std::remove_if(app_writes_in_splits_.begin(), app_writes_in_splits_.end(),
                                               [oldest](const auto& write) { return write.first <= oldest; }),
                                app_writes_in_splits_.end());
  }
  update_care();
}

void BufferState::want_home(cl_command_queue queue, bool in_order) {
  if (in_flight_.empty()) return;
  uint64_t from = queue && in_order && queue == split_queue_ ? last_split_ : 0;
  wanted_from_ = std::min(wanted_from_, from);
}

void BufferState::app_wrote(uint64_t begin, uint64_t end) {
  ++generation_;
  if (!in_flight_.empty()) app_writes_in_splits_.emplace_back(generation_, ByteRange{begin, end});
  // Home gets the app's bytes: no copy elsewhere is current there, and nothing older may be written
  // over them later. (The handlers brought home what home lacked of the range before the app's
  // command was enqueued: a split in flight ahead of it reads them there.)
  for (auto& [device, shadow] : shadows_) shadow.forget(ByteRange{begin, end});
  host_valid_.subtract({begin, end});
  home_lacks_.subtract({begin, end});
  update_care();
  // A split in flight ahead of the command writes home what it leaves out before it ends, so that
  // the app's bytes land after it.
  want_home(nullptr, false);
}

BufferState::HostCopy& BufferState::host_copy() {
  // new[] of uint8_t default-initialises: the bytes are left as the allocator gives them.
  if (!host_copy_.bytes && size_ > 0) host_copy_.bytes.reset(new uint8_t[size_]);
  return host_copy_;
}

bool BufferState::any_sole(const IntervalSet& ranges) const {
  for (const auto& [device, shadow] : shadows_)
    if (!shadow.sole.empty() && !intersection(shadow.sole, ranges).empty()) return true;
  return false;
}

ShadowCopy* BufferState::find_shadow(int device) {
  auto it = shadows_.find(device);
  return it == shadows_.end() ? nullptr : &it->second;
}

IntervalSet BufferState::app_written_since(uint64_t generation) const {
  IntervalSet out;
  for (const auto& [after, range] : app_writes_in_splits_)
    if (after > generation) out.add(range);
  return out;
}

void BufferState::keep_only_what_home_lacks() {
  host_valid_ = intersection(host_valid_, home_lacks_);
  for (auto& [device, shadow] : shadows_) {
    shadow.valid = intersection(shadow.valid, home_lacks_);
    // Within home_lacks_ already, but for a failed merge's resident results the app wrote since.
    shadow.sole = intersection(shadow.sole, home_lacks_);
  }
}

void BufferState::split_ended(uint64_t generation_at_start, int home, const std::map<int, IntervalSet>& changed) {
  for (auto& [device, shadow] : shadows_) {
    for (const auto& [writer, ranges] : changed)
      if (writer != device || writer == home) shadow.forget(ranges);
  }
  if (generation_ != generation_at_start) {
    // The merge wrote home all it lacked (data_moves.cpp: an app write since the start asks for it),
    // or failed to, and left in home_lacks_ what the app did not write since.
    keep_only_what_home_lacks();
    update_care();
  }
}

}  // namespace coex::coherence
