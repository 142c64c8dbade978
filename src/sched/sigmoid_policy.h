// sigmoid: Pérez, Stafford, Bosque, Beivide, "Sigmoid: an auto-tuned load balancing algorithm for
// heterogeneous systems", JPDC 157 (2021).
//   package_i = (G / (2N)) * (S_i / sum_j S_j) * tanh(3k * G_r / G)
// G: work-groups of the launch, N: devices, G_r: groups not yet handed out, S_i: the device's speed,
// the mean of its last 3 package speeds (initially from the history, else from device info).
// k = 2 for regular kernels; k switches to 0.5 for the rest of the launch as soon as sigma/mean of a
// device's last 3 package speeds exceeds 0.25; from then on S_i is the pace of the device's kind over
// the launch's packages (docs/schedulers.md, "sigmoid"). A device's first run of the kernel is left
// out of its speeds (the driver's one-time work). For later launches the History keeps the kernel irregular when
// the packages' paces also followed the range (sched/range_variation.h); each launch judges again.
// Floor: max(p * t_elapsed * S_i, occupancy floor), p = 0.05 (the first term only once S_i is in
// groups per second, i.e. measured or from the history).
#pragma once

#include <optional>
#include <set>

#include "sched/policy_base.h"

namespace coex::sched {

double sigmoid_package(double total_groups, size_t devices, double speed, double speed_sum, double k,
                       double remaining_groups);

class SigmoidPolicy : public PolicyBase {
 public:
  SigmoidPolicy(const PolicyParams& params, std::shared_ptr<History> history,
                const std::vector<DeviceProfile>& profiles);
  double current_k() const { return irregular_ ? params().sigmoid_irregular_k : params().sigmoid_k; }
  std::optional<RegularityVerdict> regularity() const override { return verdict_; }

 protected:
  void on_begin(double now) override;
  uint64_t choose_size(DeviceState& device, double now) override;
  bool hands_out_on_demand() const override { return true; }
  void on_chunk_done(DeviceState& device, const ChunkTiming& timing) override;
  void on_end(double now) override;

 private:
  double window_speed(const DeviceState& device) const;
  // Groups per second over the warm packages of this launch run by the devices of `device`'s kind
  // (window_speed where they ran none yet).
  double kind_speed(const DeviceState& device);
  bool irregular_ = false;
  bool judged_ = false;       // some device ran a full window of packages: regularity can be told
  bool spread_seen_ = false;  // in this launch, a device's window of packages varied beyond the threshold
  std::optional<RegularityVerdict> verdict_;  // the last launch's, when it judged
};

}  // namespace coex::sched
