// Footprints of loads whose index holds min, max or clamp (FootprintModel::Loop kinds Min, Max,
// Clamp): the bands a chunk reads, worked out by hand, and the cases that must fall back.
#include <gtest/gtest.h>

#include "kernel/footprint.h"
#include "kernel_corpus.h"
#include "kernel_footprint_fixture.h"

namespace coex::kernel::testing {
namespace {

Analysed blur5() {
  std::string c = read_text(source_dir() / "benchmarks/blur.c");
  return analyse(c_string_literals(c, "kSource"), "blur5");
}

// blur5 on a 64 x 48 launch in groups of 16 x 8, rows split: a row of floats is 256 bytes.
Footprint blur_rows(const Analysed& a, uint32_t h, uint64_t g0, uint64_t g1) {
  ArgValues v = values(4, {{2, bytes_of<uint32_t>(64)}, {3, bytes_of<uint32_t>(h)}});
  return evaluate(a, geometry_2d(64, 48, 16, 8, 1), v, g0, g1);
}

TEST(BoundedFootprint, BlurChunkReadsItsRowsAndTheHaloCutAtTheBorder) {
  Analysed a = blur5();
  // Rows 0..7 read rows clamp(y - 2 .. y + 2, 0, 47): rows 0..9.
  Footprint top = blur_rows(a, 48, 0, 1);
  EXPECT_EQ(top.args[0].read, FootprintTier::Exact);
  EXPECT_EQ(band_ranges(top.args[0].reads), (Ranges{{0, 10 * 256}}));
  // Rows 16..31 read rows 14..33.
  Footprint middle = blur_rows(a, 48, 2, 4);
  EXPECT_EQ(band_ranges(middle.args[0].reads), (Ranges{{14 * 256, 34 * 256}}));
  // Rows 40..47 read rows 38..47.
  Footprint bottom = blur_rows(a, 48, 5, 6);
  EXPECT_EQ(band_ranges(bottom.args[0].reads), (Ranges{{38 * 256, 48 * 256}}));
  // The whole launch reads the whole image, and the stores stay exact.
  Footprint all = blur_rows(a, 48, 0, 6);
  EXPECT_EQ(band_ranges(all.args[0].reads), (Ranges{{0, 48 * 256}}));
  EXPECT_EQ(all.args[1].write, FootprintTier::Exact);
  EXPECT_TRUE(all.args[1].writes_cover);
  EXPECT_TRUE(all.args[1].writes_injective);
}

TEST(BoundedFootprint, BlurGuardNarrowsTheRowsBeforeTheClamp) {
  Analysed a = blur5();
  // h = 44: rows 40..43 run (y < h) and read rows 38..43 (clamped at h - 1 = 43).
  Footprint bottom = blur_rows(a, 44, 5, 6);
  EXPECT_EQ(band_ranges(bottom.args[0].reads), (Ranges{{38 * 256, 44 * 256}}));
  // h = 40: no row of group 5 runs.
  Footprint past = blur_rows(a, 40, 5, 6);
  EXPECT_EQ(past.args[0].read, FootprintTier::None);
}

TEST(BoundedFootprint, MinAndMaxWithALaunchValue) {
  auto a = analyse_corpus("clamp_gathers", "capped_copy");
  ArgValues v = values(3, {{2, bytes_of<uint32_t>(20)}});
  // Items 8..15: src[min(i, 20)] is src[8..15], src[max(20, i) - 20] is src[0].
  Footprint fp = evaluate(a, geometry_1d(64, 8), v, 1, 2);
  EXPECT_EQ(band_ranges(fp.args[0].reads), (Ranges{{0, 4}, {32, 64}}));
  // Items 32..63: src[20] and src[12..43].
  fp = evaluate(a, geometry_1d(64, 8), v, 4, 8);
  EXPECT_EQ(band_ranges(fp.args[0].reads), (Ranges{{48, 176}}));
}

TEST(BoundedFootprint, NestedMinMaxThroughAHelper) {
  // clamp_index(i - 2, n) is min(max(i - 2, 0), n - 1): items 0..15 read in[0..13], items 48..63
  // in[46..59] with n = 60.
  auto a = analyse_corpus("helpers_and_offsets", "clamped_copy");
  ArgValues v = values(3, {{2, bytes_of<int32_t>(60)}});
  EXPECT_EQ(band_ranges(evaluate(a, geometry_1d(64, 16), v, 0, 1).args[0].reads), (Ranges{{0, 56}}));
  EXPECT_EQ(band_ranges(evaluate(a, geometry_1d(64, 16), v, 3, 4).args[0].reads), (Ranges{{184, 240}}));
}

TEST(BoundedFootprint, ClampWithLoAboveHiFallsBack) {
  auto a = analyse(
      "__kernel void k(__global const int* s, __global int* d, int lo, int hi) {\n"
      "  int i = get_global_id(0);\n"
      "  d[i] = s[clamp(i, lo, hi)];\n"
      "}\n",
      "k");
  auto run = [&](int32_t lo, int32_t hi) {
    return evaluate(a, geometry_1d(16, 8), values(4, {{2, bytes_of(lo)}, {3, bytes_of(hi)}}), 0, 1);
  };
  Footprint ordered = run(5, 10);  // items 0..7 read s[5..7]
  EXPECT_EQ(ordered.args[0].read, FootprintTier::Exact);
  EXPECT_EQ(band_ranges(ordered.args[0].reads), (Ranges{{20, 32}}));
  EXPECT_EQ(run(10, 5).args[0].read, FootprintTier::Whole) << "lo > hi is undefined in OpenCL";
}

TEST(BoundedFootprint, OperandsThatWrapAroundFallBack) {
  // min(i - 1u, n): item 0 reads s[n] (i - 1u wraps), which the hull of i - 1 would miss.
  auto wrapping = analyse_corpus("clamp_gathers", "wrapping_min");
  ArgValues v = values(3, {{2, bytes_of<uint32_t>(40)}});
  EXPECT_EQ(evaluate(wrapping, geometry_1d(64, 8), v, 0, 1).args[0].read, FootprintTier::Whole);
  Footprint later = evaluate(wrapping, geometry_1d(64, 8), v, 1, 2);  // items 8..15: s[7..14]
  EXPECT_EQ(band_ranges(later.args[0].reads), (Ranges{{28, 60}}));
  // A narrowing cast inside an operand: (uchar)i is not i past 255.
  auto narrowing = analyse(
      "__kernel void k(__global const int* s, __global int* d) {\n"
      "  int i = get_global_id(0);\n"
      "  d[i] = s[min((int)(uchar)i, 300)];\n"
      "}\n",
      "k");
  EXPECT_EQ(band_ranges(evaluate(narrowing, geometry_1d(512, 256), values(2, {}), 0, 1).args[0].reads),
            (Ranges{{0, 1024}}));
  EXPECT_EQ(evaluate(narrowing, geometry_1d(512, 256), values(2, {}), 1, 2).args[0].read, FootprintTier::Whole);
}

TEST(BoundedFootprint, StoresThroughMinAreNotModelled) {
  auto a = analyse_corpus("clamp_gathers", "clamped_store");
  Footprint fp = evaluate(a, geometry_1d(64, 8), values(3, {{2, bytes_of<int32_t>(64)}}), 0, 1);
  EXPECT_EQ(fp.args[0].read, FootprintTier::Exact);
  EXPECT_EQ(band_ranges(fp.args[0].reads), (Ranges{{0, 32}}));
  EXPECT_EQ(fp.args[1].write, FootprintTier::Diff);
  EXPECT_FALSE(fp.args[1].writes_cover);
  EXPECT_FALSE(fp.args[1].writes_injective);
  // A read-modify-write through min is not modelled either way.
  auto rmw = analyse(
      "__kernel void k(__global int* d, int n) {\n"
      "  int i = get_global_id(0);\n"
      "  d[min(i, n)] += 1;\n"
      "}\n",
      "k");
  Footprint both = evaluate(rmw, geometry_1d(16, 8), values(2, {{1, bytes_of<int32_t>(4)}}), 0, 1);
  EXPECT_EQ(both.args[0].read, FootprintTier::Whole);
  EXPECT_EQ(both.args[0].write, FootprintTier::Diff);
}

// Repetitions of a band that touch or overlap are one range however many there are; apart, each is
// its own, and past max_ranges the set is their hull.
TEST(BandRanges, TouchingRepetitionsAreOneRange) {
  EXPECT_EQ(band_ranges({ByteBand{4, 260, 256, 1000}}), (Ranges{{4, 256 * 1000 + 4}}));
  EXPECT_EQ(band_ranges({ByteBand{0, 300, 256, 3}}), (Ranges{{0, 812}}));  // overlapping
  EXPECT_EQ(band_ranges({ByteBand{0, 4, 0, 5}}), (Ranges{{0, 4}}));
  EXPECT_EQ(band_ranges({ByteBand{0, 4, 8, 3}}), (Ranges{{0, 4}, {8, 12}, {16, 20}}));
  EXPECT_EQ(band_ranges({ByteBand{0, 4, 8, 3}, ByteBand{4, 8, 8, 3}}), (Ranges{{0, 24}}));
  EXPECT_EQ(band_ranges({ByteBand{0, 4, 8, 3}, ByteBand{100, 356, 256, 2}}),
            (Ranges{{0, 4}, {8, 12}, {16, 20}, {100, 612}}));
  EXPECT_EQ(band_ranges({ByteBand{0, 4, 8, 3}}, 2), (Ranges{{0, 20}}));
  // Bands of many repetitions (kept for the next launch that asks): the same answer again, and the
  // hull where the limit is another.
  // Rows short of their seams, 8 bytes each, and rows that hold the seams: one range.
  const std::vector<ByteBand> rows{ByteBand{4, 4092, 4096, 300}, ByteBand{4090, 8190, 4096, 300}};
  bool hull = true;
  EXPECT_EQ(band_ranges(rows, 1 << 16, &hull), (Ranges{{4, 4096 * 299 + 8190}}));
  EXPECT_FALSE(hull);
  EXPECT_EQ(band_ranges(rows, 1 << 16, &hull), (Ranges{{4, 4096 * 299 + 8190}}));
  // The rows alone: 300 ranges, or their hull past the limit.
  EXPECT_EQ(band_ranges({rows[0]}, 1 << 16, &hull).size(), 300u);
  EXPECT_FALSE(hull);
  EXPECT_EQ(band_ranges({rows[0]}, 299, &hull), (Ranges{{4, 4096 * 299 + 4092}}));
  EXPECT_TRUE(hull);
}

}  // namespace
}  // namespace coex::kernel::testing
