// Policy objects for split launches. Each split launch gets a policy object of its own, shared with
// the threads that run its chunks (a device abandoned in one launch may report after it ended); once
// every holder has let go, the object serves a later launch. What a policy keeps from one launch to
// the next is in the History: begin_launch starts each launch afresh (docs/schedulers.md, "The
// contract").
// Made new per launch, auto's objects cost a launch over fifteen devices about a third of the
// scheduler's instructions in allocations alone (docs/performance.md, "The scheduler's work").
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "sched/policy.h"

namespace coex::sched {

class LaunchPolicies {
 public:
  using Make = std::function<std::unique_ptr<Policy>()>;
  explicit LaunchPolicies(Make make);

  // One that no launch holds any longer, else a new one (nullptr where `make` gives none). It comes
  // back here when its last holder lets go, on whichever thread that is; after this object is gone,
  // it is deleted then.
  std::shared_ptr<Policy> acquire();

 private:
  struct Idle {
    std::mutex mutex;
    std::vector<std::unique_ptr<Policy>> policies;
  };
  // Launches run one at a time: more than a few idle objects means abandoned devices returned late.
  static constexpr size_t kMostIdle = 4;

  Make make_;
  std::shared_ptr<Idle> idle_;
};

}  // namespace coex::sched
