#include "kernel/footprint.h"

#include <algorithm>
#include <optional>

#include "kernel/footprint_box.h"
#include "kernel/footprint_stride.h"

namespace coex::kernel {
namespace {

using namespace footprint_detail;

// A band in signed byte offsets, before clipping to the buffer.
struct Band {
  int64_t begin, end, stride, count;
};

std::optional<int64_t> argument_value(const LaunchParam& p, const ArgValues& values) {
  if (p.index >= values.bytes.size()) return std::nullopt;
  const auto& bytes = values.bytes[p.index];
  if (p.byte_size == 0 || p.byte_size > 8 || bytes.size() < size_t(p.byte_offset) + p.byte_size) return std::nullopt;
  uint64_t raw = 0;
  for (uint32_t i = 0; i < p.byte_size; ++i) raw |= uint64_t(bytes[p.byte_offset + i]) << (8 * i);  // little endian
  if (p.is_signed && p.byte_size < 8 && (raw >> (8 * p.byte_size - 1)) & 1) raw |= ~uint64_t(0) << (8 * p.byte_size);
  if (!p.is_signed && p.byte_size == 8 && raw > uint64_t(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(raw);
}

std::optional<int64_t> as_signed(uint64_t v) {
  return v <= uint64_t(INT64_MAX) ? std::optional<int64_t>(int64_t(v)) : std::nullopt;
}

std::optional<int64_t> param_value(const LaunchParam& p, const LaunchGeometry& g, const ArgValues& values) {
  uint32_t d = p.index;
  bool used = d < g.work_dim && d < 3;
  switch (p.kind) {
    case LaunchParam::Kind::Argument: return argument_value(p, values);
    case LaunchParam::Kind::LocalSize: return used ? as_signed(g.local_size[d]) : 1;
    case LaunchParam::Kind::GlobalSize: return used ? as_signed(g.global_size[d]) : 1;
    case LaunchParam::Kind::GlobalOffset: return used ? as_signed(g.global_offset[d]) : 0;
    case LaunchParam::Kind::NumGroups:
      if (!used) return 1;
      return g.local_size[d] ? as_signed(g.global_size[d] / g.local_size[d]) : std::nullopt;
    case LaunchParam::Kind::WorkDim: return int64_t(g.work_dim);
  }
  return std::nullopt;
}

struct Term {
  int64_t coefficient;  // > 0
  int64_t count;        // the variable takes count values: coefficient * t for t in [0, count)
};

// base + sum(coefficient * t): the offsets of an affine form over a box, as normalized terms.
bool normalize(const Linear& f, const std::vector<Interval>& vars, int64_t& base, std::vector<Term>& terms) {
  base = f.constant;
  terms.clear();
  for (const auto& [v, k] : f.terms) {
    if (v < 0 || size_t(v) >= vars.size() || k == INT64_MIN) return false;
    const Interval& r = vars[size_t(v)];
    if (r.empty()) return false;
    // k*x for x in [lo, hi]: k<0 counts down from k*hi.
    if (!checked_mul_add(k, k >= 0 ? r.lo : r.hi, base)) return false;
    if (r.lo == r.hi) continue;
    int64_t n = 0;
    if (__builtin_sub_overflow(r.hi, r.lo, &n) || n == INT64_MAX) return false;
    terms.push_back({k >= 0 ? k : -k, n + 1});
  }
  std::sort(terms.begin(), terms.end(), [](const Term& a, const Term& b) { return a.coefficient < b.coefficient; });
  // Equal coefficients add up: k*t1 + k*t2 takes every multiple of k up to k*(n1+n2-2).
  std::vector<Term> merged;
  for (const Term& t : terms) {
    if (!merged.empty() && merged.back().coefficient == t.coefficient) {
      merged.back().count += t.count - 1;
    } else {
      merged.push_back(t);
    }
  }
  terms = merged;
  return true;
}

// Every byte of the band has an offset that int64_t holds, so that clipping cannot overflow.
bool fits(const Band& b) {
  int64_t last_begin = b.begin, last_end = b.end;
  return b.count >= 1 && checked_mul_add(b.stride, b.count - 1, last_begin) && checked_mul_add(b.stride, b.count - 1, last_end);
}

// The bytes [offset, offset + size) over all offsets of the form, as bands: the terms whose step is
// within the run so far extend one contiguous run, the next one strides it, the rest are enumerated
// (up to a limit; past it the hull stands for them and `exact` turns false).
bool make_bands(int64_t base, const std::vector<Term>& terms, int64_t size, std::vector<Band>& out, bool& exact) {
  const int64_t kMaxEnumerated = 1 << 14;
  int64_t run = size;
  size_t i = 0;
  for (; i < terms.size() && terms[i].coefficient <= run; ++i)
    if (!checked_mul_add(terms[i].coefficient, terms[i].count - 1, run)) return false;
  int64_t end = 0;
  if (__builtin_add_overflow(base, run, &end)) return false;
  if (i == terms.size()) {
    out.push_back({base, end, 0, 1});
    return true;
  }
  Band band{base, end, terms[i].coefficient, terms[i].count};
  // A term that steps by the band's whole length continues the band (row and group of rows).
  for (++i; i < terms.size(); ++i) {
    int64_t length = 0, count = 0;
    if (__builtin_mul_overflow(band.stride, band.count, &length) || terms[i].coefficient != length ||
        __builtin_mul_overflow(band.count, terms[i].count, &count))
      break;
    band.count = count;
  }
  --i;
  int64_t combinations = 1;
  for (size_t j = i + 1; j < terms.size(); ++j)
    if (__builtin_mul_overflow(combinations, terms[j].count, &combinations) || combinations > kMaxEnumerated) {
      int64_t hull_end = band.end;
      if (!checked_mul_add(band.stride, band.count - 1, hull_end)) return false;
      for (size_t k = i + 1; k < terms.size(); ++k)
        if (!checked_mul_add(terms[k].coefficient, terms[k].count - 1, hull_end)) return false;
      out.push_back({base, hull_end, 0, 1});
      exact = false;
      return true;
    }
  for (int64_t index = 0; index < combinations; ++index) {
    int64_t shift = 0, rest = index;
    for (size_t j = i + 1; j < terms.size(); ++j) {
      if (!checked_mul_add(terms[j].coefficient, rest % terms[j].count, shift)) return false;
      rest /= terms[j].count;
    }
    Band shifted = band;
    if (__builtin_add_overflow(band.begin, shift, &shifted.begin) || __builtin_add_overflow(band.end, shift, &shifted.end) ||
        !fits(shifted))
      return false;
    out.push_back(shifted);
  }
  return true;
}

// Mixed-radix test on the offsets over the launch: no two work-items reach the same byte. The
// variables (ids, loop counters, strided counters' iteration numbers), sorted by coefficient, are the
// digits: where two points differ, the largest digit that differs decides, if it steps past all
// that the digits below it span. Each work-item variable must; so must a loop variable above some
// work-item variable (a grid-stride loop's t above the ids). Loop variables below every work-item
// variable need not: two points that differ only there belong to one work-item.
bool injective(const Linear& offset, uint64_t size, const std::vector<Interval>& launch_vars, uint32_t work_dim) {
  struct Digit {
    int64_t coefficient, count;
    bool item;
  };
  std::vector<Digit> digits;
  for (int v = 0; v < kFirstLoopVariable; ++v) {
    const Interval& r = launch_vars[size_t(v)];
    int64_t n = r.hi - r.lo + 1;
    auto it = offset.terms.find(v);
    int64_t k = it == offset.terms.end() ? 0 : it->second;
    if (n <= 1 || uint32_t(v % 3) >= work_dim) continue;
    if (k == 0 || k == INT64_MIN) return false;  // two work-items differ only in v: same bytes
    digits.push_back({k >= 0 ? k : -k, n, true});
  }
  for (const auto& [v, k] : offset.terms) {
    if (v < kFirstLoopVariable) continue;
    if (size_t(v) >= launch_vars.size() || launch_vars[size_t(v)].empty() || k == INT64_MIN) return false;
    int64_t n = 0;
    if (__builtin_sub_overflow(launch_vars[size_t(v)].hi, launch_vars[size_t(v)].lo, &n) || n == INT64_MAX) return false;
    if (n > 0) digits.push_back({k >= 0 ? k : -k, n + 1, false});
  }
  // Loop variables first among equal coefficients: below a work-item variable they need no test.
  std::sort(digits.begin(), digits.end(), [](const Digit& x, const Digit& y) {
    return x.coefficient != y.coefficient ? x.coefficient < y.coefficient : !x.item && y.item;
  });
  int64_t span = int64_t(size);
  bool above_item = false;
  for (const Digit& d : digits) {
    if ((d.item || above_item) && d.coefficient < span) return false;
    above_item = above_item || d.item;
    if (!checked_mul_add(d.coefficient, d.count - 1, span)) return false;
  }
  return true;
}

// The part of b inside [lo, hi), as bands. Of repetitions that do not touch, only those that meet
// the window are visited, and at most the first and the last are cut, so that a band of 2^60
// repetitions mostly outside takes no 2^60 steps (fits(b) holds: no offset overflows).
void restrict_band(const Band& b, int64_t lo, int64_t hi, std::vector<Band>& out) {
  if (b.count < 1 || b.end <= b.begin || hi <= lo) return;
  if (b.count == 1 || b.stride <= b.end - b.begin) {
    // Repetitions that touch or overlap (make_bands makes none): one range.
    int64_t begin = std::max(b.begin, lo), end = std::min(b.end + (b.count - 1) * b.stride, hi);
    if (begin < end) out.push_back({begin, end, 0, 1});
    return;
  }
  uint64_t stride = uint64_t(b.stride);
  int64_t first = b.end > lo ? 0 : int64_t(std::min<uint64_t>((uint64_t(lo) - uint64_t(b.end)) / stride + 1, uint64_t(b.count)));
  if (b.begin >= hi) return;
  int64_t last = int64_t(std::min<uint64_t>((uint64_t(hi) - 1 - uint64_t(b.begin)) / stride, uint64_t(b.count - 1)));
  for (int64_t k = first; k <= last; ++k) {
    // Most repetitions lie wholly inside: take the run of them that needs no cut at once.
    int64_t begin = b.begin + k * b.stride, end = b.end + k * b.stride;
    if (begin >= lo && end <= hi) {
      uint64_t room = (uint64_t(hi) - uint64_t(end)) / stride;  // hi - end may pass INT64_MAX when lo < 0
      int64_t run_last = k + int64_t(std::min<uint64_t>(uint64_t(last - k), room));
      out.push_back({begin, end, b.stride, run_last - k + 1});
      k = run_last;
      continue;
    }
    begin = std::max(begin, lo);
    end = std::min(end, hi);
    if (begin < end) out.push_back({begin, end, 0, 1});
  }
}

void clip(const Band& b, uint64_t buffer_size, std::vector<ByteBand>& out) {
  int64_t limit = buffer_size ? int64_t(std::min<uint64_t>(buffer_size, uint64_t(INT64_MAX))) : INT64_MAX;
  std::vector<Band> inside;
  restrict_band(b, 0, limit, inside);
  for (const Band& r : inside)
    out.push_back({uint64_t(r.begin), uint64_t(r.end), r.count > 1 ? uint64_t(r.stride) : 0, uint64_t(r.count)});
}

// The bands of access a over the box where it runs: with strided counters replaced by their
// iteration numbers, cut to the offsets the counters' intervals allow (the iteration numbers are
// taken at the widest the box allows, so the last stretch may reach past them). NotRun where some
// strided loop runs no iteration.
Domain access_bands(const FootprintModel::Access& a, const std::vector<FootprintModel::Loop>& loops,
                    const Values& params, std::vector<Interval> box, std::vector<Band>& out, bool& exact) {
  auto offset = evaluated(a.byte_offset, params);
  if (!offset) return Domain::Unknown;
  std::optional<Interval> hull = range_of(a.byte_offset, params, box);
  bool strided = false;
  if (strided_form(*offset, loops, params, box, strided) == Domain::NotRun) return Domain::NotRun;
  int64_t base = 0, end = 0;
  std::vector<Term> terms;
  std::vector<Band> bands;
  if (!normalize(*offset, box, base, terms) || !make_bands(base, terms, int64_t(a.size), bands, exact))
    return Domain::Unknown;
  if (!strided || !hull || __builtin_add_overflow(hull->hi, int64_t(a.size), &end)) {
    out.insert(out.end(), bands.begin(), bands.end());
    return Domain::Runs;
  }
  for (const Band& b : bands) restrict_band(b, hull->lo, end, out);
  return Domain::Runs;
}

}  // namespace

namespace {

using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;

Ranges merged_band_ranges(const std::vector<ByteBand>& bands, size_t max_ranges, bool* took_hull) {
  // Each band's repetitions come in order: the bands are merged as sorted sequences, a heap of one
  // cursor per band, rather than listed and sorted (a 1022-row chunk of benchmarks/jacobi reads 5
  // bands of 1022 rows each, every row short of the next by the 8 bytes of the grid's border: sorted,
  // 0.6 ms of a 1.2 ms split on two PoCL devices).
  struct Cursor {
    uint64_t begin, end, stride, left;
  };
  std::vector<Cursor> heap;
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const ByteBand& b : bands) {
    if (b.end <= b.begin || b.count == 0) continue;
    const uint64_t last_end = b.end + (b.count - 1) * b.stride;
    lo = std::min(lo, b.begin);
    hi = std::max(hi, last_end);
    // Repetitions that touch or overlap (a stride no longer than one of them) are one range.
    if (b.stride <= b.end - b.begin)
      heap.push_back({b.begin, last_end, 0, 1});
    else
      heap.push_back({b.begin, b.end, b.stride, b.count});
  }
  if (took_hull) *took_hull = false;
  Ranges merged;
  const auto later = [](const Cursor& a, const Cursor& b) { return a.begin > b.begin; };
  std::make_heap(heap.begin(), heap.end(), later);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    Cursor& c = heap.back();
    if (!merged.empty() && c.begin <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, c.end);
    } else if (merged.size() == max_ranges) {
      if (took_hull) *took_hull = true;
      return {{lo, hi}};
    } else {
      merged.push_back({c.begin, c.end});
    }
    if (--c.left == 0) {
      heap.pop_back();
      continue;
    }
    c.begin += c.stride;
    c.end += c.stride;
    std::push_heap(heap.begin(), heap.end(), later);
  }
  return merged;
}

// The answers for bands of many repetitions, kept per thread: a launch repeated with the same
// geometry and scalar arguments asks for the same bands at every launch, per chunk (jacobi's 5 bands
// of 512 rows each, two chunks and the whole launch).
struct KeptRanges {
  std::vector<ByteBand> bands;
  size_t max_ranges = 0;
  Ranges ranges;
  bool hull = false;
};
constexpr size_t kKeptRanges = 16;
constexpr uint64_t kRepetitionsWorthKeeping = 256;

}  // namespace

std::vector<std::pair<uint64_t, uint64_t>> band_ranges(const std::vector<ByteBand>& bands, size_t max_ranges,
                                                       bool* took_hull) {
  uint64_t repetitions = 0;
  for (const ByteBand& b : bands) repetitions += b.count;
  if (repetitions < kRepetitionsWorthKeeping) return merged_band_ranges(bands, max_ranges, took_hull);
  thread_local std::vector<KeptRanges> kept;
  thread_local size_t next = 0;
  for (const KeptRanges& k : kept)
    if (k.max_ranges == max_ranges && k.bands == bands) {
      if (took_hull) *took_hull = k.hull;
      return k.ranges;
    }
  KeptRanges fresh{bands, max_ranges, {}, false};
  fresh.ranges = merged_band_ranges(bands, max_ranges, &fresh.hull);
  if (took_hull) *took_hull = fresh.hull;
  if (kept.size() < kKeptRanges) {
    kept.push_back(fresh);
  } else {
    kept[next] = fresh;
    next = (next + 1) % kKeptRanges;
  }
  return fresh.ranges;
}

Footprint FootprintModel::evaluate_unkept(const LaunchGeometry& geometry, const ArgValues& values, uint64_t g0,
                                          uint64_t g1) const {
  Footprint fp;
  size_t n = d_.is_buffer.size();
  fp.args.resize(n);
  std::vector<bool> read_unknown = d_.reads_unmodelled, write_unknown = d_.writes_unmodelled;
  read_unknown.resize(n, false);
  write_unknown.resize(n, false);
  std::vector<bool> cover(n, true), any_write(n, false);
  std::vector<std::vector<Band>> reads(n), writes(n);

  Values params;
  for (const LaunchParam& p : d_.params) params.push_back(param_value(p, geometry, values));
  uint32_t split = geometry.split_dim;
  bool geometry_ok = geometry.work_dim >= 1 && geometry.work_dim <= 3 && split < geometry.work_dim;
  for (uint32_t d = 0; geometry_ok && d < geometry.work_dim; ++d)
    geometry_ok = geometry.local_size[d] > 0 && geometry.global_size[d] % geometry.local_size[d] == 0 &&
                  geometry.global_size[d] <= uint64_t(INT64_MAX);
  geometry_ok = geometry_ok && g1 <= geometry.global_size[split] / geometry.local_size[split];
  // Variable ranges: those of the chunk, and those of the whole launch (for injectivity).
  std::vector<Interval> chunk(kFirstLoopVariable), launch(kFirstLoopVariable);
  for (uint32_t d = 0; geometry_ok && d < 3; ++d) {
    bool used = d < geometry.work_dim;
    int64_t local = used ? int64_t(geometry.local_size[d]) : 1;
    int64_t groups = used ? int64_t(geometry.global_size[d] / geometry.local_size[d]) : 1;
    chunk[kLocalId0 + d] = launch[kLocalId0 + d] = {0, local - 1};
    launch[kGroupId0 + d] = {0, groups - 1};
    chunk[kGroupId0 + d] = d == split ? Interval{int64_t(g0), int64_t(g1) - 1} : launch[kGroupId0 + d];
  }
  std::vector<bool> loop_ok(d_.loops.size(), false);
  for (size_t i = 0; geometry_ok && i < d_.loops.size(); ++i) {
    auto in_chunk = variable_range(d_.loops[i], params, chunk), in_launch = variable_range(d_.loops[i], params, launch);
    // A min/max/clamp value is evaluated again for each load, over the ids its guards leave.
    loop_ok[i] = (in_chunk && in_launch) || d_.loops[i].kind != Loop::Kind::Counter;
    chunk.push_back(in_chunk && in_launch ? *in_chunk : Interval{});
    launch.push_back(in_chunk && in_launch ? *in_launch : Interval{});
  }

  for (const Access& a : d_.accesses) {
    if (a.arg < 0 || size_t(a.arg) >= n) continue;
    size_t arg = size_t(a.arg);
    if (a.write) any_write[arg] = true;
    bool ok = geometry_ok && g1 > g0;
    for (int l : a.loops) ok = ok && l >= 0 && size_t(l) < loop_ok.size() && loop_ok[size_t(l)];
    std::vector<Interval> box;
    bool exact = true;
    Domain domain = ok ? access_box(a, d_.loops, geometry, params, chunk, box, exact) : Domain::Unknown;
    std::vector<Band> bands;
    if (domain == Domain::Runs) domain = access_bands(a, d_.loops, params, box, bands, exact);
    if (domain == Domain::NotRun) continue;  // an enclosing loop runs zero times, or a guard never holds
    ok = domain == Domain::Runs;
    if (!ok) {
      if (a.read) read_unknown[arg] = true;
      if (a.write) write_unknown[arg] = true;
      continue;
    }
    if (a.read) reads[arg].insert(reads[arg].end(), bands.begin(), bands.end());
    if (a.write) {
      writes[arg].insert(writes[arg].end(), bands.begin(), bands.end());
      bool loops_exact = true;
      for (int l : a.loops) loops_exact = loops_exact && d_.loops[size_t(l)].exact;
      cover[arg] = cover[arg] && a.unconditional && exact && loops_exact;
    }
  }

  for (size_t arg = 0; arg < n; ++arg) {
    ArgFootprint& out = fp.args[arg];
    if (!d_.is_buffer[arg]) continue;
    uint64_t size = arg < values.buffer_sizes.size() ? values.buffer_sizes[arg] : 0;
    if (read_unknown[arg]) {
      out.read = FootprintTier::Whole;
    } else if (!reads[arg].empty()) {
      out.read = FootprintTier::Exact;
      for (const Band& b : reads[arg]) clip(b, size, out.reads);
    }
    if (write_unknown[arg]) {
      out.write = FootprintTier::Diff;
      continue;
    }
    if (!any_write[arg]) continue;
    out.write = FootprintTier::Exact;
    for (const Band& b : writes[arg]) clip(b, size, out.writes);
    out.writes_cover = cover[arg];
    // Several stores of one work-item at the same place (the branches of a stencil's border test)
    // are one for injectivity.
    // Their indices must be their affine forms over the whole launch.
    const Access* first = nullptr;
    bool one_place = true;
    for (const Access& a : d_.accesses) {
      if (!a.write || size_t(a.arg) != arg) continue;
      if (!first) first = &a;
      one_place = one_place && a.byte_offset == first->byte_offset && a.size == first->size &&
                  fits_hold(a.fits, params, launch);
    }
    out.writes_injective = false;
    if (!first || !one_place || !geometry_ok) continue;
    std::vector<Interval> vars = launch;
    auto offset = evaluated(first->byte_offset, params);
    bool strided = false;
    out.writes_injective = offset && strided_form(*offset, d_.loops, params, vars, strided) == Domain::Runs &&
                           injective(*offset, first->size, vars, geometry.work_dim);
  }
  return fp;
}

}  // namespace coex::kernel
