// hguided: the heterogeneous guided scheduler of Pérez, Bosque, Beivide (EngineCL / Maat):
//   chunk_i = max(min_chunk, floor(R * P_i / (k * sum_j P_j)))
// with R the groups not yet handed out, P_i the device's computing power and k = 2. The paper takes P_i
// from the user ("tuned"); here P_i is the measured throughput once every device has one, before that
// the history's, before that device info. min_chunk: min_chunk_groups, or the occupancy floor.
#pragma once

#include "sched/policy_base.h"

namespace coex::sched {

uint64_t hguided_chunk(uint64_t remaining, double power, double power_sum, double k, uint64_t min_chunk);

class HguidedPolicy : public PolicyBase {
 public:
  HguidedPolicy(const PolicyParams& params, std::shared_ptr<History> history,
                const std::vector<DeviceProfile>& profiles);

 protected:
  uint64_t choose_size(DeviceState& device, double now) override;
  bool hands_out_on_demand() const override { return true; }
};

}  // namespace coex::sched
