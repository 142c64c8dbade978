// predict: Dollinger & Loechner, "CPU+GPU load balance guided by execution time prediction", IMPACT'15.
//  - A time model per device and kernel: the compute time of a chunk as a function of its size,
//    T_i(x) = a_i + b_i * x (the time per work-group a_i / x + b_i falls with the chunk size: launch
//    overhead amortised), plus the transfer time x * (in_bytes / h2d + out_bytes / d2h) from the measured
//    bandwidth in each direction. Learned from earlier launches (the History's chunk samples, this size
//    first, else any size of the kernel) or, when a device has none, from a calibration run: probes of
//    c, 2c, 4c groups per device (predict_calibration_fraction of the launch in all; a device
//    goes on doubling while another has no finished probe yet), then the model split of the rest.
//  - The split is refined iteratively towards equal predicted times (at most predict_max_steps = 15
//    Newton steps on the models; affine models converge in one or two).
//  - A device whose share is under predict_eliminate (10%) of the largest share is eliminated.
//  - The split is static: one contiguous chunk per device, in device-index order.
#pragma once

#include "sched/policy_base.h"
#include "sched/split_math.h"

namespace coex::sched {

struct PredictModel {
  AffineModel compute;
  double transfer_per_group = 0;  // seconds
  double time(double groups) const { return compute.a + (compute.b + transfer_per_group) * groups; }
  bool valid() const { return compute.valid; }
};

struct PredictSplit {
  std::vector<uint64_t> groups;
  std::vector<bool> eliminated;
  int steps = 0;
  double predicted_finish = 0;
};

PredictSplit predict_split(const std::vector<PredictModel>& models, const std::vector<double>& lambda, uint64_t work,
                           int max_steps, double elimination, double tolerance);

// The model of one device from (groups, seconds, transfer seconds) samples: when the samples carry
// their transfer time, compute is fitted without it and the transfer term comes from the bandwidth
// (or, unknown, from the measured transfer time per group); otherwise the fit is of the whole time.
PredictModel predict_model(const std::vector<ChunkSample>& samples, const DeviceProfile& profile,
                           const LaunchShape& shape);

class PredictPolicy : public PolicyBase {
 public:
  PredictPolicy(const PolicyParams& params, std::shared_ptr<History> history,
                const std::vector<DeviceProfile>& profiles);
  int last_steps() const { return steps_; }

 protected:
  void on_begin(double now) override;
  uint64_t choose_size(DeviceState& device, double now) override;

 private:
  void split_rest(double now);
  bool calibrating_ = false;
  int steps_ = 0;
};

}  // namespace coex::sched
