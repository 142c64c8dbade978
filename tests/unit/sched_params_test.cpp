// PolicyParams: every field listed with its default, parsing and errors, the policy names.
#include <gtest/gtest.h>

#include <set>

#include "sched/policy_factory.h"
#include "sched/policy_params.h"

namespace coex::sched {
namespace {

std::string default_of(const std::string& name) {
  for (const auto& i : policy_param_info())
    if (i.name == name) return i.default_value;
  return "<missing>";
}

TEST(PolicyParams, DefaultsOfTheIssue) {
  EXPECT_EQ(default_of("boyer_beta"), "0.07");
  EXPECT_EQ(default_of("boyer_delta"), "1.5");
  EXPECT_EQ(default_of("boyer_gamma"), "2");
  EXPECT_EQ(default_of("plbhec_threshold"), "0.5");
  EXPECT_EQ(default_of("wp_omega"), "0.5");
  EXPECT_EQ(default_of("ess_launches"), "10");
  EXPECT_EQ(default_of("hguided_k"), "2");
  EXPECT_EQ(default_of("sigmoid_k_regular"), "2");
  EXPECT_EQ(default_of("sigmoid_k_irregular"), "0.5");
  EXPECT_EQ(default_of("sigmoid_cv_threshold"), "0.25");
  EXPECT_EQ(default_of("sigmoid_window"), "3");
  EXPECT_EQ(default_of("sigmoid_time_fraction"), "0.05");
  EXPECT_EQ(default_of("predict_max_steps"), "15");
  EXPECT_EQ(default_of("predict_elimination"), "0.1");
  EXPECT_EQ(default_of("static_mode"), "equal");
}

TEST(PolicyParams, EveryFieldRoundTripsItsDefault) {
  std::set<std::string> names;
  for (const auto& i : policy_param_info()) {
    EXPECT_TRUE(names.insert(i.name).second) << "listed twice: " << i.name;
    EXPECT_FALSE(i.doc.empty()) << i.name;
    PolicyParams p;
    std::string error;
    EXPECT_TRUE(set_policy_param(p, i.name, i.default_value, &error)) << i.name << ": " << error;
    EXPECT_EQ(get_policy_param(p, i.name), i.default_value);
  }
  EXPECT_GE(names.size(), 30u);
}

TEST(PolicyParams, SetsAndRejects) {
  PolicyParams p;
  std::string error;
  EXPECT_TRUE(set_policy_param(p, "boyer_beta", "0.1", &error));
  EXPECT_EQ(p.boyer_beta, 0.1);
  EXPECT_TRUE(set_policy_param(p, "static_weights", "1,0,2.5", &error));
  EXPECT_EQ(p.static_weights, (std::vector<double>{1, 0, 2.5}));
  EXPECT_TRUE(set_policy_param(p, "memory_bound", "true", &error));
  EXPECT_TRUE(p.memory_bound);
  EXPECT_TRUE(set_policy_param(p, "hguided_min_chunk", "64", &error));
  EXPECT_EQ(p.hguided_min_chunk, 64u);

  EXPECT_FALSE(set_policy_param(p, "boyer_beta", "0", &error));  // beta must be > 0
  EXPECT_NE(error.find("boyer_beta"), std::string::npos);
  EXPECT_EQ(p.boyer_beta, 0.1);  // unchanged
  EXPECT_FALSE(set_policy_param(p, "boyer_gamma", "1.5", &error));
  EXPECT_FALSE(set_policy_param(p, "wp_omega", "abc", &error));
  EXPECT_FALSE(set_policy_param(p, "static_mode", "fast", &error));
  EXPECT_NE(error.find("equal, ratio or spec"), std::string::npos);
  EXPECT_FALSE(set_policy_param(p, "no_such", "1", &error));
  EXPECT_NE(error.find("no_such"), std::string::npos);
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
