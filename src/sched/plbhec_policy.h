// plbhec: Sant'Ana, Cordeiro, Camargo, "PLB-HeC: a profile-based load-balancing algorithm for
// heterogeneous CPU-GPU clusters", CLUSTER'15.
//  1. Profiling rounds: in round r the fastest device's block is b0 * 2^r (b0 = initial fraction of the
//     launch); every other device's block is sized by its speed relative to the fastest, so that all
//     finish a round at about the same time while the sizes vary enough to fit a curve.
//  2. Per device a time model T_i(x) = a_i + b_i * x, least squares, increasing (a >= 0, b > 0). The
//     paper fits richer curves and solves the equal-time system with an interior-point method; with
//     affine curves the system has the closed form of split_math.h (equal_finish_split, overhead = a_i).
//  3. The rest is split for equal finish times with sum x = W, counting the time left on running chunks.
//  4. Across launches of the same kernel and size the fitted models are reused without profiling (the
//     ones fitted in the last profiling of the kernel and size in this process, kept in the History,
//     since the executor makes a policy object per launch; else fits of the History's samples); when
//     the devices' finish times drift apart by more than the threshold (relative to the latest
//     finish) the next launch profiles again, and only its own samples make the new models.
#pragma once

#include <map>

#include "sched/policy_base.h"
#include "sched/split_math.h"

namespace coex::sched {

// Step 3: models[i] with lambda[i] seconds still committed; returns whole groups summing to `work`.
std::vector<uint64_t> plbhec_split(const std::vector<AffineModel>& models, const std::vector<double>& lambda,
                                   uint64_t work);

class PlbhecPolicy : public PolicyBase {
 public:
  PlbhecPolicy(const PolicyParams& params, std::shared_ptr<History> history,
               const std::vector<DeviceProfile>& profiles);

 protected:
  void on_begin(double now) override;
  uint64_t choose_size(DeviceState& device, double now) override;
  void on_end(double now) override;

 private:
  AffineModel model_of(const DeviceState& device);
  void split_rest(double now);
  bool profiling_ = true;
  std::map<int, AffineModel> models_;  // fitted in the last profiling, per device (History::PlbhecTrack)
};

}  // namespace coex::sched
