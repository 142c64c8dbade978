// Footprints of indices whose C value may differ from their affine form: narrowing conversions and
// 32-bit arithmetic that wraps around for the launch's values (FootprintModel::Fit). The corpus
// program narrowing_casts runs such kernels under the oracle; these are the launches too large for it.
#include <gtest/gtest.h>

#include "kernel/footprint.h"
#include "kernel_footprint_fixture.h"

namespace coex::kernel::testing {
namespace {

const char* kIntCopy = R"(
__kernel void int_copy(__global const float* in, __global float* out) {
  int i = get_global_id(0);
  out[i] = in[i];
})";

TEST(CastFootprint, IntFromGlobalIdStaysExactBelowTwoToThe31) {
  Analysed a = analyse(kIntCopy, "int_copy");
  // 2^24 items in groups of 256: the second half, items 2^23 .. 2^24 - 1.
  Footprint fp = evaluate(a, geometry_1d(uint64_t(1) << 24, 256), values(2, {}), 1 << 15, 1 << 16);
  EXPECT_EQ(fp.args[0].read, FootprintTier::Exact);
  EXPECT_EQ(band_ranges(fp.args[0].reads), (Ranges{{uint64_t(4) << 23, uint64_t(4) << 24}}));
  EXPECT_EQ(fp.args[1].write, FootprintTier::Exact);
  EXPECT_TRUE(fp.args[1].writes_cover);
  EXPECT_TRUE(fp.args[1].writes_injective);
}

TEST(CastFootprint, IntFromGlobalIdPastTwoToThe31FallsBack) {
  Analysed a = analyse(kIntCopy, "int_copy");
  // Ids from 2^31 - 64 on: the int is negative from 2^31 on.
  LaunchGeometry g = geometry_1d(128, 64, (uint64_t(1) << 31) - 64);
  Footprint low = evaluate(a, g, values(2, {}), 0, 1);
  EXPECT_EQ(low.args[0].read, FootprintTier::Exact);
  EXPECT_EQ(low.args[1].write, FootprintTier::Exact);
  EXPECT_FALSE(low.args[1].writes_injective);  // over the launch, i wraps around
  Footprint high = evaluate(a, g, values(2, {}), 1, 2);
  EXPECT_EQ(high.args[0].read, FootprintTier::Whole);
  EXPECT_EQ(high.args[1].write, FootprintTier::Diff);
}

TEST(CastFootprint, UintRowMajorIndexThatWrapsForTheLaunch) {
  Analysed a = analyse(R"(
__kernel void rows(__global const float* in, __global float* out, uint w) {
  uint x = get_global_id(0), y = get_global_id(1);
  uint idx = y * w + x;
  out[idx] = in[idx];
})",
                       "rows");
  // w = 2^20, 64 x 8192 items: y * w + x passes 2^32 from row 4096 on.
  ArgValues v = values(3, {{2, bytes_of<uint32_t>(1u << 20)}});
  LaunchGeometry g = geometry_2d(64, 8192, 64, 1, 1);
  Footprint low = evaluate(a, g, v, 0, 4096);
  EXPECT_EQ(low.args[0].read, FootprintTier::Exact);
  EXPECT_EQ(low.args[1].write, FootprintTier::Exact);
  EXPECT_FALSE(low.args[1].writes_injective);
  Footprint high = evaluate(a, g, v, 4096, 8192);
  EXPECT_EQ(high.args[0].read, FootprintTier::Whole);
  EXPECT_EQ(high.args[1].write, FootprintTier::Diff);
  // w = 64: it never does.
  v = values(3, {{2, bytes_of<uint32_t>(64)}});
  high = evaluate(a, g, v, 4096, 8192);
  EXPECT_EQ(high.args[1].write, FootprintTier::Exact);
  EXPECT_TRUE(high.args[1].writes_injective);
  EXPECT_TRUE(high.args[1].writes_cover);
}

TEST(CastFootprint, NegativeIndexIsClippedNotAFailure) {
  // The app's bug: item 0 reads in[-1]. The footprint is the bytes inside the buffer.
  Analysed a = analyse(R"(
__kernel void behind(__global const float* in, __global float* out) {
  int i = get_global_id(0);
  out[i] = in[i - 1];
})",
                       "behind");
  ArgValues v = values(2, {});
  v.buffer_sizes = {256, 256};
  Footprint fp = evaluate(a, geometry_1d(64, 8), v, 0, 1);
  EXPECT_EQ(fp.args[0].read, FootprintTier::Exact);
  EXPECT_EQ(band_ranges(fp.args[0].reads), (Ranges{{0, 28}}));
}

TEST(CastFootprint, GuardThroughACastIsLeftOut) {
  auto a = analyse_corpus("narrowing_casts", "uchar_guard");
  // Items 256..319 pass (uchar)i < 16 for 256..271: the chunk's whole range, not None.
  Footprint fp = evaluate(a, geometry_1d(1024, 64), values(2, {}), 4, 5);
  EXPECT_EQ(fp.args[1].write, FootprintTier::Exact);
  EXPECT_EQ(band_ranges(fp.args[1].writes), (Ranges{{1024, 1280}}));
  EXPECT_FALSE(fp.args[1].writes_cover);
  // Items 0..63: (uchar)i is i, the guard applies.
  fp = evaluate(a, geometry_1d(1024, 64), values(2, {}), 0, 1);
  EXPECT_EQ(band_ranges(fp.args[1].writes), (Ranges{{0, 64}}));
  EXPECT_TRUE(fp.args[1].writes_cover);
}

}  // namespace
}  // namespace coex::kernel::testing
