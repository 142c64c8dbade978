// The simulator: its physics, its invariants for every policy, stalls, the scenario format and the
// scenarios shipped in config/scenarios/.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "sched/policy_factory.h"
#include "sched/sim_doc_tables.h"
#include "sched/sim_model.h"
#include "sched/simulator.h"

namespace coex::sched {
namespace {

TEST(SimModel, CostProfilesAreNormalisedToMeanOne) {
  for (const std::string kind : {"uniform", "linear", "mandelbrot", "random", "steps"}) {
    SimKernel k;
    k.groups = 3000;
    k.cost.kind = kind;
    k.cost.from = 0;
    k.cost.to = 2;
    k.cost.values = {1, 5, 2};
    const CostModel c(k, 7);
    EXPECT_NEAR(c.total(), 3000, 1e-6) << kind;
  }
  SimKernel lin;
  lin.groups = 1000;
  lin.cost.kind = "linear";
  lin.cost.from = 0;
  lin.cost.to = 2;
  const CostModel c(lin, 1);
  // Density 2u: the first tenth costs 1% of the total, the last tenth 19%.
  EXPECT_NEAR(c.cost(0, 100), 10, 1e-9);
  EXPECT_NEAR(c.cost(900, 1000), 190, 1e-9);
  // Mandelbrot rows through the set cost far more than the rows at the edge of the image.
  SimKernel m;
  m.groups = 512;
  m.cost.kind = "mandelbrot";
  const CostModel mc(m, 1);
  EXPECT_GT(mc.cost(250, 262), 5 * mc.cost(0, 12));
}

TEST(SimModel, SpeedTimelineAndIdealMakespan) {
  SpeedTimeline tl;
  tl.set(2.0, 0.5);  // half speed from t = 2
  tl.set(4.0, 0.0);  // stalled from t = 4
  EXPECT_NEAR(tl.work_between(0, 3, 100), 250, 1e-9);
  EXPECT_NEAR(tl.finish_time(1, 150, 100), 3.0, 1e-12);  // 100 by t = 2, 50 more at 50/s
  EXPECT_TRUE(std::isinf(tl.finish_time(1, 500, 100)));  // 300 possible before the stall
  // Two devices of 100/s, one halving at t = 2: 500 units -> 400 by t = 2, then 150/s: T = 2 + 2/3.
  SpeedTimeline a, b;
  b.set(2.0, 0.5);
  EXPECT_NEAR(ideal_makespan({a, b}, {100, 100}, 0, 500), 2.0 + 100.0 / 150, 1e-12);
  EXPECT_TRUE(std::isinf(ideal_makespan({tl}, {100}, 0, 1000)));
}

// A random scenario: 2-4 devices with speeds over two orders of magnitude, latencies, transfers,
// noise, a speed change, a random cost profile.
Scenario random_scenario(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  Scenario s;
  s.name = "random" + std::to_string(seed);
  s.seed = seed;
  const int n = 2 + static_cast<int>(rng() % 3);
  for (int i = 0; i < n; ++i) {
    SimDevice d;
    d.profile.index = i;
    d.profile.name = "d" + std::to_string(i);
    d.profile.is_gpu = rng() % 2;
    d.profile.is_cpu = !d.profile.is_gpu;
    d.profile.compute_units = 1 + static_cast<unsigned>(rng() % 32);
    d.profile.clock_mhz = 1000 + static_cast<unsigned>(rng() % 2000);
    d.profile.groups_per_cu_for_occupancy = 1 + static_cast<unsigned>(rng() % 4);
    d.speed = 100 * std::pow(100.0, u(rng));
    d.latency = u(rng) < 0.5 ? 0 : 1e-4 * u(rng);
    if (u(rng) < 0.4) d.bandwidth_in_gbs = d.bandwidth_out_gbs = 1 + 20 * u(rng);
    d.noise = u(rng) < 0.5 ? 0 : 0.3 * u(rng);
    if (u(rng) < 0.3) d.changes.push_back({static_cast<int>(rng() % 3), 0.01 * u(rng), 0.2 + u(rng)});
    s.devices.push_back(d);
  }
  const char* kinds[] = {"uniform", "linear", "mandelbrot", "random", "steps"};
  s.kernel.cost.kind = kinds[rng() % 5];
  s.kernel.cost.from = 0.1;
  s.kernel.cost.to = 3;
  s.kernel.cost.values = {1, 4, 0.5, 2};
  s.kernel.groups = 1 + rng() % 20000;
  s.kernel.bytes_in_per_group = 4096;
  s.kernel.bytes_out_per_group = 1024;
  s.launches = 3;
  return s;
}

// Every work-group exactly once among the chunks not abandoned, no overlap, abandoned chunks reissued.
void check_cover(const LaunchResult& r, uint64_t groups, const std::string& what) {
  std::vector<Chunk> live;
  for (const auto& c : r.trace)
    if (!c.abandoned) live.push_back(c.chunk);
  std::sort(live.begin(), live.end(), [](const Chunk& a, const Chunk& b) { return a.begin < b.begin; });
  uint64_t next = 0;
  for (const auto& c : live) {
    ASSERT_EQ(c.begin, next) << what << ": gap or overlap at " << next;
    ASSERT_LT(c.begin, c.end) << what;
    next = c.end;
  }
  ASSERT_EQ(next, groups) << what;
}

TEST(Simulator, InvariantsForEveryPolicyOnRandomScenarios) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const Scenario s = random_scenario(seed);
    for (const auto& policy : policy_names()) {
      const auto results = simulate_policy(s, policy);
      ASSERT_EQ(results.size(), 3u) << policy;
      for (const auto& r : results) {
        const std::string what = s.name + "/" + policy + "/launch " + std::to_string(r.launch);
        ASSERT_TRUE(r.error.empty()) << what << ": " << r.error;
        ASSERT_FALSE(r.stalled) << what;
        check_cover(r, s.kernel.groups, what);
        EXPECT_GE(r.makespan, r.ideal_makespan * (1 - 1e-12)) << what;
        EXPECT_LE(r.efficiency, 1 + 1e-12) << what;
        EXPECT_GT(r.efficiency, 0) << what;
        EXPECT_LE(r.load_balance, 1 + 1e-12) << what;
        uint64_t per_device = 0;
        for (auto g : r.groups_per_device) per_device += g;
        EXPECT_EQ(per_device, s.kernel.groups) << what;
        EXPECT_EQ(r.chunks, r.trace.size()) << what;
      }
    }
  }
}

TEST(Simulator, StalledDeviceNeverHangsTheSimulation) {
  for (const auto& policy : policy_names()) {
    Scenario s = random_scenario(11);
    s.devices[1].changes = {{0, 0.0005, 0.0}};  // stalls shortly after the first launch starts
    const auto results = simulate_policy(s, policy);
    ASSERT_EQ(results.size(), 3u) << policy << ": " << results.back().error;
    for (const auto& r : results) {
      const std::string what = policy + "/launch " + std::to_string(r.launch);
      ASSERT_TRUE(r.error.empty()) << what << ": " << r.error;
      // The device is taken over as the executor does it (sched/launch_driver.h), and the policy hears
      // of it (Policy::device_taken_over): every launch completes, whatever the policy.
      EXPECT_FALSE(r.stalled) << what;
      check_cover(r, s.kernel.groups, what);
    }
    // Once stalled, the device keeps its kernel: later launches run without it and complete.
    EXPECT_FALSE(results.back().stalled) << policy;
    EXPECT_EQ(results.back().groups_per_device[1], 0u) << policy;
  }
}

TEST(Simulator, EveryDeviceStalledIsReportedNotAnError) {
  Scenario s;
  s.name = "dead";
  s.devices.resize(1);
  s.devices[0].profile.name = "only";
  s.devices[0].speed = 100;
  s.devices[0].changes = {{0, 0.0, 0.0}};
  s.kernel.groups = 50;
  s.launches = 3;
  for (const auto& policy : policy_names()) {
    const auto r = simulate_policy(s, policy);
    ASSERT_EQ(r.size(), 3u) << policy;
    for (const auto& l : r) {
      EXPECT_TRUE(l.error.empty()) << policy << ": " << l.error;
      EXPECT_TRUE(l.stalled) << policy;
      EXPECT_EQ(l.unfinished_groups, 50u) << policy;
    }
    EXPECT_EQ(r[2].excluded, std::vector<int>{0}) << policy;
  }
}

// A policy that breaks the contract is reported, not trusted.
class OverlappingPolicy : public Policy {
 public:
  std::string name() const override { return "overlapping"; }
  void begin_launch(const LaunchShape&, const std::vector<int>&, double) override {}
  std::optional<Chunk> next_chunk(int device, double) override {
    if (given_[device]++) return std::nullopt;
    return Chunk{device, 0, 10};
  }
  void chunk_done(const ChunkTiming&) override {}

 private:
  std::map<int, int> given_;
};

TEST(Simulator, ContractViolationsAreReported) {
  Scenario s = random_scenario(3);
  s.kernel.groups = 1000;
  const auto overlapping = simulate_with(s, [](const std::vector<DeviceProfile>&, std::shared_ptr<History>) {
    return std::make_unique<OverlappingPolicy>();
  });
  ASSERT_EQ(overlapping.size(), 1u);  // stops at the first broken launch
  EXPECT_NE(overlapping[0].error.find("twice"), std::string::npos) << overlapping[0].error;
  // A policy that hands out nothing at all leaves groups unassigned.
  class Idle : public OverlappingPolicy {
    std::optional<Chunk> next_chunk(int, double) override { return std::nullopt; }
  };
  const auto idle = simulate_with(
      s, [](const std::vector<DeviceProfile>&, std::shared_ptr<History>) { return std::make_unique<Idle>(); });
  EXPECT_NE(idle[0].error.find("unassigned"), std::string::npos) << idle[0].error;
}

TEST(Simulator, ScenarioFileErrorsNameTheKey) {
  const auto parse = [](const std::string& text) {
    Scenario s;
    std::string error;
    const bool ok = parse_scenario(nlohmann::json::parse(text), &s, &error);
    return ok ? std::string("ok") : error;
  };
  const std::string base = R"("devices":[{"name":"a","speed":10}],"kernel":{"groups":100})";
  EXPECT_EQ(parse("{" + base + R"(,"policy":"sigmoid"})"), "ok");
  EXPECT_NE(parse("{" + base + R"(,"policy":"fastest"})").find("fastest"), std::string::npos);
  EXPECT_NE(parse("{" + base + R"(,"policy":"wp","params":{"wp_omega":2}})").find("params.wp_omega"),
            std::string::npos);
  EXPECT_NE(
      parse(R"({"devices":[{"name":"a","sped":10}],"kernel":{"groups":100},"policy":"wp"})").find("devices[0].sped"),
      std::string::npos);
  EXPECT_NE(parse(R"({"devices":[{"name":"a"}],"kernel":{"groups":100},"policy":"wp"})").find("devices[0].speed"),
            std::string::npos);
  EXPECT_NE(parse("{" + base + R"(,"policy":"wp","kernel":{"groups":0}})").find("kernel.groups"), std::string::npos);
  EXPECT_NE(
      parse(R"({"devices":[{"name":"a","speed":1}],"kernel":{"groups":9,"cost":{"profile":"zigzag"}},"policy":"wp"})")
          .find("kernel.cost.profile"),
      std::string::npos);
}

TEST(Simulator, RunSimulationWritesOneLinePerLaunch) {
  const auto dir = std::filesystem::temp_directory_path() / ("coex_sim_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = (dir / "s.json").string();
  {
    std::ofstream(file) << R"({"name":"two","devices":[{"name":"cpu","type":"cpu","speed":1000},
      {"name":"gpu","speed":3000,"stall":{"launch":2,"at":0}}],"kernel":{"groups":4000},"launches":3,
      "policy":["static","boyer"],"summary":true})";
  }
  std::ostringstream out, err;
  EXPECT_EQ(run_simulation(file, out, err), 0) << err.str();
  std::istringstream lines(out.str());
  std::string line;
  std::vector<nlohmann::json> docs;
  while (std::getline(lines, line)) docs.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(docs.size(), 8u);  // 3 launches + 1 summary, twice
  const auto& s0 = docs[0];
  EXPECT_EQ(s0["policy"], "static");
  EXPECT_EQ(s0["launch"], 0);
  EXPECT_NEAR(s0["makespan"].get<double>(), 2.0, 1e-9);        // 2000 groups at 1000/s
  EXPECT_NEAR(s0["ideal_makespan"].get<double>(), 1.0, 1e-9);  // 4000 groups at 4000/s
  EXPECT_NEAR(s0["efficiency"].get<double>(), 0.5, 1e-9);
  EXPECT_NEAR(s0["load_balance"].get<double>(), 2.0 / 3 / 2, 1e-5);
  EXPECT_EQ(s0["chunks"], 2);
  EXPECT_EQ(s0["share"]["cpu"], 0.5);
  // static: the stalled GPU never finishes its half. The CPU, done at 2 s, takes it over by the stall
  // rule once the GPU has run three times the redo (2 s) and at least 5 s: at 6 s, done at 8 s.
  EXPECT_NEAR(docs[2]["makespan"].get<double>(), 8.0, 1e-6);
  EXPECT_EQ(docs[2]["stalled"], nullptr);
  EXPECT_EQ(docs[2]["share"]["cpu"], 1.0);
  EXPECT_EQ(docs[2]["abandoned_chunks"], 1);
  EXPECT_EQ(docs[3]["summary"], true);
  EXPECT_EQ(docs[6]["share"]["cpu"], 1.0);  // boyer: the stuck-device rule moves the GPU's chunk
  EXPECT_EQ(docs[6]["abandoned_chunks"], 1);
  std::ostringstream out2, err2;
  EXPECT_EQ(run_simulation((dir / "missing.json").string(), out2, err2), 2);
  EXPECT_NE(err2.str().find("missing.json"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Simulator, ShippedScenariosRun) {
  const std::filesystem::path dir = std::filesystem::path(COEX_SOURCE_DIR) / "config" / "scenarios";
  size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    ++count;
    std::ostringstream out, err;
    EXPECT_EQ(run_simulation(entry.path().string(), out, err), 0) << entry.path() << ": " << err.str();
    EXPECT_FALSE(out.str().empty()) << entry.path();
    // No launch left unfinished: a stalled device is taken over.
    EXPECT_EQ(out.str().find("\"stalled\""), std::string::npos) << entry.path();
  }
  EXPECT_GE(count, 5u);
}

// With a home device auto's gate runs in the simulator as in the executor: once the History shows that
// the CPU beside a GPU 300x faster does not pay, launches run on home alone, unsplit.
TEST(Simulator, HomeAndAutoGate) {
  Scenario s;
  s.name = "gate";
  s.devices.resize(2);
  s.devices[0].profile = {0, "gpu", true, false, 80, 1500};
  s.devices[0].speed = 300000;
  s.devices[0].latency = 5e-5;
  s.devices[1].profile = {1, "cpu", false, true, 16, 3000};
  s.devices[1].speed = 1000;
  s.devices[1].latency = 2e-5;
  s.home = 0;
  s.kernel.groups = 20000;
  s.launches = 6;
  const auto results = simulate_policy(s, "auto");
  ASSERT_EQ(results.size(), 6u);
  EXPECT_TRUE(results[0].not_split.empty());  // nothing known against the CPU: split
  size_t unsplit = 0;
  for (const auto& r : results) {
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_FALSE(r.stalled);
    if (r.not_split.empty()) continue;
    ++unsplit;
    EXPECT_EQ(r.not_split, "one_device_pays");
    EXPECT_EQ(r.groups_per_device[0], s.kernel.groups);  // all on home
    EXPECT_EQ(r.chunks, 1u);
  }
  EXPECT_GE(unsplit, 4u);
}

// docs/schedulers.md's simulator tables are what `coex simulate --doc-table NAME` prints now.
// COEX_UPDATE_SCHEDULER_DOC=1 rewrites them.
TEST(Simulator, DocTablesAreUpToDate) {
  const std::filesystem::path root(COEX_SOURCE_DIR);
  const std::filesystem::path doc = root / "docs" / "schedulers.md";
  std::stringstream text;
  text << std::ifstream(doc).rdbuf();
  std::vector<std::string> found;
  std::string error;
  const std::string expected = with_doc_tables(text.str(), (root / "config" / "scenarios").string(), &found, &error);
  ASSERT_FALSE(expected.empty()) << error;
  EXPECT_EQ(found, doc_table_names());  // every table shown, in order
  if (const char* update = std::getenv("COEX_UPDATE_SCHEDULER_DOC"); update && std::string(update) == "1")
    std::ofstream(doc, std::ios::binary) << expected;
  EXPECT_TRUE(text.str() == expected)
      << "docs/schedulers.md's simulator tables are stale: run this test with COEX_UPDATE_SCHEDULER_DOC=1";
  EXPECT_TRUE(doc_table("no-such-table", (root / "config" / "scenarios").string(), &error).empty());
  EXPECT_NE(error.find("no-such-table"), std::string::npos);
}

}  // namespace
}  // namespace coex::sched
