// Chunk footprints per root buffer (exec/chunk_footprint.h): what a device must hold before a chunk
// runs, how its writes are merged, and when injective writes may be taken as they are. Expected sets
// are worked out by hand from the kernels and launches below.
#include <gtest/gtest.h>

#include <cstring>

#include "exec/byte_diff.h"
#include "exec/chunk_footprint.h"
#include "exec/kernel_arguments.h"
#include "exec/launch_geometry.h"
#include "kernel/kernel_analysis.h"

namespace coex::exec {
namespace {

using coherence::IntervalSet;
using kernel::ArgFootprint;
using kernel::ByteBand;
using kernel::FootprintTier;

ArgBinding buffer(int root, uint64_t origin, uint64_t size, bool written = true) {
  ArgBinding b;
  b.kind = ArgBinding::Kind::Buffer;
  b.root = root;
  b.origin = origin;
  b.size = size;
  b.written = written;
  return b;
}

ArgBinding value() {
  ArgBinding b;
  b.kind = ArgBinding::Kind::Value;
  return b;
}

TEST(ChunkFootprint, WithoutAModelBuffersAreReplicatedAndWritesDiffed) {
  std::vector<ArgBinding> bindings = {buffer(0, 0, 100, false), value(), buffer(1, 64, 32, true)};
  ChunkFootprint fp = root_footprint(nullptr, bindings, 2);
  ASSERT_EQ(fp.roots.size(), 2u);
  EXPECT_EQ(fp.roots[0].need, (IntervalSet{{0, 100}}));
  EXPECT_TRUE(fp.roots[0].writes().empty());
  EXPECT_EQ(fp.roots[1].need, (IntervalSet{{64, 96}}));
  EXPECT_EQ(fp.roots[1].unknown_writes, (IntervalSet{{64, 96}}));
  EXPECT_TRUE(fp.roots[1].injective_writes.empty());
  EXPECT_EQ(fp.arg_tiers, (std::vector<ArgTier>{ArgTier::Whole, ArgTier::None, ArgTier::Diff}));
}

TEST(ChunkFootprint, ExactBandsAreOffsetByTheArgumentsOrigin) {
  kernel::Footprint model;
  model.args.resize(3);
  model.args[0].read = FootprintTier::Exact;
  model.args[0].reads = {ByteBand{0, 16, 100, 3}};  // [0,16) [100,116) [200,216)
  model.args[1].write = FootprintTier::Exact;       // covers and is injective: nothing to upload
  model.args[1].writes = {ByteBand{8, 24, 0, 1}};
  model.args[1].writes_cover = true;
  model.args[1].writes_injective = true;
  model.args[2].write = FootprintTier::Exact;  // guarded: the skipped bytes must be current
  model.args[2].writes = {ByteBand{0, 8, 0, 1}};
  model.args[2].writes_injective = true;
  std::vector<ArgBinding> bindings = {buffer(0, 1000, 300, false), buffer(1, 0, 64), buffer(1, 512, 64)};
  ChunkFootprint fp = root_footprint(&model, bindings, 2);
  EXPECT_EQ(fp.roots[0].need, (IntervalSet{{1000, 1016}, {1100, 1116}, {1200, 1216}}));
  EXPECT_EQ(fp.roots[0].reads, fp.roots[0].need);
  EXPECT_EQ(fp.roots[1].injective_writes, (IntervalSet{{8, 24}, {512, 520}}));
  EXPECT_EQ(fp.roots[1].need, (IntervalSet{{512, 520}}));
  EXPECT_TRUE(fp.roots[1].diffed_writes.empty());
  EXPECT_EQ(fp.arg_tiers, (std::vector<ArgTier>{ArgTier::Exact, ArgTier::Exact, ArgTier::Exact}));
}

TEST(ChunkFootprint, NonInjectiveWritesAreDiffedAndUnknownOnesTakeTheWholeArgument) {
  kernel::Footprint model;
  model.args.resize(3);
  model.args[0].write = FootprintTier::Exact;
  model.args[0].writes = {ByteBand{0, 4, 0, 1}};
  model.args[0].writes_cover = true;  // every group writes the same word
  model.args[1].read = FootprintTier::Whole;
  model.args[1].write = FootprintTier::Diff;
  model.args[2].read = FootprintTier::None;  // a pointer the kernel never touches
  std::vector<ArgBinding> bindings = {buffer(0, 0, 64), buffer(1, 128, 256), buffer(2, 0, 64, false)};
  ChunkFootprint fp = root_footprint(&model, bindings, 3);
  EXPECT_EQ(fp.roots[0].diffed_writes, (IntervalSet{{0, 4}}));
  EXPECT_TRUE(fp.roots[0].need.empty());
  EXPECT_EQ(fp.roots[1].unknown_writes, (IntervalSet{{128, 384}}));
  EXPECT_EQ(fp.roots[1].need, (IntervalSet{{128, 384}}));
  EXPECT_TRUE(fp.roots[2].need.empty());
  EXPECT_EQ(fp.arg_tiers, (std::vector<ArgTier>{ArgTier::Exact, ArgTier::Diff, ArgTier::None}));
}

TEST(ChunkFootprint, AStoreTheModelDoesNotSeeIsDiffed) {
  kernel::Footprint model;
  model.args.resize(1);  // no modelled access, but the access analysis says it may be written
  ChunkFootprint fp = root_footprint(&model, {buffer(0, 0, 32, true)}, 1);
  EXPECT_EQ(fp.roots[0].unknown_writes, (IntervalSet{{0, 32}}));
  EXPECT_EQ(fp.arg_tiers[0], ArgTier::Diff);
}

TEST(ChunkFootprint, AHullOfTooManyBandsCoversNothing) {
  kernel::Footprint model;
  model.args.resize(1);
  model.args[0].write = FootprintTier::Exact;
  model.args[0].writes = {ByteBand{0, 4, 8, 70000}};  // past band_ranges' limit: their hull
  model.args[0].writes_cover = true;
  model.args[0].writes_injective = true;
  ChunkFootprint fp = root_footprint(&model, {buffer(0, 0, 1 << 20)}, 1);
  EXPECT_EQ(fp.roots[0].injective_writes, (IntervalSet{{0, 8 * 69999 + 4}}));
  // The hull holds bytes nobody writes: the device must hold them current before the chunk.
  EXPECT_EQ(fp.roots[0].need, fp.roots[0].injective_writes);
}

std::vector<RootWrites> writes_of(IntervalSet injective, IntervalSet diffed = {}, IntervalSet unknown = {}) {
  ChunkFootprint chunk;
  chunk.roots.resize(1);
  chunk.roots[0].injective_writes = injective;
  chunk.roots[0].diffed_writes = diffed;
  chunk.roots[0].unknown_writes = unknown;
  std::vector<RootWrites> writes;
  add_chunk_writes(writes, chunk);
  return writes;
}

TEST(ChunkFootprint, WritesOfSeveralChunksAddUp) {
  std::vector<RootWrites> writes = writes_of({{0, 10}});
  ChunkFootprint second;
  second.roots.resize(2);
  second.roots[0].injective_writes = {{10, 20}};
  second.roots[1].unknown_writes = {{0, 5}};
  add_chunk_writes(writes, second);
  ASSERT_EQ(writes.size(), 2u);
  EXPECT_EQ(writes[0].injective, (IntervalSet{{0, 20}}));
  EXPECT_EQ(writes[1].all(), (IntervalSet{{0, 5}}));
}

TEST(ChunkFootprint, TheWorseTierWins) {
  std::vector<ArgTier> tiers = {ArgTier::Exact, ArgTier::Diff, ArgTier::None};
  merge_arg_tiers(tiers, {ArgTier::Whole, ArgTier::Exact, ArgTier::Exact, ArgTier::Whole});
  EXPECT_EQ(tiers, (std::vector<ArgTier>{ArgTier::Whole, ArgTier::Diff, ArgTier::Exact, ArgTier::Whole}));
  EXPECT_STREQ(arg_tier_name(ArgTier::Exact), "exact");
  EXPECT_STREQ(arg_tier_name(ArgTier::Whole), "whole");
  EXPECT_STREQ(arg_tier_name(ArgTier::Diff), "diff");
}

TEST(ChunkFootprint, GapsAreBridgedOnlyWhereTheyMayBeFilled) {
  IntervalSet ranges{{0, 10}, {20, 30}, {40, 50}, {10000, 10010}};
  IntervalSet fillable{{0, 35}};
  EXPECT_EQ(bridge_gaps_within(ranges, 4096, fillable), (IntervalSet{{0, 30}, {40, 50}, {10000, 10010}}));
  EXPECT_EQ(bridge_gaps(ranges, 4096), (IntervalSet{{0, 50}, {10000, 10010}}));
}

// The jacobi sweep of tests/apps/jacobi2d.c, analysed for real: the second half of the rows of a
// 320 x 256 float grid in 16 x 16 groups.
TEST(ChunkFootprint, JacobiChunkNeedsItsRowsAndOneHaloRow) {
  const char* source =
      "__kernel void jacobi(__global const float* src, __global float* dst, uint w, uint h) {\n"
      "  uint x = (uint)get_global_id(0), y = (uint)get_global_id(1);\n"
      "  uint i = y * w + x;\n"
      "  if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {\n"
      "    dst[i] = src[i];\n"
      "    return;\n"
      "  }\n"
      "  float s = src[i - w] + src[i + w];\n"
      "  s = s + src[i - 1];\n"
      "  s = s + src[i + 1];\n"
      "  dst[i] = s * 0.25f;\n"
      "}\n";
  kernel::ProgramInfo info = kernel::analyze_program(source, "");
  if (!info.parse_error.empty()) GTEST_SKIP() << "no libclang: " << info.parse_error;
  const kernel::KernelInfo* k = info.find("jacobi");
  ASSERT_NE(k, nullptr);
  ASSERT_TRUE(k->footprint);

  const uint64_t row = 320 * 4, bytes = 256 * row;
  LaunchJob job;
  job.footprint = k->footprint;
  job.footprint_geometry.work_dim = 2;
  job.footprint_geometry.split_dim = 1;
  job.footprint_geometry.global_size[0] = 320;
  job.footprint_geometry.global_size[1] = 256;
  job.footprint_geometry.local_size[0] = job.footprint_geometry.local_size[1] = 16;
  job.bindings = {buffer(0, 0, bytes, false), buffer(1, 0, bytes), value(), value()};
  job.roots.resize(2);
  uint32_t w = 320, h = 256;
  job.footprint_values.bytes = {{}, {}, std::vector<unsigned char>(4), std::vector<unsigned char>(4)};
  std::memcpy(job.footprint_values.bytes[2].data(), &w, 4);
  std::memcpy(job.footprint_values.bytes[3].data(), &h, 4);
  job.footprint_values.buffer_sizes = {bytes, bytes, 0, 0};

  ChunkFootprint fp = chunk_footprint(job, 8, 16);  // rows 128..255
  // Its rows, and of the row above what the interior points (columns 1..318, the guard) read.
  EXPECT_EQ(fp.roots[0].need, (IntervalSet{{127 * row + 4, 128 * row - 4}, {128 * row, bytes}}));
  EXPECT_TRUE(fp.roots[0].writes().empty());
  // The two stores write dst[i] under complementary guards (interior, border): one place per
  // work-item, so proven injective: no twin, no diff.
  IntervalSet own_rows{{128 * row, bytes}};
  EXPECT_EQ(fp.roots[1].writes(), own_rows);
  EXPECT_EQ(fp.roots[1].injective_writes, own_rows);
  EXPECT_TRUE(fp.roots[1].diffed_writes.empty());
  EXPECT_EQ(fp.arg_tiers[0], ArgTier::Exact);
  EXPECT_EQ(fp.arg_tiers[1], ArgTier::Exact);

  ChunkFootprint top = chunk_footprint(job, 0, 8);  // rows 0..127: needs row 128 below
  EXPECT_EQ(top.roots[0].need, (IntervalSet{{0, 128 * row}, {128 * row + 4, 129 * row - 4}}));
}

// What a first split would move, by the footprint of the whole launch (exec/kernel_arguments.h): a
// kernel over part of its buffers reads that part, where the bound buffers are all bytes_read counts.
TEST(ChunkFootprint, ALaunchOverPartOfItsBuffersReadsThatPart) {
  const char* source =
      "__kernel void add(__global const float* a, __global const float* b, __global float* c) {\n"
      "  size_t i = get_global_id(0);\n"
      "  c[i] = a[i] + b[i];\n"
      "}\n";
  kernel::ProgramInfo info = kernel::analyze_program(source, "");
  if (!info.parse_error.empty()) GTEST_SKIP() << "no libclang: " << info.parse_error;
  const kernel::KernelInfo* k = info.find("add");
  ASSERT_NE(k, nullptr);
  ASSERT_TRUE(k->footprint);

  const uint64_t bytes = 4096 * 4;  // three buffers of 4,096 floats
  const size_t offset = 1024, global = 512, local = 64;
  LaunchJob job;
  ASSERT_TRUE(make_geometry(1, &offset, &global, &local, 256, job.geometry));
  job.bindings = {buffer(0, 0, bytes, false), buffer(1, 0, bytes, false), buffer(2, 0, bytes)};
  job.roots.resize(3);
  capture_footprint_inputs(*k, std::vector<model::KernelArgValue>(3), job);
  EXPECT_EQ(bytes_read(*k, job), 2 * bytes);            // a and b whole
  EXPECT_EQ(footprint_bytes_read(job, 2 * bytes), 2 * 2048u);  // items 1024..1535 of each
  job.footprint = nullptr;                                     // no model: the whole buffers
  EXPECT_EQ(footprint_bytes_read(job, 2 * bytes), 2 * bytes);
}

}  // namespace
}  // namespace coex::exec
