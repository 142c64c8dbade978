#include "kernel/footprint_box.h"

#include <algorithm>

namespace coex::kernel {

bool FootprintModel::Fit::contains(int64_t lo, int64_t hi) const {
  if (bits == 0 || bits > 64) return false;
  int64_t min = is_signed ? (bits == 64 ? INT64_MIN : -(int64_t(1) << (bits - 1))) : 0;
  int64_t max = bits >= 63 ? INT64_MAX : (int64_t(1) << (is_signed ? bits - 1 : bits)) - 1;
  return lo >= min && hi <= max;
}

}  // namespace coex::kernel

namespace coex::kernel::footprint_detail {

bool floor_div(int64_t a, int64_t b, int64_t& q) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return false;
  q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return true;
}

bool ceil_div(int64_t a, int64_t b, int64_t& q) {
  if (!floor_div(a, b, q)) return false;
  if (a % b != 0) ++q;
  return true;
}

namespace {

int64_t coefficient(const Affine& f, int v, const Values& params, bool& ok) {
  auto it = f.terms().find(v);
  if (it == f.terms().end()) return 0;
  auto k = it->second.evaluate(params);
  ok = ok && k.has_value();
  return k ? *k : 0;
}

// Narrows v by k * v + c op 0. False when the guard cannot be applied to an interval exactly (a
// hole in its middle, an overflow): v keeps what it had.
bool narrow(Interval& v, int64_t k, int64_t c, FootprintModel::Guard::Op op) {
  using Op = FootprintModel::Guard::Op;
  int64_t t = 0, q = 0;
  if (__builtin_sub_overflow(int64_t(0), c, &t)) return false;  // k * v op t
  if (op == Op::Less || op == Op::Greater) {
    if (__builtin_add_overflow(t, op == Op::Less ? -1 : 1, &t)) return false;
    op = op == Op::Less ? Op::LessEqual : Op::GreaterEqual;
  }
  if (k < 0 && (op == Op::LessEqual || op == Op::GreaterEqual))
    op = op == Op::LessEqual ? Op::GreaterEqual : Op::LessEqual;
  switch (op) {
    case Op::LessEqual:  // v <= t / k (the sign of k is in op now)
      if (!floor_div(t, k, q)) return false;
      v.hi = std::min(v.hi, q);
      return true;
    case Op::GreaterEqual:  // v >= t / k
      if (!ceil_div(t, k, q)) return false;
      v.lo = std::max(v.lo, q);
      return true;
    case Op::Equal:
      if (t % k != 0)
        v = Interval{};
      else
        v = Interval{std::max(v.lo, t / k), std::min(v.hi, t / k)};
      return true;
    case Op::NotEqual:
      if (t % k != 0 || t / k < v.lo || t / k > v.hi) return true;
      if (t / k == v.lo)
        ++v.lo;
      else if (t / k == v.hi)
        --v.hi;
      else
        return false;
      return true;
    default:
      return false;
  }
}

// The guard's truth where it has no variable left.
bool holds(int64_t value, FootprintModel::Guard::Op op) {
  using Op = FootprintModel::Guard::Op;
  switch (op) {
    case Op::Less:
      return value < 0;
    case Op::LessEqual:
      return value <= 0;
    case Op::Greater:
      return value > 0;
    case Op::GreaterEqual:
      return value >= 0;
    case Op::Equal:
      return value == 0;
    case Op::NotEqual:
      return value != 0;
  }
  return true;
}

bool mergeable(const Affine& f, uint32_t d, int64_t local, const Values& params) {
  bool ok = true;
  int64_t group = coefficient(f, kGroupId0 + int(d), params, ok), item = coefficient(f, kLocalId0 + int(d), params, ok);
  int64_t scaled = 0;
  return ok && !__builtin_mul_overflow(item, local, &scaled) && scaled == group;
}

bool mergeable(const FootprintModel::Loop& l, uint32_t d, int64_t local, const Values& params) {
  bool ok = mergeable(l.first, d, local, params) && mergeable(l.last, d, local, params);
  for (const Affine& f : l.operands) ok = ok && mergeable(f, d, local, params);
  for (const auto& fit : l.fits) ok = ok && mergeable(fit.value, d, local, params);
  return ok;
}

// The dimensions whose group and local ids access_box made one variable (in the local id's place).
struct Merge {
  uint32_t dims = 0;  // bit d: merged
  int64_t local[3] = {1, 1, 1};
};

// fits_hold where the ids of m's dimensions are merged: a fit that uses a pair other than as group *
// local + item is taken over the groups and items that the merged variable spans.
bool fits_hold(const std::vector<FootprintModel::Fit>& fits, const Values& params, const std::vector<Interval>& box,
               const Merge& m) {
  std::vector<Interval> unmerged;
  for (const auto& fit : fits) {
    bool plain = true;
    for (uint32_t d = 0; d < 3; ++d)
      if ((m.dims >> d) & 1) plain = plain && mergeable(fit.value, d, m.local[d], params);
    if (plain) {
      if (!fit_holds(fit, params, box)) return false;
      continue;
    }
    if (unmerged.empty()) {
      unmerged = box;
      for (uint32_t d = 0; d < 3; ++d) {
        if (!((m.dims >> d) & 1)) continue;
        Interval item = box[size_t(kLocalId0) + d];  // >= 0: group * local + item of the chunk
        if (item.empty()) return false;
        Interval group{item.lo / m.local[d], item.hi / m.local[d]};
        unmerged[size_t(kGroupId0) + d] = group;
        unmerged[size_t(kLocalId0) + d] =
            group.lo == group.hi ? Interval{item.lo - group.lo * m.local[d], item.hi - group.lo * m.local[d]}
                                 : Interval{0, m.local[d] - 1};
      }
    }
    if (!fit_holds(fit, params, unmerged)) return false;
  }
  return true;
}

// Applies the guards whose variables (those not fixed to one value) are one, and loop counters only
// when loops is true. exact turns false for a guard left out or applied only in part. A guard is
// applied over a box that holds every point where the access runs (the guards before it narrowed
// it soundly), so where its sub-expressions fit their types there, its affine form is its C value.
void apply_guards(const FootprintModel::Access& a, const Values& params, std::vector<Interval>& box, bool loops,
                  const Merge& merge, bool& exact) {
  for (const auto& guard : a.guards) {
    const Affine& f = guard.difference;
    bool ok = true;
    int variable = -1, count = 0;
    bool has_loop = false;
    for (const auto& term : f.terms()) {
      has_loop = has_loop || term.first >= kFirstLoopVariable;
      if (size_t(term.first) >= box.size() || box[size_t(term.first)].lo != box[size_t(term.first)].hi) {
        variable = term.first;
        ++count;
      }
    }
    if (has_loop != loops) continue;
    // An unsigned comparison means what the affine forms say only where neither side wraps.
    if (guard.is_unsigned) {
      int64_t limit = guard.bits >= 63 ? INT64_MAX : (int64_t(1) << guard.bits) - 1;
      auto l = range_of(guard.lhs, params, box), r = range_of(guard.rhs, params, box);
      ok = l && r && l->lo >= 0 && r->lo >= 0 && l->hi <= limit && r->hi <= limit;
    }
    // Nor where a sub-expression may leave its type ((uchar)i < 16 holds again from i = 256 on).
    ok = ok && fits_hold(guard.fits, params, box, merge);
    int64_t k = variable >= 0 ? coefficient(f, variable, params, ok) : 0;
    if (!ok || count > 1 || size_t(variable + 1) > box.size()) {
      exact = false;
      continue;
    }
    // The constant part, with every variable fixed to one value folded in (and the free one at 0).
    Interval saved = variable >= 0 ? box[size_t(variable)] : Interval{};
    if (variable >= 0) box[size_t(variable)] = Interval{0, 0};
    auto c = range_of(f, params, box);
    if (variable >= 0) box[size_t(variable)] = saved;
    if (!c || c->lo != c->hi) {
      exact = false;
    } else if (variable < 0 || k == 0) {
      if (!holds(c->lo, guard.op)) box[0] = Interval{};  // never holds here: the access does not run
    } else if (!narrow(box[size_t(variable)], k, c->lo, guard.op)) {
      exact = false;
    }
  }
}

}  // namespace

bool checked_mul_add(int64_t a, int64_t b, int64_t& acc) {
  int64_t product = 0;
  return !__builtin_mul_overflow(a, b, &product) && !__builtin_add_overflow(acc, product, &acc);
}

// The range of an affine form over a box of variable intervals.
std::optional<Interval> range_of(const Affine& f, const Values& params, const std::vector<Interval>& vars) {
  auto c = f.constant().evaluate(params);
  if (!c) return std::nullopt;
  Interval r{*c, *c};
  for (const auto& [v, poly] : f.terms()) {
    auto k = poly.evaluate(params);
    if (!k || v < 0 || size_t(v) >= vars.size() || vars[size_t(v)].empty()) return std::nullopt;
    int64_t a = *k >= 0 ? vars[size_t(v)].lo : vars[size_t(v)].hi;
    int64_t b = *k >= 0 ? vars[size_t(v)].hi : vars[size_t(v)].lo;
    if (!checked_mul_add(*k, a, r.lo) || !checked_mul_add(*k, b, r.hi)) return std::nullopt;
  }
  return r;
}

bool fit_holds(const FootprintModel::Fit& fit, const Values& params, const std::vector<Interval>& vars) {
  auto r = range_of(fit.value, params, vars);
  return r && fit.contains(r->lo, r->hi);
}

bool fits_hold(const std::vector<FootprintModel::Fit>& fits, const Values& params, const std::vector<Interval>& vars) {
  for (const auto& fit : fits)
    if (!fit_holds(fit, params, vars)) return false;
  return true;
}

// The values variable l takes over a box of the variables before it: a counter's [first, last], or
// the hull of a min/max/clamp (nullopt where a bound or an operand may wrap around in its type, or a
// clamp's lo may exceed its hi: OpenCL leaves that undefined).
std::optional<Interval> variable_range(const FootprintModel::Loop& l, const Values& params,
                                       const std::vector<Interval>& vars) {
  using Kind = FootprintModel::Loop::Kind;
  if (!fits_hold(l.fits, params, vars)) return std::nullopt;
  if (l.kind == Kind::Counter) {
    // A step that goes against the bound runs the counter out of [first, last] (a step of 0 stays
    // at its first value: inside).
    auto step = l.step.has_variables() ? std::nullopt : l.step.constant().evaluate(params);
    if (!step || (l.down ? *step > 0 : *step < 0)) return std::nullopt;
    auto first = range_of(l.first, params, vars), last = range_of(l.last, params, vars);
    return first && last ? std::optional<Interval>(Interval{first->lo, last->hi}) : std::nullopt;
  }
  std::vector<Interval> ops;
  for (const Affine& operand : l.operands) {
    auto r = range_of(operand, params, vars);
    if (!r || r->empty()) return std::nullopt;
    ops.push_back(*r);
  }
  if (l.kind == Kind::Min && ops.size() == 2)
    return Interval{std::min(ops[0].lo, ops[1].lo), std::min(ops[0].hi, ops[1].hi)};
  if (l.kind == Kind::Max && ops.size() == 2)
    return Interval{std::max(ops[0].lo, ops[1].lo), std::max(ops[0].hi, ops[1].hi)};
  if (l.kind != Kind::Clamp || ops.size() != 3 || ops[1].hi > ops[2].lo) return std::nullopt;
  // min(max(x, lo), hi), which every implementation agrees on where lo <= hi.
  return Interval{std::min(std::max(ops[0].lo, ops[1].lo), ops[2].lo),
                  std::min(std::max(ops[0].hi, ops[1].hi), ops[2].hi)};
}

// The points where access a runs in the chunk: its variables' intervals. Where the access, its guards
// and its loops' bounds use get_group_id(d) and get_local_id(d) only as group * local + item (as
// get_global_id(d) does), the pair becomes one variable over the chunk's ids (kept in the local id's
// place, the group's fixed to 0), so that a guard on the global id narrows it.
Domain access_box(const FootprintModel::Access& a, const std::vector<FootprintModel::Loop>& loops,
                  const LaunchGeometry& g, const Values& params, const std::vector<Interval>& chunk,
                  std::vector<Interval>& box, bool& exact) {
  box.assign(chunk.begin(), chunk.begin() + kFirstLoopVariable);
  Merge merge;
  for (uint32_t d = 0; d < g.work_dim && !a.guards.empty(); ++d) {
    int64_t local = int64_t(g.local_size[d]);
    bool ok = mergeable(a.byte_offset, d, local, params);
    for (const auto& guard : a.guards) ok = ok && mergeable(guard.difference, d, local, params);
    for (int l : a.loops) ok = ok && mergeable(loops[size_t(l)], d, local, params);
    Interval& group = box[size_t(kGroupId0) + d];
    Interval& item = box[size_t(kLocalId0) + d];
    int64_t lo = 0, hi = 0;
    if (!ok || __builtin_mul_overflow(group.lo, local, &lo) || __builtin_mul_overflow(group.hi, local, &hi) ||
        __builtin_add_overflow(hi, local - 1, &hi))
      continue;
    item = Interval{lo, hi};
    group = Interval{0, 0};
    merge.dims |= 1u << d;
    merge.local[d] = local;
  }
  apply_guards(a, params, box, false, merge, exact);
  for (const Interval& v : box)
    if (v.empty()) return Domain::NotRun;
  // The loops around it, over what is left of the ids; then its min/max/clamp values, over what is
  // left of the loops too (their operands come after the loops, and no bound or guard uses them).
  box.resize(chunk.size());
  for (int pass = 0; pass < 2; ++pass) {
    for (int l : a.loops) {
      if ((loops[size_t(l)].kind == FootprintModel::Loop::Kind::Counter) != (pass == 0)) continue;
      auto r = variable_range(loops[size_t(l)], params, box);
      if (!r) return Domain::Unknown;
      box[size_t(kFirstLoopVariable + l)] = *r;
    }
    if (pass == 0) apply_guards(a, params, box, true, merge, exact);
  }
  for (size_t v = 0; v < size_t(kFirstLoopVariable); ++v)
    if (box[v].empty()) return Domain::NotRun;
  for (int l : a.loops)
    if (box[size_t(kFirstLoopVariable + l)].empty()) return Domain::NotRun;
  // Its index in C is its affine form where no sub-expression leaves its type.
  return fits_hold(a.fits, params, box, merge) ? Domain::Runs : Domain::Unknown;
}

}  // namespace coex::kernel::footprint_detail
