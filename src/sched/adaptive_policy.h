// adaptive: probe, then split. Each device runs adaptive_probes (3) probe chunks that grow
// geometrically (adaptive_probe_fraction of the launch, times adaptive_growth each time); as soon as
// one device has run all its probes and every device has finished at least one (until then it goes on
// probing, growing), the rest of the launch is split once, for equal finish times, from
// each device's speed on its latest (largest) probe, counting the time left on running probes
// (the equal-finish split of split_math.h). Differs from boyer in that it does not wait for every
// device to finish gamma chunks and that it trusts the latest probe rather than the launch so far.
#pragma once

#include "sched/policy_base.h"

namespace coex::sched {

class AdaptivePolicy : public PolicyBase {
 public:
  AdaptivePolicy(const PolicyParams& params, std::shared_ptr<History> history,
                 const std::vector<DeviceProfile>& profiles);

 protected:
  void on_begin(double now) override;
  uint64_t choose_size(DeviceState& device, double now) override;

 private:
  bool split_done_ = false;
};

}  // namespace coex::sched
