// A thread-safe map from an app's OpenCL handle to what coex recorded about it. Readers (the fast
// path: every launch looks up its kernel, queue and buffers) share the lock; writers take it alone.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

namespace coex::model {

template <typename Handle, typename Record>
class Registry {
 public:
  using Ptr = std::shared_ptr<Record>;

  void insert(Handle handle, Ptr record) {
    std::unique_lock lock(mutex_);
    records_[handle] = std::move(record);
    version_.fetch_add(1, std::memory_order_release);
  }
  // The record, or null for a handle coex never saw (created before coex loaded, or not a handle).
  Ptr find(Handle handle) const {
    std::shared_lock lock(mutex_);
    auto it = records_.find(handle);
    return it == records_.end() ? nullptr : it->second;
  }
  Ptr erase(Handle handle) {
    std::unique_lock lock(mutex_);
    auto it = records_.find(handle);
    if (it == records_.end()) return nullptr;
    Ptr record = std::move(it->second);
    records_.erase(it);
    version_.fetch_add(1, std::memory_order_release);
    return record;
  }
  // Changes at every insert and erase: what find returned for a handle holds while it is unchanged.
  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  size_t size() const {
    std::shared_lock lock(mutex_);
    return records_.size();
  }
  std::vector<Ptr> snapshot() const {
    std::shared_lock lock(mutex_);
    std::vector<Ptr> out;
    out.reserve(records_.size());
    for (auto& [handle, record] : records_) out.push_back(record);
    return out;
  }

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<Handle, Ptr> records_;
  std::atomic<uint64_t> version_{0};
};

}  // namespace coex::model
