// The geometry of a launch and of its sub-launches (docs/design.md, "A launch"): split on whole
// work-groups of the dimension that holds the work (the outermost with more than one work-group),
// each sub-launch with a global offset.
#pragma once

#include <cstddef>
#include <cstdint>

namespace coex::exec {

struct LaunchGeometry {
  unsigned work_dim = 1;
  size_t offset[3] = {0, 0, 0};
  size_t global[3] = {1, 1, 1};
  size_t local[3] = {1, 1, 1};
  // false: the app passed NULL, and `local` is the kernel's compiled size or the one coex chose
  bool local_given = false;

  // The outermost dimension with more than one work-group; the last one when none has (a launch of
  // one group, which is not split). A 2-D launch of {n, 1} splits along dimension 0.
  unsigned split_dim() const;
  // Work-groups along the split dimension; the last may be partial (OpenCL 2.0 non-uniform groups).
  uint64_t groups_along_split() const;
  uint64_t work_items() const;
  uint64_t items_per_group() const;
  // Work-groups of the other dimensions beside one work-group of the split dimension.
  uint64_t groups_per_slice() const;
  // PoCL compiles a work-group function for a global offset of zero and one for any other.
  bool at_offset_zero() const { return offset[0] == 0 && offset[1] == 0 && offset[2] == 0; }
};

// Builds the geometry of an app's launch; with a NULL local size, picks one that divides the
// global size in every dimension and is at most `max_group_size` work-items, putting the group in
// dimension 0 and keeping the split dimension (the outermost with more than one work-item) fine-
// grained so that it can be cut into many chunks.
// False when the arguments are not a valid launch (the driver then answers the app).
bool make_geometry(unsigned work_dim, const size_t* offset, const size_t* global, const size_t* local,
                   size_t max_group_size, LaunchGeometry& out);

// The sub-launch that runs work-groups [begin, end) of the split dimension.
LaunchGeometry sub_launch(const LaunchGeometry& launch, uint64_t begin, uint64_t end);

// The work-groups of the split dimension a piece of `sub` may hold and be narrower than `width`
// work-items in every dimension (PoCL's "small grid"): all of sub's where sub is that narrow already,
// where another dimension or one work-group is `width` wide or more (no piece would be narrower), or
// where sub starts at offset zero with the app's own local size (where the launch ran whole on home
// first, under auto while its compile ahead ran, that run compiled the wide work-group function; where
// it did not, the chunk's first run compiles it, as without pieces).
uint64_t small_grid_groups(const LaunchGeometry& sub, size_t width);

}  // namespace coex::exec
