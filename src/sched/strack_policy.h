// jitp, wp, ess: the partitioning strategies of Strack (2020) for successive launches of one kernel.
// Each launch is a static split (one contiguous chunk per device, device-index order) by shares p_i;
// after the launch the shares move towards the measured throughput ratio:
//   p_i <- omega * p_i + (1 - omega) * (w_i / t_i) / sum_j (w_j / t_j)
// with w_i the groups and t_i the seconds of device i in that launch.
//  - jitp (just-in-time partitioning): omega = 0, the last launch's ratio is used as is;
//  - wp (weighted partitioning): omega = wp_omega (0.5);
//  - ess: the mean of the ratios of the first ess_launches (10) launches, then frozen.
// The shares live in the History, per (kernel, size), so they carry across policy objects and runs.
// Guards: a device whose share falls to no group gets 0 and is probed with probe_share every
// probe_interval launches; a launch with a device measured at t ~ 0 (under 1 ns) updates nothing.
// wp_tail (coex's, 0 by default): only the launch less a tail of that fraction is split by the shares;
// the tail goes on demand in HGuided's shrinking chunks, so a device whose pace changed since its
// share was measured (CPU cores shared with other threads) does not hold the launch up by all of it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sched/history.h"
#include "sched/policy_base.h"

namespace coex::sched {

enum class StrackMode { kJitp, kWp, kEss };

struct StrackMeasure {
  double groups = 0;
  double seconds = 0;
};

// The update above for the devices in `used` (the shares this launch ran with). Devices without a
// measurement keep their share; the measured ones share the rest by their throughput ratio.
// Returns `used` unchanged when a measured time is ~0.
DeviceShares strack_update(const DeviceShares& used, const DeviceMap<StrackMeasure>& measured, double omega);

// Whether shares `next` (wp's running update) should replace `used` (the layout a launch of devices of
// one kind ran with), over `groups` work-groups set aside by shares: where they give the same groups,
// or where those groups would finish the launch more than 5% sooner by `next`'s estimate of the
// devices' paces.
bool worth_moving(const DeviceShares& used, const DeviceShares& next, uint64_t groups);
// The same comparison, told apart: `next` gives each device the same groups (kSame), moves groups for
// a gain of `least_gain` or more or must move them (other devices; a device measured to pay nothing)
// (kMoves), or moves them for less (kNotWorth).
enum class LayoutMove { kSame, kMoves, kNotWorth };
constexpr double kLeastLayoutGain = 0.05;
LayoutMove compare_layouts(const DeviceShares& used, const DeviceShares& next, uint64_t groups,
                           double least_gain = kLeastLayoutGain);

// Moves that pay: each move of wp's layout between devices of one kind is judged by the launches
// around it (each launch's time to its devices' end): the median of the kLayoutJudged launches
// before it against those after the launch that ran the new layout first, which pays the move (rows
// fetched, footprints evaluated afresh). A move whose gain over kLayoutHorizon launches falls short of
// its cost doubles the gain the next must promise (up to kMostLayoutGain); one that pays halves it
// (down to kLeastLayoutGain). Over 15 single-threaded PoCL devices on the device machine jacobi's
// layout had moved at 69 of 289 launches, each such launch 0.45 ms longer than the others, chasing
// paces that the cores' sharing changed from one moment to the next. No move while one is judged.
constexpr size_t kLayoutJudged = 4;
constexpr double kLayoutHorizon = 8;
constexpr double kMostLayoutGain = 0.4;
// Takes this launch's time into `track`; whether the layout may move after this launch.
bool layout_may_move(History::LayoutTrack& track, double seconds);
// The layout moves after this launch (whose time layout_may_move took).
void layout_moves(History::LayoutTrack& track);
// The gain a move must promise now.
double least_layout_gain(const History::LayoutTrack& track);

// Shares of `devices` by their median pace over their last 16 chunks of the kernel at this size
// (History::samples: any policy's, the History file's too), each chunk's time less its moves of data
// (at least a tenth of it left), the median weighed by the chunks' groups: a lasting difference
// between devices of one kind, which one launch's noise or a slow chunk does not move. Empty where some
// device has fewer than 8 chunks there.
DeviceShares median_paced_shares(const History& history, const std::string& kernel_key, uint64_t global_size,
                                 const std::vector<int>& devices);

class StrackPolicy : public PolicyBase {
 public:
  StrackPolicy(StrackMode mode, const PolicyParams& params, std::shared_ptr<History> history,
               const std::vector<DeviceProfile>& profiles);

 protected:
  void on_begin(double now) override;
  uint64_t choose_size(DeviceState& device, double now) override;
  void on_end(double now) override;

 private:
  uint64_t tail_groups() const;  // of the launch: handed out on demand (wp_tail)
  static void normalize(DeviceShares& shares);  // to a sum of 1 (unchanged when it is 0)
  // The layout of the next launch of devices of one kind (wp), from the running update `next`, for a
  // gain of `least_gain` at least; *moved: it gives some device other groups.
  DeviceShares next_layout(const DeviceShares& next, double least_gain, bool* moved);

  StrackMode mode_;
  DeviceShares used_;  // shares of the current launch
  // Devices of one kind: the layout this launch was split by, less a probe's share (on_begin): what
  // the next launch keeps where the layout does not move.
  DeviceShares layout_;
  // wp's running shares (the History's `shares`), normalized; devices of one kind split by
  // History::layout_shares, which follows them only for a gain.
  DeviceShares running_;
  // The launch's devices are of one kind (LaunchShape::device_kinds): they start from equal shares,
  // and their shares move by their chunks' time less its moves of data.
  bool one_kind_ = false;
};

}  // namespace coex::sched
