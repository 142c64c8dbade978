// A small map from device index to a value, kept as a vector sorted by device: the shares and
// measurements a policy computes at every launch (StrackPolicy, History's shares). It iterates in
// device-index order as std::map does; its copies and lookups make no node allocations (a launch
// over 15 devices copied std::map<int, double> shares node by node several times on the launch's
// path: about half of wp's instructions at begin and end were malloc and free).
#pragma once

#include <algorithm>
#include <initializer_list>
#include <stdexcept>
#include <utility>
#include <vector>

namespace coex::sched {

template <typename T>
class DeviceMap {
 public:
  using value_type = std::pair<int, T>;
  using iterator = typename std::vector<value_type>::iterator;
  using const_iterator = typename std::vector<value_type>::const_iterator;

  DeviceMap() = default;
  DeviceMap(std::initializer_list<value_type> entries) {
    for (const value_type& entry : entries) emplace(entry.first, entry.second);
  }

  iterator begin() { return entries_.begin(); }
  iterator end() { return entries_.end(); }
  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  void clear() { entries_.clear(); }

  iterator find(int device) {
    auto it = lower(device);
    return it != entries_.end() && it->first == device ? it : entries_.end();
  }
  const_iterator find(int device) const { return const_cast<DeviceMap*>(this)->find(device); }
  size_t count(int device) const { return find(device) != end() ? 1 : 0; }
  const T& at(int device) const {
    auto it = find(device);
    if (it == end()) throw std::out_of_range("DeviceMap::at: no such device");
    return it->second;
  }
  T& operator[](int device) { return emplace(device, T{}).first->second; }
  // Inserts (device, value) where the device is absent; as std::map::emplace, it leaves one there.
  std::pair<iterator, bool> emplace(int device, T value) {
    auto it = lower(device);
    if (it != entries_.end() && it->first == device) return {it, false};
    return {entries_.insert(it, value_type(device, std::move(value))), true};
  }

  friend bool operator==(const DeviceMap& a, const DeviceMap& b) { return a.entries_ == b.entries_; }
  friend bool operator!=(const DeviceMap& a, const DeviceMap& b) { return !(a == b); }

 private:
  iterator lower(int device) {
    // Devices are usually added in order: the end first.
    if (entries_.empty() || entries_.back().first < device) return entries_.end();
    return std::lower_bound(entries_.begin(), entries_.end(), device,
                            [](const value_type& entry, int d) { return entry.first < d; });
  }

  std::vector<value_type> entries_;
};

using DeviceShares = DeviceMap<double>;

}  // namespace coex::sched
