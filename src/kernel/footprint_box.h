// The part of FootprintModel::evaluate that finds where an access runs in a chunk: the intervals of
// its variables (ids, loop counters, min/max/clamp values) after its guards have narrowed them, and
// whether every sub-expression of its index, guards and loop bounds stays in its C type there.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kernel/footprint.h"

namespace coex::kernel::footprint_detail {

using Values = std::vector<std::optional<int64_t>>;  // of the model's launch parameters

struct Interval {
  int64_t lo = 0, hi = -1;  // inclusive; empty when hi < lo
  bool empty() const { return hi < lo; }
};

// acc += a * b, false on overflow.
bool checked_mul_add(int64_t a, int64_t b, int64_t& acc);
// a / b rounded down (up), false on overflow or b = 0.
bool floor_div(int64_t a, int64_t b, int64_t& q);
bool ceil_div(int64_t a, int64_t b, int64_t& q);

// The range of an affine form over a box of variable intervals.
std::optional<Interval> range_of(const Affine& f, const Values& params, const std::vector<Interval>& vars);

// The fit lies in its type over the box (whose ids are not merged: see access_box); every fit does.
bool fit_holds(const FootprintModel::Fit& fit, const Values& params, const std::vector<Interval>& vars);
bool fits_hold(const std::vector<FootprintModel::Fit>& fits, const Values& params, const std::vector<Interval>& vars);

// The values variable l takes over a box of the variables before it, or nullopt.
std::optional<Interval> variable_range(const FootprintModel::Loop& l, const Values& params,
                                       const std::vector<Interval>& vars);

// The points where access a runs in the chunk (chunk: the ids' intervals, then every loop's).
enum class Domain { Runs, NotRun, Unknown };
Domain access_box(const FootprintModel::Access& a, const std::vector<FootprintModel::Loop>& loops,
                  const LaunchGeometry& g, const Values& params, const std::vector<Interval>& chunk,
                  std::vector<Interval>& box, bool& exact);

}  // namespace coex::kernel::footprint_detail
