#include "sched/auto_policy.h"

#include <algorithm>

#include "sched/policy_factory.h"
#include "sched/range_variation.h"
#include "sched/split_math.h"

namespace coex::sched {

namespace {

// Whether auto_choice would pick a split by shares, so that the kernel's shares choice (AutoTrack::
// shares_choice) follows, without its fits: a regular (or not yet judged) kernel launched
// auto_repeat_launches times at this size, each device measured there (its chunk model is then
// valid). At every split launch the fits of every device's chunks cost the app's thread as much as
// the gate's (docs/performance.md, "Auto's fits").
bool shares_choice_stands(const History& history, const LaunchShape& shape, const std::vector<int>& devices,
                          const PolicyParams& params, const std::string& shares_choice) {
  if (!splits_by_shares(shares_choice) || devices.empty()) return false;
  const auto regular = history.regular(shape.kernel_key);
  if (regular.has_value() && !*regular) return false;
  if (history.launches(shape.kernel_key, shape.global_size) < static_cast<uint64_t>(params.auto_repeat_launches))
    return false;
  return std::all_of(devices.begin(), devices.end(), [&](int device) {
    return history.throughput(shape.kernel_key, shape.global_size, device).has_value();
  });
}

}  // namespace

AutoPolicy::AutoPolicy(const PolicyParams& params, std::shared_ptr<History> history,
                       const std::vector<DeviceProfile>& profiles)
    : params_(params),
      history_(history ? std::move(history) : std::make_shared<History>()),
      profiles_(profiles),
      kinds_(device_kinds(profiles)) {}

const char* AutoPolicy::unsplit_reason(LaunchShape& shape, const std::vector<int>& devices,
                                       GateVerdict* verdict) const {
  shape.launch_number = history_->plan_launch(shape.kernel_key, shape.global_size);
  if (shape.device_kinds.empty()) shape.device_kinds = kinds_;
  GateVerdict gate = auto_gate(*history_, shape, devices, params_, memoized_evidence(shape, devices));
  gate.launch = *shape.launch_number;
  const std::vector<int>& paying = gate.devices;
  const char* reason = nullptr;
  if (paying.size() == 1 && paying.front() == shape.home)
    reason = "one_device_pays";
  else if (!gate.probe && history_->splits_in_flight(shape.kernel_key, shape.global_size) &&
           !history_->split_launch_seconds(shape.kernel_key, shape.global_size, paying))
    reason = "split_being_measured";  // not within a probe's streak: its splits are to follow one another
  if (reason) {
    // A verdict that turned against splits that paid: the probes count again from here, so that a turn
    // on a slow moment holds for probe_interval launches, not to the next of gaps doubled since the
    // kernel's first launch. Over two single-threaded PoCL devices on the device machine jacobi's
    // verdict turned at launch 102 (its app had written the grid: the two splits after that moved it
    // whole) and held to launch 160, again at 171 for the 129 launches left.
    if (paying.size() == 1 && !gate.probe)
      history_->restart_probes(shape.kernel_key, shape.global_size, *shape.launch_number);
    history_->note_launch(shape.kernel_key, shape.global_size);
    shape.launch_number.reset();
  } else {
    shape.follows_split = history_->plan_split(shape.kernel_key, shape.global_size, *shape.launch_number, paying,
                                               gate.probe, shape.buffer_writes);
  }
  if (verdict) *verdict = std::move(gate);
  return reason;
}

bool AutoPolicy::unsplit_again(const LaunchShape& shape, const std::string& reason, GateVerdict* verdict) const {
  if (reason != "one_device_pays") return false;
  // Counted as unsplit_reason counts a launch it keeps on home, unless it is a probe's (the gate lets
  // every device take part).
  // Called under the History's lock, with the launch's number: the History is not asked again.
  const auto number = history_->count_unsplit_launch(shape.kernel_key, shape.global_size,
                                                     [&](uint64_t n) { return is_probe_number(n, params_); });
  if (!number) return false;
  if (verdict) verdict->launch = *number;
  return true;
}

namespace {

// Whether evidence fitted a few launches ago may stand for this one: its split paid by a margin
// (kSplitMargin x what auto_min_gain asks), measured steady at least twice. The History learns at
// every split (each chunk, each launch's time), and the fits cost the app's thread 0.03 to 0.05 ms a
// launch over eight single-threaded PoCL devices on the device machine (benchmarks/jacobi's splits
// took 0.85 ms, home alone 2.5); a split that paid that well keeps paying from one launch to the
// next, and a change shows at the next fit, a few launches on.
// `split_now`: the History's time of that split now (a lookup, no fit): one measured since beyond the
// margin ends the reuse at once.
bool stands_while_splitting(const GateEvidence& evidence, const PolicyParams& params, std::optional<double> split_now) {
  constexpr double kSplitMargin = 0.8;
  constexpr size_t kSteadyMeasured = 2;
  if (evidence.not_worth_it || evidence.steady_splits < kSteadyMeasured || !evidence.home_seconds) return false;
  const double bound = kSplitMargin * (1 - params.auto_min_gain) * *evidence.home_seconds;
  return evidence.split_seconds && *evidence.split_seconds <= bound && split_now && *split_now <= bound;
}

}  // namespace

GateEvidence AutoPolicy::memoized_evidence(const LaunchShape& shape, const std::vector<int>& devices) const {
  // The version is read before the fits: a sample recorded meanwhile makes the next launch fit again.
  const uint64_t version = history_->evidence_version();
  EvidenceKey key{shape.kernel_key, shape.global_size, shape.total_groups,
                  shape.home,       devices,           shape.home_measured_seconds.value_or(-1)};
  {
    std::lock_guard<std::mutex> lock(evidence_mutex_);
    auto it = evidence_memo_.find(key);
    if (it != evidence_memo_.end()) {
      KeptEvidence& kept = it->second;
      if (kept.version == version) return kept.evidence;
      if (kept.reuses < kEvidenceReuses &&
          stands_while_splitting(
              kept.evidence, params_,
              history_->split_launch_seconds(shape.kernel_key, shape.global_size, kept.evidence.paying))) {
        ++kept.reuses;
        return kept.evidence;
      }
    }
  }
  GateEvidence evidence = gate_evidence(*history_, shape, devices, params_);
  std::lock_guard<std::mutex> lock(evidence_mutex_);
  if (evidence_memo_.size() >= kEvidenceMemoEntries) evidence_memo_.clear();
  evidence_memo_[std::move(key)] = {version, evidence, 0};
  return evidence;
}

void AutoPolicy::begin_launch(const LaunchShape& launch, const std::vector<int>& devices, double now) {
  LaunchShape shape = launch;
  if (shape.device_kinds.empty()) shape.device_kinds = kinds_;
  // The gate's verdict as the planner made it (unsplit_reason), for the devices ready now: fitted again
  // here, the evidence cost a split of benchmarks/jacobi over eight devices a second fit of every
  // device's chunk models (the History learns at every split). Where fewer than two of its devices are
  // ready, the gate weighs the evidence for those that are.
  std::vector<int> paying;
  for (int d : devices)
    if (std::find(shape.gate_devices.begin(), shape.gate_devices.end(), d) != shape.gate_devices.end())
      paying.push_back(d);
  if (paying.size() < 2)
    paying = auto_gate(*history_, shape, devices, params_, memoized_evidence(shape, devices)).devices;
  key_ = {shape.kernel_key, shape.global_size};
  shape_ = shape;
  home_ = shape.home;
  paying_ = paying;
  History::AutoTrack track = history_->auto_track(key_.first, key_.second);
  choice_ = shares_choice_stands(*history_, shape, paying, params_, track.shares_choice)
                ? track.shares_choice
                : auto_choice(*history_, shape, paying, params_);
  if (splits_by_shares(choice_) && !track.shares_choice.empty()) choice_ = track.shares_choice;
  if (splits_by_shares(choice_) && track.remeasure) {
    choice_ = "sigmoid";
    history_->set_shares(shape.kernel_key, shape.global_size, {});  // wp restarts from the new throughputs
    history_->set_layout_shares(shape.kernel_key, shape.global_size, {});
    // A move being judged would be judged by launches of the new shares: only the gain learnt stays.
    History::LayoutTrack layout_track;
    layout_track.least_gain = history_->layout_track(shape.kernel_key, shape.global_size).least_gain;
    history_->set_layout_track(shape.kernel_key, shape.global_size, layout_track);
    History::AutoTrack fresh;  // what was settled of the choices stays; times of another pace go
    fresh.shares_choice = track.shares_choice;
    fresh.tail_moves_data = track.tail_moves_data;
    fresh.tail_weighed = track.tail_weighed;
    track = fresh;
  }
  if (splits_by_shares(choice_)) track.shares_choice = choice_;
  finish_.clear();
  cold_ = false;
  away_seconds_ = 0;
  transfers_by_device_.clear();
  dropped_.clear();
  for (int d : devices)
    if (std::find(paying.begin(), paying.end(), d) == paying.end()) dropped_.push_back(d);
  auto picked = [&](const std::string& name) -> Policy& {
    auto& slot = inner_[name];
    if (splits_by_shares(name) && !slot) {  // auto's own tail, whatever wp_tail says for plain wp
      PolicyParams shares = params_;
      shares.wp_tail = name == "wp+tail" ? params_.auto_wp_tail : 0.0;
      slot = make_policy("wp", shares, history_, profiles_);
    }
    if (!slot) slot = make_policy(name, params_, history_, profiles_);
    return *slot;
  };
  // Devices still building join a policy that hands out on demand; one that sets shares aside now
  // would leave them the launch out (Policy::expect_late_devices). Only for a late device that
  // add_device would take.
  const bool some_late_device_pays = std::any_of(late_devices_.begin(), late_devices_.end(),
                                                 [&](int device) { return pays_beside(shape, paying, device); });
  if (some_late_device_pays && !picked(choice_).takes_late_devices()) choice_ = "sigmoid";
  late_devices_.clear();
  // A split after one by the same choice finds most of each device's part where it left it (shares
  // move by little, and between devices of one kind only for a gain: StrackPolicy; chunks on demand go
  // out in the same order to devices of like pace); after one by another choice (sigmoid's chunks,
  // then wp's shares) the data lies elsewhere.
  same_layout_ = track.last_split_choice == choice_;
  track.last_split_choice = choice_;
  history_->set_auto_track(key_.first, key_.second, track);
  active_ = &picked(choice_);
  active_->begin_launch(shape, paying, now);
}

std::optional<Chunk> AutoPolicy::next_chunk(int device, double now) {
  if (!active_ || std::find(dropped_.begin(), dropped_.end(), device) != dropped_.end()) return std::nullopt;
  return active_->next_chunk(device, now);
}

void AutoPolicy::chunk_done(const ChunkTiming& timing) {
  if (!active_) return;
  double& end = finish_[timing.chunk.device];
  end = std::max(end, timing.end);
  cold_ |= timing.first_run;
  if (timing.chunk.device != home_) {
    away_seconds_ += std::max(0.0, timing.end - timing.start);
    transfers_by_device_[timing.chunk.device] += timing.transfer_seconds;
  }
  active_->chunk_done(timing);
}

void AutoPolicy::end_launch(double now) {
  if (!active_) return;
  active_->end_launch(now);
  double away_transfer_seconds = 0, longest_wait = 0;
  for (const auto& [device, seconds] : transfers_by_device_) {
    away_transfer_seconds += seconds;
    longest_wait = std::max(longest_wait, seconds);
  }
  if (cold_ && shape_.launch_number)
    history_->note_cold_split(key_.first, key_.second, *shape_.launch_number,
                              {paying_, longest_wait, shape_.buffer_writes});
  if (!splits_by_shares(choice_) || finish_.empty()) return;
  double first = finish_.begin()->second, last = first;
  for (const auto& [device, end] : finish_) {
    first = std::min(first, end);
    last = std::max(last, end);
  }
  const double balance = last > 0 ? first / last : 1.0;
  History::AutoTrack track = history_->auto_track(key_.first, key_.second);
  const double threshold = params_.auto_rebalance_below;
  const bool someone_missing = finish_.size() < paying_.size();
  const bool tail_timed = track.tail_times.size() >= kChoiceTimes;
  // Plain wp on trial against a tail timed already (weigh_tail), badly balanced right after a launch
  // that balanced (the tail's last, or the trial's own before): the devices' paces move more than
  // fixed shares follow, and the tail followed them. The tail is kept for the run, and nothing is
  // measured again (the machine did not change: the tail's launches balanced). Without this the
  // trial ran on: its bad balance sent the next launch to sigmoid and plain wp restarted from that
  // launch's throughputs, measured while the paces moved (docs/schedulers.md, "The `auto` rule", the
  // table pace-moves-mid-launch-twenty: binomial over eight devices whose paces move part-way through
  // launches, in simulation, launches 10 to 14 of 20 took 1.27 times hguided's on average, 1.06 with
  // this). A kernel whose plain wp balances, and wins on time (a tail that moves data:
  // benchmarks/jacobi), is weighed as before.
  const bool trial_lost = choice_ == "wp" && !cold_ && tail_timed && !track.tail_weighed && !track.tail_moves_data &&
                          track.last_wp_balance >= threshold && (balance < threshold || someone_missing);
  if (trial_lost) {
    track.shares_choice = "wp+tail";
    track.tail_weighed = true;
  }
  // Not where chunks handed out on demand move more than they balance (tail_moves_data, below): sigmoid
  // hands out the whole launch so, and wp would restart from throughputs that count the moves
  // (benchmarks/jacobi over eight devices: after one such launch wp gave home all of the next ones).
  if (!trial_lost && track.wp_launches > 0 && track.last_wp_balance >= threshold && balance < threshold &&
      !track.tail_moves_data)
    track.remeasure = true;
  // A launch split whole at its start that balanced badly: the devices' paces change from launch to
  // launch more than its shares can follow (single-threaded PoCL devices sharing the device
  // machine's cores: binomial over eight of them finished its wp launches between 70 and 132 ms, then
  // 74 and 165 ms), so the kernel's next launches keep half for the tail, whatever the chunk-time
  // fits said of the tail's cost (noise in their intercepts had picked plain wp). Kept for the run
  // (AutoTrack is not saved: a second run starts from the fits again).
  // Not from a launch where a device compiled the kernel at its first chunk; a device that never
  // reported (taken over by another) counts as a bad balance.
  // Not once the two were weighed (launch_measured), nor while plain wp is timed against a tail
  // already timed.
  if (choice_ == "wp" && !cold_ && (balance < threshold || someone_missing) && params_.auto_wp_tail > 0 &&
      !track.tail_moves_data && !track.tail_weighed && !tail_timed)
    track.shares_choice = "wp+tail";
  // A tail whose chunks, away from home, spent more time moving data than running: a chunk handed out
  // on demand lands away from where its data lies, and a kernel that reads little per byte pays more
  // to move it than the balance gains (benchmarks/jacobi over eight single-threaded devices: 3.5 ms of
  // uploads beside 2.2 ms of runs in a launch under wp+tail, 2.2 ms a split against 1.6 ms under
  // static). wp's fixed shares move only what changed at their edges. Kept for the run.
  constexpr double kTailTransferShare = 0.5;
  if (choice_ == "wp+tail" && !cold_ && !track.tail_weighed &&
      away_transfer_seconds > kTailTransferShare * away_seconds_) {
    track.shares_choice = "wp";
    track.tail_moves_data = true;
  }
  track.last_wp_balance = balance;
  ++track.wp_launches;
  history_->set_auto_track(key_.first, key_.second, track);
}

bool AutoPolicy::add_device(int device, double now) {
  if (!active_) return false;
  // Not one the models say would not pay, had it been ready at begin_launch.
  if (!pays_beside(shape_, paying_, device)) return false;
  if (!active_->add_device(device, now)) return false;
  if (std::find(paying_.begin(), paying_.end(), device) == paying_.end()) paying_.push_back(device);
  dropped_.erase(std::remove(dropped_.begin(), dropped_.end(), device), dropped_.end());
  return true;
}

bool AutoPolicy::pays_beside(const LaunchShape& shape, const std::vector<int>& paying, int device) const {
  std::vector<int> with_it = paying;
  with_it.push_back(device);
  const auto would_pay = auto_paying_devices(*history_, shape, with_it, params_);
  return std::find(would_pay.begin(), would_pay.end(), device) != would_pay.end();
}

void AutoPolicy::launch_measured(double seconds) {
  if (!active_ || paying_.empty() || (paying_.size() == 1 && paying_.front() == home_)) return;  // not a split
  // Nor one right after a split that paid one-time costs: that one's chunks, handed out on demand
  // while devices compiled, left the data where this one's shares do not want it (benchmarks/jacobi
  // on two basic PoCL devices: 22 ms, where later splits took 4 ms and home alone 7 ms; the verdict
  // kept home alone for 160 launches).
  if (shape_.follows_split && *shape_.launch_number > 0 &&
      history_->cold_split(key_.first, key_.second, *shape_.launch_number - 1))
    return;
  const bool steady = shape_.follows_split && same_layout_;
  history_->record_split_launch(key_.first, key_.second, paying_, seconds, home_alone_seconds(*history_, shape_),
                                steady);
  if (steady && splits_by_shares(choice_)) weigh_tail(seconds);
}

// wp's shares with the tail or without: the faster by the lower median of the steady launches'
// times, kChoiceTimes of each, kept for the run. A tail hands its chunks out on demand, so that they
// land away from where their data lies, and moves rows between the devices at every launch; the
// balance it buys pays that on some machines and not on others (benchmarks/jacobi over two
// single-threaded PoCL devices on the device machine: the runs that kept the tail took 0.79 to 0.83
// s, those on plain wp 0.48 to 0.70 s, and the share of the away chunks' time spent moving data
// stayed under the threshold that turns a tail off: end_launch). A tail timed first has plain wp
// timed after it.
void AutoPolicy::weigh_tail(double seconds) {
  History::AutoTrack track = history_->auto_track(key_.first, key_.second);
  if (track.tail_weighed || track.tail_moves_data) return;  // settled by the times, or by the tail's moves
  std::vector<double>& times = choice_ == "wp+tail" ? track.tail_times : track.wp_times;
  times.push_back(seconds);
  if (times.size() > kChoiceTimes) times.erase(times.begin(), times.end() - kChoiceTimes);
  if (track.tail_times.size() >= kChoiceTimes && track.wp_times.size() >= kChoiceTimes) {
    track.shares_choice = lower_median(track.tail_times) < lower_median(track.wp_times) ? "wp+tail" : "wp";
    track.tail_weighed = true;
  } else if (choice_ == "wp+tail" && track.tail_times.size() >= kChoiceTimes) {
    track.shares_choice = "wp";  // plain wp's turn
  }
  history_->set_auto_track(key_.first, key_.second, track);
}

std::vector<Chunk> AutoPolicy::take_abandoned() { return active_ ? active_->take_abandoned() : std::vector<Chunk>{}; }

std::string AutoPolicy::planned_by() const { return "auto:" + choice_; }

std::vector<int> AutoPolicy::eliminated() const {
  std::vector<int> out = dropped_;
  if (active_)
    for (int d : active_->eliminated()) out.push_back(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace coex::sched
