// The piece a first launch is probed with (exec/first_launch_probe.h): a block at the launch's offset of
// about 1/64 of its work-groups, the lower dimensions whole where they fit, and which launches may be
// probed at all: those that give the same result run twice; and which blocks run again.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "exec/first_launch_probe.h"

namespace {

using coex::exec::first_launch_probe::ArgumentRoots;
using coex::exec::first_launch_probe::kMinGroups;
using coex::exec::first_launch_probe::kShare;
using coex::exec::first_launch_probe::piece_of;
using coex::exec::first_launch_probe::runs_again;
using coex::exec::first_launch_probe::runs_twice_alike;
using coex::kernel::ArgInfo;
using coex::kernel::ArgKind;
using coex::kernel::KernelInfo;

TEST(FirstLaunchProbe, ABlockOfRowsOfTheHighestDimension) {
  // 16 rows of 4 groups of 16 x 16: one row is 1/16 of them, four rows 1/4; 64 rows make the share.
  const size_t global[2] = {64, 16 * 256}, local[2] = {16, 16};
  const auto piece = piece_of(2, nullptr, global, local);
  ASSERT_TRUE(piece);
  EXPECT_EQ(piece->block[0], 64u);  // the lower dimension whole
  EXPECT_EQ(piece->block[1], 16u * 4);
  EXPECT_EQ(piece->one_group[0], 16u);
  EXPECT_EQ(piece->one_group[1], 16u);
  EXPECT_DOUBLE_EQ(piece->scale, double(kShare));
  EXPECT_TRUE(piece->offset_zero);
}

TEST(FirstLaunchProbe, PartOfARowWhereOneRowIsMoreThanTheShare) {
  // benchmarks/matmul at 512: 32 x 32 groups of 16 x 16; one row of 32 groups is 1/32, so the block is
  // half a row.
  const size_t global[2] = {512, 512}, local[2] = {16, 16};
  const auto piece = piece_of(2, nullptr, global, local);
  ASSERT_TRUE(piece);
  EXPECT_EQ(piece->block[1], 16u);
  EXPECT_EQ(piece->block[0], 16u * 16);
  EXPECT_DOUBLE_EQ(piece->scale, double(kShare));
}

TEST(FirstLaunchProbe, AtTheLaunchsOffset) {
  const size_t offset[1] = {64}, global[1] = {64 * 200}, local[1] = {64};
  const auto piece = piece_of(1, offset, global, local);
  ASSERT_TRUE(piece);
  EXPECT_EQ(piece->offset[0], 64u);
  EXPECT_FALSE(piece->offset_zero);
  EXPECT_EQ(piece->block[0], 64u * 3);  // 200 / 64 groups, at most the share
  EXPECT_DOUBLE_EQ(piece->scale, 200.0 / 3);
}

TEST(FirstLaunchProbe, OneGroupOfALaunchOfFewerThanTheShare) {
  // benchmarks/nbody at 8,192 bodies: 32 groups of 256.
  const size_t global[1] = {8192}, local[1] = {256};
  const auto piece = piece_of(1, nullptr, global, local);
  ASSERT_TRUE(piece);
  EXPECT_EQ(piece->block[0], 256u);
  EXPECT_DOUBLE_EQ(piece->scale, 32.0);
}

TEST(FirstLaunchProbe, RoundsOfGroupsOverHomesComputeUnits) {
  // benchmarks/nbody at 16,384 bodies on the mixed set's home of four threads: 64 groups run in 16
  // rounds, the block's one group in one.
  const size_t global[1] = {16384}, local[1] = {256};
  const auto piece = piece_of(1, nullptr, global, local, 4);
  ASSERT_TRUE(piece);
  EXPECT_EQ(piece->block[0], 256u);
  EXPECT_DOUBLE_EQ(piece->scale, 16.0);
  // matmul at 1,024 (64 x 64 groups): a block of 64 groups, 16 rounds of 1,024.
  const size_t square[2] = {1024, 1024}, tile[2] = {16, 16};
  EXPECT_DOUBLE_EQ(piece_of(2, nullptr, square, tile, 4)->scale, 64.0);
}

TEST(FirstLaunchProbe, NoneWhereItCouldRunAnotherFunctionOrCostTooMuch) {
  const size_t global[1] = {4096}, local[1] = {64}, odd[1] = {4095}, few[1] = {64 * (kMinGroups - 1)};
  EXPECT_FALSE(piece_of(1, nullptr, global, nullptr));  // the driver picks the local size
  EXPECT_FALSE(piece_of(1, nullptr, odd, local));       // work-groups that do not divide the launch
  EXPECT_FALSE(piece_of(1, nullptr, few, local));       // too few work-groups: one is much of the launch
  const size_t wide[2] = {65536, 64}, local2[2] = {64, 1};
  EXPECT_FALSE(piece_of(2, nullptr, wide, local2));  // PoCL's wide grid: another work-group function
}

KernelInfo kernel_with(std::initializer_list<std::pair<bool, bool>> read_written) {
  KernelInfo info;
  for (const auto& [read, written] : read_written) {
    ArgInfo arg;
    arg.kind = ArgKind::GlobalPointer;
    arg.read = read;
    arg.written = written;
    info.args.push_back(arg);
  }
  return info;
}

TEST(FirstLaunchProbe, OnlyLaunchesThatGiveTheSameResultRunTwice) {
  int a = 0, b = 0, c = 0;
  const KernelInfo product = kernel_with({{true, false}, {true, false}, {false, true}});
  EXPECT_TRUE(runs_twice_alike(product, ArgumentRoots{&a, &b, &c}, "__kernel void k() {}"));
  EXPECT_TRUE(runs_twice_alike(product, ArgumentRoots{&a, &a, &c}, ""));  // two inputs of one buffer
  // The output is an input too: the second run reads what the first wrote.
  EXPECT_FALSE(runs_twice_alike(product, ArgumentRoots{&a, &b, &a}, ""));
  // Updated in place.
  EXPECT_FALSE(runs_twice_alike(kernel_with({{true, true}}), ArgumentRoots{&a}, ""));
  // Printed twice.
  EXPECT_FALSE(runs_twice_alike(product, ArgumentRoots{&a, &b, &c}, "printf(\"%d\", 1);"));
  // A null buffer, and an argument that is no buffer, are nobody's output.
  EXPECT_TRUE(runs_twice_alike(product, ArgumentRoots{&a, nullptr, &c}, ""));
}

}  // namespace

TEST(FirstLaunchProbe, ABlockRunsAgainOnlyWhereItsRunSaysSplitBySoLittleThatASlowedRunCouldHaveSaidIt) {
  EXPECT_FALSE(runs_again(0.27, 0.4));  // held on home: a slowed run only holds it the more
  EXPECT_TRUE(runs_again(0.45, 0.4));   // benchmarks/matmul at 640 on two cores, its block slowed by half
  EXPECT_TRUE(runs_again(0.4, 0.4));
  EXPECT_FALSE(runs_again(0.8, 0.4));  // split however slowed the run was (twice or less)
  EXPECT_FALSE(runs_again(1.0, std::numeric_limits<double>::infinity()));  // never split at once
}
