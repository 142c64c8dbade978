// The oracle's comparison on hand-made runs: a footprint that misses a byte a work-group touched,
// one that names an access the kernel never makes, and one far larger than what was touched must
// each be reported; right ones must not.
#include <gtest/gtest.h>

#include "footprint_check.h"

namespace coex::oracle {
namespace {

using coherence::ByteRange;
using coherence::IntervalSet;
using kernel::ByteBand;
using kernel::FootprintTier;

// Two groups along dimension 0, four floats each: argument 0 is read, argument 1 written, like
// out[i] = in[i] with i = get_global_id(0) and groups of 4.
KernelRun copy_run() {
  KernelRun run;
  run.kernel = "copy";
  for (size_t g = 0; g < 2; ++g) {
    auto& args = run.groups[{g, 0, 0}];
    args.resize(2);
    args[0].loads.add({16 * g, 16 * g + 16});
    args[1].stores.add({16 * g, 16 * g + 16});
  }
  return run;
}

kernel::Footprint copy_footprint(uint64_t begin, uint64_t end) {
  kernel::Footprint fp;
  fp.args.resize(2);
  fp.args[0].read = FootprintTier::Exact;
  fp.args[0].reads = {ByteBand{begin, end, 0, 1}};
  fp.args[1].write = FootprintTier::Exact;
  fp.args[1].writes = {ByteBand{begin, end, 0, 1}};
  return fp;
}

const std::vector<std::string> kNames = {"in", "out"};

TEST(OracleCheck, TouchedBytesOfAChunk) {
  KernelRun run = copy_run();
  auto second = touched_by(run, Chunk{0, 1, 2}, 2);
  EXPECT_EQ(second[0].loads, (IntervalSet{{16, 32}}));
  EXPECT_EQ(second[1].stores, (IntervalSet{{16, 32}}));
  EXPECT_TRUE(second[1].loads.empty());
  auto both = touched_by(run, Chunk{0, 0, 2}, 2);
  EXPECT_EQ(both[0].loads, (IntervalSet{{0, 32}}));
  EXPECT_TRUE(touched_by(run, Chunk{1, 1, 2}, 2)[0].loads.empty()) << "dimension 1 has only group 0";
}

TEST(OracleCheck, RightFootprintPasses) {
  ChunkCheck c = check_chunk(copy_footprint(16, 32), touched_by(copy_run(), Chunk{0, 1, 2}, 2), kNames, true, {});
  EXPECT_TRUE(c.violations.empty()) << c.violations.front();
  ASSERT_EQ(c.ratios.size(), 2u);
  EXPECT_EQ(c.ratios[0].footprint, 16u);
  EXPECT_EQ(c.ratios[0].touched, 16u);
}

TEST(OracleCheck, FootprintMissingBytesIsCaught) {
  // Off by one element: the group's first float is outside.
  ChunkCheck c = check_chunk(copy_footprint(20, 36), touched_by(copy_run(), Chunk{0, 1, 2}, 2), kNames, false, {});
  ASSERT_EQ(c.violations.size(), 2u);
  EXPECT_NE(c.violations[0].find("in: loaded {[16, 20)} outside its exact footprint"), std::string::npos)
      << c.violations[0];
  EXPECT_NE(c.violations[1].find("out: stored {[16, 20)}"), std::string::npos) << c.violations[1];
}

TEST(OracleCheck, AccessTheFootprintDeniesIsCaught) {
  kernel::Footprint fp = copy_footprint(16, 32);
  fp.args[1].write = FootprintTier::None;  // "out is never written"
  fp.args[1].writes.clear();
  ChunkCheck c = check_chunk(fp, touched_by(copy_run(), Chunk{0, 1, 2}, 2), kNames, false, {});
  ASSERT_EQ(c.violations.size(), 1u);
  EXPECT_NE(c.violations[0].find("out: stored {[16, 32)} outside its none footprint"), std::string::npos);
}

TEST(OracleCheck, WholeAndDiffHoldAnything) {
  kernel::Footprint fp;
  fp.args.resize(2);
  fp.args[0].read = FootprintTier::Whole;
  fp.args[1].write = FootprintTier::Diff;
  ChunkCheck c = check_chunk(fp, touched_by(copy_run(), Chunk{0, 0, 2}, 2), kNames, true, {});
  EXPECT_TRUE(c.violations.empty());
  EXPECT_TRUE(c.ratios.empty()) << "only exact footprints have a size to compare";
}

TEST(OracleCheck, ExactFootprintMoreThanTenPercentLargerIsCaught) {
  // 16 bytes touched; 17 is within 10%, 18 is not.
  auto touched = touched_by(copy_run(), Chunk{0, 1, 2}, 2);
  EXPECT_TRUE(check_chunk(copy_footprint(16, 33), touched, kNames, true, {}).violations.empty());
  ChunkCheck c = check_chunk(copy_footprint(15, 33), touched, kNames, true, {});
  ASSERT_EQ(c.violations.size(), 2u);
  EXPECT_NE(c.violations[0].find("in: exact read footprint of 18 bytes for 16 loaded"), std::string::npos)
      << c.violations[0];
  EXPECT_TRUE(c.ratios[0].too_large());
  // Loose arguments and chunks checked for (a) alone are exempt; the ratio is still reported.
  EXPECT_EQ(check_chunk(copy_footprint(15, 33), touched, kNames, true, {0}).violations.size(), 1u);
  EXPECT_TRUE(check_chunk(copy_footprint(15, 33), touched, kNames, false, {}).violations.empty());
}

TEST(OracleCheck, CoverClaimedForBytesNotStoredIsCaught) {
  kernel::Footprint fp = copy_footprint(16, 32);
  fp.args[1].writes_cover = true;
  auto touched = touched_by(copy_run(), Chunk{0, 1, 2}, 2);
  EXPECT_TRUE(check_chunk(fp, touched, kNames, false, {}).violations.empty());
  touched[1].stores.subtract(ByteRange{20, 24});  // one work-item skipped its store
  ChunkCheck c = check_chunk(fp, touched, kNames, false, {});
  ASSERT_EQ(c.violations.size(), 1u);
  EXPECT_NE(c.violations[0].find("out: claims its writes cover their footprint, yet {[20, 24)} was not stored"),
            std::string::npos)
      << c.violations[0];
}

TEST(OracleCheck, BytesStoredByTwoGroupsAreFound) {
  KernelRun run = copy_run();
  EXPECT_TRUE(stored_by_several_groups(run, 2)[1].empty());
  run.groups[{1, 0, 0}][1].stores.add({12, 20});
  EXPECT_EQ(stored_by_several_groups(run, 2)[1], (IntervalSet{{12, 16}}));
}

TEST(OracleCheck, WrongModelEvaluatedIsCaught) {
  // A model that forgets the group: offset 4 * get_local_id(0). Group 1 touched [16, 32).
  kernel::FootprintModel::Definition d;
  d.is_buffer = {true, true};
  d.reads_unmodelled = d.writes_unmodelled = {false, false};
  kernel::FootprintModel::Access load;
  load.arg = 0;
  load.byte_offset = kernel::Affine::variable(kernel::kLocalId0).scaled(kernel::Poly::constant(4));
  load.size = 4;
  load.read = true;
  kernel::FootprintModel::Access store = load;
  store.arg = 1;
  store.read = false;
  store.write = true;
  d.accesses = {load, store};
  kernel::FootprintModel model(d);
  kernel::LaunchGeometry g;
  g.global_size[0] = 8;
  g.local_size[0] = 4;
  kernel::Footprint fp = model.evaluate(g, kernel::ArgValues{}, 1, 2);
  ChunkCheck c = check_chunk(fp, touched_by(copy_run(), Chunk{0, 1, 2}, 2), kNames, true, {});
  ASSERT_EQ(c.violations.size(), 2u);
  EXPECT_NE(c.violations[0].find("in: loaded {[16, 32)} outside"), std::string::npos) << c.violations[0];
}

}  // namespace
}  // namespace coex::oracle
