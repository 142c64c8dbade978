// Footprints of the affine tier: byte ranges that a range of work-groups reads and writes, for small
// launches whose ranges are worked out by hand in each test.
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "kernel/footprint.h"
#include "kernel/kernel_analysis.h"
#include "kernel_corpus.h"
#include "kernel_footprint_fixture.h"
#include "kernel_launch_spec.h"

namespace coex::kernel {
namespace {

using testing::analyse;
using testing::analyse_corpus;
using testing::Analysed;
using testing::bytes_of;
using testing::evaluate;
using testing::geometry_1d;
using testing::geometry_2d;
using testing::Ranges;
using testing::values;

TEST(Footprint, VectorAddReadsAndWritesItsGroups) {
  auto a = analyse_corpus("vector_add", "vector_add");
  // 64 items in groups of 16; groups [1, 3) are items 16..47, bytes 64..192 of each float array.
  Footprint fp = evaluate(a, geometry_1d(64, 16), values(4, {{3, bytes_of<uint32_t>(64)}}), 1, 3);
  ASSERT_EQ(fp.args.size(), 4u);
  for (int arg : {0, 1}) {
    EXPECT_EQ(fp.args[arg].read, FootprintTier::Exact);
    EXPECT_EQ(fp.args[arg].write, FootprintTier::None);
    EXPECT_EQ(band_ranges(fp.args[arg].reads), (Ranges{{64, 192}}));
  }
  EXPECT_EQ(fp.args[2].read, FootprintTier::None);
  EXPECT_EQ(fp.args[2].write, FootprintTier::Exact);
  EXPECT_EQ(band_ranges(fp.args[2].writes), (Ranges{{64, 192}}));
  EXPECT_TRUE(fp.args[2].writes_injective);
  EXPECT_TRUE(fp.args[2].writes_cover) << "the store is under if (i < n), and i < n for all of them";
  EXPECT_EQ(fp.args[3].read, FootprintTier::None) << "a scalar has no footprint";
}

// The answers kept for the latest inputs (footprint_memo.cpp) are the answers to those inputs: the
// same chunk under another scalar argument, another buffer size or another model gets its own.
TEST(Footprint, KeptAnswersAreThoseOfTheirInputs) {
  auto a = analyse_corpus("stencil_1d", "stencil_1d");
  ArgValues wide = values(3, {{2, bytes_of<int32_t>(32)}}), narrow = values(3, {{2, bytes_of<int32_t>(12)}});
  wide.buffer_sizes = narrow.buffer_sizes = {128, 100, 0};
  ArgValues short_input = wide;
  short_input.buffer_sizes = {64, 100, 0};
  const Ranges wide_reads = band_ranges(evaluate(a, geometry_1d(32, 8), wide, 1, 3).args[0].reads);
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(band_ranges(evaluate(a, geometry_1d(32, 8), wide, 1, 3).args[0].reads), wide_reads) << round;
    EXPECT_EQ(band_ranges(evaluate(a, geometry_1d(32, 8), short_input, 1, 3).args[0].reads), (Ranges{{28, 64}}))
        << round;
    // Items 8..23 store out[i] where i < n: with n = 12, items 8..11 alone.
    EXPECT_EQ(band_ranges(evaluate(a, geometry_1d(32, 8), narrow, 1, 3).args[1].writes), (Ranges{{32, 48}})) << round;
    EXPECT_EQ(band_ranges(evaluate(a, geometry_1d(32, 8), wide, 1, 3).args[1].writes), (Ranges{{32, 96}})) << round;
  }
  // Other groups, another geometry: their own answers.
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(band_ranges(evaluate(a, geometry_1d(32, 8), wide, 0, 1).args[1].writes), (Ranges{{0, 32}})) << round;
    EXPECT_EQ(band_ranges(evaluate(a, geometry_1d(32, 4), wide, 1, 3).args[1].writes), (Ranges{{16, 48}})) << round;
    EXPECT_EQ(band_ranges(evaluate(a, geometry_1d(32, 8, 8), wide, 1, 3).args[1].writes), (Ranges{{64, 100}})) << round;
  }
  // A copy of the model answers alike; another model of another kernel answers for its own.
  FootprintModel copy = *a.kernel->footprint;
  EXPECT_EQ(band_ranges(copy.evaluate(geometry_1d(32, 8), wide, 1, 3).args[0].reads), wide_reads);
  auto other = analyse_corpus("vector_add", "vector_add");
  EXPECT_EQ(band_ranges(evaluate(other, geometry_1d(32, 8), wide, 1, 3).args[0].reads), (Ranges{{32, 96}}));
}

TEST(Footprint, ClippedToTheBufferAndToZero) {
  auto a = analyse_corpus("stencil_1d", "stencil_1d");
  ArgValues v = values(3, {{2, bytes_of<int32_t>(32)}});
  v.buffer_sizes = {128, 100, 0};
  // Group 0 of 8 items reads in[-1..8]: clipped at 0, bytes [0, 36).
  Footprint first = evaluate(a, geometry_1d(32, 8), v, 0, 1);
  EXPECT_EQ(band_ranges(first.args[0].reads), (Ranges{{0, 36}}));
  EXPECT_EQ(band_ranges(first.args[1].writes), (Ranges{{0, 32}}));
  // Groups [3, 4): items 24..31 read in[23..32], bytes [92, 132) clipped to the 128-byte buffer;
  // out is 100 bytes long.
  Footprint last = evaluate(a, geometry_1d(32, 8), v, 3, 4);
  EXPECT_EQ(band_ranges(last.args[0].reads), (Ranges{{92, 128}}));
  EXPECT_EQ(band_ranges(last.args[1].writes), (Ranges{{96, 100}}));
}

TEST(Footprint, MatrixProductSplitByRows) {
  auto a = analyse_corpus("matmul_2d", "matmul");
  // M=4 rows, N=8 columns, K=3; items (8, 4) in groups (4, 2); rows 2..3 are group 1 of dimension 1.
  ArgValues v = values(6, {{3, bytes_of<int32_t>(4)}, {4, bytes_of<int32_t>(8)}, {5, bytes_of<int32_t>(3)}});
  Footprint fp = evaluate(a, geometry_2d(8, 4, 4, 2, 1), v, 1, 2);
  EXPECT_EQ(band_ranges(fp.args[0].reads), (Ranges{{24, 48}}));  // A[row*3 + k]: elements 6..11
  EXPECT_EQ(band_ranges(fp.args[1].reads), (Ranges{{0, 96}}));   // B[k*8 + col]: all 24
  EXPECT_EQ(band_ranges(fp.args[2].writes), (Ranges{{64, 128}}));  // C rows 2..3
  EXPECT_TRUE(fp.args[2].writes_injective);
}

TEST(Footprint, MatrixProductSplitByColumnsGivesStridedBands) {
  auto a = analyse_corpus("matmul_2d", "matmul");
  ArgValues v = values(6, {{3, bytes_of<int32_t>(4)}, {4, bytes_of<int32_t>(8)}, {5, bytes_of<int32_t>(3)}});
  // Columns 4..7 are group 1 of dimension 0.
  Footprint fp = evaluate(a, geometry_2d(8, 4, 4, 2, 0), v, 1, 2);
  EXPECT_EQ(band_ranges(fp.args[2].writes), (Ranges{{16, 32}, {48, 64}, {80, 96}, {112, 128}}));
  EXPECT_EQ(band_ranges(fp.args[1].reads), (Ranges{{16, 32}, {48, 64}, {80, 96}}));
  EXPECT_EQ(band_ranges(fp.args[0].reads), (Ranges{{0, 48}}));
  ASSERT_FALSE(fp.args[2].writes.empty());
  EXPECT_EQ(fp.args[2].writes[0], (ByteBand{16, 32, 32, 4})) << "one band of four rows, not four ranges";
}

TEST(Footprint, ReductionWritesOneElementPerGroup) {
  auto a = analyse_corpus("reduction", "reduce_sum");
  Footprint fp = evaluate(a, geometry_1d(64, 8), values(4, {{3, bytes_of<uint32_t>(64)}}), 2, 5);
  EXPECT_EQ(band_ranges(fp.args[0].reads), (Ranges{{64, 160}}));  // in[16..39]
  EXPECT_EQ(band_ranges(fp.args[1].writes), (Ranges{{8, 20}}));   // partial[2..4]
  EXPECT_FALSE(fp.args[1].writes_injective) << "every item of a group names the same element";
  EXPECT_EQ(fp.args[2].read, FootprintTier::None) << "__local memory is no buffer";
}

TEST(Footprint, LoopOverRowThroughDerivedPointerCoversItsBytes) {
  auto a = analyse_corpus("derived_pointers", "rows");
  // Rows of n=10 floats; items 2..3 (group 1 of 2) handle rows 2 and 3: bytes 80..160.
  Footprint fp = evaluate(a, geometry_1d(4, 2), values(3, {{2, bytes_of<int32_t>(10)}}), 1, 2);
  EXPECT_EQ(band_ranges(fp.args[0].writes), (Ranges{{80, 160}}));
  EXPECT_TRUE(fp.args[0].writes_cover) << "no condition, an exact loop";
  EXPECT_TRUE(fp.args[0].writes_injective);
  EXPECT_EQ(band_ranges(fp.args[1].reads), (Ranges{{80, 160}}));
}

TEST(Footprint, GridStrideLoopGivesStridedBands) {
  auto a = analyse_corpus("grid_stride", "scale_all");
  // Offset 16, 32 items in groups of 8: group 1 has i = 8..15, then i += 32 up to n-1 = 99:
  // elements 8..15, 40..47, 72..79 (104.. is past n).
  ArgValues v = values(3, {{1, bytes_of<float>(2.0f)}, {2, bytes_of<uint64_t>(100)}});
  Footprint fp = evaluate(a, geometry_1d(32, 8, 16), v, 1, 2);
  EXPECT_EQ(band_ranges(fp.args[0].reads), (Ranges{{32, 64}, {160, 192}, {288, 320}}));
  EXPECT_EQ(band_ranges(fp.args[0].writes), (Ranges{{32, 64}, {160, 192}, {288, 320}}));
  EXPECT_TRUE(fp.args[0].writes_injective);
  EXPECT_FALSE(fp.args[0].writes_cover) << "the last stretch is known only at its widest";
}

TEST(Footprint, StructFieldsAndVectorLoads) {
  auto advance = analyse_corpus("struct_args", "advance");
  // struct Params {float dt; int count;}: count 64, so `if (i >= params.count) return` stops nobody.
  std::vector<unsigned char> params = bytes_of<float>(0.5f), count = bytes_of<int32_t>(64);
  params.insert(params.end(), count.begin(), count.end());
  Footprint fp = evaluate(advance, geometry_1d(64, 8), values(3, {{1, params}}), 1, 2);
  // particles[8..15].x/.y/.z: bytes 0..12 of each 16-byte element.
  Ranges fields;
  for (uint64_t i = 8; i < 16; ++i) fields.push_back({16 * i, 16 * i + 12});
  EXPECT_EQ(band_ranges(fp.args[0].reads), fields);
  EXPECT_EQ(band_ranges(fp.args[0].writes), fields);
  // velocity[8..15].x/.y/.z: a swizzle loads the whole float4 (clang at -O0 does).
  EXPECT_EQ(band_ranges(fp.args[2].reads), (Ranges{{128, 256}}));
  // count 0: nobody gets past the return, nothing is read; the write tier stays exact (and empty).
  params = bytes_of<float>(0.5f);
  params.resize(8, 0);
  Footprint none = evaluate(advance, geometry_1d(64, 8), values(3, {{1, params}}), 1, 2);
  EXPECT_EQ(none.args[2].read, FootprintTier::None);
  EXPECT_EQ(none.args[0].write, FootprintTier::Exact);
  EXPECT_TRUE(band_ranges(none.args[0].writes).empty());

  auto copy = analyse_corpus("vload_vstore", "vec4_copy");
  Footprint vec = evaluate(copy, geometry_1d(64, 8), values(2, {}), 1, 2);
  EXPECT_EQ(band_ranges(vec.args[0].reads), (Ranges{{128, 256}}));  // vload4(i, src), i = 8..15
  EXPECT_EQ(band_ranges(vec.args[1].writes), (Ranges{{128, 256}}));
  EXPECT_TRUE(vec.args[1].writes_cover);
}

TEST(Footprint, ScalarStructFieldAsBound) {
  auto a = analyse(
      "typedef struct { int stride; int count; } Shape;\n"
      "__kernel void k(__global int* out, Shape s) {\n"
      "  for (int j = 0; j < s.count; ++j) out[get_global_id(0) * s.stride + j] = j;\n"
      "}\n",
      "k");
  std::vector<unsigned char> shape(8);
  int32_t stride = 10, count = 3;
  std::memcpy(shape.data(), &stride, 4);
  std::memcpy(shape.data() + 4, &count, 4);
  Footprint fp = evaluate(a, geometry_1d(4, 2), values(2, {{1, shape}}), 0, 1);
  // Items 0 and 1 write elements 0..2 and 10..12.
  EXPECT_EQ(band_ranges(fp.args[0].writes), (Ranges{{0, 12}, {40, 52}}));
  EXPECT_TRUE(fp.args[0].writes_cover);
  EXPECT_TRUE(fp.args[0].writes_injective);
}

TEST(Footprint, NonAffineIndexFallsBackToWholeAndDiff) {
  auto a = analyse(
      "__kernel void k(__global const int* idx, __global float* out, __global const float* in) {\n"
      "  int i = get_global_id(0);\n"
      "  out[idx[i]] = in[i / 2];\n"
      "}\n",
      "k");
  Footprint fp = evaluate(a, geometry_1d(16, 4), values(3, {}), 0, 2);
  EXPECT_EQ(fp.args[0].read, FootprintTier::Exact);
  EXPECT_EQ(band_ranges(fp.args[0].reads), (Ranges{{0, 32}}));
  EXPECT_EQ(fp.args[1].write, FootprintTier::Diff);
  EXPECT_EQ(fp.args[2].read, FootprintTier::Whole);
}

TEST(Footprint, AccessesInHelpersAreFollowedPerCall) {
  // via_helpers: store_value(out, i, load_value(in, i) * 2.0f); accumulate(acc, other, i).
  auto a = analyse_corpus("helper_writes_pointer", "via_helpers");
  Footprint fp = evaluate(a, geometry_1d(16, 4), values(4, {}), 1, 2);
  EXPECT_EQ(band_ranges(fp.args[0].reads), (Ranges{{16, 32}}));
  EXPECT_EQ(band_ranges(fp.args[1].writes), (Ranges{{16, 32}}));
  EXPECT_EQ(band_ranges(fp.args[2].reads), (Ranges{{16, 32}}));
  EXPECT_EQ(band_ranges(fp.args[2].writes), (Ranges{{16, 32}}));
  EXPECT_EQ(band_ranges(fp.args[3].reads), (Ranges{{16, 32}}));
  EXPECT_EQ(fp.args[3].write, FootprintTier::None);
  EXPECT_TRUE(fp.args[1].writes_injective && fp.args[1].writes_cover);
  // Through two helpers: forward_store(target, i) is store_value(p + 1, i - 1, 0): target[i].
  auto two = analyse_corpus("helper_writes_pointer", "via_two_levels");
  EXPECT_EQ(band_ranges(evaluate(two, geometry_1d(16, 4), values(2, {}), 1, 2).args[0].writes), (Ranges{{16, 32}}));
}

TEST(Footprint, HelpersThatCannotBeFollowedFallBack) {
  auto a = analyse(
      "void put(__global int* p, int i) { p[i] = 1; }\n"
      "int twice(int i) { if (i > 3) return 2 * i; return i; }\n"
      "__kernel void k(__global int* a, __global int* b, int flip, __global int* c) {\n"
      "  put(flip ? a : b, get_global_id(0));\n"  // which buffer: not known
      "  c[twice(get_global_id(0))] = 0;\n"        // a helper with a branch: no index
      "}\n",
      "k");
  Footprint fp = evaluate(a, geometry_1d(16, 4), values(4, {{2, bytes_of<int32_t>(1)}}), 0, 1);
  EXPECT_EQ(fp.args[0].write, FootprintTier::Diff);
  EXPECT_EQ(fp.args[1].write, FootprintTier::Diff);
  EXPECT_EQ(fp.args[3].write, FootprintTier::Diff);
}

TEST(Footprint, IndexFromAHelperFunction) {
  auto a = analyse(
      "int at(int r, int c, int w) { int row = r * w; return row + c; }\n"
      "__kernel void k(__global float* out, __global const float* in, int w) {\n"
      "  int r = get_global_id(1), c = get_global_id(0);\n"
      "  out[at(r, c, w)] = in[at(r + 1, at(0, c, w), w)];\n"
      "}\n",
      "k");
  Footprint fp = evaluate(a, geometry_2d(8, 4, 4, 2, 1), values(3, {{2, bytes_of<int32_t>(8)}}), 1, 2);
  // Rows 2..3 of 8 floats; in is read one row further down.
  EXPECT_EQ(band_ranges(fp.args[0].writes), (Ranges{{64, 128}}));
  EXPECT_EQ(band_ranges(fp.args[1].reads), (Ranges{{96, 160}}));
  EXPECT_TRUE(fp.args[0].writes_injective && fp.args[0].writes_cover);
}

TEST(Footprint, GuardsNarrowTheFootprint) {
  auto add = analyse_corpus("vector_add", "vector_add");
  // n = 40: groups [1, 3) of 16 items are items 16..47, of which 16..39 pass `if (i < n)`.
  Footprint fp = evaluate(add, geometry_1d(64, 16), values(4, {{3, bytes_of<uint32_t>(40)}}), 1, 3);
  EXPECT_EQ(band_ranges(fp.args[0].reads), (Ranges{{64, 160}}));
  EXPECT_EQ(band_ranges(fp.args[2].writes), (Ranges{{64, 160}}));
  EXPECT_TRUE(fp.args[2].writes_cover);
  // A chunk past n reads and writes nothing.
  Footprint past = evaluate(add, geometry_1d(64, 16), values(4, {{3, bytes_of<uint32_t>(40)}}), 3, 4);
  EXPECT_EQ(past.args[0].read, FootprintTier::None);
  EXPECT_TRUE(band_ranges(past.args[2].writes).empty());

  // An early return at the ends, and the store before it under its own test.
  auto stencil = analyse_corpus("stencil_1d", "stencil_1d");
  ArgValues v = values(3, {{2, bytes_of<int32_t>(30)}});
  Footprint first = evaluate(stencil, geometry_1d(32, 8), v, 0, 1);
  EXPECT_EQ(band_ranges(first.args[0].reads), (Ranges{{0, 36}}));  // in[0..8]
  EXPECT_TRUE(first.args[1].writes_injective) << "both stores of a work-item go to out[i]";
  Footprint last = evaluate(stencil, geometry_1d(32, 8), v, 3, 4);
  EXPECT_EQ(band_ranges(last.args[0].reads), (Ranges{{92, 120}}));  // in[23..29]: i < 30 only
  EXPECT_EQ(band_ranges(last.args[1].writes), (Ranges{{96, 120}}));

  // get_local_id(0) == 0: one item per group stores; the loop it runs is its own.
  auto sums = analyse_corpus("two_kernels", "group_sums");
  Footprint g = evaluate(sums, geometry_1d(64, 16), values(2, {}), 1, 2);
  EXPECT_EQ(band_ranges(g.args[0].reads), (Ranges{{64, 128}}));  // data[16 + k], k < 16
  EXPECT_TRUE(g.args[1].writes_cover);
}

TEST(Footprint, UnsignedGuardsThatMayWrapAreLeftOut) {
  auto a = analyse(
      "__kernel void wraps(__global int* out) { uint i = get_global_id(0); if (i - 5u > 10u) out[i] = 1; }\n"
      "__kernel void signed_test(__global int* out) { int i = get_global_id(0); if (i - 5 > 10) out[i] = 1; }\n",
      "wraps");
  // Items 0..4 store: 0 - 5u wraps to a large number. Read as integers, the test would keep none.
  Footprint fp = evaluate(a, geometry_1d(16, 16), values(1, {}), 0, 1);
  EXPECT_EQ(band_ranges(fp.args[0].writes), (Ranges{{0, 64}}));
  EXPECT_FALSE(fp.args[0].writes_cover);
  const KernelInfo* s = a.info.find("signed_test");
  ASSERT_TRUE(s && s->footprint);
  Footprint none = s->footprint->evaluate(geometry_1d(16, 16), values(1, {}), 0, 1);
  EXPECT_TRUE(band_ranges(none.args[0].writes).empty()) << "signed: i > 15 holds for none of 0..15";
  Footprint some = s->footprint->evaluate(geometry_1d(32, 16), values(1, {}), 1, 2);
  EXPECT_EQ(band_ranges(some.args[0].writes), (Ranges{{64, 128}}));
  EXPECT_TRUE(some.args[0].writes_cover);
}

TEST(Footprint, MissingScalarValueFallsBack) {
  auto a = analyse_corpus("matmul_2d", "matmul");
  Footprint fp = evaluate(a, geometry_2d(8, 4, 4, 2, 1), values(6, {}), 1, 2);
  EXPECT_EQ(fp.args[0].read, FootprintTier::Whole);
  EXPECT_EQ(fp.args[2].write, FootprintTier::Diff);
}

TEST(Footprint, InjectivityNeedsEveryWorkItemToMove) {
  auto a = analyse(
      "__kernel void spread(__global float* o) { o[2 * get_global_id(0)] = 1.0f; }\n"
      "__kernel void same(__global float* o) { o[get_local_id(0)] = 1.0f; }\n"
      "__kernel void grid(__global float* o, int w) { o[get_global_id(1) * w + get_global_id(0)] = 1.0f; }\n",
      "spread");
  Footprint spread = evaluate(a, geometry_1d(16, 4), values(1, {}), 1, 2);
  EXPECT_TRUE(spread.args[0].writes_injective);
  EXPECT_TRUE(spread.args[0].writes_cover);
  ASSERT_FALSE(spread.args[0].writes.empty());
  EXPECT_EQ(spread.args[0].writes[0], (ByteBand{32, 36, 8, 4}));  // items 4..7 at 8-byte steps

  const KernelInfo* same = a.info.find("same");
  ASSERT_TRUE(same && same->footprint);
  EXPECT_FALSE(same->footprint->evaluate(geometry_1d(16, 4), values(1, {}), 0, 4).args[0].writes_injective);

  const KernelInfo* grid = a.info.find("grid");
  ASSERT_TRUE(grid && grid->footprint);
  auto wide = grid->footprint->evaluate(geometry_2d(8, 4, 4, 2, 1), values(2, {{1, bytes_of<int32_t>(8)}}), 0, 1);
  auto narrow = grid->footprint->evaluate(geometry_2d(8, 4, 4, 2, 1), values(2, {{1, bytes_of<int32_t>(4)}}), 0, 1);
  EXPECT_TRUE(wide.args[0].writes_injective);
  EXPECT_FALSE(narrow.args[0].writes_injective) << "rows of 4 overlap 8 columns";
}

TEST(Footprint, MacroConstantsAndMacroArguments) {
  auto a = analyse(
      "#define STORE(p, i, v) (p)[i] = (v)\n"
      "#define N 16\n"
      "__kernel void k(__global float* dst, __global const float* src, int w) {\n"
      "  int r = get_global_id(1), c = get_global_id(0);\n"
      "  STORE(dst, r * w + c, src[r * N + c + 1] * 2.0f);\n"
      "  dst[r * W + c] += 1.0f;\n"
      "}\n",
      "k", "-DW=8");
  Footprint fp = evaluate(a, geometry_2d(8, 4, 4, 2, 1), values(3, {{2, bytes_of<int32_t>(8)}}), 1, 2);
  // Rows 2..3: dst[r*8 + c] is elements 16..31; src[r*16 + c + 1] is 33..40 and 49..56.
  EXPECT_EQ(band_ranges(fp.args[0].writes), (Ranges{{64, 128}}));
  EXPECT_EQ(band_ranges(fp.args[0].reads), (Ranges{{64, 128}}));
  EXPECT_EQ(band_ranges(fp.args[1].reads), (Ranges{{132, 164}, {196, 228}}));
}

TEST(Footprint, OperatorsInsideMacroBodiesAreReadFromTheDefinition) {
  // STORE(dst, IDX(r, c, w), LOAD(src, IDX(r, c, w)) * 2.0f): IDX's '*' and '+' come from its body,
  // where libclang (up to 16) gives no token positions, inside the arguments of STORE and LOAD.
  auto a = analyse_corpus("macros", "macro_access");
  ArgValues v = values(3, {{2, bytes_of<int32_t>(8)}});
  Footprint fp = evaluate(a, geometry_2d(8, 4, 4, 2, 1), v, 1, 2);
  EXPECT_EQ(band_ranges(fp.args[0].reads), (Ranges{{64, 128}}));  // rows 2..3 of 8 floats
  EXPECT_EQ(band_ranges(fp.args[1].writes), (Ranges{{64, 128}}));
  EXPECT_TRUE(fp.args[1].writes_injective && fp.args[1].writes_cover);
}

TEST(Footprint, MacroBodiesThatCannotBeReadAreNotGuessed) {
  auto a = analyse(
      "#define W2 (4 * 2)\n"
      "#define AT(r, c) ((r) * W2 + (c))\n"             // another macro with operators inside
      "#define BACK(a, b) ((b) + (int)-(a))\n"          // a prefix '-' after a cast looks binary
      "#define TWICE(x) ((x) + (x))\n"
      "#define SUB(a, b) ((a) - (b))\n"
      "__kernel void k(__global int* p, __global int* q, __global int* r) {\n"
      "  int i = get_global_id(0);\n"
      "  p[AT(0, i)] = 1;\n"
      "  q[BACK(1, i)] = 2;\n"
      "  r[TWICE(SUB(i, 1))] = 3;\n"  // SUB's use is expanded twice: its '-' appears twice
      "}\n",
      "k");
  Footprint fp = evaluate(a, geometry_1d(16, 4), values(3, {}), 1, 2);
  EXPECT_EQ(fp.args[0].write, FootprintTier::Diff);
  EXPECT_EQ(fp.args[1].write, FootprintTier::Diff);
  EXPECT_EQ(fp.args[2].write, FootprintTier::Diff);
}

TEST(Footprint, OnlySplittableKernelsHaveAModel) {
  for (const auto& program : testing::load_corpus()) {
    ProgramInfo info = analyze_program(program.source, program.build_options);
    for (const auto& k : info.kernels) {
      EXPECT_EQ(k.footprint != nullptr, k.not_split_reason.empty()) << k.name;
      if (!k.footprint) continue;
      // Any launch, even without argument values, gives a footprint of the right shape; a buffer
      // the kernel writes never comes back as untouched, one it never reads never as read.
      for (uint32_t dims = 1; dims <= 3; ++dims) {
        LaunchGeometry g;
        g.work_dim = dims;
        for (uint32_t d = 0; d < dims; ++d) g.global_size[d] = 8, g.local_size[d] = 4;
        g.split_dim = dims - 1;
        Footprint fp = k.footprint->evaluate(g, ArgValues{}, 0, 1);
        ASSERT_EQ(fp.args.size(), k.args.size()) << k.name;
        for (size_t i = 0; i < k.args.size(); ++i) {
          if (k.args[i].kind != ArgKind::GlobalPointer) continue;
          EXPECT_EQ(fp.args[i].write != FootprintTier::None, k.args[i].written) << k.name << " " << k.args[i].name;
          // A chunk whose items all stop before a load reads nothing (a 2-D stencil launched in 1-D).
          if (!k.args[i].read) { EXPECT_EQ(fp.args[i].read, FootprintTier::None) << k.name << " " << k.args[i].name; }
        }
      }
    }
  }
}

TEST(Footprint, EmptyRangeOfGroupsAndBadGeometryAreSafe) {
  auto a = analyse_corpus("vector_add", "vector_add");
  ArgValues v = values(4, {{3, bytes_of<uint32_t>(64)}});
  Footprint none = evaluate(a, geometry_1d(64, 16), v, 2, 2);
  EXPECT_EQ(none.args[0].read, FootprintTier::Whole) << "nothing to evaluate: never claim an exact empty set";
  LaunchGeometry bad = geometry_1d(64, 0);
  Footprint fp = evaluate(a, bad, v, 0, 1);
  EXPECT_EQ(fp.args[2].write, FootprintTier::Diff);
}

TEST(Footprint, OffsetsBeyondInt64FallBackInsteadOfOverflowing) {
  // Found by the fuzzer: bytes 3 * 2^61 + k * 2^59 for k < 8 pass 2^63 from k = 4 on; the band's
  // last repetition must be checked before it is clipped, not wrap around.
  auto a = analyse("__kernel void k(__global int* p, long s, long b) { p[get_global_id(0) * s + b] = 0; }", "k");
  ArgValues v = values(3, {{1, bytes_of<int64_t>(int64_t(1) << 57)}, {2, bytes_of<int64_t>(int64_t(3) << 59)}});
  EXPECT_EQ(evaluate(a, geometry_1d(8, 8), v, 0, 1).args[0].write, FootprintTier::Diff);
  v.bytes[2] = bytes_of<int64_t>(0);
  EXPECT_EQ(evaluate(a, geometry_1d(8, 8), v, 0, 1).args[0].write, FootprintTier::Exact) << "the same kernel in range";
  // A global offset past INT64_MAX is no negative number.
  EXPECT_EQ(evaluate(a, geometry_1d(8, 8, uint64_t(1) << 63), v, 0, 1).args[0].write, FootprintTier::Diff);
  // Work-groups past the launch's own are no chunk of it.
  EXPECT_EQ(evaluate(a, geometry_1d(8, 8), v, 0, 2).args[0].write, FootprintTier::Diff);
}

const char* tier_name(FootprintTier t) {
  switch (t) {
    case FootprintTier::None: return "none";
    case FootprintTier::Exact: return "exact";
    case FootprintTier::Whole: return "whole";
    case FootprintTier::Diff: return "diff";
  }
  return "?";
}

// Every corpus kernel with a launch: the tiers its sidecar expects, for the first half of the
// work-groups along the dimension coex splits (kernel_corpus.h). One line per difference.
TEST(Footprint, CorpusTiersAtTheirLaunches) {
  size_t kernels = 0;
  std::string differences;
  for (const auto& program : testing::load_corpus()) {
    ProgramInfo info = analyze_program(program.source, program.build_options);
    for (const auto& want : program.expected.at("kernels")) {
      if (!want.contains("launch")) continue;
      std::string where = program.name + ": " + want.at("name").get<std::string>();
      const KernelInfo* k = info.find(want.at("name").get<std::string>());
      std::string error;
      testing::CorpusLaunch launch;
      if (k && k->footprint) launch = testing::make_launch(want.at("launch"), *k, error);
      if (!k || !k->footprint || !error.empty()) {
        differences += where + ": no footprint or a bad launch " + error + "\n";
        continue;
      }
      uint64_t groups = launch.groups_along_split();
      Footprint fp = k->footprint->evaluate(launch.geometry, launch.values, 0, (groups + 1) / 2);
      ++kernels;
      const auto& args = want.at("args");
      for (size_t i = 0; i < args.size() && i < fp.args.size(); ++i) {
        const ArgFootprint& a = fp.args[i];
        std::map<std::string, std::string> got = {{"read_tier", tier_name(a.read)},
                                                  {"write_tier", tier_name(a.write)},
                                                  {"injective", a.writes_injective ? "true" : "false"},
                                                  {"cover", a.writes_cover ? "true" : "false"}};
        for (const auto& [field, value] : got) {
          if (!args[i].contains(field)) continue;
          const auto& expected = args[i].at(field);
          std::string text = expected.is_string() ? expected.get<std::string>() : expected.dump();
          if (text != value)
            differences += where + " " + args[i].at("name").get<std::string>() + " " + field + ": " + value +
                           ", expected " + text + "\n";
        }
      }
    }
  }
  EXPECT_EQ(differences, "");
  EXPECT_GE(kernels, 1u);
}

TEST(Footprint, BandsOfVeryManyRepetitionsAreClippedAtOnce) {
  // Found by the fuzzer (a hang): m[r * cols + col] for r < 2^28 is 2^28 repetitions of a band, all
  // but four past the end of a 64-byte buffer; clipping them one by one took over 20 s (sanitizers).
  // (The fuzzer's 2^30 rows make the int r * cols overflow: that load is Whole now.)
  auto a = analyse_corpus("matrix_vector", "matvec_transposed");
  ArgValues v = values(5, {{3, bytes_of<int32_t>(1 << 28)}, {4, bytes_of<int32_t>(4)}});
  v.buffer_sizes = {64, 0, 0, 0, 0};
  Footprint fp = evaluate(a, geometry_1d(4, 2), v, 0, 1);  // columns 0 and 1
  EXPECT_EQ(band_ranges(fp.args[0].reads), (Ranges{{0, 8}, {16, 24}, {32, 40}, {48, 56}}));
}

TEST(BandRanges, MergesAndFallsBackToTheHull) {
  std::vector<ByteBand> bands = {{0, 4, 8, 3}, {4, 8, 0, 1}, {100, 104, 0, 1}};
  // [0,4) [8,12) [16,20) from the strided band, [4,8) joins the first two.
  EXPECT_EQ(band_ranges(bands), (Ranges{{0, 12}, {16, 20}, {100, 104}}));
  EXPECT_EQ(band_ranges(bands, 2), (Ranges{{0, 104}}));
  EXPECT_TRUE(band_ranges({}).empty());
}

}  // namespace
}  // namespace coex::kernel
