#include "exec/launch_geometry.h"

#include <algorithm>

namespace coex::exec {

unsigned LaunchGeometry::split_dim() const {
  for (unsigned d = work_dim; d-- > 0;)
    if (global[d] > local[d]) return d;
  return work_dim - 1;
}

uint64_t LaunchGeometry::groups_along_split() const {
  unsigned d = split_dim();
  return (global[d] + local[d] - 1) / local[d];
}

uint64_t LaunchGeometry::work_items() const {
  uint64_t n = 1;
  for (unsigned d = 0; d < work_dim; ++d) n *= global[d];
  return n;
}

uint64_t LaunchGeometry::items_per_group() const {
  uint64_t n = 1;
  for (unsigned d = 0; d < work_dim; ++d) n *= local[d];
  return n;
}

uint64_t LaunchGeometry::groups_per_slice() const {
  uint64_t n = 1;
  const unsigned split = split_dim();
  for (unsigned d = 0; d < work_dim; ++d)
    if (d != split) n *= (global[d] + local[d] - 1) / local[d];
  return n;
}

namespace {

// The largest power of two that divides `n` and is at most `cap`.
size_t largest_pow2_divisor(size_t n, size_t cap) {
  size_t best = 1;
  for (size_t p = 2; p <= cap && n % p == 0; p *= 2) best = p;
  return best;
}

}  // namespace

bool make_geometry(unsigned work_dim, const size_t* offset, const size_t* global, const size_t* local,
                   size_t max_group_size, LaunchGeometry& out) {
  if (work_dim < 1 || work_dim > 3 || !global) return false;
  out = LaunchGeometry{};
  out.work_dim = work_dim;
  for (unsigned d = 0; d < work_dim; ++d) {
    if (global[d] == 0) return false;
    out.global[d] = global[d];
    out.offset[d] = offset ? offset[d] : 0;
    if (local) {
      if (local[d] == 0) return false;
      out.local[d] = local[d];
    }
  }
  out.local_given = local != nullptr;
  if (local) return true;
  size_t cap = std::max<size_t>(1, std::min<size_t>(max_group_size, 256));
  unsigned split = work_dim - 1;
  while (split > 0 && global[split] == 1) --split;
  if (split == 0) {
    // Keep at least 64 groups where the size allows, so that a split has chunks to hand out.
    size_t target = std::max<size_t>(1, std::min(cap, global[0] / 64));
    out.local[0] = largest_pow2_divisor(global[0], target);
  } else {
    out.local[0] = largest_pow2_divisor(global[0], cap);
    out.local[split] = 1;
  }
  return true;
}

LaunchGeometry sub_launch(const LaunchGeometry& launch, uint64_t begin, uint64_t end) {
  LaunchGeometry sub = launch;
  unsigned d = launch.split_dim();
  uint64_t first_item = begin * launch.local[d];
  uint64_t last_item = std::min<uint64_t>(end * launch.local[d], launch.global[d]);
  sub.offset[d] = launch.offset[d] + first_item;
  sub.global[d] = last_item - first_item;
  return sub;
}

uint64_t small_grid_groups(const LaunchGeometry& sub, size_t width) {
  const unsigned d = sub.split_dim();
  const uint64_t groups = (sub.global[d] + sub.local[d] - 1) / sub.local[d];
  if (sub.local_given && sub.at_offset_zero()) return groups;
  for (unsigned i = 0; i < sub.work_dim; ++i)
    if (i != d && sub.global[i] >= width) return groups;
  if (sub.global[d] < width || sub.local[d] >= width) return groups;  // narrow already, or one group is wide
  return (width - 1) / sub.local[d];
}

}  // namespace coex::exec
