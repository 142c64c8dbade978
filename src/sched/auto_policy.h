// auto: picks a policy per launch from what the History knows of the kernel (docs/schedulers.md,
// "The auto rule"):
//  1. the kernel is known to be irregular (sigmoid saw its package speeds vary along  -> sigmoid
//     the range: sigmoid_policy.h)
//     (a contiguous split per device converges slowly when the cost varies across the range: the
//     simulated mandelbrot kernel under wp stays below sigmoid for 10 launches);
//  2. this kernel ran at this global size auto_repeat_launches (1) times or more       -> wp
//     (repeated launches: shares start from the measured throughputs and converge across launches;
//     one contiguous range per device keeps data where it is); "wp+tail" where chunks are cheap (as in
//     rule 3): wp with wp_tail = auto_wp_tail (50%) of the launch handed out on demand, since a split
//     fixed at the launch's start holds the launch up by the whole of a device's slowdown (single-
//     threaded PoCL devices on the 16 vCPUs of the device machine change pace from launch to launch
//     as their threads share cores: a matmul launch over 8 took 70 ms under wp after 51 ms
//     under sigmoid);
//  3. else, when the History's chunk-time fits of the kernel (other sizes) show a per-chunk overhead
//     above auto_overhead_fraction (1%) of the predicted launch time                 -> boyer
//     (about 3 chunks per device instead of sigmoid's 5-15);
//  4. else (no history, or cheap chunks)                                              -> sigmoid.
// Re-measuring: when a wp launch ends with a load balance (first finish / last finish) under
// auto_rebalance_below (0.8) right after a wp launch that was balanced better, the machine changed
// (another job took a device, clocks dropped): the next launch runs sigmoid, which measures within the
// launch, and wp then starts again from the throughputs it measured rather than from its old shares.
// Before delegating it eliminates devices that would not pay: from each device's fitted chunk-time
// model (History samples of the kernel, a + b * x) the launch is split for equal finish times with the
// per-chunk overhead a counted (split_math.h); a device whose share comes out under one group, or
// under auto_min_share of the launch, gets nothing. A device without samples is kept (nothing is
// known against it).
// Then the split those devices would make is weighed against not splitting, from measurement: the
// History keeps the wall time of whole split launches per set of devices taking part (job start to
// end of merge, as the executor sees it). When the split over that set took more than
// (1 - auto_min_gain) x home alone (estimated from home's chunks at this size, without their
// transfer part: home_alone_seconds, auto_gate.cpp), home gets everything (the executor then does
// not split at all).
// Chunk models see only chunks: the host-copy refresh, the hand-offs between device threads, read-backs
// and the merge lie outside them; on an H100 beside a CPU 300x slower, 1 ms launches of
// benchmarks/jacobi took several ms split while the models predicted a gain (0.18x the GPU alone).
// Probes: at launch probe_interval x 1, 2, 4, 8, ... of the kernel and size in this run (counted from
// History::probe_origin) no device is eliminated,
// so that a device that became worth it is seen again (the gaps double so that one that never pays
// costs ever less); when the split the models pick was measured not to pay, the probe makes that
// split, so that its measurement is renewed. A probe is skipped while the split it would make was
// last measured to cost more, beyond home alone, than auto_probe_cost (5%) of home's time over the
// launches since the previous probe: the doubling gaps then let it come once enough launches pay for it.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>

#include "sched/history.h"
#include "sched/policy.h"
#include "sched/policy_params.h"

namespace coex::sched {

// Rules 1-4 above, for the devices in `devices`: "sigmoid", "boyer", "wp" or "wp+tail".
bool splits_by_shares(const std::string& choice);  // wp or wp+tail

std::string auto_choice(const History& history, const LaunchShape& shape, const std::vector<int>& devices,
                        const PolicyParams& params);

// Whether this launch is one of the probes (launch probe_interval x 1, 2, 4, ... of the kernel and size).
bool auto_probe(const History& history, const LaunchShape& shape, const PolicyParams& params);
// The same by the launch's number counted from where the probes count (a streak of auto_probe_streak
// from each probe_interval x 1, 2, 4, ...).
bool is_probe_number(uint64_t launches, const PolicyParams& params);
// What the launch would take on home alone, unsplit: home's measured time where there is one, else an
// estimate from home's chunks at this size (auto_gate.cpp); nullopt without either.
std::optional<double> home_alone_seconds(const History& history, const LaunchShape& shape);

// The devices of `devices` that pay for their overhead on this launch (see above).
std::vector<int> auto_paying_devices(const History& history, const LaunchShape& shape, const std::vector<int>& devices,
                                     const PolicyParams& params);
// The same, with the measurements it came from (the report's verdict).
GateVerdict auto_gate(const History& history, const LaunchShape& shape, const std::vector<int>& devices,
                      const PolicyParams& params);

// What the gate reads of the History's fits, apart from the probe rule: it changes only when
// History::evidence_version() does.
struct GateEvidence {
  std::vector<int> paying;    // the devices that pay by their chunk-time models
  bool not_worth_it = false;  // the split over `paying` was measured not to pay
  // How many splits over `paying` at this size were measured right after a split of it by the same
  // choice (History::steady_splits_measured, at most three); the others followed other launches (a
  // switch).
  size_t steady_splits = 0;
  uint64_t splits = 0;  // splits over `paying` measured at this size, steady or not (History::splits_measured)
  std::optional<double> split_seconds;
  std::optional<double> home_seconds;
  // The set the three figures above are of: `paying`, or a set within it measured hopeless when
  // `paying` was not measured (the gate's verdict then stands on that one's).
  std::vector<int> measured;
  // Where `paying` was measured not to pay at a larger size alone (History::split_above): that split.
  std::optional<History::SplitAbove> above;
  // Where `paying` was measured by a cold split alone, whose devices waited for their data at least
  // kHopelessSwitch times home alone, and the app wrote the launch's buffers since (History::
  // ColdTransfers): split_seconds is that wait, a bound from below of the next split.
  bool cold_transfers = false;
};
GateEvidence gate_evidence(const History& history, const LaunchShape& shape, const std::vector<int>& devices,
                           const PolicyParams& params);
GateVerdict auto_gate(const History& history, const LaunchShape& shape, const std::vector<int>& devices,
                      const PolicyParams& params, const GateEvidence& evidence);

class AutoPolicy : public Policy {
 public:
  AutoPolicy(const PolicyParams& params, std::shared_ptr<History> history, const std::vector<DeviceProfile>& profiles);

  std::string name() const override { return "auto"; }
  void begin_launch(const LaunchShape& shape, const std::vector<int>& devices, double now) override;
  std::optional<Chunk> next_chunk(int device, double now) override;
  void chunk_done(const ChunkTiming& timing) override;
  void end_launch(double now) override;
  std::vector<Chunk> take_abandoned() override;
  std::string planned_by() const override;
  std::vector<int> eliminated() const override;
  std::optional<RegularityVerdict> regularity() const override {
    return active_ ? active_->regularity() : std::nullopt;
  }
  // The policy picked for this launch takes it (sigmoid and hguided do), and it joins the devices that
  // pay.
  bool add_device(int device, double now) override;
  void expect_late_devices(const std::vector<int>& devices) override { late_devices_ = devices; }
  bool takes_late_devices() const override { return true; }
  void device_taken_over(int device, double now) override {
    if (active_) active_->device_taken_over(device, now);
  }
  // Keeps the wall time of a split launch in the History, under the devices auto let take part.
  void launch_measured(double seconds) override;
  // Launches run on home while the analysis and the builds go on (docs/design.md, "One-time costs").
  bool waits_for_preparation() const override { return false; }
  // "one_device_pays": the devices that pay are home alone (auto_paying_devices), so the launch runs
  // on home at the cost of a plain launch, and is still counted, so that the periodic probe comes
  // round. "split_being_measured": a split of this kernel and size is in flight and no split over
  // the devices that pay has been measured yet: an iterative app enqueues its launches long before
  // the first ends (benchmarks/jacobi: 100 launches of 1 ms in a row), and each would be split on
  // what was known before it. Otherwise the launch is numbered (History::plan_launch).
  const char* unsplit_reason(LaunchShape& shape, const std::vector<int>& devices,
                             GateVerdict* verdict = nullptr) const override;
  // "one_device_pays" stands while the evidence is unchanged, except at a probe.
  bool unsplit_again(const LaunchShape& shape, const std::string& reason, GateVerdict* verdict) const override;

 private:
  // Times a steady launch by wp's shares (with the tail or without) and keeps the faster choice once
  // both have kChoiceTimes.
  void weigh_tail(double seconds);
  static constexpr size_t kChoiceTimes = 8;
  // Whether the models say `device` pays beside the devices `paying` in a launch of `shape`.
  bool pays_beside(const LaunchShape& shape, const std::vector<int>& paying, int device) const;
  // gate_evidence, kept per kernel, size, home and devices until the History's evidence changes; while
  // it says the split pays by a margin (stands_while_splitting), for kEvidenceReuses launches more.
  GateEvidence memoized_evidence(const LaunchShape& shape, const std::vector<int>& devices) const;

  // Kernel, global size, work-groups along the split dimension (the fits read them), home, devices,
  // home's measured time (-1: none).
  using EvidenceKey = std::tuple<std::string, uint64_t, uint64_t, int, std::vector<int>, double>;
  struct KeptEvidence {
    uint64_t version = 0;  // the History's evidence_version it was fitted at
    GateEvidence evidence;
    uint64_t reuses = 0;  // launches it served since, the History having learnt more
  };
  static constexpr size_t kEvidenceMemoEntries = 256;
  static constexpr uint64_t kEvidenceReuses = 7;
  mutable std::mutex evidence_mutex_;  // unsplit_reason is called from the app's threads
  mutable std::map<EvidenceKey, KeptEvidence> evidence_memo_;

  PolicyParams params_;
  std::shared_ptr<History> history_;
  std::vector<DeviceProfile> profiles_;
  std::vector<int> kinds_;  // device_kinds(profiles_): LaunchShape::device_kinds where the caller set none
  std::map<std::string, std::unique_ptr<Policy>> inner_;  // by name; what carries across launches is in the History
  Policy* active_ = nullptr;
  std::string choice_;
  std::vector<int> dropped_;
  std::vector<int> paying_;        // the devices handed to the policy picked, in this launch
  std::vector<int> late_devices_;  // expected to join the next launch (expect_late_devices)
  LaunchShape shape_;              // this launch's
  int home_ = -1;
  std::pair<std::string, uint64_t> key_;
  std::map<int, double> finish_;               // per device, end of its last chunk in this launch
  bool cold_ = false;                          // some chunk was a device's first run of the kernel (compiled then)
  bool same_layout_ = false;                   // the last split of the kernel and size was planned by the same choice
  double away_seconds_ = 0;                    // this launch's chunks on devices other than home: their time
  std::map<int, double> transfers_by_device_;  // and the part of it spent moving data, by device
};

}  // namespace coex::sched
