// The rule that decides whether a launch's chunks may run on different devices
// (coherence/chunk_conflicts.h): no chunk reads what another writes, no two write the same byte.
#include "coherence/chunk_conflicts.h"

#include <gtest/gtest.h>

namespace coex::coherence {
namespace {

ChunkAccess one_buffer(IntervalSet reads, IntervalSet writes) { return {BufferAccess{reads, writes}}; }

TEST(ChunkConflicts, ChunksThatReadAndWriteOnlyTheirOwnBytesAreIndependent) {
  // An in-place update of each chunk's own band, and a read-only input shared by all.
  std::vector<ChunkAccess> chunks = {
      {BufferAccess{{{0, 100}}, {{0, 100}}}, BufferAccess{{{0, 1000}}, {}}},
      {BufferAccess{{{100, 200}}, {{100, 200}}}, BufferAccess{{{0, 1000}}, {}}},
  };
  EXPECT_FALSE(find_conflict(chunks));
}

TEST(ChunkConflicts, AChunkThatReadsWhatAnotherWritesDependsOnIt) {
  // Item 0 of every group reads the whole buffer, every item then writes its own element.
  std::vector<ChunkAccess> chunks = {one_buffer({{0, 400}}, {{0, 200}}), one_buffer({{0, 400}}, {{200, 400}})};
  Conflict c = find_conflict(chunks);
  EXPECT_EQ(c.kind, ConflictKind::CrossChunkRead);
  EXPECT_STREQ(conflict_reason(c.kind), "cross_chunk_dependency");
  EXPECT_EQ(c.first, 0u);
  EXPECT_EQ(c.second, 1u);
  EXPECT_EQ(c.bytes, (IntervalSet{{200, 400}}));
  EXPECT_NE(c.to_string().find("[200, 400)"), std::string::npos) << c.to_string();
}

TEST(ChunkConflicts, AStencilInPlaceReadsItsNeighboursHalo) {
  std::vector<ChunkAccess> chunks = {one_buffer({{0, 104}}, {{0, 100}}), one_buffer({{96, 200}}, {{100, 200}})};
  Conflict c = find_conflict(chunks);
  EXPECT_EQ(c.kind, ConflictKind::CrossChunkRead);
  EXPECT_EQ(c.bytes, (IntervalSet{{100, 104}}));
}

TEST(ChunkConflicts, TwoChunksWritingOneByteOverlapEvenWhenNeitherReads) {
  // A later group overwrites three elements an earlier one wrote; the third chunk is innocent.
  std::vector<ChunkAccess> chunks = {one_buffer({}, {{0, 100}}), one_buffer({}, {{200, 300}}),
                                     one_buffer({}, {{0, 12}, {100, 200}})};
  Conflict c = find_conflict(chunks);
  EXPECT_EQ(c.kind, ConflictKind::OverlappingWrites);
  EXPECT_STREQ(conflict_reason(c.kind), "overlapping_writes");
  EXPECT_EQ(c.first, 0u);
  EXPECT_EQ(c.second, 2u);
  EXPECT_EQ(c.bytes, (IntervalSet{{0, 12}}));
}

TEST(ChunkConflicts, WritesAreReportedBeforeReads) {
  std::vector<ChunkAccess> chunks = {one_buffer({{0, 400}}, {{0, 400}}), one_buffer({{0, 400}}, {{0, 400}})};
  EXPECT_EQ(find_conflict(chunks).kind, ConflictKind::OverlappingWrites);
}

TEST(ChunkConflicts, BuffersAreApartAndMissingEntriesTouchNothing) {
  // Chunk 0 writes buffer 1 where chunk 1 reads buffer 0: different buffers, no conflict.
  std::vector<ChunkAccess> chunks = {{BufferAccess{}, BufferAccess{{}, {{0, 8}}}}, one_buffer({{0, 8}}, {})};
  EXPECT_FALSE(find_conflict(chunks));
  chunks.push_back({BufferAccess{}, BufferAccess{{{4, 5}}, {}}});
  Conflict c = find_conflict(chunks);
  EXPECT_EQ(c.kind, ConflictKind::CrossChunkRead);
  EXPECT_EQ(c.buffer, 1u);
  EXPECT_EQ(c.first, 2u);
  EXPECT_EQ(c.second, 0u);
}

TEST(ChunkConflicts, NoChunksOrOneChunkNeverConflict) {
  EXPECT_FALSE(find_conflict({}));
  EXPECT_FALSE(find_conflict({one_buffer({{0, 8}}, {{0, 8}})}));
}

TEST(ChunkConflicts, EvenRunsCoverEveryGroupOnceAndNeverOverflow) {
  auto runs = even_runs(100, 64);
  ASSERT_EQ(runs.size(), 64u);
  EXPECT_EQ(runs.front().g0, 0u);
  EXPECT_EQ(runs.back().g1, 100u);
  for (size_t i = 1; i < runs.size(); ++i) EXPECT_EQ(runs[i].g0, runs[i - 1].g1);
  for (const GroupRun& r : runs) EXPECT_TRUE(r.g1 - r.g0 == 1 || r.g1 - r.g0 == 2);
  EXPECT_EQ(even_runs(10, 64).size(), 10u) << "fewer groups than runs: each group alone";
  EXPECT_EQ(even_runs(10, 64)[3].g0, 3u);
  EXPECT_TRUE(even_runs(0, 64).empty());
  EXPECT_EQ(even_runs(5, 0).size(), 1u) << "at least one run";
  auto huge = even_runs(UINT64_MAX, 4096);
  EXPECT_EQ(huge.back().g1, UINT64_MAX) << "count * i past 2^64";
  for (size_t i = 1; i < huge.size(); ++i) EXPECT_LT(huge[i - 1].g0, huge[i].g0);
}

}  // namespace
}  // namespace coex::coherence
