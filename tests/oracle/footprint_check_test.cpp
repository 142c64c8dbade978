// The oracle's comparison on hand-made runs: a footprint that misses a byte a work-group touched,
// one that names an access the kernel never makes, and one far larger than what was touched must
// each be reported; right ones must not. Likewise for (e): a dependency between coex's pieces that
// its verdict misses must fail, a refusal the accesses do not need must be reported, not failed.
#include "footprint_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

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

// (e): coex's pieces, its view of a piece, and its verdict against the recorded accesses.

TEST(OraclePieces, PiecesAreCoexsEqualRunsOfGroups) {
  auto pieces = split_pieces(100);
  ASSERT_EQ(pieces.size(), 64u);
  EXPECT_EQ(pieces.front().g0, 0u);
  EXPECT_EQ(pieces.back().g1, 100u);
  for (size_t i = 0; i < pieces.size(); ++i) {
    EXPECT_EQ(pieces[i].g0, 100 * i / 64);
    EXPECT_EQ(pieces[i].g1, 100 * (i + 1) / 64);
  }
  EXPECT_EQ(split_pieces(10).size(), 10u) << "at most 64: fewer groups are a piece each";
  EXPECT_EQ(split_pieces(10)[3].g0, 3u);
  EXPECT_TRUE(split_pieces(0).empty());
  EXPECT_EQ(split_pieces(UINT64_MAX).back().g1, UINT64_MAX) << "groups * i past 2^64";
}

TEST(OraclePieces, ModelledAccessTakesTheWholeArgumentWhereThereAreNoBands) {
  kernel::Footprint fp;
  fp.args.resize(5);
  fp.args[0].read = FootprintTier::Exact;
  fp.args[0].reads = {ByteBand{8, 12, 16, 2}};
  fp.args[0].write = FootprintTier::Exact;
  fp.args[0].writes = {ByteBand{0, 4, 0, 1}};
  fp.args[1].read = FootprintTier::Whole;
  fp.args[2].write = FootprintTier::Diff;
  // Argument 3: no write modelled, but the analysis did not prove it read-only. Argument 4: a scalar.
  std::vector<uint64_t> sizes = {64, 32, 32, 32, 0};
  coherence::ChunkAccess a = modelled_access(fp, sizes, {true, false, true, true, false});
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(a[0].reads, (IntervalSet{{8, 12}, {24, 28}}));
  EXPECT_EQ(a[0].writes, (IntervalSet{{0, 4}}));
  EXPECT_EQ(a[1].reads, (IntervalSet{{0, 32}}));
  EXPECT_TRUE(a[1].writes.empty());
  EXPECT_EQ(a[2].writes, (IntervalSet{{0, 32}}));
  EXPECT_EQ(a[3].writes, (IntervalSet{{0, 32}})) << "a missing write is never trusted";
  EXPECT_TRUE(a[3].reads.empty());
  EXPECT_TRUE(a[4].reads.empty() && a[4].writes.empty());
  // Arguments the footprint lacks are read whole, and written whole where they may be.
  coherence::ChunkAccess none = modelled_access(kernel::Footprint{}, {16}, {true});
  EXPECT_EQ(none[0].reads, (IntervalSet{{0, 16}}));
  EXPECT_EQ(none[0].writes, (IntervalSet{{0, 16}}));
}

// An in-place three-point stencil, a[i] = f(a[i - 1], a[i], a[i + 1]) with i = get_global_id(0),
// over four groups of four floats: group g loads [16 g - 4, 16 g + 20) (clipped to the 64 bytes)
// and stores [16 g, 16 g + 16).
KernelRun stencil_run() {
  KernelRun run;
  run.kernel = "stencil_in_place";
  for (uint64_t g = 0; g < 4; ++g) {
    auto& args = run.groups[{g, 0, 0}];
    args.resize(1);
    args[0].loads.add({g ? 16 * g - 4 : 0, std::min<uint64_t>(16 * g + 20, 64)});
    args[0].stores.add({16 * g, 16 * g + 16});
  }
  return run;
}

// A model of it that loads a[i + k] for each k in `neighbours` and stores a[i] (groups of 4).
kernel::FootprintModel stencil_model(const std::vector<int64_t>& neighbours) {
  kernel::FootprintModel::Definition d;
  d.is_buffer = {true};
  d.reads_unmodelled = d.writes_unmodelled = {false};
  kernel::Affine i = kernel::Affine::variable(kernel::kGroupId0).scaled(kernel::Poly::constant(16)) +
                     kernel::Affine::variable(kernel::kLocalId0).scaled(kernel::Poly::constant(4));
  for (int64_t k : neighbours) {
    kernel::FootprintModel::Access load;
    load.byte_offset = i + kernel::Affine(kernel::Poly::constant(4 * k));
    load.size = 4;
    load.read = true;
    d.accesses.push_back(load);
  }
  kernel::FootprintModel::Access store;
  store.byte_offset = i;
  store.size = 4;
  store.write = true;
  d.accesses.push_back(store);
  return kernel::FootprintModel(d);
}

PieceVerdict stencil_verdict(const std::vector<int64_t>& neighbours) {
  kernel::LaunchGeometry g;
  g.global_size[0] = 16;
  g.local_size[0] = 4;
  kernel::ArgValues values;
  values.bytes = {{}};
  values.buffer_sizes = {64};
  return piece_verdict(stencil_model(neighbours), g, values, {true});
}

const std::vector<std::string> kStencilNames = {"a"};

TEST(OraclePieces, DependencyTheModelMissesIsCaught) {
  // The model forgets the neighbours: coex would split, yet group 0 loads what group 1 stores.
  PieceVerdict forgetful = stencil_verdict({0});
  ASSERT_EQ(forgetful.pieces.size(), 4u);
  EXPECT_FALSE(forgetful.conflict) << forgetful.conflict.to_string();
  DependencyCheck c = check_dependencies(stencil_run(), 0, forgetful, kStencilNames, "");
  EXPECT_EQ(c.actual.kind, coherence::ConflictKind::CrossChunkRead);
  ASSERT_EQ(c.violations.size(), 1u);
  EXPECT_EQ(c.violations[0],
            "coex would split, yet the pieces' accesses conflict: cross_chunk_dependency: piece 0 (groups [0, 1)) "
            "reads {[16, 20)} of a, which piece 1 (groups [1, 2)) writes");
  EXPECT_TRUE(c.over_conservative.empty());
}

TEST(OraclePieces, RightModelOfADependencyPasses) {
  PieceVerdict right = stencil_verdict({-1, 0, 1});
  EXPECT_EQ(right.conflict.kind, coherence::ConflictKind::CrossChunkRead);
  DependencyCheck c = check_dependencies(stencil_run(), 0, right, kStencilNames, "cross_chunk_dependency");
  EXPECT_TRUE(c.violations.empty()) << c.violations.front();
  EXPECT_TRUE(c.over_conservative.empty());
}

// Hand-made verdicts for copy_run's two groups: coex's view of each piece given directly.
PieceVerdict verdict_of(std::vector<coherence::ChunkAccess> accesses) {
  PieceVerdict v;
  v.pieces = split_pieces(accesses.size());
  v.accesses = std::move(accesses);
  v.conflict = coherence::find_conflict(v.accesses);
  return v;
}

coherence::ChunkAccess access(IntervalSet in_reads, IntervalSet out_writes) {
  coherence::ChunkAccess a(2);
  a[0].reads = std::move(in_reads);
  a[1].writes = std::move(out_writes);
  return a;
}

TEST(OraclePieces, OverlappingStoresTheModelMissesAreCaught) {
  KernelRun run = copy_run();
  run.groups[{1, 0, 0}][1].stores.add({12, 16});  // group 1 also stores group 0's last float
  PieceVerdict disjoint = verdict_of({access({{0, 16}}, {{0, 16}}), access({{16, 32}}, {{16, 32}})});
  DependencyCheck c = check_dependencies(run, 0, disjoint, kNames, "");
  ASSERT_EQ(c.violations.size(), 1u);
  EXPECT_NE(c.violations[0].find("overlapping_writes: piece 0 (groups [0, 1)) and piece 1 (groups [1, 2)) both "
                                 "write {[12, 16)} of out"),
            std::string::npos)
      << c.violations[0];
  // With the store modelled, coex refuses: nothing to report.
  PieceVerdict right = verdict_of({access({{0, 16}}, {{0, 16}}), access({{16, 32}}, {{12, 32}})});
  EXPECT_TRUE(check_dependencies(run, 0, right, kNames, "").violations.empty());
}

TEST(OraclePieces, RefusalTheAccessesDoNotNeedIsReportedNotFailed) {
  // out diffed: the whole argument for both pieces, though the groups store disjoint floats.
  PieceVerdict diffed = verdict_of({access({{0, 16}}, {{0, 32}}), access({{16, 32}}, {{0, 32}})});
  DependencyCheck c = check_dependencies(copy_run(), 0, diffed, kNames, "");
  EXPECT_TRUE(c.violations.empty());
  EXPECT_FALSE(c.actual);
  EXPECT_EQ(c.over_conservative,
            "overlapping_writes: piece 0 (groups [0, 1)) and piece 1 (groups [1, 2)) both write {[0, 32)} of out");
}

TEST(OraclePieces, VerdictOtherThanTheExpectedOneIsCaught) {
  PieceVerdict independent = verdict_of({access({{0, 16}}, {{0, 16}}), access({{16, 32}}, {{16, 32}})});
  EXPECT_TRUE(check_dependencies(copy_run(), 0, independent, kNames, "independent").violations.empty());
  DependencyCheck c = check_dependencies(copy_run(), 0, independent, kNames, "overlapping_writes");
  ASSERT_EQ(c.violations.size(), 1u);
  EXPECT_EQ(c.violations[0], "coex's verdict is independent, expected overlapping_writes");
  EXPECT_EQ(check_dependencies(copy_run(), 0, independent, kNames, "safe").violations.size(), 1u)
      << "an unknown verdict name";
}

TEST(OraclePieces, GroupsOfOnePieceAreNotChunksOfIt) {
  // Four groups in two pieces: groups 0 and 1 store the same bytes, but they run in one chunk.
  KernelRun run;
  for (uint64_t g = 0; g < 4; ++g) {
    auto& args = run.groups[{g, 0, 0}];
    args.resize(2);
    args[1].stores.add({16 * (g / 2), 16 * (g / 2) + 16});
  }
  PieceVerdict v;
  v.pieces = split_pieces(4, 2);
  v.accesses = {access({}, {{0, 16}}), access({}, {{16, 32}})};
  DependencyCheck c = check_dependencies(run, 0, v, kNames, "");
  EXPECT_FALSE(c.actual);
  EXPECT_TRUE(c.violations.empty());
}

}  // namespace
}  // namespace coex::oracle
