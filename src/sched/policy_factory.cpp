#include "sched/policy_factory.h"

#include "sched/adaptive_policy.h"
#include "sched/auto_policy.h"
#include "sched/boyer_policy.h"
#include "sched/hguided_policy.h"
#include "sched/plbhec_policy.h"
#include "sched/predict_policy.h"
#include "sched/sigmoid_policy.h"
#include "sched/static_policy.h"
#include "sched/strack_policy.h"

namespace coex::sched {

std::unique_ptr<Policy> make_policy(const std::string& name, const PolicyParams& params,
                                    std::shared_ptr<History> history, const std::vector<DeviceProfile>& profiles) {
  if (!history) history = std::make_shared<History>();
  if (name == "static") return std::make_unique<StaticPolicy>(params, history, profiles);
  if (name == "boyer") return std::make_unique<BoyerPolicy>(params, history, profiles);
  if (name == "plbhec") return std::make_unique<PlbhecPolicy>(params, history, profiles);
  if (name == "jitp") return std::make_unique<StrackPolicy>(StrackMode::kJitp, params, history, profiles);
  if (name == "wp") return std::make_unique<StrackPolicy>(StrackMode::kWp, params, history, profiles);
  if (name == "ess") return std::make_unique<StrackPolicy>(StrackMode::kEss, params, history, profiles);
  if (name == "hguided") return std::make_unique<HguidedPolicy>(params, history, profiles);
  if (name == "adaptive") return std::make_unique<AdaptivePolicy>(params, history, profiles);
  if (name == "sigmoid") return std::make_unique<SigmoidPolicy>(params, history, profiles);
  if (name == "predict") return std::make_unique<PredictPolicy>(params, history, profiles);
  if (name == "auto") return std::make_unique<AutoPolicy>(params, history, profiles);
  return nullptr;
}

const std::vector<std::string>& policy_names() {
  static const std::vector<std::string> names = {"static", "boyer",    "plbhec",  "jitp",    "wp",  "ess",
                                                 "hguided", "adaptive", "sigmoid", "predict", "auto"};
  return names;
}

}  // namespace coex::sched
