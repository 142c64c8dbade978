// Creating a policy by the name the config's "policy" key (or COEX_POLICY) gives.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sched/history.h"
#include "sched/policy.h"
#include "sched/policy_params.h"

namespace coex::sched {

// nullptr for an unknown name. `history` may be null: the policy then keeps a private one, so what it
// learns still carries across the launches it plans. `profiles` describe the devices by index.
std::unique_ptr<Policy> make_policy(const std::string& name, const PolicyParams& params,
                                    std::shared_ptr<History> history, const std::vector<DeviceProfile>& profiles);

// Every name make_policy accepts, in the order the docs list them.
const std::vector<std::string>& policy_names();

}  // namespace coex::sched
