// static: one contiguous chunk per device, in device-index order, the same ranges for the same launch
// shape every time (data stays where it was computed for iterative kernels).
// Weights: equal, ratio (PolicyParams::weights) or spec (spec_weight: compute units x clock, or memory
// bandwidth for memory-bound kernels). A device whose weight is 0 or whose share rounds to no group
// gets nothing.
#pragma once

#include "sched/policy_base.h"

namespace coex::sched {

// The weights static uses for `devices` (indices, ascending) under `params`.
std::vector<double> static_weights(const PolicyParams& params, const std::vector<DeviceProfile>& devices);

class StaticPolicy : public PolicyBase {
 public:
  StaticPolicy(const PolicyParams& params, std::shared_ptr<History> history,
               const std::vector<DeviceProfile>& profiles);
  // The user fixed the shares: only a stall is taken over.
  bool guesses_pace_by_specification() const override { return false; }

 protected:
  void on_begin(double now) override;
  uint64_t choose_size(DeviceState& device, double now) override;
};

}  // namespace coex::sched
