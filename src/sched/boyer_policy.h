// boyer: Boyer, Skadron, Che, Jayasena, "Load balancing in a changing world: dealing with heterogeneity
// and performance variability", CF'13.
//  1. Each device's first chunk is beta (7%) of the launch; each later chunk on a device is delta (1.5x)
//     its last one, until every device has completed gamma (2) chunks.
//  2. Then what remains is split into one final chunk per device so that all finish together, counting
//     the time left on chunks still running: lambda_i = Omega_i * U_i - T_i (Omega_i: seconds per group
//     measured in this launch, U_i: groups of the running chunk, T_i: time it has run). N devices:
//     water-filling; a device whose share comes out negative is dropped. Each share is rounded down or
//     up, whichever gives the earlier predicted finish (split_math.h).
//  3. Stuck-device rule: when a device asks and nothing is left, a device that has completed nothing
//     in this launch loses its running chunk to the asker (take_abandoned() reports it).
#pragma once

#include "sched/policy_base.h"

namespace coex::sched {

struct BoyerDevice {
  double omega = 0;              // measured seconds per group
  uint64_t running_groups = 0;   // U_i, 0 when idle
  double running_elapsed = 0;    // T_i
};

// lambda_i = Omega_i * U_i - T_i, never below 0 (a chunk already late is taken to end now).
double boyer_lambda(const BoyerDevice& device);

// The final split of `remaining` groups (step 2 above); count_running = false ignores lambda (the
// ablation the docs compare against). *lambdas receives the lambda used per device.
std::vector<uint64_t> boyer_final_split(const std::vector<BoyerDevice>& devices, uint64_t remaining,
                                        bool count_running, std::vector<double>* lambdas = nullptr);

class BoyerPolicy : public PolicyBase {
 public:
  BoyerPolicy(const PolicyParams& params, std::shared_ptr<History> history,
              const std::vector<DeviceProfile>& profiles);

 protected:
  void on_begin(double now) override;
  uint64_t choose_size(DeviceState& device, double now) override;
  std::optional<Chunk> reclaim(DeviceState& asker, double now) override;

 private:
  void split_rest(double now);
  bool final_phase_ = false;
};

}  // namespace coex::sched
