// auto's evidence (docs/schedulers.md, "The `auto` rule"): each device's chunk-time model, the
// policy its launches start with (auto_choice), and the gate that says which devices take part, from
// the models and the split launches measured against home alone, with its probes.
#include <algorithm>
#include <limits>
#include <map>

#include "sched/auto_policy.h"
#include "sched/range_variation.h"
#include "sched/split_math.h"

namespace coex::sched {

namespace {

// The devices whose chunks stand for `device`'s on an irregular kernel: those of its kind (LaunchShape::
// device_kinds), or itself alone.
std::vector<int> of_its_kind(const LaunchShape& shape, int device) {
  const int mine = kind_of(shape.device_kinds, device);
  std::vector<int> out;
  for (size_t d = 0; d < shape.device_kinds.size(); ++d)
    if (shape.device_kinds[d] == mine) out.push_back(int(d));
  return out.empty() ? std::vector<int>{device} : out;
}

// The (groups, seconds) of the chunks of the kernel that `devices` ran, at any size.
std::vector<std::pair<double, double>> chunk_points(const History& history, const std::string& kernel_key,
                                                    const std::vector<int>& devices) {
  std::vector<std::pair<double, double>> points;
  for (int d : devices)
    for (const auto& s : history.samples_any_size(kernel_key, d)) points.emplace_back(s.groups, s.seconds);
  return points;
}

AffineModel kernel_model(const History& history, const LaunchShape& shape, int device) {
  const auto points = chunk_points(history, shape.kernel_key, {device});
  // Only the overhead that stands out of the chunks' noise (split_math.h, overhead_beyond_noise): a
  // line through a few chunks of similar sizes on a device that changes pace has an intercept of
  // chance, with a slope too low. The intercept picked plain wp and its fixed shares over wp+tail
  // (auto_choice; the testbed's scenarios with noise 0.2: matmul over 4 devices 5% slower than
  // hguided, binomial over 8 10%; within 3% with this), and the two give the equal-finish shares
  // that decide whether a device pays (paying_by_models).
  AffineModel model = fit_affine_beyond_noise(points);
  // On an irregular kernel a chunk's time says where it ran more than how large it was: a line through
  // the chunks of a Mandelbrot image gave the CPU a fixed cost that left it out of launches it paid
  // in (the simulator's sigmoid-irregular). Its mean pace is what a share of the launch costs it, over
  // the chunks of all the devices of its kind: sigmoid hands the range out in order, so that one
  // device's few chunks lie in one part of it (benchmarks/mandelbrot over 8 single-threaded devices:
  // home's chunks, from the image's cheap last rows, put home alone at 12 ms where it took 530 ms,
  // and home ran the next launches alone, `one_device_pays`).
  const auto regular = history.regular(shape.kernel_key);
  if (model.valid && regular.has_value() && !*regular) {
    double groups = 0, seconds = 0;
    for (const auto& [g, t] : chunk_points(history, shape.kernel_key, of_its_kind(shape, device))) {
      groups += g;
      seconds += t;
    }
    model.a = 0;
    model.b = seconds / groups;
  }
  return model;
}

}  // namespace

bool splits_by_shares(const std::string& choice) { return choice == "wp" || choice == "wp+tail"; }

std::string auto_choice(const History& history, const LaunchShape& shape, const std::vector<int>& devices,
                        const PolicyParams& params) {
  const auto regular = history.regular(shape.kernel_key);
  if (regular.has_value() && !*regular) return "sigmoid";
  double rate = 0;
  std::map<int, std::vector<double>> overheads_by_kind;
  for (int d : devices) {
    const AffineModel m = kernel_model(history, shape, d);
    // A device we know nothing of: stay adaptive. Before wp too: its shares start equal when nothing
    // is measured, and an iterative app counts many launches before the first one runs (jacobi on an
    // H100 enqueued 100, and wp gave the CPU beside it half of the first launch: 2.4 s of it).
    if (!m.valid) return "sigmoid";
    overheads_by_kind[kind_of(shape.device_kinds, d)].push_back(m.a);
    rate += 1.0 / m.b;
  }
  if (devices.empty() || rate <= 0) return "sigmoid";
  // A chunk's overhead is the driver's and the device's: devices of one kind share it, and the median
  // of their lines' intercepts stands for it. The largest of them is the device whose pace moved
  // most during the launch measured: one that slowed part-way through ran its later, smaller chunks
  // slower, and its line through them rises at zero. Over eight single-threaded PoCL devices sharing
  // the device machine's cores that picked plain wp for one of benchmarks/binomial's launches in
  // three runs, whose fixed shares then ended 86 to 154 ms into it (the others 97 to 120 ms). In
  // simulation (docs/schedulers.md, "The `auto` rule": devices whose pace moves part-way through a
  // launch) the largest picked plain wp for 8 of binomial's 60 launches at N = 8, 8.6% behind hguided;
  // the median for none, 1.6%.
  double overhead = 0;
  for (auto& [kind, intercepts] : overheads_by_kind) {
    std::nth_element(intercepts.begin(), intercepts.begin() + intercepts.size() / 2, intercepts.end());
    overhead = std::max(overhead, intercepts[intercepts.size() / 2]);
  }
  const double predicted = static_cast<double>(shape.total_groups) / rate;
  const bool few_chunks = overhead > params.auto_overhead_fraction * predicted;
  if (history.launches(shape.kernel_key, shape.global_size) >= static_cast<uint64_t>(params.auto_repeat_launches))
    return few_chunks || params.auto_wp_tail <= 0 ? "wp" : "wp+tail";
  return few_chunks ? "boyer" : "sigmoid";
}

// Probes at probe_interval x 1, 2, 4, 8, ...: a device that never pays costs ever less. Each probe is
// a streak of auto_probe_streak launches, so that the splits after the first follow a split: the
// first pays to move each device's part of the data to it (History::record_split_launch).
// The last probe's start at or before `launches` is probe_interval x the largest power of two within
// launches / probe_interval: one division (a launch left on home asks at every launch).
bool is_probe_number(uint64_t launches, const PolicyParams& params) {
  const uint64_t interval = static_cast<uint64_t>(std::max<int64_t>(1, params.probe_interval));
  const uint64_t streak = static_cast<uint64_t>(std::max<int64_t>(1, params.auto_probe_streak));
  const uint64_t intervals = launches / interval;
  if (intervals == 0) return false;
  const uint64_t last_start = interval << (63 - __builtin_clzll(intervals));
  return launches - last_start < streak;
}

namespace {

// The launch's number counted from where auto's probes count (History::probe_origin).
uint64_t probe_count(const History& history, const LaunchShape& shape) {
  // Not value_or: the History is asked only when the launch has no number.
  const uint64_t number =
      shape.launch_number ? *shape.launch_number : history.launches(shape.kernel_key, shape.global_size);
  return number - std::min(number, history.probe_origin(shape.kernel_key, shape.global_size));
}

}  // namespace

bool auto_probe(const History& history, const LaunchShape& shape, const PolicyParams& params) {
  return is_probe_number(probe_count(history, shape), params);
}

namespace {

// home_alone_seconds extrapolates its line to the whole launch only from chunks whose sizes span at
// least this part of it (1 / kLineSpanOfLaunch).
constexpr double kLineSpanOfLaunch = 8.0;

// The chunk-time model that says whether `device` pays: where other devices share its kind, the
// line through all their chunks. Devices of one kind pay alike; one device's own line, through a few
// chunks, can say otherwise by where its chunks lay or when they ran (benchmarks/mandelbrot over two
// single-threaded devices on the device machine: one of three first runs ran its second and third
// launches on home alone, `one_device_pays`; the mixed testbed's binomial: two of four single-threaded
// devices dropped after a balanced first launch). Only who takes part: a launch's shares are its
// policy's (wp's from the measured throughputs).
// `pooled_by_kind` keeps the line of each kind once fitted: the same for all its devices (eight
// single-threaded devices made it eight fits of 256 chunks at every split launch's gate).
AffineModel paying_model(const History& history, const LaunchShape& shape, int device,
                         std::map<int, AffineModel>& pooled_by_kind) {
  const AffineModel own = kernel_model(history, shape, device);
  const std::vector<int> kind = of_its_kind(shape, device);
  const auto regular = history.regular(shape.kernel_key);
  if (!own.valid || kind.size() < 2 || (regular.has_value() && !*regular)) return own;  // irregular: pooled already
  const int kind_index = kind_of(shape.device_kinds, device);
  auto pooled = pooled_by_kind.find(kind_index);
  if (pooled == pooled_by_kind.end())
    pooled = pooled_by_kind.emplace(kind_index, fit_affine_beyond_noise(chunk_points(history, shape.kernel_key, kind)))
                 .first;
  return pooled->second.valid ? pooled->second : own;
}

// The devices of `devices` that pay for their overhead by their chunk-time models (paying_model).
std::vector<int> paying_by_models(const History& history, const LaunchShape& shape, const std::vector<int>& devices,
                                  const PolicyParams& params) {
  std::vector<FinishModel> models;
  std::vector<size_t> modeled;  // positions in `devices`
  std::map<int, AffineModel> pooled_by_kind;
  for (size_t i = 0; i < devices.size(); ++i) {
    const AffineModel m = paying_model(history, shape, devices[i], pooled_by_kind);
    if (!m.valid) continue;
    models.push_back({m.b, 0.0, m.a});
    modeled.push_back(i);
  }
  if (modeled.size() < 2) return devices;
  // A device whose equal-finish share is under one group, or under auto_min_share of the launch,
  // gets nothing: it could shorten the launch by about its share at most, less than a split costs
  // (transfers, merges, a take-over when it is late). The smallest such share goes first, and the
  // others' shares are computed again without it.
  const double total = static_cast<double>(shape.total_groups);
  const double floor = std::max(1.0, params.auto_min_share * total);
  std::vector<bool> kept(models.size(), true);
  for (;;) {
    std::vector<FinishModel> kept_models;
    std::vector<size_t> kept_at;
    for (size_t j = 0; j < models.size(); ++j)
      if (kept[j]) {
        kept_models.push_back(models[j]);
        kept_at.push_back(j);
      }
    if (kept_models.size() < 2) break;
    const auto shares = equal_finish_split(kept_models, total);
    size_t smallest = 0;
    for (size_t k = 1; k < shares.size(); ++k)
      if (shares[k] < shares[smallest]) smallest = k;
    if (shares[smallest] >= floor) break;
    kept[kept_at[smallest]] = false;
  }
  std::vector<int> paying;
  for (size_t i = 0; i < devices.size(); ++i) {
    const auto it = std::find(modeled.begin(), modeled.end(), i);
    if (it == modeled.end() || kept[static_cast<size_t>(it - modeled.begin())]) paying.push_back(devices[i]);
  }
  return paying.empty() ? devices : paying;
}

// A time of home alone measured from an idle queue more than this many times its estimate from home's
// chunks is not its own (home_alone_seconds).
constexpr double kSuspectMeasured = 4.0;

// What the launch would take on home alone, unsplit, estimated from home's chunks in split launches of
// this kernel and size, each without its transfer part: an unsplit launch moves nothing (its data is on
// home) and waits for no other device's reads from the home queue, and both are in the time before a
// chunk's sub-launch starts. What stays, a sub-launch and the wait for it, is close to what the plain
// launch costs (unsplit launches go to the app's own queue and are not timed by coex). The estimate is
// the smaller of the fitted line (a + b * x) at the whole launch and the best chunk scaled up to it:
// (a + b * x) * W / x >= a + b * W, so each chunk scaled up bounds the launch from above, and the
// smallest bound holds against a slow first chunk (a kernel built at its first launch) that pulls the
// least-squares line up for as long as it is among the samples. The line only where the chunks' sizes
// span an eighth of the launch or more: from a narrow span its slope is noise, and extrapolated it can
// fall far below home alone (benchmarks/nbody on a 4-thread CPU beside 4 single-threaded devices: chunks
// of a few of its 64 groups, taking 25 to 37 ms as the other devices' threads came and went, put home
// alone at 0.16 s; it took 0.41 s, and the split of 0.25 s was dropped). Both bounds hold only where
// a work-group costs about the same wherever it lies: on a kernel known to be irregular (sigmoid saw
// its chunks' paces vary) the cheapest chunk says where it ran, and home alone is the mean pace of
// the chunks of its kind over the whole launch, as kernel_model takes a share's cost (benchmarks/mandel_uniform on two
// basic PoCL devices of the 2-core development machine: group rows of 2 to 8 ms, home alone put at
// 33 ms from a row of 2.1 ms, where it took 83 ms; the split of 38 ms was dropped). Only this size:
// another global size has other work-groups. nullopt: no chunk of home at this size.
std::optional<double> home_alone_from_chunks(const History& history, const LaunchShape& shape) {
  const double whole = static_cast<double>(shape.total_groups);
  std::vector<std::pair<double, double>> points;
  double best = std::numeric_limits<double>::infinity();
  double smallest = std::numeric_limits<double>::infinity(), largest = 0;
  double all_groups = 0, all_compute = 0;
  for (const auto& s : history.samples(shape.kernel_key, shape.global_size, shape.home)) {
    const double compute = std::max(0.0, s.seconds - s.transfer_seconds);
    points.emplace_back(s.groups, compute);
    if (s.groups > 0) best = std::min(best, compute * whole / s.groups);
    smallest = std::min(smallest, s.groups);
    largest = std::max(largest, s.groups);
    all_groups += s.groups;
    all_compute += compute;
  }
  const AffineModel m = fit_affine(points);
  if (!m.valid) return std::nullopt;
  const auto regular = history.regular(shape.kernel_key);
  if (regular.has_value() && !*regular) {  // the mean pace of the chunks of home's kind (kernel_model)
    all_groups = all_compute = 0;
    for (int d : of_its_kind(shape, shape.home))
      for (const auto& s : history.samples(shape.kernel_key, shape.global_size, d)) {
        all_groups += s.groups;
        all_compute += std::max(0.0, s.seconds - s.transfer_seconds);
      }
    if (all_groups > 0) return all_compute * whole / all_groups;
  }
  const bool line_holds = largest - smallest >= whole / kLineSpanOfLaunch;
  return line_holds ? std::min(best, m.time(whole)) : best;
}

}  // namespace

// Home alone as measured there (LaunchShape::home_measured_seconds) where it was; else from home's
// chunks (home_alone_from_chunks). The measurement beats the estimate, which a kernel whose working
// set fits a cache in chunks but not whole puts too low (benchmarks/jacobi: 1.9 ms estimated, 3.3 ms
// measured), but not one more than kSuspectMeasured times it: a launch slowed by what was not its own
// work (a first run's load of its work-group function, 0.18 ms for a launch of 6 us; a thread
// descheduled) would make every split look worth it, and while splitting home is not timed again.
std::optional<double> home_alone_seconds(const History& history, const LaunchShape& shape) {
  if (shape.home < 0) return std::nullopt;
  const std::optional<double> estimated = home_alone_from_chunks(history, shape);
  if (shape.home_measured_seconds && (!estimated || *shape.home_measured_seconds <= kSuspectMeasured * *estimated))
    return shape.home_measured_seconds;
  return estimated;
}

namespace {

// A split measured to take this many times home alone is hopeless: steadily (after a split over the same
// devices), or by switches alone (each of which moves the devices' parts of the data first).
constexpr double kHopelessSplit = 3.0;
constexpr double kHopelessSwitch = 10.0;

// Of the sets within `devices` (and holding home) measured at this size, the one measured nearest home
// alone, where even that one was hopeless: more devices add their fixed costs to a launch whose
// work is a small part of what its splits cost. Over eight single-threaded PoCL devices whose builds
// ended one after another, benchmarks/stencil1d's launches of 10 us were split once more, cold, at
// each new set of devices ready (14 of its 32 splits, the others probes), each split 0.3 to 1.5 ms.
// Only where `devices` are all of home's kind (LaunchShape::device_kinds): among devices of unequal
// paces a part can be hopeless by a slow device's share, which a larger set's models shrink (a CPU
// beside a GPU, before a second GPU is ready).
std::optional<History::MeasuredSplit> hopeless_subset(const History& history, const LaunchShape& shape,
                                                      const std::vector<int>& devices, double alone) {
  if (shape.home < 0 || !(alone > 0)) return std::nullopt;
  const int home_kind = kind_of(shape.device_kinds, shape.home);
  for (int d : devices)
    if (kind_of(shape.device_kinds, d) != home_kind) return std::nullopt;
  std::optional<History::MeasuredSplit> nearest;
  for (auto& measured : history.splits_within(shape.kernel_key, shape.global_size, devices)) {
    if (!std::binary_search(measured.devices.begin(), measured.devices.end(), shape.home)) continue;
    if (!nearest || measured.seconds < nearest->seconds) nearest = std::move(measured);
  }
  if (!nearest) return std::nullopt;
  const double hopeless = nearest->steady > 0 ? kHopelessSplit : kHopelessSwitch;
  return nearest->seconds >= hopeless * alone ? nearest : std::nullopt;
}

// A split launch over `devices` and the same launch on home alone: (split, home alone) in seconds, as
// measured and estimated at this size; where no split over that set was measured at this size, at the
// nearest larger size of the kernel where one over that set or more devices was (with home's estimate
// recorded then). A split costs about as much at a smaller size while its gain shrinks with the work,
// and fewer devices gain less: a factorization's launches shrink at every step (benchmarks/lu,
// gram_schmidt), and each new size was split once to be measured; over 8 devices, where the models
// drop a device every few sizes, lu split 99 of its 2,046 launches until any superset counted. Where
// neither was measured, a set within `devices` measured hopeless at this size stands for it
// (hopeless_subset).
struct SplitAgainstHome {
  double split = 0;
  double alone = 0;
  std::optional<History::MeasuredSplit> within;  // the hopeless set within that the times are of
  std::optional<History::SplitAbove> above;      // the larger size and set that the times are of
};
// `alone`: home_alone_seconds, which the caller may have at hand (a fit through home's chunks).
std::optional<SplitAgainstHome> split_against_home(const History& history, const LaunchShape& shape,
                                                   const std::vector<int>& devices,
                                                   const std::optional<double>& alone) {
  const auto split = history.split_launch_seconds(shape.kernel_key, shape.global_size, devices);
  if (!split) {
    if (auto above = history.split_above(shape.kernel_key, shape.global_size, devices)) {
      const double seconds = above->seconds, above_alone = above->alone;
      return SplitAgainstHome{seconds, above_alone, std::nullopt, std::move(above)};
    }
  }
  if (!alone) return std::nullopt;
  if (split) return SplitAgainstHome{*split, *alone, std::nullopt, std::nullopt};
  // Not measured at all, but a set within it was, hopelessly: no more is hoped of this one.
  if (auto within = hopeless_subset(history, shape, devices, *alone)) {
    const double seconds = within->seconds;
    return SplitAgainstHome{seconds, *alone, std::move(within), std::nullopt};
  }
  return std::nullopt;
}

// Where the only split over `paying` at this size was cold (a device's first run of the kernel: its
// time is not the set's verdict) and the app wrote the launch's buffers since, so that the next split
// moves the data again as that one did: that split's wait for its data (History::ColdTransfers), where
// that alone was kHopelessSwitch times home alone or more. A wait for data recurs where a first run's
// compile does not: benchmarks/saxpy over two basic PoCL devices, its inputs written before each of
// three launches of 12 ms on home, waited 176 ms for them in its cold first split; the second split,
// made to measure the set, took 102 ms, and only then did home keep the third.
std::optional<History::ColdTransfers> hopeless_by_cold_transfers(const History& history, const LaunchShape& shape,
                                                                 std::vector<int> paying, double alone) {
  if (shape.home < 0 || !(alone > 0) || shape.buffer_writes == 0) return std::nullopt;
  auto cold = history.cold_transfers(shape.kernel_key, shape.global_size);
  if (!cold || cold->buffer_writes == shape.buffer_writes) return std::nullopt;
  std::sort(paying.begin(), paying.end());
  if (cold->devices != paying || cold->seconds < kHopelessSwitch * alone) return std::nullopt;
  return cold;
}

// The measurement of the split launches over exactly `paying`, where it says they were, whole, no faster
// than (1 - auto_min_gain) x home alone (split_against_home). Not measured yet, or nothing known of home:
// no verdict (nullopt), the split is made (and then measured).
std::optional<SplitAgainstHome> split_measured_not_to_pay(const History& history, const LaunchShape& shape,
                                                          const std::vector<int>& devices,
                                                          const std::vector<int>& paying, const PolicyParams& params,
                                                          const std::optional<double>& alone) {
  const int home = shape.home;
  if (home < 0 || std::find(devices.begin(), devices.end(), home) == devices.end()) return std::nullopt;
  if (paying.size() == 1 && paying.front() == home) return std::nullopt;  // not a split
  auto measured = split_against_home(history, shape, paying, alone);
  if (measured && measured->split > (1 - params.auto_min_gain) * measured->alone) return measured;
  return std::nullopt;
}

// Whether the probe of `probed` would cost more than auto_probe_cost of home's time over the launches
// since the previous probe (launch_number / 2 with gaps that double, probe_interval for the first): its
// cost is auto_probe_streak times what the split over that set was last measured to take beyond home
// alone (benchmarks/stencil1d over eight single-threaded devices, launches of 10 us: 18 probe splits
// of about 0.3 ms in 60,000 launches, each streak costing three times what was counted). On an H100 beside a
// CPU about 600x slower, a probe of benchmarks/blur's 2 ms launch took 2.3 s (the CPU needed the whole
// 1 GiB input): with gaps doubling from 10 launches, every fourth run of the program paid one; with
// the gaps counted from each run's first launch (History::probe_origin), every run would.
bool probe_costs_too_much(const History& history, const LaunchShape& shape, const std::vector<int>& probed,
                          const PolicyParams& params) {
  if (shape.home < 0 || (probed.size() == 1 && probed.front() == shape.home)) return false;
  const auto measured = split_against_home(history, shape, probed, home_alone_seconds(history, shape));
  if (!measured) return false;
  const double split = measured->split, alone = measured->alone;
  const double since =
      static_cast<double>(std::max<uint64_t>(uint64_t(params.probe_interval), probe_count(history, shape) / 2));
  // A probe is a streak of splits (is_probe_number), each of which costs that much.
  const double streak = static_cast<double>(std::max<int64_t>(1, params.auto_probe_streak));
  return streak * (split - alone) > params.auto_probe_cost * alone * since;
}

}  // namespace

std::vector<int> auto_paying_devices(const History& history, const LaunchShape& shape, const std::vector<int>& devices,
                                     const PolicyParams& params) {
  return auto_gate(history, shape, devices, params).devices;
}

GateEvidence gate_evidence(const History& history, const LaunchShape& shape, const std::vector<int>& devices,
                           const PolicyParams& params) {
  GateEvidence evidence;
  evidence.paying = paying_by_models(history, shape, devices, params);
  // Home alone once: a fit through home's chunks, which the verdict and the evidence both read.
  evidence.home_seconds = home_alone_seconds(history, shape);
  const auto against =
      split_measured_not_to_pay(history, shape, devices, evidence.paying, params, evidence.home_seconds);
  evidence.not_worth_it = against.has_value();
  evidence.measured = evidence.paying;
  evidence.split_seconds = history.split_launch_seconds(shape.kernel_key, shape.global_size, evidence.paying);
  evidence.steady_splits = history.steady_splits_measured(shape.kernel_key, shape.global_size, evidence.paying);
  evidence.splits = history.splits_measured(shape.kernel_key, shape.global_size, evidence.paying);
  // The verdict came from a hopeless set within `paying`: its figures are the evidence (and, as for
  // a set measured hopeless itself, no first split is made again: auto_gate).
  if (against && against->within) {
    const History::MeasuredSplit& within = *against->within;
    evidence.measured = within.devices;
    evidence.split_seconds = within.seconds;
    evidence.steady_splits = within.steady;
    evidence.splits = within.count;
  }
  // The verdict came from a larger size: its figures say why (auto_gate gives them to a verdict for
  // home), and this size's stay for the rules, which take none of them as this size's own.
  if (against && against->above) evidence.above = against->above;
  // Nothing measured but a cold split whose wait for data alone was hopeless: its wait is the evidence,
  // beyond the probe rule's reach (auto_gate: no split hopeless by switches is made again to measure).
  if (!against && !evidence.split_seconds && evidence.home_seconds)
    if (auto cold = hopeless_by_cold_transfers(history, shape, evidence.paying, *evidence.home_seconds)) {
      evidence.not_worth_it = true;
      evidence.measured = cold->devices;
      evidence.split_seconds = cold->seconds;
      evidence.cold_transfers = true;
    }
  return evidence;
}

GateVerdict auto_gate(const History& history, const LaunchShape& shape, const std::vector<int>& devices,
                      const PolicyParams& params, const GateEvidence& evidence) {
  GateVerdict verdict;
  const std::vector<int>& paying = evidence.paying;
  const bool not_worth_it = evidence.not_worth_it;
  verdict.measured_devices = evidence.measured;
  verdict.split_seconds = evidence.split_seconds;
  verdict.home_seconds = evidence.home_seconds;
  verdict.devices = not_worth_it ? std::vector<int>{shape.home} : paying;
  // The first splits of a kernel and size: a verdict against the split needs two steady measurements
  // (splits right after a split over the same devices by the same choice, nothing written between). A
  // switch (after a launch on home, a split by other chunks or a write) pays for moving the data to
  // the parts, and a CPU device for its first touch of the pages of its part; one steady split can
  // fall on a slow moment. So the launch is split again, as a probe, until two steady splits or
  // 2 x auto_probe_streak splits over that set were measured (auto_probe_streak where none was
  // steady), unless probes may cost nothing
  // (auto_probe_cost 0) or the split was hopeless: kHopelessSplit x home's time by a steady
  // measurement, kHopelessSwitch x by switches alone. A switch moves each device's part of the data,
  // which for a kernel that reads each byte once or twice costs several launches (benchmarks/jacobi
  // over two basic PoCL devices on the 2-core development machine: its third launch, the first by wp's
  // shares after two by sigmoid's chunks, took 7.2 ms against 1.7 ms on home; taken as the verdict,
  // home kept the 297 launches left, its splits taking 0.9 ms against home's 1.4 ms in the runs that
  // went on splitting). Counted in splits, not launches: a launch kept on home in between measures
  // nothing (a verdict at the sixth launch came from one steady split of 2.3 ms, its second device
  // started after home's chunk had run, where the next splits took 0.9 to 1.5 ms).
  // Where no split was steady yet (an app that writes between its launches never makes one), at most
  // auto_probe_streak switches are measured so; the splits still running count too (an app enqueues
  // its launches before the first ends).
  constexpr size_t kSteadyForVerdict = 2;
  const uint64_t streak = static_cast<uint64_t>(std::max<int64_t>(1, params.auto_probe_streak));
  const uint64_t first_splits = evidence.steady_splits > 0 ? 2 * streak : streak;
  const double hopeless = evidence.steady_splits > 0 ? kHopelessSplit : kHopelessSwitch;
  if (not_worth_it && evidence.steady_splits < kSteadyForVerdict && evidence.split_seconds && evidence.home_seconds &&
      shape.launch_number &&
      evidence.splits + history.splits_in_flight(shape.kernel_key, shape.global_size) < first_splits &&
      params.auto_probe_cost > 0 && *evidence.split_seconds < hopeless * *evidence.home_seconds) {
    verdict.devices = paying;
    verdict.probe = true;
    return verdict;
  }
  // A probe lets every device take part, except when the split the models pick was measured not to
  // pay: then it is that split that is made again (and measured), so that one that became worth it
  // is seen; a probe of every device would measure another set and leave that verdict as it was.
  if (auto_probe(history, shape, params)) {
    const std::vector<int>& probed = not_worth_it ? paying : devices;
    if (!probe_costs_too_much(history, shape, probed, params)) {
      verdict.devices = probed;
      verdict.probe = true;
    }
  }
  // Kept on home by a split measured at a larger size (`above` is only set where it did not pay): the
  // report and the trace give its figures and size (without them a verdict at each smaller size read
  // "not measured"). Not a probe: a verdict that splits hands its figures' devices to the launch's
  // policy (LaunchShape::gate_devices).
  if (evidence.above && !verdict.probe) {
    verdict.measured_devices = evidence.above->devices;
    verdict.split_seconds = evidence.above->seconds;
    verdict.home_seconds = evidence.above->alone;
    verdict.measured_size = evidence.above->global_size;
  }
  verdict.cold_transfers = evidence.cold_transfers;
  return verdict;
}

GateVerdict auto_gate(const History& history, const LaunchShape& shape, const std::vector<int>& devices,
                      const PolicyParams& params) {
  return auto_gate(history, shape, devices, params, gate_evidence(history, shape, devices, params));
}

}  // namespace coex::sched
