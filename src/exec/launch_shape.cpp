#include "exec/launch_shape.h"

#include <algorithm>

namespace coex::exec {

std::string history_key(const std::string& kernel_name, uint64_t source_hash) {
  return kernel_name + "#" + std::to_string(source_hash);
}

sched::LaunchShape launch_shape(const LaunchGeometry& geometry, const std::string& kernel_key, int home,
                                std::optional<uint64_t> launch_number, const ChunkFootprint* whole_launch) {
  sched::LaunchShape shape;
  shape.kernel_key = kernel_key;
  shape.total_groups = geometry.groups_along_split();
  shape.items_per_group = geometry.items_per_group();
  shape.groups_per_slice = geometry.groups_per_slice();
  shape.global_size = geometry.work_items();
  shape.home = home;
  shape.launch_number = launch_number;
  if (!whole_launch) return shape;
  uint64_t in = 0, out = 0;
  for (const RootFootprint& root : whole_launch->roots) {
    in += root.need.total();
    out += root.writes().total();
  }
  const double groups = double(std::max<uint64_t>(1, shape.total_groups));
  shape.bytes_in_per_group = double(in) / groups;
  shape.bytes_out_per_group = double(out) / groups;
  return shape;
}

}  // namespace coex::exec
