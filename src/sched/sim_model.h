// The simulator's physics: what a range of work-groups costs, and how long a modelled device takes
// for it when its speed changes over (simulated) time.
#pragma once

#include <cstdint>
#include <vector>

#include "sched/sim_scenario.h"

namespace coex::sched {

// Cost of every work-group, as prefix sums: cost(begin, end) in O(1). Normalised to a mean of 1.
class CostModel {
 public:
  CostModel(const SimKernel& kernel, uint64_t seed);
  double cost(uint64_t begin, uint64_t end) const { return prefix_[end] - prefix_[begin]; }
  double total() const { return prefix_.back(); }
  uint64_t groups() const { return prefix_.size() - 1; }

 private:
  std::vector<double> prefix_;
};

// Per-group costs before normalisation (exposed for the tests of the profiles).
std::vector<double> raw_costs(const CostProfile& profile, uint64_t groups, uint64_t seed);

// Speed factor over global simulated time: piecewise constant, 1 before the first change.
class SpeedTimeline {
 public:
  void set(double at, double factor);  // from `at` on, until the next breakpoint
  double factor_at(double t) const;
  // Work done by a device of base speed `speed` between t0 and t1.
  double work_between(double t0, double t1, double speed) const;
  // When `work` starting at `start` is done; +inf if the device stalls before that.
  double finish_time(double start, double work, double speed) const;
  // Breakpoints after t, in order (for the ideal makespan).
  std::vector<double> breakpoints_after(double t) const;

 private:
  std::vector<std::pair<double, double>> points_;  // (time, factor), sorted by time
};

// The ideal makespan from t0: all devices busy from t0 until the same instant, no latency, no
// transfers, no noise, the work divided perfectly: the T with sum_i work_i(t0, t0 + T) = total.
// +inf when the devices together never get it done (all stalled).
double ideal_makespan(const std::vector<SpeedTimeline>& timelines, const std::vector<double>& speeds, double t0,
                      double total_work);

}  // namespace coex::sched
