#include "kernel/footprint_stride.h"

#include <algorithm>

namespace coex::kernel::footprint_detail {
namespace {

// f += k * g, false on overflow.
bool add_scaled(Linear& f, int64_t k, const Linear& g) {
  if (!checked_mul_add(k, g.constant, f.constant)) return false;
  for (const auto& [v, c] : g.terms) {
    int64_t& slot = f.terms[v];
    if (!checked_mul_add(k, c, slot)) return false;
    if (slot == 0) f.terms.erase(v);
  }
  return true;
}

// The iteration numbers of a strided counter over box: t with c = first + s * t (or last - s * t)
// for some point of the box, c in the counter's interval and t <= (last - first) / s.
std::optional<Interval> iterations(const FootprintModel::Loop& l, int64_t s, const Values& params,
                                   const std::vector<Interval>& box, const Interval& counter) {
  auto first = range_of(l.first, params, box), last = range_of(l.last, params, box);
  auto span = range_of(l.last - l.first, params, box);
  if (!first || !last || !span || counter.empty()) return std::nullopt;
  // Going up: c <= counter.hi gives s * t <= counter.hi - first, c >= counter.lo gives s * t >=
  // counter.lo - first, at the first value of some point of the box. Going down, from last.
  int64_t far = 0, near = 0;  // the most and the least that s * t may be
  bool ok = l.down ? !__builtin_sub_overflow(last->hi, counter.lo, &far) && !__builtin_sub_overflow(last->lo, counter.hi, &near)
                   : !__builtin_sub_overflow(counter.hi, first->lo, &far) && !__builtin_sub_overflow(counter.lo, first->hi, &near);
  int64_t most = 0, by_counter = 0, least = 0;
  if (!ok || !floor_div(span->hi, s, most) || !floor_div(far, s, by_counter) || !ceil_div(near, s, least))
    return std::nullopt;
  return Interval{std::max<int64_t>(least, 0), std::min(most, by_counter)};
}

}  // namespace

std::optional<Linear> evaluated(const Affine& f, const Values& params) {
  Linear out;
  auto c = f.constant().evaluate(params);
  if (!c) return std::nullopt;
  out.constant = *c;
  for (const auto& [v, poly] : f.terms()) {
    auto k = poly.evaluate(params);
    if (!k) return std::nullopt;
    if (*k != 0) out.terms[v] = *k;
  }
  return out;
}

std::optional<int64_t> stride_of(const FootprintModel::Loop& l, const Values& params) {
  if (l.kind != FootprintModel::Loop::Kind::Counter || l.step.has_variables()) return std::nullopt;
  auto step = l.step.constant().evaluate(params);
  if (!step || *step == INT64_MIN) return std::nullopt;
  int64_t s = l.down ? -*step : *step;
  return s >= 2 ? std::optional<int64_t>(s) : std::nullopt;
}

Domain strided_form(Linear& f, const std::vector<FootprintModel::Loop>& loops, const Values& params,
                    std::vector<Interval>& box, bool& changed) {
  changed = false;
  const std::vector<Interval> counters = box;  // the bounds are forms in the counters, not in t
  // Innermost first: a counter's bounds use only the variables before it, which may be strided too.
  for (size_t i = box.size(); i-- > size_t(kFirstLoopVariable);) {
    size_t l = i - size_t(kFirstLoopVariable);
    auto term = f.terms.find(int(i));
    if (l >= loops.size() || term == f.terms.end()) continue;
    const FootprintModel::Loop& loop = loops[l];
    auto s = stride_of(loop, params);
    if (!s) continue;
    auto t = iterations(loop, *s, params, counters, counters[i]);
    auto start = evaluated(loop.down ? loop.last : loop.first, params);
    if (!t || !start) continue;  // the counter's interval stands for it, as for any counter
    if (t->empty()) return Domain::NotRun;  // last < first at every point: the body never runs
    // k * c = k * start + k * (+-s) * t, t in c's place.
    Linear value = *start;
    value.terms[int(i)] = loop.down ? -*s : *s;
    Linear replaced = f;
    int64_t k = term->second;
    replaced.terms.erase(int(i));
    if (!add_scaled(replaced, k, value)) continue;
    f = std::move(replaced);
    box[i] = *t;
    changed = true;
  }
  return Domain::Runs;
}

}  // namespace coex::kernel::footprint_detail
