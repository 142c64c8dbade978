// The History's file (sched/history_file.cpp): the round trip, split launch times, one history per
// device set in one file, what a load found, malformed files, the device set's signature, the default
// path.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "history_fixtures.h"
#include "sched/history.h"

namespace coex::sched {
namespace {

using namespace history_fixtures;

TEST(History, SaveAndLoadRoundTrip) {
  const auto dir = temp_dir("roundtrip");
  const std::string file = (dir / "nested" / "history.json").string();
  History h("sig-A");
  h.record_chunk("vadd#1234", 1 << 20, timing(0, 512, 0.25, 0.05));
  h.record_chunk("vadd#1234", 1 << 20, timing(1, 256, 0.5));
  h.note_launch("vadd#1234", 1 << 20);
  h.set_shares("vadd#1234", 1 << 20, {{0, 0.8}, {1, 0.2}});
  h.set_regular("vadd#1234", true);
  std::string error;
  ASSERT_TRUE(h.save(file, &error)) << error;
  History loaded("sig-A");
  ASSERT_TRUE(loaded.load(file, &error)) << error;
  EXPECT_NEAR(*loaded.throughput("vadd#1234", 1 << 20, 0), 2048, 1e-9);
  EXPECT_NEAR(*loaded.throughput("vadd#1234", 1 << 20, 1), 512, 1e-9);
  EXPECT_EQ(loaded.launches("vadd#1234", 1 << 20), 1u);
  EXPECT_EQ(loaded.shares("vadd#1234", 1 << 20).at(0), 0.8);
  EXPECT_EQ(loaded.regular("vadd#1234"), std::optional<bool>(true));
  const auto samples = loaded.samples("vadd#1234", 1 << 20, 0);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_NEAR(samples[0].transfer_seconds, 0.05, 1e-15);
  std::filesystem::remove_all(dir);
}

// A run's probes count from its own first launch: the launches the file held.

TEST(History, SplitLaunchTimesAreSavedAndAFileWithoutThemLoads) {
  const auto dir = temp_dir("splits");
  const std::string file = (dir / "history.json").string();
  History h("sig-A");
  h.record_chunk("k", 64, timing(0, 10, 1));
  h.record_split_launch("k", 64, {0, 2}, 0.003);
  h.note_launch("k", 64);
  h.record_split_launch("k", 64, {0, 2}, 0.006);
  h.record_split_launch("k", 64, {0, 2}, 0.002, 0.004, true);
  h.plan_launch("k", 64);
  h.plan_launch("k", 64);
  std::string error;
  ASSERT_TRUE(h.save(file, &error)) << error;
  History loaded("sig-A");
  ASSERT_TRUE(loaded.load(file, &error)) << error;
  EXPECT_NEAR(*loaded.split_launch_seconds("k", 64, {0, 2}), 0.002, 1e-15);  // the one after a split
  EXPECT_EQ(loaded.steady_splits_measured("k", 64, {0, 2}), 1u);
  // A file with the aged sums alone (written before the last times were kept) reads their means.
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(file));
  for (auto& split : doc["kernels"][0]["split_launches"]) split.erase("recent"), split.erase("recent_steady");
  std::ofstream(file) << doc.dump();
  History sums("sig-A");
  ASSERT_TRUE(sums.load(file, &error)) << error;
  EXPECT_NEAR(*sums.split_launch_seconds("k", 64, {0, 2}), 0.002, 1e-15);
  EXPECT_EQ(sums.steady_splits_measured("k", 64, {0, 2}), 1u);  // its aged mean stands for them
  // The next launch's number comes from the launches counted: those planned in the last run were not
  // all counted, and numbers planned there mean nothing to this run.
  EXPECT_EQ(loaded.plan_launch("k", 64), 1u);
  // A file written before split launch times were kept (version 1 without "split_launches").
  std::filesystem::create_directories(dir);
  const std::string old_file = (dir / "old.json").string();
  {
    std::ofstream(old_file) << R"({"format":"coex-history","version":1,"devices":"sig-A","kernels":[)"
                            << R"({"kernel":"k","global_size":64,"launches":3,"last_use":5,"shares":{"0":1.0},)"
                            << R"("devices":{"0":{"groups":10,"seconds":1,"chunks":1,"samples":[[10,1,0]]}}}]})";
  }
  History old("sig-A");
  ASSERT_TRUE(old.load(old_file, &error)) << error;
  EXPECT_EQ(old.launches("k", 64), 3u);
  EXPECT_NEAR(*old.throughput("k", 64, 0), 10, 1e-12);
  EXPECT_FALSE(old.split_launch_seconds("k", 64, {0, 2}).has_value());
  // A split time that is not one is a malformed file.
  const std::string bad_file = (dir / "bad.json").string();
  {
    std::ofstream(bad_file) << R"({"format":"coex-history","version":1,"devices":"sig-A","kernels":[)"
                            << R"({"kernel":"k","global_size":64,"launches":3,"shares":{},"devices":{},)"
                            << R"("split_launches":[{"devices":[0,1],"seconds":-1,"weight":1,"count":1}]}]})";
  }
  History bad("sig-A");
  EXPECT_FALSE(bad.load(bad_file, &error));
  std::filesystem::remove_all(dir);
}

TEST(History, AnotherDeviceSetFindsNothingAndLeavesItsHistoryAsItWas) {
  const auto dir = temp_dir("signature");
  const std::string file = (dir / "h.json").string();
  History h("sig-A");
  h.record_chunk("k", 1, timing(0, 10, 1));
  ASSERT_TRUE(h.save(file));
  History other("sig-B");
  other.record_chunk("mine", 1, timing(0, 10, 1));
  std::string note;
  EXPECT_TRUE(other.load(file, nullptr, &note));
  EXPECT_FALSE(note.empty());
  EXPECT_EQ(other.last_load().state, "new_device_set");
  EXPECT_EQ(other.last_load().other_sets, 1u);
  EXPECT_FALSE(other.throughput("k", 1, 0).has_value());
  EXPECT_TRUE(other.throughput("mine", 1, 0).has_value());  // left as it was
  std::filesystem::remove_all(dir);
}

TEST(History, EachDeviceSetKeepsItsOwnHistoryInOneFile) {
  // A run on another device set (say POCL_DEVICES changed) must not throw away this set's history.
  const auto dir = temp_dir("per_set");
  const std::string file = (dir / "h.json").string();
  History a("sig-A");
  a.record_chunk("k", 1, timing(0, 10, 1));
  ASSERT_TRUE(a.save(file));
  History b("sig-B");
  ASSERT_TRUE(b.load(file));
  b.record_chunk("k", 1, timing(0, 40, 1));
  ASSERT_TRUE(b.save(file));

  History a_again("sig-A");
  ASSERT_TRUE(a_again.load(file));
  EXPECT_EQ(a_again.last_load().state, "loaded");
  EXPECT_EQ(a_again.last_load().entries, 1u);
  EXPECT_EQ(a_again.last_load().other_sets, 1u);
  EXPECT_NEAR(*a_again.throughput("k", 1, 0), 10, 1e-9);
  History b_again("sig-B");
  ASSERT_TRUE(b_again.load(file));
  EXPECT_NEAR(*b_again.throughput("k", 1, 0), 40, 1e-9);

  // Saving A again keeps B; the file holds at most kMaxDeviceSets sets, the oldest dropped.
  ASSERT_TRUE(a_again.save(file));
  ASSERT_TRUE(b_again.load(file));
  EXPECT_NEAR(*b_again.throughput("k", 1, 0), 40, 1e-9);
  for (size_t i = 0; i < History::kMaxDeviceSets + 2; ++i) {
    History n("sig-N" + std::to_string(i));
    n.record_chunk("k", 1, timing(0, 5, 1));
    ASSERT_TRUE(n.save(file));
  }
  History last("sig-N" + std::to_string(History::kMaxDeviceSets + 1));
  ASSERT_TRUE(last.load(file));
  EXPECT_EQ(last.last_load().other_sets, History::kMaxDeviceSets - 1);
  History first("sig-A");
  ASSERT_TRUE(first.load(file));
  EXPECT_EQ(first.last_load().state, "new_device_set");  // the oldest saved, dropped
  std::filesystem::remove_all(dir);
}

TEST(History, LoadOutcomeNamesTheFile) {
  const auto dir = temp_dir("outcome");
  History h("s");
  EXPECT_TRUE(h.load((dir / "none.json").string()));
  EXPECT_EQ(h.last_load().state, "no_file");
  EXPECT_EQ(h.last_load().file, (dir / "none.json").string());
}

TEST(History, MissingFileIsEmptyMalformedFileIsAnError) {
  const auto dir = temp_dir("malformed");
  History h("s");
  EXPECT_TRUE(h.load((dir / "none.json").string()));
  std::filesystem::create_directories(dir);
  { std::ofstream((dir / "bad.json").string()) << "{ not json"; }
  { std::ofstream((dir / "wrong.json").string()) << R"({"format":"something else"})"; }
  std::string error;
  EXPECT_FALSE(h.load((dir / "bad.json").string(), &error));
  EXPECT_NE(error.find("bad.json"), std::string::npos);
  EXPECT_FALSE(h.load((dir / "wrong.json").string(), &error));
  EXPECT_EQ(h.entry_count(), 0u);
  std::filesystem::remove_all(dir);
}

TEST(History, DeviceSetSignature) {
  std::vector<DeviceProfile> a(2);
  a[0].name = "cpu";
  a[1].index = 1;
  a[1].name = "gpu";
  auto b = a;
  EXPECT_EQ(device_set_signature(a), device_set_signature(b));
  b[1].name = "other gpu";
  EXPECT_NE(device_set_signature(a), device_set_signature(b));
  b = a;
  b.pop_back();
  EXPECT_NE(device_set_signature(a), device_set_signature(b));
  // The same device served over the network (PoCL's remote driver) keeps a history of its own.
  b = a;
  b[1].remote = true;
  EXPECT_NE(device_set_signature(a), device_set_signature(b));
}

TEST(History, DefaultPathFromXdgOrHome) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::string saved_xdg = xdg ? xdg : "", saved_home = home ? home : "";
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  EXPECT_EQ(default_history_path(), "/tmp/xdg/coex/history.json");
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(default_history_path(), "/home/someone/.cache/coex/history.json");
  ::unsetenv("HOME");
  EXPECT_EQ(default_history_path(), "");
  if (xdg) ::setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
  if (home) ::setenv("HOME", saved_home.c_str(), 1);
}

}  // namespace
}  // namespace coex::sched
