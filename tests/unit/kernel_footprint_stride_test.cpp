// Footprints of loops whose counter steps by two or more (FootprintModel::Loop::step): a chunk of a
// grid-stride loop gets its own elements of every stretch, worked out by hand, and the cases that
// must fall back (a step that may be zero or negative, one that depends on the ids, wrap-around).
#include <gtest/gtest.h>

#include <cstdint>

#include "kernel/footprint.h"
#include "kernel_corpus.h"
#include "kernel_footprint_fixture.h"

namespace coex::kernel::testing {
namespace {

Analysed app_grid_stride(const std::string& kernel) {
  std::string c = read_text(source_dir() / "tests/apps/grid_stride.c");
  return analyse(c_string_literals(c, "kSource"), kernel);
}

bool disjoint(const Ranges& a, const Ranges& b) {
  for (const auto& x : a)
    for (const auto& y : b)
      if (x.first < y.second && y.first < x.second) return false;
  return true;
}

TEST(StrideFootprint, GridStrideChunkWritesItsOwnElementsOfEveryStretch) {
  // stride_square: 256 items in groups of 64, n = 1000 uints. Group 1 has i = 64..127, then i +=
  // 256 up to 999: four stretches of 256 bytes, 1024 bytes apart.
  Analysed a = app_grid_stride("stride_square");
  ArgValues v = values(3, {{2, bytes_of<uint32_t>(1000)}});
  Footprint fp = evaluate(a, geometry_1d(256, 64), v, 1, 2);
  ASSERT_EQ(fp.args[1].write, FootprintTier::Exact);
  EXPECT_EQ(fp.args[1].writes, (std::vector<ByteBand>{{256, 512, 1024, 4}}));
  EXPECT_TRUE(fp.args[1].writes_injective);
  EXPECT_FALSE(fp.args[1].writes_cover) << "the last stretch is known only at its widest";
  EXPECT_EQ(fp.args[0].read, FootprintTier::Exact);
  EXPECT_EQ(band_ranges(fp.args[0].reads), band_ranges(fp.args[1].writes));  // in[i] * in[i]: two loads
  // Group 3 (i = 192..255): its last stretch stops at n (960..999), not at 1023.
  Footprint last = evaluate(a, geometry_1d(256, 64), v, 3, 4);
  EXPECT_EQ(band_ranges(last.args[1].writes), (Ranges{{768, 1024}, {1792, 2048}, {2816, 3072}, {3840, 4000}}));
  // The chunks of a split do not overlap; the whole launch writes [0, 4n).
  Ranges first_half = band_ranges(evaluate(a, geometry_1d(256, 64), v, 0, 2).args[1].writes);
  Ranges second_half = band_ranges(evaluate(a, geometry_1d(256, 64), v, 2, 4).args[1].writes);
  EXPECT_EQ(first_half, (Ranges{{0, 512}, {1024, 1536}, {2048, 2560}, {3072, 3584}}));
  EXPECT_TRUE(disjoint(first_half, second_half));
  EXPECT_EQ(band_ranges(evaluate(a, geometry_1d(256, 64), v, 0, 4).args[1].writes), (Ranges{{0, 4000}}));
  // n = 100: group 2 starts past n and writes nothing.
  Footprint past = evaluate(a, geometry_1d(256, 64), values(3, {{2, bytes_of<uint32_t>(100)}}), 2, 3);
  EXPECT_EQ(past.args[0].read, FootprintTier::None);
  EXPECT_EQ(past.args[1].write, FootprintTier::Exact);
  EXPECT_TRUE(past.args[1].writes.empty());
}

TEST(StrideFootprint, StepThroughALocalVariableAndANarrowingCast) {
  // stride_accumulate: uint stride = (uint)get_global_size(0); the counter is a uint.
  Analysed a = app_grid_stride("stride_accumulate");
  ArgValues v = values(3, {{1, bytes_of<uint32_t>(1000)}, {2, bytes_of<uint32_t>(3)}});
  Footprint fp = evaluate(a, geometry_1d(256, 64), v, 0, 1);
  EXPECT_EQ(fp.args[0].writes, (std::vector<ByteBand>{{0, 256, 1024, 4}}));
  EXPECT_EQ(fp.args[0].reads, fp.args[0].writes);
  EXPECT_TRUE(fp.args[0].writes_injective);
  // n near 2^32: past its last value the uint counter wraps around to the start of the buffer.
  ArgValues huge = values(3, {{1, bytes_of<uint32_t>(0xFFFFFFF0u)}, {2, bytes_of<uint32_t>(3)}});
  Footprint wraps = evaluate(a, geometry_1d(256, 64), huge, 0, 1);
  EXPECT_EQ(wraps.args[0].read, FootprintTier::Whole);
  EXPECT_EQ(wraps.args[0].write, FootprintTier::Diff);
}

TEST(StrideFootprint, StepFromAnArgumentIsCheckedAtTheLaunch) {
  auto a = analyse_corpus("strided_loops", "stride_by_argument");
  auto run = [&](int32_t step) {
    return evaluate(a, geometry_1d(64, 16), values(4, {{2, bytes_of<int32_t>(200)}, {3, bytes_of(step)}}), 1, 2);
  };
  // step 64 (the global size): items 16..31 write elements 16..31, 80..95, 144..159 (208 > n).
  Footprint grid = run(64);
  EXPECT_EQ(band_ranges(grid.args[1].writes), (Ranges{{64, 128}, {320, 384}, {576, 640}}));
  EXPECT_TRUE(grid.args[1].writes_injective);
  // step 32: still strided bands, but item 0 and item 32 both write element 32.
  Footprint half = run(32);
  EXPECT_EQ(band_ranges(half.args[1].writes), (Ranges{{64, 128}, {192, 256}, {320, 384}, {448, 512}, {576, 640}, {704, 768}}));
  EXPECT_FALSE(half.args[1].writes_injective);
  // step 1 and step 0 (a loop that never ends): the counter's interval [16, 199], as for any loop.
  for (int32_t step : {1, 0}) {
    Footprint hull = run(step);
    EXPECT_EQ(band_ranges(hull.args[1].writes), (Ranges{{64, 800}})) << "step " << step;
    EXPECT_FALSE(hull.args[1].writes_injective) << "step " << step;
  }
  // A negative step runs the counter below its first value, where nothing bounds it.
  Footprint down = run(-3);
  EXPECT_EQ(down.args[0].read, FootprintTier::Whole);
  EXPECT_EQ(down.args[1].write, FootprintTier::Diff);
}

TEST(StrideFootprint, StepThatDependsOnTheIdsOrAnotherLoopFallsBack) {
  auto by_id = analyse(
      "__kernel void k(__global int* out, int n) {\n"
      "  for (int i = get_global_id(0); i < n; i += get_global_id(0) + 1) out[i] = 1;\n"
      "}\n",
      "k");
  ArgValues v = values(2, {{1, bytes_of<int32_t>(200)}});
  EXPECT_EQ(evaluate(by_id, geometry_1d(64, 16), v, 1, 2).args[0].write, FootprintTier::Diff);
  auto by_loop = analyse(
      "__kernel void k(__global int* out, int n) {\n"
      "  for (int j = 1; j < 4; ++j)\n"
      "    for (int i = get_global_id(0); i < n; i += j * 64) out[i] = 1;\n"
      "}\n",
      "k");
  EXPECT_EQ(evaluate(by_loop, geometry_1d(64, 16), v, 1, 2).args[0].write, FootprintTier::Diff);
}

TEST(StrideFootprint, StepThatWrapsAroundInItsTypeFallsBack) {
  // a * b is an int: 65536 * 65536 is 0 in C, not 2^32.
  auto a = analyse(
      "__kernel void k(__global int* out, int n, int a, int b) {\n"
      "  for (int i = get_global_id(0); i < n; i += a * b) out[i] = 1;\n"
      "}\n",
      "k");
  auto run = [&](int32_t x, int32_t y) {
    return evaluate(a, geometry_1d(64, 16),
                    values(4, {{1, bytes_of<int32_t>(200)}, {2, bytes_of(x)}, {3, bytes_of(y)}}), 0, 1);
  };
  EXPECT_EQ(band_ranges(run(8, 8).args[0].writes), (Ranges{{0, 64}, {256, 320}, {512, 576}, {768, 800}}));
  EXPECT_EQ(run(65536, 65536).args[0].write, FootprintTier::Diff);
}

TEST(StrideFootprint, NarrowingCastInTheIndexKeepsItsGuarantee) {
  // (uchar)i is i only below 256: with n = 1000 the counter passes it.
  auto a = analyse(
      "__kernel void k(__global int* out, int n) {\n"
      "  for (int i = get_global_id(0); i < n; i += get_global_size(0)) out[(uchar)i] = 1;\n"
      "}\n",
      "k");
  auto run = [&](int32_t n) { return evaluate(a, geometry_1d(64, 16), values(2, {{1, bytes_of(n)}}), 0, 1); };
  EXPECT_EQ(band_ranges(run(200).args[0].writes), (Ranges{{0, 64}, {256, 320}, {512, 576}, {768, 800}}));
  EXPECT_EQ(run(1000).args[0].write, FootprintTier::Diff);
}

TEST(StrideFootprint, CountingDown) {
  // stride_down, n = 200, 64 items: items 16..31 start at i = 183..168 and step down by 64:
  // elements 168..183, 104..119, 40..55 (then below 0).
  auto a = analyse_corpus("strided_loops", "stride_down");
  Footprint fp = evaluate(a, geometry_1d(64, 16), values(3, {{2, bytes_of<int32_t>(200)}}), 1, 2);
  EXPECT_EQ(band_ranges(fp.args[1].writes), (Ranges{{160, 224}, {416, 480}, {672, 736}}));
  EXPECT_EQ(band_ranges(fp.args[0].reads), band_ranges(fp.args[1].writes));
  EXPECT_TRUE(fp.args[1].writes_injective);
}

TEST(StrideFootprint, UnitLoopInsideAStridedOne) {
  // stride_rows: rows = 50, 32 items in groups of 8, step local size * groups = 32. Items 8..15 write
  // the rows of four floats 8..15 and 40..47 (72 > 49).
  auto a = analyse_corpus("strided_loops", "stride_rows");
  Footprint fp = evaluate(a, geometry_1d(32, 8), values(3, {{2, bytes_of<uint32_t>(50)}}), 1, 2);
  EXPECT_EQ(band_ranges(fp.args[1].writes), (Ranges{{128, 256}, {640, 768}}));
  EXPECT_TRUE(fp.args[1].writes_injective) << "j below the ids, t above them";
  EXPECT_EQ(band_ranges(fp.args[0].reads), (Ranges{{128, 256}, {640, 768}}));
}

TEST(StrideFootprint, RowsOfATwoDimensionalLaunch) {
  // stride_rows_2d: 16 x 32 items in groups of 16 x 8, split along y; width 16, height 100. Groups
  // 1..2 of y have y = 8..23, then + 32 up to 99: rows 8..23, 40..55, 72..87 (104 > 99).
  auto a = analyse_corpus("strided_loops", "stride_rows_2d");
  ArgValues v = values(3, {{1, bytes_of<int32_t>(16)}, {2, bytes_of<int32_t>(100)}});
  Footprint fp = evaluate(a, geometry_2d(16, 32, 16, 8, 1), v, 1, 3);
  EXPECT_EQ(band_ranges(fp.args[0].writes), (Ranges{{512, 1536}, {2560, 3584}, {4608, 5632}}));
  EXPECT_TRUE(fp.args[0].writes_injective);
}

TEST(StrideFootprint, GuardOnTheCounterNarrowsTheStretches) {
  // sampled_sum: k = lid, lid + 100, ... below n = 1000, read where k < m = 350: 4 stretches of the
  // 16 local ids.
  auto a = analyse_corpus("strided_loops", "sampled_sum");
  auto run = [&](int32_t m) {
    return evaluate(a, geometry_1d(64, 16), values(4, {{2, bytes_of<int32_t>(1000)}, {3, bytes_of(m)}}), 2, 3);
  };
  Footprint fp = run(350);
  EXPECT_EQ(fp.args[0].reads, (std::vector<ByteBand>{{0, 64, 400, 4}}));
  EXPECT_EQ(run(0).args[0].read, FootprintTier::None) << "k < 0 never holds";
}

}  // namespace
}  // namespace coex::kernel::testing
