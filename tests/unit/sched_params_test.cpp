// PolicyParams: the policies' parameters are settings (config/settings_list.h, COEX_POLICY_PARAM):
// their defaults, setting one by name as a scenario does, with the settings' checks and words; the
// policy names.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "config/settings.h"
#include "sched/policy_factory.h"
#include "sched/policy_params.h"

namespace coex::sched {
namespace {

TEST(PolicyParams, DefaultsOfThePapers) {
  const PolicyParams p;
  EXPECT_DOUBLE_EQ(p.boyer_beta, 0.07);
  EXPECT_DOUBLE_EQ(p.boyer_delta, 1.5);
  EXPECT_EQ(p.boyer_gamma, 2);
  EXPECT_DOUBLE_EQ(p.plbhec_drift, 0.5);
  EXPECT_DOUBLE_EQ(p.wp_omega, 0.5);
  EXPECT_EQ(p.ess_launches, 10);
  EXPECT_DOUBLE_EQ(p.hguided_k, 2);
  EXPECT_DOUBLE_EQ(p.adaptive_probe_fraction, 0.01);
  EXPECT_DOUBLE_EQ(p.sigmoid_k, 2);
  EXPECT_DOUBLE_EQ(p.sigmoid_irregular_k, 0.5);
  EXPECT_DOUBLE_EQ(p.sigmoid_cv_threshold, 0.25);
  EXPECT_EQ(p.sigmoid_window, 3);
  EXPECT_DOUBLE_EQ(p.sigmoid_floor_p, 0.05);
  EXPECT_EQ(p.predict_max_steps, 15);
  EXPECT_DOUBLE_EQ(p.predict_eliminate, 0.1);
  EXPECT_EQ(p.static_mode, "equal");
}

// Every parameter, by its setting's name, takes its own default back; a real run sets it through
// COEX_<NAME> like any setting.
TEST(PolicyParams, EveryParameterIsASettingOfItsName) {
  std::set<std::string> names;
  for (const config::SettingInfo& info : config::setting_infos()) {
    if (!info.policy_param) continue;
    EXPECT_TRUE(names.insert(info.name).second) << "listed twice: " << info.name;
    PolicyParams p;
    std::string error;
    EXPECT_TRUE(config::set_policy_param(p, info.name, info.default_value, error)) << info.name << ": " << error;
    config::Settings settings;
    static_cast<PolicyParams&>(settings) = p;
    EXPECT_EQ(info.to_json(settings), info.default_value) << info.name;
  }
  EXPECT_GE(names.size(), 30u);

  const std::map<std::string, std::string> env = {{"COEX_ADAPTIVE_PROBES", "5"}, {"COEX_MEMORY_BOUND", "yes"}};
  const config::LoadResult loaded = config::load_settings([&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
  EXPECT_TRUE(loaded.errors.empty());
  const PolicyParams& from_env = loaded.settings;
  EXPECT_EQ(from_env.adaptive_probes, 5);
  EXPECT_TRUE(from_env.memory_bound);
}

TEST(PolicyParams, SetsAndRejectsInTheSettingsWords) {
  PolicyParams p;
  std::string error;
  EXPECT_TRUE(config::set_policy_param(p, "boyer_beta", 0.1, error));
  EXPECT_EQ(p.boyer_beta, 0.1);
  EXPECT_TRUE(config::set_policy_param(p, "weights", nlohmann::json::array({1, 0, 2.5}), error));
  EXPECT_EQ(p.weights, (std::vector<double>{1, 0, 2.5}));
  EXPECT_TRUE(config::set_policy_param(p, "memory_bound", true, error));
  EXPECT_TRUE(p.memory_bound);
  EXPECT_TRUE(config::set_policy_param(p, "min_chunk_groups", 64, error));
  EXPECT_EQ(p.min_chunk_groups, 64);
  EXPECT_TRUE(config::set_policy_param(p, "static_mode", "Ratio", error));
  EXPECT_EQ(p.static_mode, "ratio");

  EXPECT_FALSE(config::set_policy_param(p, "boyer_beta", 0, error));  // beta must be > 0
  EXPECT_EQ(error, "0 is not a number in (0, 1]");
  EXPECT_EQ(p.boyer_beta, 0.1);  // unchanged
  // A config file's error line for the same value ends in the same words.
  config::Settings settings;
  std::vector<std::string> lines;
  config::apply_json_text(R"({"boyer_beta": 0})", "config x.json", settings, lines);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "coex: config x.json: key \"boyer_beta\": " + error);

  EXPECT_FALSE(config::set_policy_param(p, "boyer_gamma", 1.5, error));
  EXPECT_FALSE(config::set_policy_param(p, "wp_omega", "0.5", error));  // JSON types as in a config file
  EXPECT_EQ(error, "\"0.5\" is not a number in [0, 1]");
  EXPECT_FALSE(config::set_policy_param(p, "static_mode", "fast", error));
  EXPECT_NE(error.find("one of equal, ratio, spec"), std::string::npos) << error;
  EXPECT_FALSE(config::set_policy_param(p, "no_such", 1, error));
  EXPECT_NE(error.find("unknown policy parameter \"no_such\""), std::string::npos) << error;
  EXPECT_FALSE(config::set_policy_param(p, "wp_omegaa", 1, error));
  EXPECT_NE(error.find("did you mean \"wp_omega\"?"), std::string::npos) << error;
  EXPECT_FALSE(config::set_policy_param(p, "policy", "boyer", error));  // a setting, not a parameter
  EXPECT_NE(error.find("unknown policy parameter \"policy\""), std::string::npos) << error;
}

TEST(PolicyFactory, EveryNameMakesItsPolicyUnknownIsNull) {
  for (const auto& name : policy_names()) {
    auto p = make_policy(name, PolicyParams{}, nullptr, {});
    ASSERT_NE(p, nullptr) << name;
    EXPECT_EQ(p->name(), name);
  }
  EXPECT_EQ(make_policy("fastest", PolicyParams{}, nullptr, {}), nullptr);
  EXPECT_EQ(policy_names().size(), 11u);
}

}  // namespace
}  // namespace coex::sched
