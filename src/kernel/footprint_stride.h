// Loop counters that step by two or more (a grid-stride loop's get_global_size(0), a tile loop's 16):
// over a box of the variables, such a counter is first + s * t (counting down: last - s * t) for an
// iteration number t in [0, T], T = (last - first) / s rounded down at the box's widest. Put in the
// counter's place in a byte offset, t makes the offset affine in the ids and t, so that the bands
// (make_bands in footprint.cpp) come out strided: a chunk of a grid-stride loop writes its own
// elements of every stretch of the grid, not the hull from its first element to the end.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "kernel/footprint_box.h"

namespace coex::kernel::footprint_detail {

// An affine form evaluated at the launch: constant + sum(coefficient * variable), none zero.
struct Linear {
  int64_t constant = 0;
  std::map<int, int64_t> terms;
};
std::optional<Linear> evaluated(const Affine& f, const Values& params);

// The step of counter l at the launch, as a magnitude, where it is two or more in the direction the
// loop runs (l.down); else nullopt (a step of one or zero, or one that may not be evaluated: the
// counter is its interval, as variable_range gives it).
std::optional<int64_t> stride_of(const FootprintModel::Loop& l, const Values& params);

// f with every strided counter it uses (and, through their first or last values, every strided
// counter those use) replaced by first + s * t, t in the counter's place in box. box holds the
// counters' intervals as access_box left them (narrowed by the guards): t's interval is then what
// both the bounds and the counter's interval allow, so every point where the access runs is in the
// new box. NotRun where some t has no value; changed: some counter was replaced.
Domain strided_form(Linear& f, const std::vector<FootprintModel::Loop>& loops, const Values& params,
                    std::vector<Interval>& box, bool& changed);

}  // namespace coex::kernel::footprint_detail
