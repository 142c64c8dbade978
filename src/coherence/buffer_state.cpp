#include "coherence/buffer_state.h"

namespace coex::coherence {

void BufferState::app_wrote(uint64_t begin, uint64_t end) {
  ++generation_;
  host_valid_.subtract({begin, end});
  for (auto& [device, shadow] : shadows_) shadow.valid.subtract({begin, end});
}

std::vector<uint8_t>& BufferState::host_copy() {
  if (host_copy_.size() != size_) host_copy_.resize(size_);
  return host_copy_;
}

ShadowCopy* BufferState::find_shadow(int device) {
  auto it = shadows_.find(device);
  return it == shadows_.end() ? nullptr : &it->second;
}

void BufferState::split_ended(uint64_t generation_at_start, int home,
                              const std::map<int, IntervalSet>& changed) {
  if (generation_ != generation_at_start) {
    host_valid_.clear();
    for (auto& [device, shadow] : shadows_) shadow.valid.clear();
    return;
  }
  for (auto& [device, shadow] : shadows_) {
    for (const auto& [writer, ranges] : changed)
      if (writer != device || writer == home) shadow.valid.subtract(ranges);
  }
}

}  // namespace coex::coherence
