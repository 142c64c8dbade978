// LaunchPolicies: a split launch's policy object serves a later launch once nothing holds it, and a
// policy used again starts each launch afresh.
#include <gtest/gtest.h>

#include <memory>

#include "launch_shapes.h"
#include "sched/launch_policies.h"
#include "sched/policy_factory.h"
#include "sched/static_policy.h"

namespace coex::sched {
namespace {

// A static policy that counts the objects alive.
class CountedPolicy : public StaticPolicy {
 public:
  explicit CountedPolicy(int& alive) : StaticPolicy({}, std::make_shared<History>(), {}), alive_(alive) { ++alive_; }
  ~CountedPolicy() override { --alive_; }

 private:
  int& alive_;
};

TEST(LaunchPolicies, AnObjectServesAgainOnceItsLastHolderLetsGo) {
  int made = 0, alive = 0;
  LaunchPolicies policies([&] {
    ++made;
    return std::make_unique<CountedPolicy>(alive);
  });
  std::shared_ptr<Policy> first = policies.acquire();
  Policy* const a = first.get();
  std::shared_ptr<Policy> device_thread = first;  // a device's worker still holds the launch's policy
  first.reset();
  std::shared_ptr<Policy> second = policies.acquire();
  EXPECT_EQ(made, 2);  // the first is still held
  Policy* const b = second.get();
  EXPECT_NE(a, b);
  second.reset();
  EXPECT_EQ(policies.acquire().get(), b);  // let go: served again, nothing made
  EXPECT_EQ(made, 2);
  device_thread.reset();  // the worker lets go too
  std::shared_ptr<Policy> third = policies.acquire();
  std::shared_ptr<Policy> fourth = policies.acquire();
  EXPECT_EQ(made, 2);
  EXPECT_TRUE((third.get() == a && fourth.get() == b) || (third.get() == b && fourth.get() == a));
  EXPECT_EQ(alive, 2);
}

TEST(LaunchPolicies, AnObjectLetGoAfterThePoolIsGoneIsDeleted) {
  int alive = 0;
  std::shared_ptr<Policy> late;
  {
    LaunchPolicies policies([&] { return std::make_unique<CountedPolicy>(alive); });
    late = policies.acquire();  // an abandoned device reports after coex stopped
    std::shared_ptr<Policy> idle = policies.acquire();
  }
  EXPECT_EQ(alive, 1);  // the idle one went with the pool
  late.reset();
  EXPECT_EQ(alive, 0);
}

TEST(LaunchPolicies, NoObjectWhereTheFactoryMakesNone) {
  LaunchPolicies policies([] { return std::unique_ptr<Policy>(); });
  EXPECT_EQ(policies.acquire(), nullptr);
}

// sigmoid's verdict is its last launch's: a launch on the same object that does not judge says nothing.
TEST(LaunchPolicies, AUsedSigmoidObjectForgetsTheLastLaunchsVerdict) {
  auto history = std::make_shared<History>();
  std::vector<DeviceProfile> profiles(1);
  PolicyParams params;
  params.sigmoid_k = 0.5;
  LaunchPolicies policies([&] { return make_policy("sigmoid", params, history, profiles); });
  std::shared_ptr<Policy> p = policies.acquire();
  p->begin_launch(launch_of_k(1000), {0}, 0);
  double now = 0;
  while (auto c = p->next_chunk(0, now)) {
    const double seconds = static_cast<double>(c->groups()) * 0.01;
    p->chunk_done({*c, now, now + seconds});
    now += seconds;
  }
  p->end_launch(now);
  ASSERT_TRUE(p->regularity().has_value());  // judged
  Policy* const judged = p.get();
  p.reset();
  p = policies.acquire();
  ASSERT_EQ(p.get(), judged);
  p->begin_launch(launch_of_k(1000), {0}, 0);
  EXPECT_FALSE(p->regularity().has_value());
}

}  // namespace
}  // namespace coex::sched
