// static: one contiguous chunk per device in device order, the same every time.
#include <gtest/gtest.h>

#include "sched/policy_factory.h"
#include "sched/static_policy.h"

namespace coex::sched {
namespace {

std::vector<DeviceProfile> three_devices() {
  std::vector<DeviceProfile> p(3);
  for (int i = 0; i < 3; ++i) p[i].index = i;
  p[0].is_cpu = true;
  p[0].compute_units = 16;
  p[0].clock_mhz = 3000;
  p[0].mem_bandwidth_gbs = 100;
  p[1].is_gpu = true;
  p[1].compute_units = 40;
  p[1].clock_mhz = 1200;
  p[1].mem_bandwidth_gbs = 900;
  p[2].is_gpu = true;
  p[2].compute_units = 80;
  p[2].clock_mhz = 1500;
  p[2].mem_bandwidth_gbs = 3000;
  return p;
}

LaunchShape shape(uint64_t groups) {
  LaunchShape s;
  s.kernel_key = "k";
  s.total_groups = groups;
  s.global_size = groups * 64;
  return s;
}

// Asks in the order given (not device order) and returns each device's chunks.
std::map<int, std::vector<Chunk>> drain(Policy& p, uint64_t groups, const std::vector<int>& ask_order) {
  p.begin_launch(shape(groups), {0, 1, 2}, 0);
  std::map<int, std::vector<Chunk>> got;
  for (int round = 0; round < 3; ++round)
    for (int d : ask_order)
      if (auto c = p.next_chunk(d, 0)) {
        got[d].push_back(*c);
        p.chunk_done({*c, 0, 1});
      }
  p.end_launch(1);
  return got;
}

TEST(StaticPolicy, EqualSharesContiguousInDeviceOrder) {
  PolicyParams params;
  auto p = make_policy("static", params, nullptr, three_devices());
  const auto got = drain(*p, 100, {2, 0, 1});  // the last device asks first
  ASSERT_EQ(got.at(0).size(), 1u);
  ASSERT_EQ(got.at(1).size(), 1u);
  ASSERT_EQ(got.at(2).size(), 1u);
  EXPECT_EQ(got.at(0)[0].begin, 0u);
  EXPECT_EQ(got.at(0)[0].end, 34u);
  EXPECT_EQ(got.at(1)[0].begin, 34u);
  EXPECT_EQ(got.at(1)[0].end, 67u);
  EXPECT_EQ(got.at(2)[0].begin, 67u);
  EXPECT_EQ(got.at(2)[0].end, 100u);
}

TEST(StaticPolicy, SameRangesForSameShapeEveryLaunch) {
  PolicyParams params;
  params.static_mode = "spec";
  auto p = make_policy("static", params, nullptr, three_devices());
  const auto first = drain(*p, 12345, {0, 1, 2});
  for (int i = 0; i < 3; ++i) {
    const auto again = drain(*p, 12345, {1, 2, 0});
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(again.at(d)[0].begin, first.at(d)[0].begin);
      EXPECT_EQ(again.at(d)[0].end, first.at(d)[0].end);
    }
  }
}

TEST(StaticPolicy, RatioWeightsAndZeroWeightGetsNothing) {
  PolicyParams params;
  params.static_mode = "ratio";
  params.weights = {1, 0, 3};
  auto p = make_policy("static", params, nullptr, three_devices());
  const auto got = drain(*p, 100, {0, 1, 2});
  EXPECT_EQ(got.at(0)[0].end - got.at(0)[0].begin, 25u);
  EXPECT_EQ(got.count(1), 0u);
  EXPECT_EQ(got.at(2)[0].begin, 25u);
  EXPECT_EQ(got.at(2)[0].end, 100u);
  EXPECT_EQ(p->eliminated(), std::vector<int>{1});
}

TEST(StaticPolicy, SpecWeightsComputeOrBandwidth) {
  PolicyParams params;
  params.static_mode = "spec";
  const auto devices = three_devices();
  // CU x clock, a GPU's units counting kGpuLanesPerCpuCore CPU cores each: 48000 : 384000 : 960000.
  EXPECT_EQ(static_weights(params, devices), (std::vector<double>{48000, 384000, 960000}));
  params.memory_bound = true;
  EXPECT_EQ(static_weights(params, devices), (std::vector<double>{100, 900, 3000}));
}

TEST(StaticPolicy, EmptyRatioListFallsBackToEqual) {
  PolicyParams params;
  params.static_mode = "ratio";
  EXPECT_EQ(static_weights(params, three_devices()), (std::vector<double>{1, 1, 1}));
}

TEST(StaticPolicy, MoreDevicesThanGroups) {
  auto p = make_policy("static", PolicyParams{}, nullptr, three_devices());
  const auto got = drain(*p, 2, {0, 1, 2});
  uint64_t total = 0;
  for (const auto& [d, chunks] : got)
    for (const auto& c : chunks) total += c.groups();
  EXPECT_EQ(total, 2u);
  EXPECT_EQ(got.count(2), 0u);  // its share rounds to nothing: it gets nullopt at once
}

TEST(StaticPolicy, UnknownDeviceGetsNothing) {
  auto p = make_policy("static", PolicyParams{}, nullptr, three_devices());
  p->begin_launch(shape(10), {0, 1}, 0);
  EXPECT_FALSE(p->next_chunk(2, 0).has_value());
}

}  // namespace
}  // namespace coex::sched
